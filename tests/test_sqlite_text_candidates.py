"""FTS5 candidates at scale (issue 29): `_text_candidates` filters FTS5's best matches in steps
(the first _FIRST, then up to _PREFIX, then the full query) and must return exactly what one
query over every match gives, whatever share of the matches the filters keep."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

from ccmemory.core.model import Memory, parse_timestamp
from ccmemory.index.base import FileRecord, Filters
from ccmemory.index.query import fts_match_terms
from ccmemory.index.sqlite import _BM25, SQLiteIndex
from ccmemory.retrieval.search import TYPE_WEIGHT
from ccmemory.text import analyzer, bm25

WORDS = "redis cache timeout token login deploy".split()


def _reference(idx: SQLiteIndex, match: str, f: Filters) -> list[tuple[int, str]]:
    where, params = idx._where(f)
    return idx.db.execute(
        f"SELECT m.rid, m.id FROM (SELECT rowid AS rid, {_BM25} AS r FROM memory_fts WHERE memory_fts MATCH ?) h"
        f" JOIN memories m ON m.rid = h.rid WHERE {where} ORDER BY h.r, m.id LIMIT ?",
        [match, *params, bm25.CANDIDATE_CAP],
    ).fetchall()


def test_candidates_equal_one_query_over_every_match(tmp_path: Path) -> None:
    rng = random.Random(29)
    start = parse_timestamp("2025-01-01T00:00:00Z")
    assert start is not None
    recs, status = [], {}
    for i in range(900):
        m = Memory(
            id=f"M{i:04d}",
            type=rng.choice(sorted(TYPE_WEIGHT)),
            title=" ".join(rng.choices(WORDS, k=2)),
            body=" ".join(rng.choices(WORDS, k=rng.randint(1, 12))),
            created=start + timedelta(days=i),
            author=rng.choice(["a@x", "b@x"]),
        )
        recs.append(FileRecord(f"m{i}.md", 1, 1, f"h{i}", m))
        status[f"m{i}.md"] = "curated" if rng.random() < 0.7 else "developmental"
    idx = SQLiteIndex(tmp_path / "i.db")
    idx.apply("p", recs, [], lambda path: status[path])
    filters = [
        Filters("p"),
        Filters("p", viewer="a@x"),
        Filters("p", types=["fact"]),
        Filters("p", types=["fact", "decision", "gotcha", "insight", "pattern", "question", "reference"]),
        Filters("p", status="developmental"),
        Filters("p", since=start + timedelta(days=700)),
    ]
    for q in ["redis", "redis cache", "token login deploy", "timeout"]:
        match = fts_match_terms(analyzer.query_terms(q))
        for f in filters:
            assert idx._text_candidates(match, f) == _reference(idx, match, f), (q, f)
