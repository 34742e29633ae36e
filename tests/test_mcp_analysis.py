"""ccmemory.features.analysis rules on hand-built memories and edges (no server, no index)."""

from __future__ import annotations

from typing import Any

from ccmemory.features.analysis import (
    _opposition,
    contradictions,
    correction_hotspots,
    dependency_cycles,
    exception_clusters,
    orphans,
    supersession_chains,
)
from ccmemory.index.base import Edge, IndexedMemory


def mem(mid: str, mtype: str = "decision", title: str = "t", **kw: Any) -> IndexedMemory:
    return IndexedMemory(
        id=mid,
        type=mtype,
        title=title,
        body="",
        created=kw.pop(
            "created",
            f"2026-01-{int(mid[-1]) + 1:02d}T00:00:00Z" if mid[-1].isdigit() else "2026-01-01T00:00:00Z",
        ),
        path=f".ccmemory/x/{mid}.md",
        status="curated",
        project="p",
        **kw,
    )


def test_opposition_needs_the_same_phrase() -> None:
    assert _opposition("Use an ORM for queries", "Don't use an ORM") == "an orm"
    assert _opposition("Never deploy on Fridays", "Deploy on Fridays") == "deploy on fridays"
    assert _opposition("Use Redis", "Avoid Redis") == "redis"
    assert _opposition("Use Redis", "Use Postgres") is None
    assert _opposition("Use tabs", "Don't use spaces") is None
    assert _opposition("Do it", "Don't do it") is None  # phrase too short to mean anything


def test_supersession_chains_longest_path_and_cycles_cut() -> None:
    ms = [mem(f"m{i}") for i in range(5)]
    edges = [Edge("m1", "SUPERSEDES", "m0"), Edge("m2", "SUPERSEDES", "m1"), Edge("m4", "SUPERSEDES", "m3")]
    chains = supersession_chains(ms, edges, min_length=3)
    assert [[m.id for m in c] for c in chains] == [["m0", "m1", "m2"]]
    assert len(supersession_chains(ms, edges, min_length=2)) == 2
    loop = [Edge("m0", "SUPERSEDES", "m1"), Edge("m1", "SUPERSEDES", "m0")]
    assert supersession_chains(ms, loop, min_length=2) == []  # every node is superseded: no head


def test_dependency_cycles_tarjan() -> None:
    edges = [
        Edge("a", "DEPENDS_ON", "b"),
        Edge("b", "DEPENDS_ON", "c"),
        Edge("c", "DEPENDS_ON", "a"),
        Edge("c", "DEPENDS_ON", "d"),
        Edge("e", "DEPENDS_ON", "e"),
        Edge("x", "RELATES_TO", "y"),
        Edge("y", "RELATES_TO", "x"),
    ]
    found = {(c["relation"], tuple(c["ids"])) for c in dependency_cycles(edges)}
    assert found == {("DEPENDS_ON", ("a", "b", "c")), ("DEPENDS_ON", ("e",))}


def test_contradictions_skip_superseded_and_explain() -> None:
    ms = [
        mem("a", title="Use GraphQL", topics=["api"]),
        mem("b", title="Don't use GraphQL", topics=["API"]),
        mem("c", title="Tabs"),
        mem("d", title="Spaces"),
        mem("e", title="Use GraphQL", topics=["other"]),
    ]
    edges = [Edge("d", "CONFLICTS_WITH", "c", "style")]
    found = contradictions(ms, edges, superseded=set())
    assert [{m.id for m in c["members"]} for c in found] == [{"c", "d"}, {"a", "b"}]
    assert found[0]["reason"] == "style" and "heuristic" in found[1]["rule"]
    assert contradictions(ms, edges, superseded={"c", "b"}) == []


def test_clusters_hotspots_orphans() -> None:
    ms = [
        mem("e1", "exception", fields={"rule_broken": "No raw SQL!"}),
        mem("e2", "exception", fields={"rule_broken": "no  raw sql"}),
        mem("e3", "exception", fields={"rule_broken": "other"}),
        mem("c1", "correction", topics=["TZ"]),
        mem("c2", "correction", topics=["tz"], files=["a.py"]),
        mem("o1", "fact"),
        mem("o2", "fact"),
    ]
    clusters = exception_clusters(ms)
    assert [(c["key"], [m.id for m in c["members"]]) for c in clusters] == [("no raw sql", ["e1", "e2"])]
    hot = correction_hotspots(ms)
    assert [(h["by"], h["key"], h["count"]) for h in hot] == [("topic", "tz", 2)]
    assert [m.id for m in orphans(ms, [Edge("o2", "CITES", "e3")])] == ["e1", "e2", "o1"]
