"""SQLite `query` with several types runs one indexed range per type and merges them (issue 29:
`type IN (...)` made SQLite read every memory of those types to sort them, or walk past every
other memory for a rare type). The answer must be that of the single `IN` query, for every
limit and offset, with other filters, ties on `created` broken by id as ORDER BY does."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

from ccmemory.core.model import Memory, Relation, parse_timestamp
from ccmemory.index.base import FileRecord, Filters
from ccmemory.index.sqlite import SQLiteIndex

TYPES = ["decision", "fact", "gotcha", "correction", "hypothesis"]


def _index(tmp_path: Path) -> SQLiteIndex:
    rng = random.Random(5)
    start = parse_timestamp("2024-01-01T00:00:00Z")
    assert start is not None
    recs, status = [], {}
    for i in range(300):
        mid = f"M{rng.randrange(10**6):06d}{i:03d}"
        rels = [Relation("SUPERSEDES", recs[rng.randrange(i)].memory.id)] if i and rng.random() < 0.1 else []
        m = Memory(
            id=mid,
            type=rng.choices(TYPES, weights=[40, 30, 20, 9, 1])[0],
            title=f"memory {i}",
            body=f"body {i}",
            created=start + timedelta(days=rng.randint(0, 60)),  # many ties on `created`
            topics=[rng.choice(["a", "b"])],
            author=rng.choice(["alice", "bob"]),
            relations=rels,
        )
        recs.append(FileRecord(f"{mid}.md", 1, 1, f"h{mid}", m))
        status[f"{mid}.md"] = rng.choice(["curated", "developmental"])
    idx = SQLiteIndex(tmp_path / "index.db")
    idx.apply("p", recs, [], status.__getitem__)
    return idx


def _one_query(idx: SQLiteIndex, f: Filters, limit: int, offset: int) -> list[str]:
    where, params = idx._where(f)
    rows = idx.db.execute(
        f"SELECT m.id FROM memories m WHERE {where} ORDER BY m.created DESC, m.id DESC LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    return [r[0] for r in rows]


def test_several_types_merge_like_one_in_query(tmp_path: Path) -> None:
    idx = _index(tmp_path)
    kinds = [["correction", "fact", "decision"], ["gotcha", "hypothesis"], ["hypothesis", "fact"], TYPES]
    cases = 0
    for types in kinds:
        for extra in ({}, {"status": "developmental"}, {"topics": ["a"]}, {"viewer": "bob"}):
            f = Filters("p", types=types, **extra)
            for limit, offset in ((1, 0), (6, 0), (20, 0), (40, 3), (500, 0), (10, 250)):
                want = _one_query(idx, f, limit, offset)
                got = [m.id for m in idx.query(f, limit=limit, offset=offset)]
                assert got == want, (types, extra, limit, offset)
                cases += 1
    assert cases == 96
    plan = " ".join(
        r[3]
        for r in idx.db.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM memories m WHERE project = ? AND type IN (?)"
            " ORDER BY created DESC LIMIT 5",
            ("p", "hypothesis"),
        )
    )
    assert "memories_type" in plan
