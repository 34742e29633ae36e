"""The lean default tool list (issue 27): five tools whose schemas cost a few thousand tokens in
every session, instead of the full set's ~15k. Progressive disclosure: search and the hooks'
recall give ids; `get` gives the full memory and its relations when Claude asks.

- ``record``: one tool for every memory type (``type`` + the common fields + ``fields`` for the
  type's own, checked per type: an unknown field is refused with the allowed names);
- ``search``, ``get``, ``trace``, ``context``.

The logic is the full set's (``tools.record``, ``tools.search``, ``tools.graph``); only the surface
is smaller. ``mcp: {tools: full}`` in config.yaml or ``CCMEMORY_MCP_TOOLS=full`` serves every tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from ccmemory.surfaces.mcp.tools import Tool, graph, record, search
from ccmemory.surfaces.mcp.tools.params import (
    Limit,
    MemoryRef,
    Query,
    Topics,
    Types,
)

if TYPE_CHECKING:
    from ccmemory.surfaces.mcp.backend import Backend


def register(tool: Tool, server: MCPServer, be: Backend) -> None:
    del server

    record.register_generic(tool, be)

    @tool(
        "Search memories (hybrid text + semantic; superseded hidden). Returns ids and snippets; `get` one.",
        name="search",
    )
    def search_memories(
        query: Query,
        mode: Literal["hybrid", "text", "semantic"] = "hybrid",
        types: Types = None,
        topics: Topics = None,
        limit: Limit = 10,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return search.search(svc, query, mode=mode, limit=limit, offset=0, types=types, topics=topics)

    @tool("One memory in full (by id, prefix, path or slug) with its relations both ways.")
    def get(id: MemoryRef) -> dict[str, Any]:
        with be.service() as svc:
            return search.get_memory(svc, id)

    @tool("A memory's supersession chain and relations, both directions.")
    def trace(id: MemoryRef, depth: Annotated[int, Field(ge=1, le=5)] = 3) -> dict[str, Any]:
        with be.service() as svc:
            return graph.trace(svc, id, direction="both", depth=depth, max_steps=50)

    @tool("Memories to read before a task or a file: rules, gotchas, decisions in force.")
    def context(
        task: Annotated[str | None, Field(max_length=2000)] = None,
        current_file: Annotated[str | None, Field(max_length=500)] = None,
        limit: Limit = 10,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return search.query_context(
                svc,
                task=task,
                current_file=current_file,
                max_hops=1,
                include_cross_project=False,
                limit=limit,
            )
