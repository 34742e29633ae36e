"""Embeddings on the server: `(:Embedding {embedder, text_hash})` and one vector index."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import neo4j
from neo4j.exceptions import Neo4jError

from ccmemory.index.base import Filters, IndexUnavailable, embed_text
from ccmemory.index.cosine import exact_scores
from ccmemory.index.neo4j.connection import Connection, wrap_errors
from ccmemory.index.neo4j.filters import memory_of, still_memories, where_clause
from ccmemory.index.neo4j.queries import RETURN_MEMORY
from ccmemory.index.neo4j.schema import VECTOR_INDEX
from ccmemory.index.neo4j_retry import run_schema

#: The HNSW queries `vector_search` tries, as multiples of its `limit` (each at least
#: `ANN_MIN_K`), until one leaves `limit` memories after the filters; then the exact scan.
#: HNSW is approximate and its cost grows with `k` (its beam width in every Lucene segment:
#: at 100k, k = 300 ~20 ms, k = 500 ~27-36 ms); k = 3 x limit kept the final hybrid top-10
#: of 104 of 105 queries as k = 5 x limit had it, and lost no exact top-1 (k = 2 x limit: 98,
#: and one vector top-1). The second pass gives a filtered search the answer of the single
#: k = 5 x limit query used before (bench/RESULTS-neo4j.md, "Hybrid search at 100k: the HNSW k").
ANN_K_FACTORS: tuple[float, ...] = (3, 5)
ANN_MIN_K = 100
#: Lucene's cosine score, (1 + cos) / 2 in float32, is within ~1e-6 of the exact one; the HNSW
#: query returns every candidate within this of the `limit`-th by that score, a superset of the
#: exact top `limit`, which the client then picks (see `vector_search`).
ANN_SCORE_MARGIN = 1e-4


def ann_passes(limit: int) -> list[int]:
    """The `k` of each HNSW query for `limit` results, smallest first, without repeats."""
    out: list[int] = []
    for factor in ANN_K_FACTORS:
        k = max(int(limit * factor), ANN_MIN_K)
        if k not in out:
            out.append(k)
    return out


class VectorStore(Connection):
    @wrap_errors
    def missing_vectors(self, project: str, embedder: str) -> list[tuple[str, str]]:
        """The scan looks for an embedding of every memory of the project (1.5 s at 100k even
        when none is missing, and the warm process runs it before each CLI search). A scan that
        found none missing is remembered with the stamp taken just before it
        (`Connection._read_stamped`: the last commit, of any client); while the stamp is the
        same nothing was committed, so the answer is still none. Any commit, or no stamp, scans."""
        key = (project, embedder)
        _, stamp = self._read_stamped("RETURN 1 AS one")
        if stamp is not None and self._none_missing.get(key) == stamp:
            return []
        self._none_missing.pop(key, None)
        rows = self._read(
            "MATCH (m:Memory {project: $p}) WHERE NOT EXISTS { "
            "  MATCH (e:Embedding {embedder: $emb, text_hash: m.text_hash}) } "
            f"RETURN m.text_hash AS text_hash, {RETURN_MEMORY} ORDER BY m.id",
            p=project,
            emb=embedder,
        )
        seen: dict[str, str] = {}
        for r in still_memories(rows):
            seen.setdefault(r["text_hash"], embed_text(memory_of(r)))
        if not seen and stamp is not None:
            self._none_missing[key] = stamp
        return sorted(seen.items())

    def _ensure_vector_index(self, dim: int) -> None:
        if self._vector_dim == dim:
            return
        rows = self._read(
            "SHOW VECTOR INDEXES YIELD name, options WHERE name = $name RETURN options", name=VECTOR_INDEX
        )
        current = None
        if rows:
            cfg = (rows[0]["options"] or {}).get("indexConfig") or {}
            current = cfg.get("vector.dimensions")
            if cfg.get("vector.quantization.enabled"):
                current = -1  # quantized scores are approximate: rebuild without quantization
        if current is not None and int(current) != dim:
            with self._session() as s:
                s.run(f"DROP INDEX {VECTOR_INDEX} IF EXISTS").consume()
            current = None
        if current is None:
            with self._session() as s:
                # the dimension is an int we checked, not user text
                run_schema(
                    s,
                    f"CREATE VECTOR INDEX {VECTOR_INDEX} IF NOT EXISTS FOR (e:Embedding) ON e.embedding "
                    f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dim)}, "
                    "`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}}",
                )
                s.run("CALL db.awaitIndexes(300)").consume()
        self._vector_dim = dim

    @wrap_errors
    def store_vectors(self, embedder: str, dim: int, items: Sequence[tuple[str, Any]]) -> None:
        if not items:
            return
        dim = int(dim)
        if not 0 < dim <= 4096:
            raise IndexUnavailable(f"Neo4j index at {self.location}: bad vector dimension {dim}")
        self._ensure_vector_index(dim)
        rows = [{"h": h, "v": [float(x) for x in v]} for h, v in items]

        def work(tx: neo4j.ManagedTransaction) -> None:
            for start in range(0, len(rows), 1000):
                tx.run(
                    "UNWIND $rows AS row MERGE (e:Embedding {embedder: $emb, text_hash: row.h}) "
                    "SET e.dim = $dim, e.embedding = row.v",
                    emb=embedder,
                    dim=dim,
                    rows=rows[start : start + 1000],
                ).consume()

        self._write(work)

    @wrap_errors
    def vector_search(
        self, embedder: str, vector: Any, f: Filters, limit: int = 50
    ) -> list[tuple[str, float]]:
        query = [float(x) for x in vector]
        dims = self._read(
            "MATCH (m:Memory {project: $p}) MATCH (e:Embedding {embedder: $emb, text_hash: m.text_hash}) "
            "RETURN e.dim AS dim LIMIT 1",
            p=f.project,
            emb=embedder,
        )
        if not dims:
            return []
        if int(dims[0]["dim"]) != len(query):
            raise IndexUnavailable(
                f"vector dimension mismatch: index has {dims[0]['dim']}, query has {len(query)}"
            )
        where, params = where_clause(f)
        rows: list[Any] = []
        for k in ann_passes(limit):
            try:
                rows = self._read(
                    "CALL db.index.vector.queryNodes($index, $k, $v) YIELD node AS e, score AS s "
                    "WHERE e.embedder = $emb "
                    "MATCH (m:Memory {project: $p, text_hash: e.text_hash}) "
                    f"WHERE {where} "
                    "WITH m.id AS id, e, s ORDER BY s DESC "
                    "WITH collect({id: id, e: e, s: s}) AS found "
                    "WITH found, CASE WHEN size(found) >= $limit "
                    "  THEN found[$limit - 1].s - $margin ELSE -1.0 END AS cut "
                    "UNWIND found AS r WITH r WHERE r.s >= cut "
                    "RETURN r.id AS id, r.e.embedding AS v",
                    index=VECTOR_INDEX,
                    k=k,
                    p=f.project,
                    emb=embedder,
                    v=query,
                    limit=limit,
                    margin=ANN_SCORE_MARGIN,
                    **params,
                )
            except Neo4jError as exc:
                # One vector index serves the whole server; another project's embedder may have
                # left it at another dimension. The exact scan below still answers.
                if "dimensions" not in str(exc):
                    raise
                rows = []
                break
            if len(rows) >= limit:
                break
        if len(rows) < limit:
            rows = self._read(
                "MATCH (m:Memory {project: $p}) "
                f"WHERE {where} "
                "MATCH (e:Embedding {embedder: $emb, text_hash: m.text_hash}) "
                "WITH m, e, vector.similarity.cosine(e.embedding, $v) AS s "
                "RETURN m.id AS id, e.embedding AS v, s ORDER BY s DESC, id ASC LIMIT $limit",
                p=f.project,
                emb=embedder,
                v=query,
                limit=limit,
                **params,
            )
        # the server selects; the one client-side function scores, as on SQLite (cosine.py).
        # An HNSW pass sends every candidate within ANN_SCORE_MARGIN of its `limit`-th by
        # Lucene's float32 score (cheaper than recomputing the cosine of all `k` in double on
        # the server, ~5 ms at k = 300); any memory of the exact top `limit` among the candidates
        # is in that set, and the client keeps the top `limit` by the exact score.
        return exact_scores([r["id"] for r in rows], [r["v"] for r in rows], vector, top=limit)
