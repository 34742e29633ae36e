"""Neo4j's vector half asks the HNSW index for a small `k` first (issue 29: at 100k the HNSW query
costs in proportion to `k`), then for the larger `k` used before when the filters leave fewer
than `limit` of those candidates, then scans exactly. Each step must give what it gave alone:
the second pass the answer of the single k = 5 x limit query of before, the scan the exact
top `limit` of the filtered memories. An HNSW pass returns the candidates near its `limit`-th by
Lucene's float32 score and the client keeps the exact top `limit`: the answer of the statement
of before, which recomputed every candidate's cosine on the server and kept its top `limit`."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from ccmemory.core.model import Memory, parse_timestamp
from ccmemory.index.base import FileRecord, Filters
from ccmemory.index.cosine import exact_scores
from ccmemory.index.neo4j import vectors
from ccmemory.index.neo4j.filters import where_clause
from ccmemory.index.neo4j.schema import VECTOR_INDEX

pytestmark = pytest.mark.neo4j

EMB, DIM, N, LIMIT = "passes-test", 8, 1000, 60
# 1000 memories: 600 facts, 300 gotchas, 100 decisions. With LIMIT 60 and the factors 2 and 5
# (set below: the product's 3 and 5 leave too narrow a gap at this size) the passes are k = 120
# and k = 300: no filter needs the second pass, gotchas (30 %: ~36 of 120, ~90 of 300) need it,
# decisions (10 %: ~30 of 300) need the scan.
TYPES = ["fact"] * 6 + ["gotcha"] * 3 + ["decision"]


def _setup(server: Any) -> tuple[Any, str, dict[str, str], dict[str, np.ndarray]]:
    from ccmemory.index.neo4j import Neo4jIndex

    project = "passes-" + uuid.uuid4().hex[:8]
    idx = Neo4jIndex(server.uri, server.user, server.password)
    start = parse_timestamp("2025-01-01T00:00:00Z")
    assert start is not None
    recs = []
    for i in range(N):
        m = Memory(
            id=f"P{i:04d}",
            type=TYPES[i % len(TYPES)],
            title=f"memory number {i}",
            body=f"body of memory {i}",
            created=start + timedelta(hours=i),
        )
        recs.append(FileRecord(f"m{i}.md", 1, 1, f"h{i}", m))
    idx.apply(project, recs, [], lambda path: "curated")
    rng = np.random.default_rng(44)
    by_hash: dict[str, np.ndarray] = {}
    for h, _ in idx.missing_vectors(project, EMB):
        v = rng.normal(size=DIM).astype(np.float32)
        by_hash[h] = v / np.linalg.norm(v)
    idx.store_vectors(EMB, DIM, list(by_hash.items()))
    rows = idx._read(
        "MATCH (m:Memory {project: $p}) RETURN m.id AS id, m.text_hash AS h, m.type AS t", p=project
    )
    vec_of = {r["id"]: by_hash[r["h"]] for r in rows}
    type_of = {r["id"]: r["t"] for r in rows}
    return idx, project, type_of, vec_of


def _exact(vec_of: dict[str, np.ndarray], ids: list[str], q: np.ndarray, n: int) -> list[str]:
    scores = {i: round(float(vec_of[i].astype(np.float64) @ q.astype(np.float64)), 6) for i in ids}
    return sorted(ids, key=lambda i: (-scores[i], i))[:n]


def test_passes_then_exact_scan(neo4j_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    idx, project, type_of, vec_of = _setup(neo4j_server)
    statements: list[tuple[str, int | None]] = []
    read = idx._read

    def counting(query: str, **params: Any) -> list[Any]:
        if "queryNodes" in query:
            statements.append(("hnsw", params["k"]))
        elif "vector.similarity.cosine" in query:
            statements.append(("scan", None))
        return read(query, **params)

    idx._read = counting
    assert vectors.ann_passes(100) == [300, 500]  # the product's passes for 100 candidates
    assert vectors.ann_passes(8) == [100]  # small limits: one query at the least k
    monkeypatch.setattr(vectors, "ANN_K_FACTORS", (2, 5))
    assert vectors.ann_passes(LIMIT) == [120, 300]
    rng = np.random.default_rng(7)
    try:
        for _ in range(5):
            q = rng.normal(size=DIM).astype(np.float32)
            q /= np.linalg.norm(q)
            for types, expect in (
                (None, [("hnsw", 120)]),
                (["gotcha"], [("hnsw", 120), ("hnsw", 300)]),
                (["decision"], [("hnsw", 120), ("hnsw", 300), ("scan", None)]),
            ):
                f = Filters(project, types=types)
                statements.clear()
                got = idx.vector_search(EMB, q, f, LIMIT)
                assert statements == expect, types
                assert len(got) == LIMIT
                ids = [m for m, _ in got]
                assert all(type_of[m] in (types or TYPES) for m in ids)
                # the scores are the exact ones, best first
                assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
                for m, s in got:
                    assert s == round(float(vec_of[m].astype(np.float64) @ q.astype(np.float64)), 6)
                wanted = [m for m, t in type_of.items() if types is None or t in types]
                exact = _exact(vec_of, wanted, q, LIMIT)
                if types == ["decision"]:
                    assert ids == exact  # the scan: the exact top LIMIT of the filtered memories
                else:
                    assert len(set(ids) & set(exact)) >= 0.9 * LIMIT  # approximate, and close
                    # what the statement of before gave at the k that answered
                    answered = expect[-1][1]
                    assert answered is not None
                    where, params = where_clause(f)
                    before = read(
                        "CALL db.index.vector.queryNodes($index, $k, $v) YIELD node AS e, score AS s "
                        "WHERE e.embedder = $emb MATCH (m:Memory {project: $p, text_hash: e.text_hash}) "
                        f"WHERE {where} WITH m, e, vector.similarity.cosine(e.embedding, $v) AS s "
                        "RETURN m.id AS id, e.embedding AS v, s ORDER BY s DESC, id ASC LIMIT $limit",
                        index=VECTOR_INDEX,
                        k=answered,
                        v=[float(x) for x in q],
                        emb=EMB,
                        p=project,
                        limit=LIMIT,
                        **params,
                    )
                    assert got == exact_scores([r["id"] for r in before], [r["v"] for r in before], q)
                    # the pass that answered gives what that single query gives
                    vectors.ANN_K_FACTORS = (answered / LIMIT,)
                    try:
                        assert idx.vector_search(EMB, q, f, LIMIT) == got
                    finally:
                        vectors.ANN_K_FACTORS = (2, 5)
    finally:
        idx._read = read
        idx.close()
