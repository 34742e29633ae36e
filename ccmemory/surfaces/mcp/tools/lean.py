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

from ccmemory.core.model import TYPES
from ccmemory.surfaces.mcp.common import ToolFailure
from ccmemory.surfaces.mcp.tools import Tool, graph, record, search
from ccmemory.surfaces.mcp.tools.params import (
    Body,
    Confidence,
    Files,
    Limit,
    MemoryRef,
    MemoryType,
    Query,
    Relations,
    Supersedes,
    Title,
    Topics,
    Types,
)

if TYPE_CHECKING:
    from ccmemory.surfaces.mcp.backend import Backend


def types_table() -> str:
    """One line per type: its own fields (required ones marked *)."""
    rows = []
    for name, spec in TYPES.items():
        fields = ", ".join(f"{f.name}{'*' if f.min_length > 0 else ''}" for f in spec.own)
        rows.append(f"{name}: {fields or '-'}")
    return "; ".join(rows)


def check_fields(mtype: str, fields: dict[str, Any] | None) -> None:
    """Refuse a field the type does not have, naming it and the allowed ones (never its value)."""
    allowed = sorted(TYPES[mtype].fields)
    unknown = sorted(k for k in fields or {} if k not in allowed)
    if unknown:
        raise ToolFailure(
            "invalid_argument",
            f"{', '.join(repr(k) for k in unknown)} not a field of {mtype}",
            f"fields of {mtype}: {', '.join(allowed) or 'none'}",
        )


def register(tool: Tool, server: MCPServer, be: Backend) -> None:
    del server

    @tool(
        "Record a memory (writes a reviewable file). fields holds the type's own fields (* = required): "
        f"{types_table()}. Evidence for or against a hypothesis: a relation SUPPORTS or REFUTES to it.",
        read_only=False,
        name="record",
    )
    def record_memory(
        type: MemoryType,
        title: Title,
        body: Body = "",
        fields: Annotated[dict[str, Any] | None, Field(description="The type's own fields.")] = None,
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        supersedes: Supersedes = None,
        confidence: Confidence = None,
    ) -> dict[str, Any]:
        check_fields(type, fields)
        with be.service() as svc:
            return record.record(
                svc,
                type,
                title=title,
                body=body,
                topics=topics,
                files=files,
                relations=[r.model_dump() for r in relations or []],
                supersedes=supersedes,
                confidence=confidence,
                fields=fields,
            )

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
