"""Retrieval on the developer-memory dev set (bench/memories), through the product's search.

The real local embedder and real indexes: the set is small (151 memories), so this runs in seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ccmemory.index.base import text_hash
from ccmemory.text import intent
from tests.devset_util import devbench, devset, edit_delete_add, fresh_copy, rankings


def test_dev_set_shape() -> None:
    specs = devset.parse_specs()
    queries = devset.load_queries()
    assert len(specs) >= 150 and len(queries) >= 60
    assert {q.split for q in queries} == {"T", "H"}
    assert {q.kind for q in queries} == {"para", "intent", "newer", "keyword"}
    chains = [s for s in specs if s.supersedes]
    assert len(chains) >= 8
    # the committed files are exactly what the spec generates (ids are deterministic)
    ids = devset.keys()
    assert ids == {s.key: s.memory.id for s in specs}
    files = sorted(p.name for p in devset.FILES.rglob("*.md"))
    assert len(files) == len(specs)


@pytest.mark.parametrize(("name", "split"), [("blind", "H"), ("tuning2", "T")])
def test_other_sets_shape_and_files(name: str, split: str) -> None:
    """The blind set (every query held out) and the second tuning set: files as generated."""
    try:
        devset.select(name)
        specs = devset.parse_specs()
        queries = devset.load_queries()
        assert len(specs) >= 100 and len(queries) >= 60
        assert {q.split for q in queries} == {split}
        assert {q.kind for q in queries} == {"para", "intent", "newer", "keyword"}
        assert len([s for s in specs if s.supersedes]) >= 10
        ids = devset.keys()
        assert ids == {s.key: s.memory.id for s in specs}
        assert len(list(devset.FILES.rglob("*.md"))) == len(specs)
        assert all(t in ids for q in queries for t in q.targets)
    finally:
        devset.select("main")


def test_dev_set_indexes_cleanly(tmp_path: Path) -> None:
    devset.make_repo(tmp_path / "r")
    with devbench.indexed(tmp_path / "r", "sqlite") as (svc, idx):
        assert idx.file_problems(svc.project) == []
        assert idx.count(svc.filters(include_superseded=True)) == len(devset.keys())


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("what did we try that failed", {"failed_approach"}),
        ("approaches we gave up on", {"failed_approach"}),
        ("what are we not allowed to do", {"fact", "preference"}),
        ("what did we get wrong about time zones", {"correction"}),
        ("exceptions to the release rule", {"exception", "fact", "preference"}),
        ("where is the redis cache configured", set()),
        # a task prompt (imperative) asks for what to check before acting
        ("refactor the pdf renderer to stream pages", set(intent.CHECK_FIRST)),
        ("please bump the stripe client library", set(intent.CHECK_FIRST)),
        ("can you rename the billing module", set(intent.CHECK_FIRST)),
        ("let's migrate sessions off redis", set(intent.CHECK_FIRST)),
        ("fix the wrong rounding in totals", set(intent.CHECK_FIRST)),  # correction is in it
        ("which formatter do we use", set()),  # a question, not a task
        ("adding a column froze writes", set()),  # a report, not an imperative
    ],
)
def test_query_intent(query: str, wanted: set[str]) -> None:
    assert intent.wanted_types(query) == wanted


def test_incremental_reindex_equals_rebuild(tmp_path: Path) -> None:
    """After a hand edit and a delete, the incrementally updated index ranks and scores exactly like
    a rebuilt one, in every mode."""
    root = tmp_path / "r"
    devset.make_repo(root)
    queries = devset.load_queries()
    with devbench.indexed(root, "sqlite") as (svc, idx):
        edit_delete_add(root, add=False)
        svc.reindex()
        svc.embed_missing()
        incremental = rankings(svc, queries)
        vectors_inc = _vectors(idx, svc)
    with devbench.indexed(fresh_copy(root, tmp_path / "fresh"), "sqlite") as (svc2, idx2):
        rebuilt = rankings(svc2, queries)
        vectors_new = _vectors(idx2, svc2)
    assert vectors_inc == vectors_new  # a vector is a pure function of (embedder, text)
    differ = [k for k in incremental if incremental[k] != rebuilt[k]]
    assert not differ, f"{len(differ)} (mode, query) pairs rank or score differently, e.g. {differ[:2]}"


def _vectors(idx, svc) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    rows = idx.db.execute("SELECT text_hash, vec FROM vectors WHERE embedder = ?", (svc.embedder().name,))
    hashes = {text_hash(m) for m in idx.query(svc.filters(include_superseded=True), limit=1000)}
    return {h: bytes(v) for h, v in rows if h in hashes}


def test_hybrid_not_worse_than_either_signal_sqlite(tmp_path: Path) -> None:
    """On both halves of the dev set, hybrid hit@3 >= text and >= semantic (the shipped recipe)."""
    devset.make_repo(tmp_path / "r")
    with devbench.indexed(tmp_path / "r", "sqlite") as (svc, _idx):
        emb = devbench.CachedQueries(svc.embedder())
        res = devbench.evaluate(svc, emb, devset.load_queries())
        for half in ("T", "H"):
            hybrid = res[("hybrid", half)][1]
            assert hybrid >= res[("text", half)][1], (half, res)
            assert hybrid >= res[("semantic", half)][1], (half, res)
        failed = devbench.rank(svc, emb, "what did we try that failed", "hybrid")
        types = {m.id: m.type for m in svc.index.get(svc.project, failed)}
        top = [types[i] for i in failed[:3]]
        assert top[0] == "failed_approach", top
