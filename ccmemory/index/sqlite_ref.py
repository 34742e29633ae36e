"""Reference chunks in the SQLite index: tables, FTS5 and vectors (mixed into SQLiteIndex).

Additive to the memory schema: its own tables (created on first use, so opening the index is
unchanged), its own FTS5 table, and the shared ``vectors`` table keyed by content hash.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ccmemory.index.base import (
    FileProblem,
    FileState,
    IndexedChunk,
    chunk_embed_text,
    chunk_text_hash,
    cited_reference,
)
from ccmemory.index.cosine import exact_scores
from ccmemory.index.query import fts_query

_REF_SCHEMA = """
CREATE TABLE IF NOT EXISTS ref_files(
  project TEXT NOT NULL, path TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
  hash TEXT NOT NULL, status TEXT NOT NULL, meta TEXT, error TEXT, error_line INTEGER,
  PRIMARY KEY(project, path));
CREATE TABLE IF NOT EXISTS ref_chunks(
  rid INTEGER PRIMARY KEY, project TEXT NOT NULL, id TEXT NOT NULL, path TEXT NOT NULL,
  ord INTEGER NOT NULL, heading_path TEXT NOT NULL, text TEXT NOT NULL, text_hash TEXT NOT NULL,
  UNIQUE(project, id));
CREATE INDEX IF NOT EXISTS ref_chunks_path ON ref_chunks(project, path, ord);
CREATE TABLE IF NOT EXISTS ref_links(
  project TEXT NOT NULL, chunk_id TEXT NOT NULL, target TEXT NOT NULL, fragment TEXT NOT NULL,
  PRIMARY KEY(project, chunk_id, target, fragment));
CREATE VIRTUAL TABLE IF NOT EXISTS ref_fts USING fts5(
  heading, body, tokenize = 'porter unicode61 remove_diacritics 2');
