"""The graph and analysis tools: trace_decision, query_patterns, detect_issues,
suggest_connections, get_metrics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ccmemory.app.service import Service
    from ccmemory.surfaces.mcp.backend import Backend

from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from ccmemory.surfaces.mcp.common import cite, ref, resolve_one, telemetry_event
from ccmemory.surfaces.mcp.tools import Tool
from ccmemory.surfaces.mcp.tools.params import MemoryRef

# --- graph ---------------------------------------------------------------------------------------


def trace(svc: Service, ref_: str, *, direction: str, depth: int, max_steps: int) -> dict[str, Any]:
    root = resolve_one(svc, ref_)
    t = svc.trace(root.id, direction=direction, depth=depth)
    assert t is not None
    telemetry_event(svc, "retrieved", [root.id])
    steps = t.steps[:max_steps]
    lines = []
    out_steps = []
    for s in steps:
        here = s.edge.src if s.direction == "out" else s.edge.dst
        other = s.edge.dst if s.direction == "out" else s.edge.src
        a, b = t.nodes[here], t.nodes[other]
        reason = f" — {s.edge.reason}" if s.edge.reason else ""
        lines.append(
            f"{'  ' * (s.depth - 1)}[{a.type}] {a.title} —{s.label}→ [{b.type}] {b.title} ({b.id}){reason}"
        )
        out_steps.append(
            {"depth": s.depth, "from": here, "relation": s.label, "to": other, "reason": s.edge.reason}
        )
    used = {t.root.id} | {s["from"] for s in out_steps} | {s["to"] for s in out_steps}
    sup = svc.superseded_by([m.id for m in t.chain])
    chain = [ref(m) | {"superseded": m.id in sup} for m in t.chain]
    readable = ""
    if len(t.chain) > 1:
        readable = "supersession (oldest first): " + " → ".join(f"{m.title} ({m.id})" for m in t.chain) + "\n"
    readable += "\n".join(lines) if lines else "no relations"
    return {
        "root": cite(t.root),
        "direction": direction,
        "depth": depth,
        "chain": chain,
        "steps": out_steps,
        "truncated": len(t.steps) > max_steps,
        "nodes": {i: ref(m) for i, m in t.nodes.items() if i in used},
        "readable": readable,
    }


def patterns(svc: Service, *, min_size: int, limit: int) -> dict[str, Any]:
    from ccmemory.features.analysis import (
        all_edges,
        all_memories,
        correction_hotspots,
        exception_clusters,
        supersession_chains,
    )

    mems = all_memories(svc)
    edges = all_edges(svc, [m.id for m in mems])
    clusters = exception_clusters(mems, min_size=min_size)
    chains = supersession_chains(mems, edges, min_length=max(3, min_size))
    hot = correction_hotspots(mems, min_count=min_size)
    return {
        "rules": {
            "exception_clusters": f"{min_size}+ exceptions breaking the same rule (normalised wording) "
            "or sharing a topic",
            "supersession_chains": f"chains of {max(3, min_size)}+ memories, each superseding the last",
            "correction_hotspots": f"topics or files with {min_size}+ corrections",
        },
        "exception_clusters": {
            "total": len(clusters),
            "items": [
                {
                    "by": c["by"],
                    "key": c["key"],
                    "size": len(c["members"]),
                    "members": [ref(m) for m in c["members"][:10]],
                }
                for c in clusters[:limit]
            ],
        },
        "supersession_chains": {
            "total": len(chains),
            "items": [{"length": len(c), "chain": [ref(m) for m in c[:20]]} for c in chains[:limit]],
        },
        "correction_hotspots": {
            "total": len(hot),
            "items": [
                {
                    "by": h["by"],
                    "key": h["key"],
                    "count": h["count"],
                    "members": [ref(m) for m in h["members"][:10]],
                }
                for h in hot[:limit]
            ],
        },
    }


ISSUE_KINDS = ("contradictions", "stale", "orphans", "cycles", "broken_links", "invalid_files")


def detect_issues(
    svc: Service, *, kinds: Sequence[str] | None, limit: int, include_cross_project: bool = False
) -> dict[str, Any]:
    from ccmemory.features.analysis import (
        all_edges,
        all_memories,
        contradictions,
        dependency_cycles,
        orphans,
        stale_decisions,
    )

    wanted = list(kinds) if kinds else list(ISSUE_KINDS)
    out: dict[str, Any] = {}
    mems = all_memories(svc)
    by_id = {m.id: m for m in mems}
    edges = all_edges(svc, list(by_id))
    superseded = svc.view.superseded_ids()
    if "contradictions" in wanted:
        items = contradictions(mems, edges, superseded)
        out["contradictions"] = {
            "total": len(items),
            "items": [
                {"rule": c["rule"], "reason": c["reason"], "members": [ref(m) for m in c["members"]]}
                for c in items[:limit]
            ],
        }
    if "stale" in wanted:
        from ccmemory.features.analysis import STALE_RULES

        st = stale_decisions(svc)
        out["stale"] = {
            "rule": STALE_RULES.replace("N days", "30 days"),
            "total": len(st),
            "items": [ref(s.memory) | {"reasons": s.reasons} for s in st[:limit]],
        }
    if "orphans" in wanted:
        orph = orphans([m for m in mems if m.id not in superseded], edges)
        out["orphans"] = {
            "rule": "current memories with no topics, no files and no relation in either direction",
            "total": len(orph),
            "items": [ref(m) for m in orph[:limit]],
        }
    if "cycles" in wanted:
        cyc = dependency_cycles(edges)
        out["cycles"] = {
            "rule": "cycles among DEPENDS_ON edges, and among SUPERSEDES edges "
            "(a memory cannot replace itself)",
            "total": len(cyc),
            "items": [
                {"relation": c["relation"], "members": [ref(by_id[i]) for i in c["ids"][:20] if i in by_id]}
                for c in cyc[:limit]
            ],
        }
    if "broken_links" in wanted:
        dang = svc.view.dangling()
        out["broken_links"] = {
            "rule": "relations or supersedes entries whose target id is not in the index",
            "total": len(dang),
            "items": [
                {
                    "from": ref(by_id[e.src]) if e.src in by_id else {"id": e.src},
                    "relation": e.type,
                    "missing_target": e.dst,
                }
                for e in dang[:limit]
            ],
        }
    if "invalid_files" in wanted:
        probs = svc.view.file_problems()
        out["invalid_files"] = {
            "rule": "memory files that cannot be parsed, or reuse another file's id "
            "(fix them and run `ccmemory check`)",
            "total": len(probs),
            "items": [{"path": p.path, "line": p.line, "reason": p.reason} for p in probs[:limit]],
        }
    if include_cross_project:
        from ccmemory.features.analysis import CROSS_RULE
        from ccmemory.features.crossproject import cross_project_contradictions

        items, notices = cross_project_contradictions(svc)
        out["cross_project_contradictions"] = {
            "rule": CROSS_RULE,
            "total": len(items),
            "items": [
                {
                    "rule": c["rule"],
                    "reason": c["reason"],
                    "project": c["project"],
                    "relation": c["relation"],
                    "members": [
                        ref(c["members"][0]) | {"project": svc.project},
                        ref(c["members"][1]) | {"project": c["project"]},
                    ],
                }
                for c in items[:limit]
            ],
            **({"notices": notices} if notices else {}),
        }
    out["summary"] = {k: v["total"] for k, v in out.items()}
    return out


def suggest_across(svc: Service, *, limit: int) -> dict[str, Any]:
    """`suggest_connections` without an id: the project's strongest missing links (links.py)."""
    from ccmemory.features.links import RULE, missing_links

    items = missing_links(svc, limit=limit)
    return {
        "rule": RULE,
        "results": [
            {
                "from": ref(s["from"]),
                "to": ref(s["to"]),
                "score": round(s["score"], 6),
                "suggested_relation": s["suggested_relation"],
                "shared_words": s["shared_words"],
                "shared_topics": s["shared_topics"],
                "shared_files": s["shared_files"],
            }
            for s in items
        ],
        "how_to_link": "memory files are not rewritten by tools: add the relation to the `from` "
        "memory's file by hand in a pull request (relations: [{type, target: <id or path>}]), or "
        "record a new memory with relations=[{type, target}]",
    }


