"""Reference chunks in the Neo4j index (mixed into Neo4jIndex).

Graph model, additive to the memory graph:

- ``(:RefFile {project, scope, path, mtime_ns, size, hash, status, meta, error, error_line})``,
  one per reference file a clone indexed (``scope`` as for MemoryFile: the indexing user);
- ``(:RefFile)-[:HAS_CHUNK]->(:Chunk {project, scope, id, path, ord, heading_path, heading,
  text, text_hash, links})``, and ``(:Chunk)-[:NEXT]->(:Chunk)`` in document order;
- ``(:Chunk)-[:REFERENCES]->(:Chunk)`` for markdown links between reference files (to the linked
  section, else the file's first chunk) and ``(:Chunk)-[:REFERENCES]->(:Memory)`` for links to
  memory files; ``(:Memory)-[:CITES_CHUNK]->(:Chunk)`` for every chunk of a reference file a
  memory CITES (its CITES relation itself points at an ``:Ident`` named by the URI, like any
  relation target). Links are re-resolved after every write and status refresh, so a target that
  appears later is linked by the next reindex.
- Vectors reuse ``(:Embedding {embedder, text_hash})``; full-text is the ``chunk_fulltext``
  index (english analyzer) over heading path and text.

Reference chunks are per scope: each clone searches the tree it indexed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ccmemory.index.base import (
    FileProblem,
    FileState,
    IndexedChunk,
    IndexUnavailable,
    chunk_embed_text,
    chunk_text_hash,
    cited_reference,
)
from ccmemory.index.cosine import exact_scores
from ccmemory.index.neo4j_retry import run_schema
from ccmemory.index.query import lucene_query

CHUNK_FULLTEXT = "chunk_fulltext"
_REF_SCHEMA = (
    "CREATE CONSTRAINT ref_file_key IF NOT EXISTS FOR (f:RefFile) "
    "REQUIRE (f.project, f.scope, f.path) IS UNIQUE",
    "CREATE CONSTRAINT chunk_key IF NOT EXISTS FOR (c:Chunk) REQUIRE (c.project, c.scope, c.id) IS UNIQUE",
    "CREATE INDEX chunk_path IF NOT EXISTS FOR (c:Chunk) ON (c.project, c.scope, c.path)",
    f"CREATE FULLTEXT INDEX {CHUNK_FULLTEXT} IF NOT EXISTS FOR (c:Chunk) ON EACH [c.heading, c.text] "
    "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}",
)
_RETURN_CHUNK = (
    "c.id AS id, c.path AS path, c.ord AS ord, c.heading_path AS heading_path, c.text AS text, "
    "f.status AS status, f.meta AS meta, c.text_hash AS text_hash"
)


def _chunk(r: Any) -> IndexedChunk:
    meta = json.loads(r["meta"]) if r["meta"] else {}
    return IndexedChunk(
        id=r["id"],
        path=r["path"],
        order=r["ord"],
        heading_path=json.loads(r["heading_path"]),
        text=r["text"],
        status=r["status"],
        title=meta.get("title"),
        source=meta.get("source"),
        cached_at=meta.get("cached_at"),
        tags=meta.get("tags") or [],
        text_hash=r["text_hash"],
    )


class ReferenceGraph:
    """The ReferenceIndex half of Neo4jIndex (see ccmemory.index.base.ReferenceIndex)."""

    scope: str
    location: str
    _session: Callable[[], Any]
    _write: Callable[[Callable[[Any], Any]], Any]  # Connection._write: a managed write transaction
    _read: Callable[..., list[Any]]
    _ref_ready: bool = False

    def _ref(self) -> None:
        if not self._ref_ready:
            with self._session() as s:
                for stmt in _REF_SCHEMA:
                    run_schema(s, stmt)
                s.run("CALL db.awaitIndexes(300)").consume()
            self._ref_ready = True

    def _q(self, query: str, **params: Any) -> list[Any]:
        self._ref()
        try:
            return self._read(query, **params)
        except Exception as exc:
            raise self._ref_error(exc) from None

    def _scoped(self, query: str, project: str, **params: Any) -> list[Any]:
        """`_q` with `$p` the project and `$s` this scope."""
        return self._q(query, p=project, s=self.scope, **params)

    def _exec(self, runner: Any, query: str, project: str, **params: Any) -> None:
        """Run one write statement on this scope's reference nodes (`runner`: a session or an
        open transaction); `$p` is the project and `$s` the scope in every statement."""
        runner.run(query, p=project, s=self.scope, **params).consume()

    def _ref_error(self, exc: BaseException) -> IndexUnavailable:
        err = getattr(self, "_error", None)
        if callable(err) and not isinstance(exc, IndexUnavailable):
            return err(exc)  # type: ignore[no-any-return,unused-ignore]
        return exc if isinstance(exc, IndexUnavailable) else IndexUnavailable(f"{self.location}: {exc}")

    def ref_file_states(self, project: str) -> dict[str, FileState]:
        rows = self._scoped(
            "MATCH (f:RefFile {project: $p, scope: $s}) RETURN f.path AS path, f.mtime_ns AS m, f.size AS n,"
            " f.hash AS h",
            project,
        )
        return {r["path"]: FileState(r["path"], r["m"], r["n"], r["h"]) for r in rows}

    def ref_apply(
        self, project: str, upserts: Sequence[Any], removed: Iterable[str], status_of: Callable[[str], str]
    ) -> None:
        self._ref()
        paths = list(removed) + [r.path for r in upserts]
        files = []
        chunks = []
        for rec in upserts:
            files.append(
                {
                    "path": rec.path,
                    "m": rec.mtime_ns,
                    "n": rec.size,
                    "h": rec.hash,
                    "status": status_of(rec.path),
                    "meta": None if rec.error else rec.meta_json(),
                    "error": rec.error,
                    "line": rec.error_line,
                }
            )
            if rec.error:
                continue
            by_chunk: dict[str, list[str]] = {}
            for cid, target, frag in rec.links:
                by_chunk.setdefault(cid, []).append(f"{target}#{frag}")
            for c in rec.chunks:
                chunks.append(
                    {
                        "path": rec.path,
                        "id": c.id,
                        "ord": c.order,
                        "hp": json.dumps(c.heading_path, ensure_ascii=False),
                        "heading": " ".join([rec.title or "", *c.heading_path]).strip(),
                        "text": c.text,
                        "th": chunk_text_hash(c.heading_path, c.text),
                        "links": by_chunk.get(c.id, []),
                    }
                )

        def work(tx: Any) -> None:
            self._exec(
                tx,
                "UNWIND $paths AS path MATCH (f:RefFile {project: $p, scope: $s, path: path}) "
                "OPTIONAL MATCH (f)-[:HAS_CHUNK]->(c:Chunk) DETACH DELETE c, f",
                project,
                paths=paths,
            )
            self._exec(
                tx,
                "UNWIND $files AS row CREATE (f:RefFile {project: $p, scope: $s, path: row.path,"
                " mtime_ns: row.m, size: row.n, hash: row.h, status: row.status, meta: row.meta,"
                " error: row.error, error_line: row.line})",
                project,
                files=files,
            )
            for start in range(0, len(chunks), 1000):
                self._exec(
                    tx,
                    "UNWIND $rows AS row MATCH (f:RefFile {project: $p, scope: $s, path: row.path}) "
                    "CREATE (f)-[:HAS_CHUNK]->(:Chunk {project: $p, scope: $s, id: row.id,"
                    " path: row.path, ord: row.ord, heading_path: row.hp, heading: row.heading,"
                    " text: row.text,"
                    " text_hash: row.th, links: row.links})",
                    project,
                    rows=chunks[start : start + 1000],
                )
            self._exec(
                tx,
                "UNWIND $paths AS path MATCH (a:Chunk {project: $p, scope: $s, path: path}) "
                "MATCH (b:Chunk {project: $p, scope: $s, path: path, ord: a.ord + 1}) "
                "CREATE (a)-[:NEXT]->(b)",
                project,
                paths=sorted({c["path"] for c in chunks}),
            )

        try:
            # managed transactions: the driver runs each again on a deadlock with another client
            # (the links below lock memory nodes every scope shares), as the memory writes do
            self._write(work)
            self._write(lambda tx: self._relink(tx, project))
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise self._ref_error(exc) from None

    def _relink(self, tx: Any, project: str) -> None:
        """Rebuild REFERENCES and CITES_CHUNK edges of this scope from the stored link targets, in
        transaction `tx` (a managed one: run again from the start on a deadlock)."""
        from ccmemory.core.reftree import REF_ROOT

        root = REF_ROOT + "/"
        self._exec(tx, "MATCH (:Chunk {project: $p, scope: $s})-[r:REFERENCES]->() DELETE r", project)
        self._exec(
            tx,
            "MATCH (:Memory {project: $p})-[r:CITES_CHUNK]->(:Chunk {project: $p, scope: $s}) DELETE r",
            project,
        )
        # links to reference files: the named section, else the file's first chunk
        self._exec(
            tx,
            "MATCH (a:Chunk {project: $p, scope: $s}) WHERE size(a.links) > 0 "
            "UNWIND a.links AS link WITH a, split(link, '#') AS parts WHERE parts[0] STARTS WITH $root "
            "WITH a, parts[0] AS path, substring(parts[0], size($root)) + '#' + parts[1] AS want "
            "MATCH (b:Chunk {project: $p, scope: $s, path: path}) "
            "WITH a, b ORDER BY (b.id = want) DESC, b.ord "
            "WITH a, head(collect(b)) AS b MERGE (a)-[:REFERENCES]->(b)",
            project,
            root=root,
        )
        # links to memory files: the memory that file currently serves
        self._exec(
            tx,
            "MATCH (a:Chunk {project: $p, scope: $s}) WHERE size(a.links) > 0 "
            "UNWIND a.links AS link WITH a, split(link, '#')[0] AS path WHERE NOT path STARTS WITH $root "
            "MATCH (m:Memory {project: $p, path: path}) MERGE (a)-[:REFERENCES]->(m)",
            project,
            root=root,
        )
        cites = [
            (r["src"], r["dst"])
            for r in tx.run(
                "MATCH (m:Memory {project: $p})-[:CITES]->(i:Ident) RETURN m.id AS src, i.id AS dst",
                p=project,
            )
        ]
        rows = []
        for src, dst in cites:
            ref = cited_reference(dst)
            if ref is not None:
                path, _, anchor = ref.partition("#")
                rows.append({"src": src, "path": root + path, "id": ref if anchor else None})
        self._exec(
            tx,
            "UNWIND $rows AS row MATCH (m:Memory {project: $p, id: row.src}) "
            "MATCH (c:Chunk {project: $p, scope: $s, path: row.path}) "
            "WHERE row.id IS NULL OR c.id = row.id MERGE (m)-[:CITES_CHUNK]->(c)",
            project,
            rows=rows,
        )

    def ref_refresh_status(self, project: str, status_of: Callable[[str], str]) -> int:
        rows = self._scoped(
            "MATCH (f:RefFile {project: $p, scope: $s}) RETURN f.path AS path, f.status AS status",
            project,
        )
        changes = [{"path": r["path"], "status": status_of(r["path"])} for r in rows]
        changes = [c for c, r in zip(changes, rows, strict=True) if c["status"] != r["status"]]
        try:
            if changes:
                self._write(
                    lambda tx: self._exec(
                        tx,
                        "UNWIND $rows AS row MATCH (f:RefFile {project: $p, scope: $s, path: row.path}) "
                        "SET f.status = row.status",
                        project,
                        rows=changes,
                    )
                )
            if rows:
                self._write(lambda tx: self._relink(tx, project))
        except Exception as exc:
            raise self._ref_error(exc) from None
        return len(changes)

    def ref_clear(self, project: str) -> None:
        self._ref()
        try:
            with self._session() as s:
                self._exec(
                    s,
                    "MATCH (x:Chunk|RefFile {project: $p, scope: $s}) "
                    "CALL (x) { DETACH DELETE x } IN TRANSACTIONS OF 5000 ROWS",
                    project,
                )
        except Exception as exc:
            raise self._ref_error(exc) from None

    def ref_files(self, project: str) -> list[dict[str, Any]]:
        rows = self._scoped(
            "MATCH (f:RefFile {project: $p, scope: $s}) "
            "RETURN f.path AS path, f.status AS status, f.meta AS meta, f.error AS error, "
            "COUNT { (f)-[:HAS_CHUNK]->() } AS n ORDER BY path",
            project,
        )
        out = []
        for r in rows:
            m = json.loads(r["meta"]) if r["meta"] else {}
            out.append({"path": r["path"], "status": r["status"], **m, "chunks": r["n"], "error": r["error"]})
        return out

    def ref_problems(self, project: str) -> list[FileProblem]:
        rows = self._scoped(
            "MATCH (f:RefFile {project: $p, scope: $s}) WHERE f.error IS NOT NULL "
            "RETURN f.path AS path, f.error_line AS line, f.error AS error ORDER BY path",
            project,
        )
        return [FileProblem(r["path"], r["line"], r["error"]) for r in rows]

    def ref_chunks(self, project: str, ids: Sequence[str]) -> list[IndexedChunk]:
        if not ids:
            return []
        rows = self._scoped(
            "UNWIND $ids AS cid MATCH (f:RefFile)-[:HAS_CHUNK]->(c:Chunk {project: $p, scope: $s, id: cid}) "
            f"RETURN {_RETURN_CHUNK}",
            project,
            ids=list(ids),
        )
        by_id = {r["id"]: _chunk(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def ref_file_chunks(self, project: str, path: str) -> list[IndexedChunk]:
        rows = self._scoped(
            "MATCH (f:RefFile {project: $p, scope: $s, path: $path})-[:HAS_CHUNK]->(c:Chunk) "
            f"RETURN {_RETURN_CHUNK} ORDER BY c.ord",
            project,
            path=path,
        )
        return [_chunk(r) for r in rows]

    def ref_text_search(self, text: str, project: str, limit: int = 50) -> list[tuple[str, float]]:
        q = lucene_query(text)
        if not q:
            return []
        rows = self._scoped(
            "CALL db.index.fulltext.queryNodes($index, $q) YIELD node AS c, score "
            "WHERE c.project = $p AND c.scope = $s "
            "RETURN c.id AS id, score ORDER BY score DESC, id ASC LIMIT $limit",
            project,
            index=CHUNK_FULLTEXT,
            q=q,
            limit=limit,
        )
        return [(r["id"], round(float(r["score"]), 6)) for r in rows]

    def ref_missing_vectors(self, project: str, embedder: str) -> list[tuple[str, str]]:
        rows = self._scoped(
            "MATCH (c:Chunk {project: $p, scope: $s}) WHERE NOT EXISTS { "
            "  MATCH (e:Embedding {embedder: $emb, text_hash: c.text_hash}) } "
            "RETURN c.text_hash AS h, c.heading_path AS hp, c.text AS text ORDER BY c.id",
            project,
            emb=embedder,
        )
        seen: dict[str, str] = {}
        for r in rows:
            seen.setdefault(r["h"], chunk_embed_text(json.loads(r["hp"]), r["text"]))
        return sorted(seen.items())

    def ref_vector_search(
        self, embedder: str, vector: Any, project: str, limit: int = 50
    ) -> list[tuple[str, float]]:
        query = [float(x) for x in vector]
        rows = self._scoped(
            "MATCH (c:Chunk {project: $p, scope: $s}) "
            "MATCH (e:Embedding {embedder: $emb, text_hash: c.text_hash}) WHERE e.dim = $dim "
            "WITH c, e, vector.similarity.cosine(e.embedding, $v) AS s "
            "RETURN c.id AS id, e.embedding AS v, s ORDER BY s DESC, id ASC LIMIT $limit",
            project,
            emb=embedder,
            dim=len(query),
            v=query,
            limit=limit,
        )
        # the server selects; the one client-side function scores, as on SQLite (cosine.py)
        return exact_scores([r["id"] for r in rows], [r["v"] for r in rows], vector)

    def ref_links(self, project: str, chunk_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        if not chunk_ids:
            return []
        rows = self._scoped(
            "UNWIND $ids AS cid MATCH (a:Chunk {project: $p, scope: $s, id: cid})-[:REFERENCES]->(b) "
            "RETURN a.id AS src, CASE WHEN b:Chunk THEN 'chunk' ELSE 'memory' END AS kind, b.id AS dst",
            project,
            ids=list(chunk_ids),
        )
        return sorted({(r["src"], r["kind"], r["dst"]) for r in rows})

    def ref_citing(self, project: str, chunk_ids: Sequence[str]) -> list[tuple[str, str]]:
        if not chunk_ids:
            return []
        rows = self._scoped(
            "UNWIND $ids AS cid MATCH (m:Memory {project: $p})-[:CITES_CHUNK]->(c:Chunk {project: $p,"
            " scope: $s, id: cid}) RETURN m.id AS src, c.id AS dst",
            project,
            ids=list(chunk_ids),
        )
        return sorted({(r["src"], r["dst"]) for r in rows})

    def ref_dump(self, project: str) -> dict[str, Any]:
        files = self._scoped(
            "MATCH (f:RefFile {project: $p, scope: $s}) RETURN f.path AS path, f.size AS size,"
            " f.hash AS hash, f.status AS status, f.meta AS meta, f.error AS error,"
            " f.error_line AS line ORDER BY path",
            project,
        )
        chunks = self._scoped(
            "MATCH (c:Chunk {project: $p, scope: $s}) OPTIONAL MATCH (c)-[:NEXT]->(n:Chunk) "
            "OPTIONAL MATCH (c)-[:REFERENCES]->(t) "
            "WITH c, n, collect(DISTINCT t.id) AS refs "
            "RETURN c.id AS id, c.path AS path, c.ord AS ord, c.heading_path AS hp, c.text AS text,"
            " c.text_hash AS th, c.heading AS heading, n.id AS next, refs ORDER BY id",
            project,
        )
        return {
            "files": [tuple(r.values()) for r in files],
            "chunks": [(*tuple(r.values())[:-1], sorted(r["refs"])) for r in chunks],
        }
