"""The per-user vector cache, shared by every clone, worktree and branch on this machine (issue 29).

A memory's vector depends only on the embedder and the text it embeds, so it is stored under
``(embedder name, sha256 of the text)`` — the key the index already uses (``index.base.text_hash``).
A second clone, a new worktree, or a teammate's pulled memories embedded here before cost no
embedding call: :meth:`ccmemory.app.service.Service.embed_missing` takes them from here first and
puts what it embeds back. The embedder's name changes whenever its numbers would (model, int8
path), so vectors of two embedders are never mixed.

One SQLite file (WAL, so the MCP server, the background worker and the CLI share it), bounded
in size (``CCMEMORY_VECTOR_CACHE_MB``): the least recently used vectors go first. It is only a
cache: any error reading or writing it is remembered in :attr:`VectorCache.problem` (``ccmemory
doctor`` shows it) and the caller embeds as if it were empty; it never fails an embedding run.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: hashes looked up per query (SQLite's host-parameter limit is far above)
BATCH = 500
#: when over the bound, evict down to this share of it (so eviction does not run at every put)
LOW_WATER = 0.9

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
  embedder TEXT NOT NULL,
  text_hash TEXT NOT NULL,
  dim INTEGER NOT NULL,
  vec BLOB NOT NULL,
  used INTEGER NOT NULL,
  PRIMARY KEY (embedder, text_hash)
);
CREATE INDEX IF NOT EXISTS vectors_used ON vectors(used);
"""


class VectorCache:
    """Vectors by (embedder, text hash); see the module docstring."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max(0, max_bytes)
        self.problem: str | None = None
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)  # vectors of private text
            os.close(fd)
            db = sqlite3.connect(self.path, timeout=5.0, check_same_thread=False, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(_SCHEMA)
            except sqlite3.Error:
                db.close()
                raise
            self._db = db
        return self._db

    def _fail(self, exc: BaseException) -> None:
        self.problem = f"{self.path}: {type(exc).__name__}: {exc}"

    def get(self, embedder: str, dim: int, hashes: Sequence[str]) -> dict[str, Any]:
        """The cached vectors (float32 arrays) of those of ``hashes`` that are here."""
        import numpy as np

        out: dict[str, Any] = {}
        if not hashes:
            return out
        now = int(time.time())
        try:
            with self._lock:
                db = self._conn()
                for i in range(0, len(hashes), BATCH):
                    part = list(hashes[i : i + BATCH])
                    marks = ",".join("?" * len(part))
                    rows = db.execute(
                        f"SELECT text_hash, vec FROM vectors WHERE embedder = ? AND dim = ?"
                        f" AND text_hash IN ({marks})",
                        [embedder, dim, *part],
                    ).fetchall()
                    for h, blob in rows:
                        if len(blob) == dim * 4:
                            out[h] = np.frombuffer(blob, dtype="<f4").copy()
                    if rows:
                        db.execute(
                            f"UPDATE vectors SET used = ? WHERE embedder = ? AND text_hash IN ({marks})",
                            [now, embedder, *part],
                        )
        except (sqlite3.Error, OSError) as exc:
            self._fail(exc)
            return {}
        return out

    def put(self, embedder: str, dim: int, items: Sequence[tuple[str, Any]]) -> None:
        """Keep these vectors; then evict the least recently used while over the bound."""
        import numpy as np

        if not items or self.max_bytes <= 0:
            return
        now = int(time.time())
        rows = [(embedder, h, dim, np.asarray(v, dtype="<f4").tobytes(), now) for h, v in items]
        try:
            with self._lock:
                db = self._conn()
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.executemany(
                        "INSERT OR REPLACE INTO vectors(embedder, text_hash, dim, vec, used)"
                        " VALUES (?,?,?,?,?)",
                        rows,
                    )
                    self._evict(db)
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        except (sqlite3.Error, OSError) as exc:
            self._fail(exc)

    @staticmethod
    def _bytes_used(db: sqlite3.Connection) -> int:
        """The file's pages in use (freed pages are reused, never counted)."""
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        (free,) = db.execute("PRAGMA freelist_count").fetchone()
        (size,) = db.execute("PRAGMA page_size").fetchone()
        return int((pages - free) * size)

    def _evict(self, db: sqlite3.Connection) -> None:
        used = self._bytes_used(db)
        if used <= self.max_bytes:
            return
        (n,) = db.execute("SELECT count(*) FROM vectors").fetchone()
        drop = n - int(n * self.max_bytes * LOW_WATER / used)
        db.execute(
            "DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors ORDER BY used, text_hash LIMIT ?)",
            (max(drop, 1),),
        )

    def stats(self) -> dict[str, Any]:
        """Where it is, how many vectors and bytes it holds, its bound (for ``doctor``)."""
        out: dict[str, Any] = {"path": str(self.path), "max_mb": round(self.max_bytes / 2**20, 1)}
        try:
            if self.path.exists():
                with self._lock:
                    db = self._conn()
                    (n,) = db.execute("SELECT count(*) FROM vectors").fetchone()
                    used = self._bytes_used(db)
                out.update(vectors=int(n), mb=round(used / 2**20, 2))
            else:
                out.update(vectors=0, mb=0.0)
        except (sqlite3.Error, OSError) as exc:
            self._fail(exc)
        if self.problem:
            out["problem"] = self.problem
        return out

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def default_path(env: dict[str, str] | None = None) -> Path | None:
    """The cache file ``CCMEMORY_VECTOR_CACHE`` names, else ``<cache folder>/vectors.sqlite``;
    None when it is turned off (``off``, ``0``, ``no``, ``false``)."""
    from ccmemory.core import settings

    env = dict(os.environ) if env is None else env
    raw = settings.VECTOR_CACHE.get(env)
    if raw is not None and raw.strip().lower() in settings.OFF:
        return None
    if raw:
        return Path(raw).expanduser()
    from ccmemory.retrieval.int8graph import cache_dir

    return cache_dir(env) / "vectors.sqlite"


_SHARED: dict[tuple[str, int], VectorCache] = {}
_SHARED_LOCK = threading.Lock()


def shared(env: dict[str, str] | None = None) -> VectorCache | None:
    """This process's cache at the configured place (None when turned off)."""
    from ccmemory.core import settings

    path = default_path(env)
    if path is None:
        return None
    max_mb = settings.VECTOR_CACHE_MB.value(dict(os.environ) if env is None else env)
    key = (str(path), max_mb)
    with _SHARED_LOCK:
        cache = _SHARED.get(key)
        if cache is None:
            cache = _SHARED[key] = VectorCache(path, max(0, max_mb) * 2**20)
        return cache
