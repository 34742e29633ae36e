"""One ranking on both backends: the dev sets (bench/memories: Ledgerly, the Quillpad tuning set
and the blind Driftwood set) indexed into SQLite and Neo4j must give the same top-5 for every
query in every mode (ties aside).

Both store the terms of `ccmemory.text.analyzer` and the text score is `ccmemory.text.bm25`'s, computed in
Python over the candidates each backend finds; scores are compared rounded to 4 places, so equal
lists are not a coincidence of two similar scorers."""

from __future__ import annotations

import pytest

from tests.devset_util import devbench, devset, edit_delete_add, fresh_copy, rankings
from tests.neo4j_server import Neo4jServer

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
def tops(neo4j_server: Neo4jServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    out: dict[str, dict] = {"sqlite": {}, "neo4j": {}}
    try:
        for name in ("main", "tuning2", "blind"):
            devset.select(name)
            root = tmp_path_factory.mktemp(f"parity-{name}") / "repo"
            devset.make_repo(root)
            queries = devset.load_queries()
            for backend in ("sqlite", "neo4j"):
                with devbench.indexed(root, backend, neo4j_server.uri, neo4j_server.auth) as (svc, _idx):
                    ranked = rankings(svc, queries, digits=4)
                    out[backend].update({(mode, name, q): top for (mode, q), top in ranked.items()})
    finally:
        devset.select("main")
    return out


def _differ(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    """True unless the lists name the same memories in the same order, where memories with equal
    (rounded) scores may appear in either order."""
    if len(a) != len(b):
        return True
    group = lambda xs: [(s, sorted(i for i, t in xs if t == s)) for s in dict.fromkeys(t for _, t in xs)]  # noqa: E731
    return group(a) != group(b)


def _check(tops: dict[str, dict], mode: str) -> None:
    keys = [k for k in tops["sqlite"] if k[0] == mode]
    assert len(keys) >= 92 + 100 + 84  # every query of the three sets was ranked
    bad = [k[1:] for k in keys if _differ(tops["sqlite"][k], tops["neo4j"][k])]
    assert not bad, f"{mode}: top-5 differs on {len(bad)} queries, e.g. {bad[:3]}"


def test_semantic_same_on_both_backends(tops: dict[str, dict]) -> None:
    _check(tops, "semantic")


def test_text_same_on_both_backends(tops: dict[str, dict]) -> None:
    _check(tops, "text")


def test_hybrid_same_on_both_backends(tops: dict[str, dict]) -> None:
    _check(tops, "hybrid")


def test_incremental_equals_rebuild_on_neo4j(
    neo4j_server: Neo4jServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """After a hand edit, a delete and a new file, the Neo4j index updated incrementally ranks
    and scores exactly like a project rebuilt from the same files (the write path skips work
    for new ids and checks only what a change unlinked: this is what must not drift)."""
    root = tmp_path_factory.mktemp("neo4j-incremental") / "repo"
    devset.make_repo(root)
    queries = devset.load_queries()
    with devbench.indexed(root, "neo4j", neo4j_server.uri, neo4j_server.auth) as (svc, _idx):
        edit_delete_add(root, add=True)
        svc.reindex()
        svc.embed_missing()
        incremental = rankings(svc, queries, digits=4)
    fresh = fresh_copy(root, root.parent / "fresh")
    with devbench.indexed(fresh, "neo4j", neo4j_server.uri, neo4j_server.auth) as (svc2, _idx2):
        rebuilt = rankings(svc2, queries, digits=4)
    differ = [k for k in incremental if incremental[k] != rebuilt[k]]
    assert not differ, f"{len(differ)} query/mode pairs differ, e.g. {differ[:2]}"
