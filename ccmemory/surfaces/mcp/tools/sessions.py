"""The `sessions` tool (full set): the local session history (ccmemory.features.sessions), read
progressively: `list` or `search` give ids and summaries, `search_prompts` single matching
prompts with their session, `get` one whole record, `autonomy` the autonomy score (AI actions
per human intervention)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from ccmemory.surfaces.mcp.common import ToolFailure
from ccmemory.surfaces.mcp.tools import Tool

if TYPE_CHECKING:
    from ccmemory.surfaces.mcp.backend import Backend


def sessions(
    root: Any, action: str, *, query: str | None, id: str | None, limit: int, since: str | None
) -> dict[str, Any]:
    from ccmemory.features.sessions import service

    if action == "get":
        if not id:
            raise ToolFailure(
                "invalid_argument", "action 'get' needs an id", "list or search first to see the ids"
            )
        rec = service.get(root, id)
        if rec is None:
            raise ToolFailure("not_found", f"no session record {id!r}", "action 'list' shows the ids")
        return {"session": rec}
    if action == "autonomy":
        rep = service.autonomy_report(root, since=since, limit=limit)
        return {"autonomy": rep, "hint": "a session's prompts and classes: action 'get' with its id"}
    if action == "timeline":
        rows, why = service.timeline(root, query=query, session=id, around=min(limit, 10))
        if not rows:
            raise ToolFailure("not_found", why or "no session found", "give a query or a session id")
        return {"sessions": rows, "hint": "oldest first; the anchor is marked; details: action 'get'"}
    if action == "search_prompts":
        if not query or not query.strip():
            raise ToolFailure("invalid_argument", "action 'search_prompts' needs a query")
        hits = service.search_prompts(root, query, since=since, limit=limit)
        return {"prompts": hits, "hint": "the whole session: action 'get' with its id"}
    if action == "search":
        if not query or not query.strip():
            raise ToolFailure("invalid_argument", "action 'search' needs a query")
        rows, notice = service.search_sessions(root, query, since=since, limit=limit)
        out: dict[str, Any] = {"sessions": rows, "hint": "details: action 'get' with an id"}
        if notice:
            out["notice"] = notice
        return out
    rows = service.list_sessions(root, since=since, limit=limit)
    return {"sessions": rows, "hint": "details: action 'get' with an id"}


def register(tool: Tool, server: MCPServer, be: Backend) -> None:
    @tool(
        "Past Claude Code sessions of this repo (local): 'list' (newest first), 'search' (prompts, "
        "summaries): ids and summaries; 'search_prompts': single prompts; 'get' one session (id or "
        "ccmemory://session/<id>); 'timeline': sessions around `id` or `query`'s match; "
        "'autonomy': AI actions per human prompt, by session and week.",
        name="sessions",
    )
    def sessions_tool(
        action: Literal["list", "search", "search_prompts", "get", "timeline", "autonomy"] = "list",
        query: str | None = None,
        id: str | None = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
        since: Annotated[str | None, Field(description="YYYY-MM-DD")] = None,
    ) -> dict[str, Any]:
        with be.service(refresh=False) as svc:
            root = svc.vault.root
        return sessions(root, action, query=query, id=id, limit=limit, since=since)
