"""`ccmemory mcp`: the MCP server for Claude Code (stdio), or streamable HTTP on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("mcp")
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535), help="HTTP port.")
@click.option("--path", "http_path", default="/mcp", show_default=True, help="HTTP endpoint path.")
@click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Repository (or a folder inside it) to serve; default: $CCMEMORY_REPO, else the current folder.",
)
def mcp_cmd(use_http: bool, port: int, http_path: str, repo: Path | None) -> None:
    """Run the ccmemory MCP server (tools to record, search, trace and check memories).

    Claude Code starts it over stdio (the plugin's .mcp.json runs `ccmemory mcp`). With --http it
    serves streamable HTTP at http://127.0.0.1:PORT/PATH, bound to the loopback interface only.
    Without a .ccmemory/ folder the server still starts; its tools answer with an error that says
    to run `ccmemory init`.
    """
    from ccmemory.core import settings

    if repo is None and settings.REPO.get():
        repo = Path(settings.REPO.get() or ".")
    if not http_path.startswith("/"):
        http_path = "/" + http_path
    from ccmemory.surfaces.mcp.server import run

    run(repo.resolve() if repo else None, http=use_http, port=port, path=http_path)
