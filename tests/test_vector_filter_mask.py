"""SQLite `vector_search` keeps the mask of each filter with its cached matrix (issue 29: at 100k
memories the viewer's filter query cost more than the cosine): the hits must be those of
filtering every row again, for every filter, across writes through this connection and another."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

import numpy as np

from ccmemory.core.model import Memory, Relation, parse_timestamp
from ccmemory.index.base import FileRecord, Filters
from ccmemory.index.cosine import exact_scores
from ccmemory.index.sqlite import SQLiteIndex

TYPES = ["decision", "fact", "gotcha", "correction"]
EMB = "fake"
DIM = 16


def _records(rng: random.Random, n: int, version: int) -> tuple[list[FileRecord], dict[str, str]]:
    start = parse_timestamp("2024-01-01T00:00:00Z")
    assert start is not None
    recs, status = [], {}
    for i in range(n):
        mid = f"M{i:04d}"
        rels = [Relation("SUPERSEDES", f"M{rng.randrange(i):04d}")] if i and rng.random() < 0.15 else []
        m = Memory(
            id=mid,
            type=rng.choice(TYPES),
            title=f"memory {i} v{version}",
            body=f"body {i}",
            created=start + timedelta(days=rng.randint(0, 900)),
            topics=[rng.choice(["a", "b", "c"])],
            author=rng.choice(["alice", "bob"]),
            relations=rels,
        )
        recs.append(FileRecord(f"{mid}.md", version, 1, f"h{mid}v{version}", m))
        status[f"{mid}.md"] = rng.choice(["curated", "developmental"])
    return recs, status


def _fill(idx: SQLiteIndex, rng: np.random.Generator) -> None:
    todo = idx.missing_vectors("p", EMB)
    vecs = rng.normal(size=(len(todo), DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    idx.store_vectors(EMB, DIM, list(zip([h for h, _ in todo], vecs, strict=True)))


def _reference(idx: SQLiteIndex, q: np.ndarray, f: Filters, limit: int) -> list[tuple[str, float]]:
    """Every allowed memory scored, no cache: the best `limit`."""
    allowed = [m.id for m in idx.query(f, limit=10_000)]
    rows = idx.db.execute(
        "SELECT m.id, v.vec FROM memories m JOIN vectors v ON v.embedder = ? AND v.text_hash = m.text_hash"
        " WHERE m.project = 'p'",
        (EMB,),
    ).fetchall()
    vec = {mid: np.frombuffer(blob, dtype=np.float32) for mid, blob in rows}
    ids = sorted(i for i in allowed if i in vec)
    if not ids:
        return []
    return exact_scores(ids, np.stack([vec[i] for i in ids]), q)[:limit]


def test_cached_filter_masks_match_a_fresh_filter(tmp_path: Path) -> None:
    rng, nrng = random.Random(29), np.random.default_rng(29)
    path = tmp_path / "i.db"
    idx, other = SQLiteIndex(path), SQLiteIndex(path)
    filters = [
        Filters("p", viewer="alice"),
        Filters("p", viewer="bob"),
        Filters("p", viewer="alice", types=["fact", "gotcha"]),
        Filters("p", viewer="bob", types=["fact", "gotcha"]),
        Filters("p", status="developmental"),
        Filters("p", topics=["a"], include_superseded=True),
        Filters("p", viewer="alice", since=parse_timestamp("2025-01-01T00:00:00Z")),
        Filters("p"),
        Filters("p", include_superseded=True),
    ]
    for version in range(4):
        writer = idx if version % 2 else other  # the cache must see writes from either connection
        recs, status = _records(rng, 120, version)
        writer.apply("p", recs, [], status.__getitem__)
        _fill(writer, nrng)
        for _ in range(3):  # repeated: the second and third rounds are served from the masks
            for f in filters:
                q = nrng.normal(size=DIM).astype(np.float32)
                q /= np.linalg.norm(q)
                assert idx.vector_search(EMB, q, f, limit=7) == _reference(idx, q, f, 7), f
    idx.close()
    other.close()
