"""ccmemory dashboard."""

from __future__ import annotations

import click

from ccmemory.surfaces.cli.common import service


@click.command("dashboard")
@click.option(
    "--port", default=0, show_default=True, type=click.IntRange(0, 65535), help="0 picks a free port."
)
@click.option(
    "--no-browser", is_flag=True, help="Do not open a browser (the URL with its token is printed either way)."
)
def dashboard_cmd(port: int, no_browser: bool) -> None:
    """Open the live local dashboard: metrics, review queue, retrievals, patterns, graph, team.

    Serves on 127.0.0.1 only. The URL carries a random token that every request needs (a cookie
    after the first page), so web pages and other local programs without it get 403. Ctrl-C stops it.
    JSON for every page is under /api/... (docs/dashboard.md).
    """
    from ccmemory.surfaces.dashboard.data import Dash
    from ccmemory.surfaces.dashboard.server import Server

    with service() as svc:
        dash = Dash(svc)
        try:
            dash.refresh(force=True)
            server = Server(dash, port)
        except OSError as exc:
            dash.close()
            raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc}") from None

        def ready(url: str) -> None:
            click.echo(f"ccmemory dashboard for {svc.project}: {url}")
            click.echo("(the token in the URL is required; Ctrl-C stops the server)")
            if not no_browser:
                import webbrowser

                if not webbrowser.open(url):
                    click.echo("could not open a browser: open the URL above yourself")

        import threading

        # numpy first, here: the warm-up thread and the first page's request may both import it,
        # and two threads importing numpy at once can see it partially initialized
        import numpy  # noqa: F401

        threading.Thread(target=dash.warm, name="ccmemory-dashboard-warm", daemon=True).start()
        try:
            server.run(ready)
        finally:
            dash.close()
