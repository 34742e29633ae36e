"""The ccmemory MCP server (mcp SDK 2.x, `MCPServer`): wiring only. The tools live in
`ccmemory.surfaces.mcp.tools` (one module a section), their shared helpers in `ccmemory.surfaces.mcp.common`.

Run with `ccmemory mcp` (stdio) or `ccmemory mcp --http` (streamable HTTP on 127.0.0.1).
Tool errors come back as `isError` results whose text is JSON: {"error": {code, message, hint}}.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from ccmemory.surfaces.mcp.backend import Backend
from ccmemory.surfaces.mcp.guard import guarded, strict_arguments, structured_argument_errors

INSTRUCTIONS = """\
ccmemory is this repository's reviewable memory: decisions, corrections, exceptions, insights,
questions, failed approaches, facts, preferences and references, one markdown file each under
.ccmemory/ (git is the source of truth; merged to main = curated, elsewhere = developmental).
Before changing something, `search` or `query_context` for what was decided and what failed.
When the user corrects you, decides something, or an approach fails, record it with the matching
`record_*` tool (it writes a new file for review in the pull request); concepts, hypotheses and
knowledge gaps go through `record`. Results cite id, path and
ccmemory://memory/<id>; read the full text with `get_memory`. Reference knowledge (concepts,
cached pages and papers under .ccmemory/reference/) is searched by section with `query_reference`.
"""
LEAN_INSTRUCTIONS = """\
ccmemory is this repository's reviewable memory (decisions, corrections, gotchas, exceptions,
preferences, facts, failed approaches…), one markdown file each under .ccmemory/. Before changing
something, `context` or `search` for what was decided and what failed; `get` an id for the full
text. When the user corrects you, decides something, or an approach fails, `record` it (a new
file for review in the pull request). Memories that apply to a prompt or a file are also added to
your context by the hooks, with their ids.
"""


def build_server(repo: Path | None = None, backend: Backend | None = None) -> MCPServer:
    from ccmemory.surfaces.mcp.tools import (
        graph,
        ingest,
        lean,
        record,
        reference,
        resources,
        search,
        sessions,
    )

    be = backend or Backend(repo)
    full = tool_set(be) == "full"
    server = MCPServer(
        "ccmemory",
        instructions=INSTRUCTIONS if full else LEAN_INSTRUCTIONS,
        version=_version(),
        log_level="WARNING",
        middleware=[structured_argument_errors],
    )
    server.middleware.append(strict_arguments(server))
    readonly = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)

    def tool(
        description: str, *, read_only: bool = True, name: str | None = None
    ) -> Callable[[Callable[..., Any]], Any]:
        def deco(fn: Callable[..., Any]) -> Any:
            server.add_tool(
                guarded(fn), name=name, description=description, annotations=readonly if read_only else writes
            )
            return fn

        return deco

    sections = (record, ingest, search, graph, resources, reference, sessions) if full else (lean, resources)
    for section in sections:
        section.register(tool, server, be)
    return server


def tool_set(be: Backend) -> str:
    """`lean` (default: five tools, a few thousand tokens) or `full` (every tool): CCMEMORY_MCP_TOOLS,
    else `mcp: {tools: ...}` in .ccmemory/config.yaml."""
    from ccmemory.core import settings as env

    chosen = (env.MCP_TOOLS.get() or "").strip().lower()
    if not chosen:
        try:  # the config file only: opening the Service here would reindex before tools/list
            from ccmemory.core.config import read_config_file
            from ccmemory.core.vault import Vault

            section = read_config_file(Vault.open(be.start).dir).get("mcp")
            chosen = str(section.get("tools", "")).strip().lower() if isinstance(section, dict) else ""
        except Exception:  # no repository yet, or an unreadable config: the default
            chosen = ""
    return chosen if chosen in ("lean", "full") else "lean"


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("ccmemory-vault")
    except Exception:
        return "0"


def run(repo: Path | None = None, *, http: bool = False, port: int = 8765, path: str = "/mcp") -> None:
    backend = Backend(repo)
    server = build_server(repo, backend)
    stop_warm = _serve_recall(backend)
    try:
        if http:
            server.run("streamable-http", host="127.0.0.1", port=port, streamable_http_path=path)
        else:
            server.run("stdio")
    finally:
        stop_warm()
        backend.close()


def _serve_recall(backend: Backend) -> Callable[[], None]:
    """While this server runs, hooks get hybrid recall from it over a local socket (issue 27;
    ccmemory/recall/warm.py). Off with recall itself (CCMEMORY_RECALL=0)."""
    from ccmemory.core import settings as env

    if env.RECALL.get() is False:
        return lambda: None
    from ccmemory.features.recall.warm import serve_in_background

    return serve_in_background(lambda: backend.service(refresh=False))
