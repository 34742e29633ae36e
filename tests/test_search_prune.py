"""`search` reads the memories of only as many candidates as can still reach the top `limit`
(issue 29): the results must be exactly those of scoring every candidate, on a random vault
with every prior varying (type, status, confidence, age, query intent) and expansion on."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

import pytest

import ccmemory.retrieval.search as search_mod
from ccmemory.core.model import Memory, Relation, parse_timestamp
from ccmemory.index.base import FileRecord, Filters
from ccmemory.index.sqlite import SQLiteIndex
from ccmemory.retrieval.search import TYPE_WEIGHT, search

WORDS = "redis cache timeout token login deploy release retry webhook cursor graphql flag".split()
QUERIES = [
    "redis cache",
    "token",
    "how do we deploy a release",
    "what went wrong with retry",
    "cursor flag redis",
]


def _vault(tmp_path: Path, n: int = 300) -> SQLiteIndex:
    rng = random.Random(29)
    start = parse_timestamp("2024-01-01T00:00:00Z")
    assert start is not None
    recs, status = [], {}
    for i in range(n):
        mid = f"M{i:04d}"
        rels = [Relation("RELATES_TO", f"M{rng.randrange(i):04d}")] if i and rng.random() < 0.3 else []
        m = Memory(
            id=mid,
            type=rng.choice(sorted(TYPE_WEIGHT)),
            title=" ".join(rng.choices(WORDS, k=3)),
            body=" ".join(rng.choices(WORDS, k=rng.randint(3, 30))),
            created=start + timedelta(days=rng.randint(0, 900)),
            topics=[rng.choice(["a", "b", "c", "d"])],
            confidence=rng.choice([None, 0.2, 0.5, 0.9]),
            relations=rels,
        )
        recs.append(FileRecord(f"{mid}.md", 1, 1, f"h{mid}", m))
        status[f"{mid}.md"] = rng.choice(["curated", "developmental"])
    idx = SQLiteIndex(tmp_path / "i.db")
    idx.apply("p", recs, [], lambda path: status[path])
    return idx


def _run(idx: SQLiteIndex, q: str, limit: int) -> list[tuple[str, float, str | None, bool, dict[str, float]]]:
    now = parse_timestamp("2026-11-26T00:00:00Z")
    resp = search(idx, q, Filters("p"), limit=limit, mode="text", now=now)
    return [(h.memory.id, h.score, h.via, h.weak, h.parts) for h in resp.hits]


def test_pruned_scoring_gives_the_full_ranking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    idx = _vault(tmp_path)
    pruned = {(q, k): _run(idx, q, k) for q in QUERIES for k in (1, 3, 10, 40)}
    monkeypatch.setattr(search_mod, "_prior_bound", lambda asked: float("inf"))  # score everything
    full = {(q, k): _run(idx, q, k) for q in QUERIES for k in (1, 3, 10, 40)}
    assert pruned == full
    assert all(len(v) == k for (q, k), v in full.items())


def test_the_bound_is_above_every_prior(tmp_path: Path) -> None:
    idx = _vault(tmp_path, 60)
    now = parse_timestamp("2026-11-26T00:00:00Z")
    for q in QUERIES:
        for h in search(idx, q, Filters("p"), limit=60, mode="text", now=now, expand=False).hits:
            p = h.parts
            product = p["type"] * p["status"] * p["confidence"] * p["recency"] * p["intent"]
            asked = search_mod.intent.wanted_types(q)
            assert product <= search_mod._prior_bound(asked)
