"""The MCP tools' logic, free of the SDK, under one name: arguments in, JSON-able dicts out,
`ToolFailure` on error. The functions live by section in `ccmemory.surfaces.mcp.tools` (record, search,
graph, resources) and `ccmemory.surfaces.mcp.common`; this module gathers them for callers outside the
server (tests, scripts) so they need not know the layout.

Every result is bounded (limit/offset with caps) and every memory in it is cited by id, path and
`ccmemory://memory/<id>`. Recording writes the memory file first (Service.record), then indexes it;
nothing here rewrites an existing memory file.
"""

from ccmemory.surfaces.mcp.backend import Backend
from ccmemory.surfaces.mcp.common import (
    MAX_LIMIT,
    MAX_WINDOW,
    ToolFailure,
    cite,
    full,
    page,
    ref,
    resolve_one,
)
from ccmemory.surfaces.mcp.tools.graph import ISSUE_KINDS, detect_issues, metrics, patterns, suggest, trace
from ccmemory.surfaces.mcp.tools.record import record, supersede
from ccmemory.surfaces.mcp.tools.resources import memory_markdown, project_overview, schema, stats
from ccmemory.surfaces.mcp.tools.search import (
    failed_approaches,
    get_memory,
    open_questions,
    query_by_topic,
    query_context,
    search,
    stale,
    timeline,
)

__all__ = [
    "ISSUE_KINDS",
    "MAX_LIMIT",
    "MAX_WINDOW",
    "Backend",
    "ToolFailure",
    "cite",
    "detect_issues",
    "failed_approaches",
    "full",
    "get_memory",
    "memory_markdown",
    "metrics",
    "open_questions",
    "page",
    "patterns",
    "project_overview",
    "query_by_topic",
    "query_context",
    "record",
    "ref",
    "resolve_one",
    "schema",
    "search",
    "stale",
    "stats",
    "suggest",
    "supersede",
    "timeline",
    "trace",
]