def suggest(svc: Service, ref_: str | None, *, limit: int) -> dict[str, Any]:
    from ccmemory.features.analysis import suggest_connections

    if ref_ is None or not ref_.strip():
        return suggest_across(svc, limit=limit)
    m = resolve_one(svc, ref_)
    items, notices = suggest_connections(svc, m, limit=limit)
    out: dict[str, Any] = {
        "memory": ref(m),
        "rule": "hybrid search on the memory's title, topics and text; memories already linked to it "
        "(either direction) are left out",
        "results": [
            cite(
                s["memory"],
                score=round(s["score"], 6),
                shared_topics=s["shared_topics"],
                shared_files=s["shared_files"],
                suggested_relation=s["suggested_relation"],
            )
            for s in items
        ],
        "how_to_link": "memory files are not rewritten by tools: record a new memory with "
        "relations=[{type, target}] (or memory_supersede), or add the relation to "
        f"{m.path} by hand in a pull request",
    }
    if notices:
        out["notices"] = notices
    return out


def metrics(svc: Service) -> dict[str, Any]:
    """The index's counts plus the dashboard's metrics: ours, the seed's definitions and hours saved."""
    from ccmemory.features.analysis import metrics as compute
    from ccmemory.surfaces.dashboard import gather

    out = compute(svc)
    out.update(gather.all_metrics(svc))
    out["not_measured"] = [
        f"{k}: {m['why']}" for k, m in out["seed_metrics"].items() if m["display"] == "not measurable"
    ]
    return out