"""
# bm25 column weights: heading path (with the file title), section text
_REF_BM25 = "bm25(ref_fts, 2.0, 1.0)"
_CHUNK_COLS = "c.id, c.path, c.ord, c.heading_path, c.text, f.status, f.meta, c.text_hash"


def _chunk_row(r: Sequence[Any]) -> IndexedChunk:
    meta = json.loads(r[6]) if r[6] else {}
    return IndexedChunk(
        id=r[0],
        path=r[1],
        order=r[2],
        heading_path=json.loads(r[3]),
        text=r[4],
        status=r[5],
        title=meta.get("title"),
        source=meta.get("source"),
        cached_at=meta.get("cached_at"),
        tags=meta.get("tags") or [],
        text_hash=r[7],
    )


class ReferenceTables:
    """The ReferenceIndex half of SQLiteIndex (see ccmemory.index.base.ReferenceIndex)."""

    db: sqlite3.Connection
    _write: Callable[[Callable[[sqlite3.Connection], Any]], Any]
    _ref_ready: bool = False

    def _ref(self) -> sqlite3.Connection:
        if not self._ref_ready:
            has = self.db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ref_fts'"
            ).fetchone()
            if has is None:
                self.db.executescript(_REF_SCHEMA)
            self._ref_ready = True
        return self.db

    def ref_file_states(self, project: str) -> dict[str, FileState]:
        rows = (
            self._ref()
            .execute("SELECT path, mtime_ns, size, hash FROM ref_files WHERE project = ?", (project,))
            .fetchall()
        )
        return {r[0]: FileState(*r) for r in rows}

    def _ref_delete(self, db: sqlite3.Connection, project: str, paths: Sequence[str]) -> None:
        for p in paths:
            db.execute(
                "DELETE FROM ref_fts WHERE rowid IN"
                " (SELECT rid FROM ref_chunks WHERE project = ? AND path = ?)",
                (project, p),
            )
            db.execute(
                "DELETE FROM ref_links WHERE project = ? AND chunk_id IN"
                " (SELECT id FROM ref_chunks WHERE project = ? AND path = ?)",
                (project, project, p),
            )
            db.execute("DELETE FROM ref_chunks WHERE project = ? AND path = ?", (project, p))
            db.execute("DELETE FROM ref_files WHERE project = ? AND path = ?", (project, p))

    def ref_apply(
        self, project: str, upserts: Sequence[Any], removed: Iterable[str], status_of: Callable[[str], str]
    ) -> None:
        removed = list(removed)
        self._ref()

        def work(db: sqlite3.Connection) -> None:
            self._ref_delete(db, project, removed + [r.path for r in upserts])
            (next_rid,) = db.execute("SELECT coalesce(max(rid), 0) + 1 FROM ref_chunks").fetchone()
            for rec in upserts:
                db.execute(
                    "INSERT INTO ref_files(project, path, mtime_ns, size, hash, status, meta, error,"
                    " error_line) VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        project,
                        rec.path,
                        rec.mtime_ns,
                        rec.size,
                        rec.hash,
                        status_of(rec.path),
                        None if rec.error else rec.meta_json(),
                        rec.error,
                        rec.error_line,
                    ),
                )
                if rec.error:
                    continue
                for c in rec.chunks:
                    db.execute(
                        "INSERT INTO ref_chunks(rid, project, id, path, ord, heading_path, text, text_hash)"
                        " VALUES (?,?,?,?,?,?,?,?)",
                        (
                            next_rid,
                            project,
                            c.id,
                            rec.path,
                            c.order,
                            json.dumps(c.heading_path, ensure_ascii=False),
                            c.text,
                            chunk_text_hash(c.heading_path, c.text),
                        ),
                    )
                    heading = " ".join([rec.title or "", *c.heading_path]).strip()
                    db.execute(
                        "INSERT INTO ref_fts(rowid, heading, body) VALUES (?,?,?)",
                        (next_rid, heading, c.text),
                    )
                    next_rid += 1
                db.executemany(
                    "INSERT OR IGNORE INTO ref_links(project, chunk_id, target, fragment) VALUES (?,?,?,?)",
                    [(project, cid, target, frag) for cid, target, frag in rec.links],
                )

        self._write(work)

    def ref_refresh_status(self, project: str, status_of: Callable[[str], str]) -> int:
        self._ref()

        def work(db: sqlite3.Connection) -> int:
            rows = db.execute("SELECT path, status FROM ref_files WHERE project = ?", (project,)).fetchall()
            changes = [(status_of(p), project, p) for p, s in rows if status_of(p) != s]
            db.executemany("UPDATE ref_files SET status = ? WHERE project = ? AND path = ?", changes)
            return len(changes)

        return int(self._write(work))

    def ref_clear(self, project: str) -> None:
        self._ref()

        def work(db: sqlite3.Connection) -> None:
            paths = [r[0] for r in db.execute("SELECT path FROM ref_files WHERE project = ?", (project,))]
            self._ref_delete(db, project, paths)

        self._write(work)

    def ref_files(self, project: str) -> list[dict[str, Any]]:
        rows = (
            self._ref()
            .execute(
                "SELECT f.path, f.status, f.meta, f.error, (SELECT count(*) FROM ref_chunks c WHERE"
                " c.project = f.project AND c.path = f.path) FROM ref_files f WHERE f.project = ?"
                " ORDER BY f.path",
                (project,),
            )
            .fetchall()
        )
        out = []
        for path, status, meta, error, n in rows:
            m = json.loads(meta) if meta else {}
            out.append({"path": path, "status": status, **m, "chunks": n, "error": error})
        return out

    def ref_problems(self, project: str) -> list[FileProblem]:
        rows = (
            self._ref()
            .execute(
                "SELECT path, error_line, error FROM ref_files WHERE project = ? AND error IS NOT NULL"
                " ORDER BY path",
                (project,),
            )
            .fetchall()
        )
        return [FileProblem(p, line, err) for p, line, err in rows]

    def ref_chunks(self, project: str, ids: Sequence[str]) -> list[IndexedChunk]:
        if not ids:
            return []
        by_id: dict[str, IndexedChunk] = {}
        ids = list(ids)
        db = self._ref()
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            for r in db.execute(
                f"SELECT {_CHUNK_COLS} FROM ref_chunks c JOIN ref_files f ON f.project = c.project AND"
                f" f.path = c.path WHERE c.project = ? AND c.id IN ({','.join('?' * len(part))})",
                [project, *part],
            ):
                by_id[r[0]] = _chunk_row(r)
        return [by_id[i] for i in ids if i in by_id]

    def ref_file_chunks(self, project: str, path: str) -> list[IndexedChunk]:
        rows = (
            self._ref()
            .execute(
                f"SELECT {_CHUNK_COLS} FROM ref_chunks c JOIN ref_files f ON f.project = c.project AND"
                " f.path = c.path WHERE c.project = ? AND c.path = ? ORDER BY c.ord",
                (project, path),
            )
            .fetchall()
        )
        return [_chunk_row(r) for r in rows]

    def ref_text_search(self, text: str, project: str, limit: int = 50) -> list[tuple[str, float]]:
        match = fts_query(text)
        if not match:
            return []
        rows = (
            self._ref()
            .execute(
                f"WITH hits AS MATERIALIZED (SELECT rowid AS rid, {_REF_BM25} AS r FROM ref_fts"
                " WHERE ref_fts MATCH ?)"
                " SELECT c.id, hits.r FROM hits JOIN ref_chunks c ON c.rid = hits.rid"
                " WHERE c.project = ? ORDER BY hits.r, c.id LIMIT ?",
                (match, project, limit),
            )
            .fetchall()
        )
        return [(r[0], round(-float(r[1]), 6)) for r in rows]

    def ref_missing_vectors(self, project: str, embedder: str) -> list[tuple[str, str]]:
        rows = (
            self._ref()
            .execute(
                "SELECT c.text_hash, c.heading_path, c.text FROM ref_chunks c WHERE c.project = ?"
                " AND NOT EXISTS"
                " (SELECT 1 FROM vectors v WHERE v.embedder = ? AND v.text_hash = c.text_hash) ORDER BY c.id",
                (project, embedder),
            )
            .fetchall()
        )
        seen: dict[str, str] = {}
        for h, hp, text in rows:
            seen.setdefault(h, chunk_embed_text(json.loads(hp), text))
        return sorted(seen.items())

    def ref_vector_search(
        self, embedder: str, vector: Any, project: str, limit: int = 50
    ) -> list[tuple[str, float]]:
        import numpy as np

        rows = (
            self._ref()
            .execute(
                "SELECT c.id, v.vec, v.dim FROM ref_chunks c JOIN vectors v ON v.embedder = ? AND"
                " v.text_hash = c.text_hash WHERE c.project = ? ORDER BY c.id",
                (embedder, project),
            )
            .fetchall()
        )
        if not rows:
            return []
        dim = rows[0][2]
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != dim:
            from ccmemory.index.base import IndexUnavailable

            raise IndexUnavailable(f"vector dimension mismatch: index has {dim}, query has {query.shape[0]}")
        scores = matrix @ query
        order = sorted(range(len(rows)), key=lambda i: (-float(scores[i]), rows[i][0]))[:limit]
        # selected in float32 here; scored by the one function both backends use (cosine.py)
        return exact_scores([rows[i][0] for i in order], matrix[order], query)

    def ref_links(self, project: str, chunk_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        from ccmemory.core.reftree import REF_ROOT, tree_path

        if not chunk_ids:
            return []
        db = self._ref()
        marks = ",".join("?" * len(chunk_ids))
        out: set[tuple[str, str, str]] = set()
        for cid, target, frag in db.execute(
            f"SELECT chunk_id, target, fragment FROM ref_links WHERE project = ? AND chunk_id IN ({marks})",
            [project, *chunk_ids],
        ).fetchall():
            if target.startswith(REF_ROOT + "/"):
                want = f"{tree_path(target)}#{frag}"
                row = db.execute(
                    "SELECT id FROM ref_chunks WHERE project = ? AND path = ?"
                    " ORDER BY (id = ?) DESC, ord LIMIT 1",
                    (project, target, want),
                ).fetchone()
                if row:
                    out.add((cid, "chunk", row[0]))
            else:
                row = db.execute(
                    "SELECT mem_id FROM files WHERE project = ? AND path = ? AND mem_id IS NOT NULL",
                    (project, target),
                ).fetchone()
                if row:
                    out.add((cid, "memory", row[0]))
        return sorted(out)

    def ref_citing(self, project: str, chunk_ids: Sequence[str]) -> list[tuple[str, str]]:
        if not chunk_ids:
            return []
        wanted = set(chunk_ids)
        files = {cid.split("#", 1)[0] for cid in wanted}
        out: set[tuple[str, str]] = set()
        for src, dst in (
            self._ref()
            .execute("SELECT src, dst FROM relations WHERE project = ? AND type = 'CITES'", (project,))
            .fetchall()
        ):
            ref = cited_reference(dst)
            if ref is None:
                continue
            if "#" in ref:
                if ref in wanted:
                    out.add((src, ref))
            elif ref in files:
                out.update((src, cid) for cid in wanted if cid.split("#", 1)[0] == ref)
        return sorted(out)

    def ref_dump(self, project: str) -> dict[str, Any]:
        db = self._ref()
        return {
            "files": [
                tuple(r)
                for r in db.execute(
                    "SELECT path, size, hash, status, meta, error, error_line FROM ref_files"
                    " WHERE project = ?"
                    " ORDER BY path",
                    (project,),
                )
            ],
            "chunks": [
                tuple(r)
                for r in db.execute(
                    "SELECT c.id, c.path, c.ord, c.heading_path, c.text, c.text_hash, t.heading, t.body"
                    " FROM ref_chunks c JOIN ref_fts t ON t.rowid = c.rid WHERE c.project = ? ORDER BY c.id",
                    (project,),
                )
            ],
            "fts_total": db.execute("SELECT count(*) FROM ref_fts").fetchone()[0],
            "links": [
                tuple(r)
                for r in db.execute(
                    "SELECT chunk_id, target, fragment FROM ref_links WHERE project = ? ORDER BY 1, 2, 3",
                    (project,),
                )
            ],
        }
