"""The MCP resources: graph://schema, graph://stats, graph://project/{name},
ccmemory://memory/{id}."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ccmemory.core.model import REVERSE_NAMES, TYPES

if TYPE_CHECKING:
    from ccmemory.app.service import Service
    from ccmemory.surfaces.mcp.backend import Backend

import json
from collections.abc import Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from ccmemory.surfaces.mcp.common import BODY_CAP, ToolFailure, ref, resolve_one
from ccmemory.surfaces.mcp.tools import Tool

# --- resources -----------------------------------------------------------------------------------


def schema() -> dict[str, Any]:
    from ccmemory.core.model import RELATION_TYPES

    return {
        "source_of_truth": "markdown files with YAML frontmatter under .ccmemory/<type folder>/",
        "nodes": {
            "Memory": "one memory file; label also its type in Neo4j",
            "Topic": "(Memory)-[:ABOUT]->(Topic)",
            "File": "(Memory)-[:TOUCHES]->(File), a code path",
            "Project": "the repository (config `project`)",
            "Session": "(Memory)-[:CAPTURED_IN]->(Session)",
            "Author": "frontmatter author, else the git author who added the file",
            "Chunk": "a section of a reference file (.ccmemory/reference/): (RefFile)-[:HAS_CHUNK]->(Chunk),"
            " NEXT in document order, REFERENCES to chunks and memories, (Memory)-[:CITES_CHUNK]->(Chunk)",
        },
        "relations": {r: {"reverse": REVERSE_NAMES[r]} for r in RELATION_TYPES},
        "relation_rule": "written only on the newer memory; reverse edges are derived in the index",
        "status": "derived from git: curated = file in the main branch's tree; developmental = elsewhere",
        "types": {
            name: {
                "folder": spec.folder,
                "fields": list(spec.fields),
                "enums": {k: list(v) for k, v in spec.enums.items()},
            }
            for name, spec in TYPES.items()
        },
        "uri": "ccmemory://memory/<id>",
    }


def stats(svc: Service) -> dict[str, Any]:
    data = dict(svc.view.stats())
    data["project"] = svc.project
    data["superseded"] = len(svc.view.superseded_ids())
    return data


def project_overview(svc: Service, name: str) -> dict[str, Any]:
    if name != svc.project:
        raise ToolFailure(
            "not_found",
            f"project {name!r} is not served here; this server serves project {svc.project!r}",
            f"read graph://project/{svc.project}",
        )
    f = svc.filters()
    recent = svc.view.query(svc.filters(types=["decision"]), limit=10)
    topics = Counter(t for m in svc.view.query(f, limit=2000) for t in m.topics)
    return {
        "project": svc.project,
        "root": str(svc.vault.root),
        "backend": svc.config.backend,
        "stats": stats(svc),
        "top_topics": dict(topics.most_common(20)),
        "recent_decisions": [ref(m) | {"created": m.created, "status": m.status} for m in recent],
    }


def memory_markdown(svc: Service, ref_: str) -> str:
    m = resolve_one(svc, ref_)
    from ccmemory.core.walk import inside, read_regular

    try:  # the one safe reader: no symlink followed, no FIFO blocking the server
        text = read_regular(inside(svc.vault.root, *m.path.split("/"))).decode("utf-8", "replace")
    except (OSError, ValueError):
        text = f"# {m.title}\n\n{m.body}\n"
    return text[: BODY_CAP * 2]


def register(tool: Tool, server: MCPServer, be: Backend) -> None:
    """Add this section's tools with the server's own `tool` decorator (errors, annotations)."""

    def _resource(fn: Callable[[Any], Any]) -> Any:
        try:
            with be.service() as svc:
                return fn(svc)
        except ToolFailure as failure:
            if failure.code in ("not_found", "ambiguous"):
                raise ResourceNotFoundError(f"{failure.message}. {failure.hint or ''}".strip()) from None
            raise ResourceError(f"{failure.message}. {failure.hint or ''}".strip()) from None

    @server.resource("graph://schema", name="schema", description="Node, relation and memory-type schema.")
    def graph_schema() -> str:
        return json.dumps(schema(), indent=2)

    @server.resource("graph://stats", name="stats", description="Index counts for this project.")
    def graph_stats() -> str:
        return json.dumps(_resource(stats), indent=2, default=str)

    @server.resource(
        "graph://project/{name}",
        name="project",
        description="Overview of a project: stats, topics, decisions.",
    )
    def graph_project(name: str) -> str:
        return json.dumps(_resource(lambda svc: project_overview(svc, name)), indent=2, default=str)

    @server.resource(
        "ccmemory://memory/{id}",
        name="memory",
        description="One memory file (markdown with YAML frontmatter).",
        mime_type="text/markdown",
    )
    def memory_resource(id: str) -> str:
        return str(_resource(lambda svc: memory_markdown(svc, id)))