# The tools registered below take these functions' names: they call them through these aliases.
_detect_issues = detect_issues


def register(tool: Tool, server: MCPServer, be: Backend) -> None:
    """Add this section's tools with the server's own `tool` decorator (errors, annotations)."""

    @tool(
        "Trace a decision (or any memory) through the graph: its supersession chain and its relations "
        "upstream (what it depends on / cites / supersedes), downstream (what depends on it / supersedes "
        "it) or both, as structured steps plus a readable chain."
    )
    def trace_decision(
        id: MemoryRef,
        direction: Literal["upstream", "downstream", "both"] = "both",
        depth: Annotated[int, Field(ge=1, le=5)] = 3,
        max_steps: Annotated[int, Field(ge=1, le=200)] = 50,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return trace(svc, id, direction=direction, depth=depth, max_steps=max_steps)

    @tool(
        "Patterns across the project: exception clusters (same rule broken or same topic, min_size+ times), "
        "supersession chains of 3+ memories, and correction hotspots (topics/files with min_size+ "
        "corrections)."
    )
    def query_patterns(
        min_size: Annotated[int, Field(ge=2, le=100)] = 2,
        limit: Annotated[int, Field(ge=1, le=50, description="Items per pattern kind.")] = 10,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return patterns(svc, min_size=min_size, limit=limit)

    @tool(
        "Find problems in the memory graph: contradictions (CONFLICTS_WITH between current memories, and "
        "same-topic decisions titled 'use X' vs 'don't use X'), stale decisions, orphans (no topics, "
        "files or relations), dependency cycles, broken links and invalid files. Each kind states its rule."
    )
    def detect_issues(
        kinds: Annotated[
            list[Literal["contradictions", "stale", "orphans", "cycles", "broken_links", "invalid_files"]]
            | None,
            Field(max_length=6, description="Default: all kinds.", default=None),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="Items per kind.")] = 10,
        include_cross_project: Annotated[
            bool, Field(description="Also compare decisions with the related projects' (related_to).")
        ] = False,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return _detect_issues(svc, kinds=kinds, limit=limit, include_cross_project=include_cross_project)

    @tool(
        "Suggest connections for a memory: similar memories (same hybrid search) it is not linked to yet, "
        "with shared topics/files and a suggested relation type. Without `id`: the strongest missing "
        "links across the whole project (pairs of memories with much in common and no relation)."
    )
    def suggest_connections(
        id: Annotated[
            str | None,
            Field(max_length=300, description="Memory id, prefix, path or slug; omit for the whole project."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=20)] = 5,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return suggest(svc, id, limit=limit)

    @tool(
        "Metrics: counts by type/status/source, supersession, relations, open questions, confidence, "
        "weekly capture; `metrics` (ours) and `seed_metrics` (the seed's definitions, ours beside), each "
        "with its formula, 'not enough data' or 'not measurable' and why; `hours_saved` only with the "
        "configured assumptions."
    )
    def get_metrics() -> dict[str, Any]:
        with be.service() as svc:
            return metrics(svc)

    @tool(
        "Memories the patterns in this project's memories suggest (corrections about one subject, a "
        "rule broken again and again, a decision revised 3+ times, a file with many warnings), each "
        "with its evidence (memory ids). Read-only: the user accepts one with `ccmemory suggest "
        "--accept KEY`, which writes it for review."
    )
    def list_suggestions() -> dict[str, Any]:
        from ccmemory.features import suggest as suggest_feature

        with be.service() as svc:
            return {"suggestions": [s.as_dict() for s in suggest_feature.suggestions(svc)]}
