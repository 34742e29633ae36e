"""Retrieval on the developer-memory dev set (bench/memories), through the product's search.

The real local embedder and real indexes: the set is small (151 memories), so this runs in seconds.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from ccmemory import intent
from ccmemory.index.base import text_hash

BENCH = Path(__file__).resolve().parent.parent / "bench" / "memories"
sys.path.insert(0, str(BENCH))

import devset  # noqa: E402
import run as devbench  # noqa: E402


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
    ],
)
def test_query_intent(query: str, wanted: set[str]) -> None:
    assert intent.wanted_types(query) == wanted


def _rankings(svc, emb, queries, mode):  # type: ignore[no-untyped-def]
    """Top-5 ids with their scores (6 places) per query: equal scores, not only equal order, so
    stale collection statistics or vectors after an edit would show."""
    from ccmemory.index.base import Filters
    from ccmemory.search import search

    f = Filters(project=svc.project, viewer=svc.viewer)
    out = {}
    for q in queries:
        resp = search(svc.index, q.text, f, limit=5, mode=mode, embedder=emb, now=devbench.NOW)
        out[q.text] = [(h.memory.id, round(h.score, 6)) for h in resp.hits]
    return out


def test_incremental_reindex_equals_rebuild(tmp_path: Path) -> None:
    """After a hand edit and a delete, the incrementally updated index ranks and scores exactly like
    a rebuilt one, in every mode."""
    root = tmp_path / "r"
    devset.make_repo(root)
    queries = devset.load_queries()
    edited = next(devset.FILES.glob("gotchas/*thundering*"))
    deleted = next(devset.FILES.glob("decisions/*graphql*"))
    with devbench.indexed(root, "sqlite") as (svc, idx):
        emb = devbench.CachedQueries(svc.embedder())
        path = root / ".ccmemory" / edited.relative_to(devset.FILES)
        path.write_text(path.read_text().replace("200 workers", "two hundred workers"))
        (root / ".ccmemory" / deleted.relative_to(devset.FILES)).unlink()
        svc.reindex()
        svc.embed_missing()
        incremental = {m: _rankings(svc, emb, queries, m) for m in ("text", "semantic", "hybrid")}
        vectors_inc = _vectors(idx, svc)
    fresh = tmp_path / "fresh"
    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns("local"))
    (fresh / ".ccmemory" / "local").mkdir()
    with devbench.indexed(fresh, "sqlite") as (svc2, idx2):
        rebuilt = {m: _rankings(svc2, emb, queries, m) for m in ("text", "semantic", "hybrid")}
        vectors_new = _vectors(idx2, svc2)
    assert vectors_inc == vectors_new  # a vector is a pure function of (embedder, text)
    for mode in ("text", "semantic", "hybrid"):
        differ = [q for q in incremental[mode] if incremental[mode][q] != rebuilt[mode][q]]
        assert not differ, f"{mode}: {len(differ)} queries rank or score differently, e.g. {differ[:2]}"


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
