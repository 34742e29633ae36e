"""ccmemory report."""

from __future__ import annotations

from pathlib import Path

import click

from ccmemory.surfaces.cli.common import service
from ccmemory.surfaces.cli.errors import cli_error


@click.command("report")
@click.option("--period", type=click.Choice(["week", "month", "quarter"]), default="week", show_default=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "html", "pdf", "json"]),
    default="text",
    show_default=True,
    help="pdf needs headless Chromium (it prints the html report).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file (required for pdf) instead of standard output.",
)
def report_cmd(period: str, fmt: str, output: Path | None) -> None:
    """An executive summary: the dashboard's metrics and their trend over the last week, month or quarter,
    the most reused decisions, correction hotspots and what is waiting for review."""
    from ccmemory.surfaces.dashboard import report
    from ccmemory.surfaces.dashboard.data import Dash

    if fmt == "pdf" and output is None:
        raise click.UsageError("--format pdf needs --output FILE.pdf")
    with service() as svc:
        dash = Dash(svc)
        try:
            data = report.build(dash, period)
        finally:
            dash.close()
    if fmt == "json":
        import json

        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    elif fmt in ("html", "pdf"):
        text = report.to_html(data)
    else:
        text = report.text(data, md=fmt == "markdown")
    if fmt == "pdf":
        assert output is not None
        try:
            used = report.to_pdf(text, output)
        except report.NoPdfRenderer as exc:
            raise cli_error(exc) from None
        click.echo(f"wrote {output} (rendered by {used})")
        return
    if output is not None:
        from ccmemory.core.atomic import UMASK, atomic_write

        atomic_write(output, text.encode("utf-8"), overwrite=True, mode=UMASK)
        click.echo(f"wrote {output}")
    else:
        click.echo(text, nl=False)
