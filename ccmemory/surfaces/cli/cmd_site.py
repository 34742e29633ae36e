"""`ccmemory site build|serve`: the published log (an MkDocs site generated from the memories)."""

from __future__ import annotations

from pathlib import Path

import click

from ccmemory.surfaces.cli.common import emit_json, notice, service
from ccmemory.surfaces.cli.errors import cli_error


@click.group()
def site() -> None:
    """Generate the readable log of this project's memories as a static MkDocs site.

    The MkDocs project is generated under .ccmemory/local/site-build/ (git-ignored); nothing is
    written into your tree unless --out says so. The site works offline (no CDN assets).
    """


@site.command("build")
@click.option(
    "--out",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the static site (new, empty, or a previous ccmemory site). "
    "Default: .ccmemory/local/site-build/site",
)
@click.option("--no-related", is_flag=True, help="Skip the related-memory lists (faster).")
@click.option("--verbose", "-v", is_flag=True, help="Show MkDocs' own log.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def build_cmd(out: Path | None, no_related: bool, verbose: bool, as_json: bool) -> None:
    """Build the static site."""
    from ccmemory.surfaces.site import SiteError, SiteGenerator

    with service() as svc:
        gen = SiteGenerator(svc, related=not no_related)
        try:
            result = gen.build(out, verbose=verbose)
        except SiteError as exc:
            raise cli_error(exc) from None
    if as_json:
        emit_json(
            {
                "site_dir": str(result.site_dir),
                "project_dir": str(result.project_dir),
                "memories": result.memories,
                "pages": result.pages,
                "seconds": round(result.seconds, 3),
                "timings": {k: round(v, 3) for k, v in result.timings.items()},
                "warnings": result.warnings,
            }
        )
        return
    for w in result.warnings:
        notice(f"mkdocs: {w}")
    click.echo(
        f"built {result.pages} pages for {result.memories} memories in {result.seconds:.1f}s: "
        f"{result.site_dir / 'index.html'}"
    )


@site.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", "-p", default=8000, show_default=True, type=int)
@click.option("--open", "open_browser", is_flag=True, help="Open the site in a browser.")
@click.option("--no-related", is_flag=True, help="Skip the related-memory lists (faster rebuilds).")
def serve_cmd(host: str, port: int, open_browser: bool, no_related: bool) -> None:
    """Serve the site locally and rebuild it when memory files change."""
    from ccmemory.surfaces.site import BuildResult, SiteGenerator

    def report(result: BuildResult) -> None:
        msg = f"built {result.pages} pages ({result.changed} changed) in {result.seconds:.1f}s"
        click.echo(msg, err=True)

    with service() as svc:
        gen = SiteGenerator(svc, related=not no_related)
        click.echo(f"serving on http://{host}:{port}/ (Ctrl-C to stop)", err=True)
        gen.serve(host, port, open_browser=open_browser, on_build=report)
