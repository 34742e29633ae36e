"""Full-text candidates on Neo4j at scale (issue 29): `_text_candidates` filters Lucene's best k
matches of the server (k growing, then every match) and must return exactly what filtering every
match gives, whatever share of the matches the filters keep and whatever other projects hold."""

from __future__ import annotations

import random
import uuid
from datetime import timedelta
from typing import Any

import pytest

from ccmemory.core.model import Memory, parse_timestamp
from ccmemory.index.base import FileRecord, Filters
from ccmemory.index.query import lucene_match_terms
from ccmemory.retrieval.search import TYPE_WEIGHT
from ccmemory.text import analyzer

pytestmark = pytest.mark.neo4j

WORDS = "redis cache timeout token login deploy".split()


def _records(rng: random.Random, n: int, prefix: str) -> tuple[list[FileRecord], dict[str, str]]:
    start = parse_timestamp("2025-01-01T00:00:00Z")
    assert start is not None
    recs, status = [], {}
    ids: list[str] = []
    for i in range(n):
        mid = f"{prefix}{i:04d}"
        m = Memory(
            id=mid,
            type=rng.choice(sorted(TYPE_WEIGHT)),
            title=" ".join(rng.choices(WORDS, k=2)),
            body=" ".join(rng.choices(WORDS, k=rng.randint(1, 12))),
            created=start + timedelta(days=i),
            author=rng.choice(["a@x", "b@x"]),
            supersedes=[rng.choice(ids)] if ids and rng.random() < 0.1 else [],
        )
        ids.append(mid)
        recs.append(FileRecord(f"m{i}.md", 1, 1, f"h{i}", m))
        status[f"m{i}.md"] = "curated" if rng.random() < 0.7 else "developmental"
    return recs, status


def test_candidates_equal_filtering_every_match(neo4j_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from ccmemory.index.neo4j import Neo4jIndex, read

    rng = random.Random(29)
    project, other = "cand-" + uuid.uuid4().hex[:8], "cand-other-" + uuid.uuid4().hex[:8]
    idx = Neo4jIndex(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    try:
        for p, n, prefix in ((project, 500, "M"), (other, 300, "O")):
            recs, status = _records(rng, n, prefix)
            idx.apply(p, recs, [], lambda path, status=status: status[path])
        start = parse_timestamp("2025-01-01T00:00:00Z")
        assert start is not None
        filters = [
            Filters(project),
            Filters(project, include_superseded=True),
            Filters(project, viewer="a@x"),
            Filters(project, types=["fact"]),
            Filters(project, status="developmental"),
            Filters(project, since=start + timedelta(days=400)),
        ]
        cols = ("id", "t", "b", "f")
        fallbacks: list[int] = []
        every = idx._every_text_match
        monkeypatch.setattr(idx, "_every_text_match", lambda m, f: fallbacks.append(1) or every(m, f))
        # small steps, so every path runs: settled by the first k, by a larger one, by every match
        for steps in ((120, 240), (200,), read.TEXT_TOP_K):
            monkeypatch.setattr(read, "TEXT_TOP_K", steps)
            for q in ["redis", "redis cache", "token login deploy", "timeout"]:
                match = lucene_match_terms(analyzer.query_terms(q))
                for f in filters:
                    got = [tuple(r[c] for c in cols) for r in idx._text_candidates(match, f)[0]]
                    want = [tuple(r[c] for c in cols) for r in every(match, f)]
                    assert got == want, (steps, q, f)
                    assert got, (q, f)
        assert 0 < len(fallbacks) < 3 * 4 * len(filters)
    finally:
        idx.drop_project(project)
        idx.drop_project(other)
        idx.close()
