"""The embedded index: stdlib sqlite3, WAL, FTS5 with bm25, vectors per content hash.

Several processes (hooks' worker, watcher, MCP server, CLI) read and write one database at once:
WAL mode, a busy timeout, and every write in one `BEGIN IMMEDIATE` transaction.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ccmemory.core.model import format_timestamp, normalise_topic
from ccmemory.index.base import (
    MAX_SHARED,
    Edge,
    FileProblem,
    FileRecord,
    FileState,
    Filters,
    Index,
    IndexedMemory,
    IndexUnavailable,
    embed_text,
    stats_summary,
)
from ccmemory.index.cosine import exact_scores
from ccmemory.index.derive import PREFIX_LIMIT, derive, payload, ref_lookup, superseded
from ccmemory.index.query import fts_match_groups, fts_match_terms
from ccmemory.index.sqlite_ref import ReferenceTables
from ccmemory.index.sqlitetx import immediate
from ccmemory.text import analyzer, bm25

# 3: the full-text table holds analysed terms (ccmemory.text.analyzer), memories their lengths
SCHEMA_VERSION = 3
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(
  project TEXT NOT NULL, path TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
  hash TEXT NOT NULL, mem_id TEXT, error TEXT, error_line INTEGER, payload TEXT,
  PRIMARY KEY(project, path));
CREATE INDEX IF NOT EXISTS files_mem ON files(project, mem_id);
-- partial: problems and duplicate ids found without reading every file record (issue 29)
CREATE INDEX IF NOT EXISTS files_errors ON files(project, path) WHERE error IS NOT NULL;
CREATE INDEX IF NOT EXISTS files_valid ON files(project, mem_id, path) WHERE error IS NULL;
CREATE TABLE IF NOT EXISTS memories(
  rid INTEGER PRIMARY KEY, project TEXT NOT NULL, id TEXT NOT NULL, path TEXT NOT NULL,
  type TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, created TEXT NOT NULL,
  author_fm TEXT, author_git TEXT, session TEXT, branch TEXT, confidence REAL, source TEXT,
  status TEXT NOT NULL, fields TEXT NOT NULL, topics TEXT NOT NULL, files TEXT NOT NULL,
  supersedes TEXT NOT NULL, relations TEXT NOT NULL, hash TEXT NOT NULL, text_hash TEXT NOT NULL,
  len_title INTEGER NOT NULL DEFAULT 0, len_body INTEGER NOT NULL DEFAULT 0,
  len_fields INTEGER NOT NULL DEFAULT 0,
  UNIQUE(project, id));
CREATE INDEX IF NOT EXISTS memories_created ON memories(project, created);
CREATE INDEX IF NOT EXISTS memories_path ON memories(project, path);
-- covering: the project's full-text statistics (ccmemory.text.bm25.Stats) without reading the rows
CREATE INDEX IF NOT EXISTS memories_lens ON memories(project, len_title, len_body, len_fields);
CREATE TABLE IF NOT EXISTS relations(
  project TEXT NOT NULL, src TEXT NOT NULL, type TEXT NOT NULL, dst TEXT NOT NULL, reason TEXT,
  PRIMARY KEY(project, src, type, dst));
CREATE INDEX IF NOT EXISTS relations_dst ON relations(project, dst, type);
CREATE TABLE IF NOT EXISTS mem_topics(project TEXT NOT NULL, mem_id TEXT NOT NULL, topic TEXT NOT NULL,
  PRIMARY KEY(project, mem_id, topic));
CREATE INDEX IF NOT EXISTS mem_topics_topic ON mem_topics(project, topic, mem_id);
CREATE TABLE IF NOT EXISTS mem_files(project TEXT NOT NULL, mem_id TEXT NOT NULL, file TEXT NOT NULL,
  PRIMARY KEY(project, mem_id, file));
CREATE INDEX IF NOT EXISTS mem_files_file ON mem_files(project, file, mem_id);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
  title, body, fields, tokenize = 'unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE IF NOT EXISTS memory_vocab USING fts5vocab(memory_fts, 'row');
CREATE TABLE IF NOT EXISTS project_links(project TEXT NOT NULL, other TEXT NOT NULL,
  relation TEXT NOT NULL, PRIMARY KEY(project, other));
CREATE TABLE IF NOT EXISTS vectors(
  embedder TEXT NOT NULL, text_hash TEXT NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL,
  PRIMARY KEY(embedder, text_hash));
"""
_STATE_TRIGGERS = (
    ("mi", "INSERT", "memories"),
    ("md", "DELETE", "memories"),
    ("mu", "UPDATE OF project, id, text_hash", "memories"),
    ("vi", "INSERT", "vectors"),
    ("vd", "DELETE", "vectors"),
    ("vu", "UPDATE", "vectors"),
)
# any change the vector matrix depends on drops the state token (ccmemory.index.matrixfile),
# whoever writes the file; SQLiteIndex._write puts a new one in the same transaction
_TRIGGERS = "".join(
    f"CREATE TRIGGER IF NOT EXISTS vectors_state_{name} AFTER {event} ON {table}"
    f" BEGIN DELETE FROM meta WHERE key = 'vectors_state'; END;\n"
    for name, event, table in _STATE_TRIGGERS
)
_SCHEMA += _TRIGGERS
# FTS5's own bm25 only orders the candidates under the cap; ccmemory.text.bm25 scores them
_BM25 = "bm25(memory_fts, 4.0, 1.0, 2.0)"
#: document frequencies kept per project and connection (until the index changes) at most
_DF_CACHED = 50_000
#: FTS5's best matches filtered at once by text_search's fast path (under SQLite's 999 parameters)
_PREFIX = 400
_FIRST = 160
#: filter masks vector_search keeps per matrix (see SQLiteIndex._filter_mask)
_FILTER_MASKS = 8
#: distinct `files:` entries a file_links IN list may name (else the links are filtered in Python)
_MAX_FILE_NAMES = 500
_EFFECTIVE_AUTHOR = "coalesce(m.author_fm, m.author_git)"


def _with_state_token(db: sqlite3.Connection, fn: Callable[[sqlite3.Connection], Any]) -> Any:
    """``fn(db)``, then a new vector-state token if its writes dropped the old one (the triggers)."""
    out = fn(db)
    # os.urandom is what `secrets.token_hex` reads; `secrets` itself (hmac, random) cost every
    # index open a few milliseconds of imports
    db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('vectors_state', ?)", (os.urandom(16).hex(),))
    return out


#: m reaches s along SUPERSEDES edges (so the edge s -> m lies on a ring): see `derive.superseded`.
#: The walk starts only from a memory that supersedes something (most rows stop at the first probe).
_REACHES_BACK = (
    "SELECT 1 FROM relations r1 WHERE r1.project = m.project AND r1.src = m.id AND r1.type = 'SUPERSEDES'"
    " AND EXISTS (WITH RECURSIVE up(id) AS (SELECT r1.dst UNION SELECT r2.dst FROM up JOIN relations r2"
    " ON r2.project = m.project AND r2.src = up.id AND r2.type = 'SUPERSEDES')"
    " SELECT 1 FROM up WHERE up.id = s.id)"
)


def _superseded_sql(viewer: str | None) -> tuple[str, list[Any]]:
    """EXISTS(a memory visible to `viewer` supersedes m, by an edge on no ring: m does not reach
    it back along SUPERSEDES edges; the rule of `derive.superseded`). Forced onto the dst index:
    the planner otherwise scans every relation of the project for each candidate row. The walk
    back runs only for a row something supersedes, along that row's own (short) chain."""
    vis = ""
    params: list[Any] = []
    if viewer is not None:
        vis = " AND (s.status = 'curated' OR coalesce(s.author_fm, s.author_git) = ?)"
        params.append(viewer)
    sql = (
        "EXISTS (SELECT 1 FROM relations r INDEXED BY relations_dst JOIN memories s ON"
        " s.project = r.project AND s.id = r.src WHERE r.project = m.project AND r.dst = m.id"
        f" AND r.type = 'SUPERSEDES' AND s.id != m.id{vis} AND NOT EXISTS ({_REACHES_BACK}))"
    )
    return sql, params


def _after_prefix(prefix: str) -> str | None:
    """The least string above every string that starts with `prefix`, in SQLite's BINARY order
    (UTF-8 bytes: code point order); None when there is none (`prefix` is all U+10FFFF)."""
    head = prefix.rstrip("\U0010ffff")
    if not head:
        return None
    last = ord(head[-1]) + 1
    return head[:-1] + chr(0xE000 if 0xD800 <= last <= 0xDFFF else last)  # surrogates: not UTF-8


def _is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    """Corruption (not a database, malformed image), as opposed to e.g. 'database is locked'."""
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text or "file is encrypted" in text


def _unwritable(location: str) -> str | None:
    """Why the folder of an index file cannot be written (a read-only file system, permissions),
    or None when it can (or is not a file)."""
    import os

    folder = os.path.dirname(os.path.abspath(location))
    if location == ":memory:" or os.access(folder, os.W_OK):
        return None
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return f"{folder} is on a read-only file system" if read_only else f"{folder} is not writable"


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _remove_db_files(path: str) -> None:
    import os

    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path + suffix)


def _move_aside(path: str) -> str:
    """Rename a corrupt database (and its -wal/-shm) to `<path>.corrupt-<time>`; never deletes."""
    import os
    import time

    target = f"{path}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.replace(path + suffix, target + suffix)
    return target


class SQLiteIndex(ReferenceTables):
    backend = "sqlite"
    scope: str | None = None  # file records are not scoped per user (see Index.scope)
    moved_aside: str | None = None  # where a corrupt file was moved (docs/security.md)
    parse_ahead = False  # apply runs in this process
    concurrent_reads = False  # one connection; the work is in this process

    def __init__(self, path: Path | str):
        self.location = str(path)
        self.moved_aside = None
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._connect()
        except sqlite3.DatabaseError as exc:
            if not _is_corrupt(exc) or self.location == ":memory:":
                why = _unwritable(self.location)
                if why:  # deleting the file would not help: say what would (issue 32)
                    raise IndexUnavailable(
                        f"SQLite index {self.location} cannot be opened: {exc}: its folder {why}; make it"
                        " writable, then run `ccmemory reindex` (memory files are not affected)."
                    ) from None
                raise IndexUnavailable(
                    f"SQLite index {self.location} cannot be opened: {exc}. It is a cache: delete it "
                    "and run `ccmemory reindex` to rebuild it from the memory files."
                ) from None
            # not a database / malformed: it is a cache, so move it aside and start empty;
            # `ccmemory reindex` refills it from the files
            with contextlib.suppress(Exception):
                self.db.close()
            self.moved_aside = _move_aside(self.location)
            self._connect()
        self._lock = threading.RLock()
        # (project, embedder) -> [stamp, ids, matrix, mask of not-superseded rows or None,
        #                        {(where, params): mask of the rows those filters select}, token]
        self._vec_cache: dict[tuple[str, str], list[Any]] = {}
        self._readonly = False  # open_readonly: nothing is written beside it either
        self._complete: dict[tuple[str, str], int] = {}  # (project, embedder) -> stamp: no vector missing
        # project -> (stamp, (memories, total field lengths, one project in the file), term -> df)
        self._text_cache: dict[str, tuple[int, tuple[int, tuple[int, int, int], bool], dict[str, int]]] = {}

    @classmethod
    def open_readonly(cls, path: Path | str) -> SQLiteIndex:
        """Another repository's index, opened read-only (cross-project search): nothing is
        created, migrated or written. Raises IndexUnavailable naming the file when it cannot be used."""
        self = cls.__new__(cls)
        self.location = str(path)
        if not Path(path).is_file():
            raise IndexUnavailable(f"no index at {path}")
        try:
            uri = Path(path).resolve().as_uri() + "?mode=ro"
            self.db = sqlite3.connect(
                uri, uri=True, timeout=30, isolation_level=None, check_same_thread=False
            )
            self.db.execute("PRAGMA busy_timeout = 30000")
            row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise IndexUnavailable(f"SQLite index {path} cannot be read: {exc}") from None
        if row is None or int(row[0]) != SCHEMA_VERSION:
            self.db.close()
            raise IndexUnavailable(f"SQLite index {path} was built by another ccmemory version")
        self._lock = threading.RLock()
        self._vec_cache = {}
        self._text_cache = {}
        self._readonly = True
        self._complete = {}
        return self

    # --- plumbing -----------------------------------------------------------------------------
    def _connect(self) -> None:
        self.db = sqlite3.connect(self.location, timeout=30, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA busy_timeout = 30000")
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")
        self.db.execute("PRAGMA foreign_keys = OFF")
        self._ensure_schema()

    # --- full rebuild beside the live file (issue 19) ------------------------------------------
    def healthy(self) -> bool:
        """`PRAGMA quick_check` says ok (run by `reindex --full` only: it reads every page)."""
        try:
            row = self.db.execute("PRAGMA quick_check(1)").fetchone()
        except sqlite3.DatabaseError as exc:
            if not _is_corrupt(exc):
                raise
            return False
        return bool(row) and row[0] == "ok"

    def reset_corrupt(self) -> str | None:
        """Close, move the (corrupt) file aside and reopen empty. Returns where it went."""
        if self.location == ":memory:":
            return None
        with self._lock:
            with contextlib.suppress(Exception):
                self.db.close()
            self.moved_aside = _move_aside(self.location)
            self._connect()
            self._vec_cache.clear()
            self._text_cache.clear()
            self._complete.clear()
            return self.moved_aside

    def fresh_beside(self, project: str) -> SQLiteIndex | None:
        """An empty index in a temp file next to this one, for `reindex --full` to fill while
        readers keep using the live file; None when that is not possible (an in-memory index, or
        a file that also holds other projects' rows, which a swap would drop)."""
        if self.location == ":memory:":
            return None
        others = self.db.execute("SELECT 1 FROM files WHERE project != ? LIMIT 1", (project,)).fetchone()
        if others:
            return None
        import glob
        import os

        for old in glob.glob(glob.escape(self.location) + ".rebuild-*"):  # left by a killed rebuild
            pid = old.rsplit("-", 1)[-1]
            if pid.isdigit() and not _alive(int(pid)):
                _remove_db_files(old)
        tmp = f"{self.location}.rebuild-{os.getpid()}"
        _remove_db_files(tmp)
        fresh = SQLiteIndex(tmp)
        # a bulk load into a file nobody reads and a failed or killed rebuild deletes: no WAL (each
        # page written once, not to the WAL then back) and no fsync. Rollback still works (an
        # in-memory journal); swap_in copies the pages into the live file, under its own settings.
        # (A 64 MiB page cache here was tried: no faster at 100k, +64 MB peak RSS.)
        fresh.db.execute("PRAGMA journal_mode = MEMORY")
        fresh.db.execute("PRAGMA synchronous = OFF")
        # nor the vector-state triggers (a statement per row); swap_in puts them back with a new token
        for name, _, _ in _STATE_TRIGGERS:
            fresh.db.execute(f"DROP TRIGGER IF EXISTS vectors_state_{name}")
        # embeddings are keyed by content hash, not by project: keep them (no re-embedding)
        with contextlib.suppress(sqlite3.DatabaseError):
            fresh.db.execute("ATTACH DATABASE ? AS live", (self.location,))
            try:
                fresh.db.execute("INSERT OR IGNORE INTO main.vectors SELECT * FROM live.vectors")
            finally:
                fresh.db.execute("DETACH DATABASE live")
        return fresh

    def swap_in(self, fresh: Index) -> None:
        """Replace this index's content with `fresh`'s in one SQLite transaction (the backup API
        holds the write lock; WAL readers see the old or the new index, never a half-built one),
        then delete the temp file. A kill before this point leaves the live index untouched."""
        if not isinstance(fresh, SQLiteIndex):
            raise TypeError("swap_in takes the index fresh_beside gave")
        fresh.db.executescript(_TRIGGERS)
        fresh.db.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_state', ?)", (os.urandom(16).hex(),)
        )
        with self._lock:
            fresh.db.backup(self.db)
            self._vec_cache.clear()
            self._text_cache.clear()
            self._complete.clear()
        fresh.close()
        _remove_db_files(fresh.location)

    def discard(self, fresh: Index) -> None:
        """Close and delete a `fresh_beside` index (a rebuild that failed or was interrupted)."""
        if not isinstance(fresh, SQLiteIndex):
            raise TypeError("discard takes the index fresh_beside gave")
        fresh.close()
        _remove_db_files(fresh.location)

    def server_info(self) -> None:
        """No server: an embedded index (see Index.server_info)."""
        return None

    def _ensure_schema(self) -> None:
        row = None
        with contextlib.suppress(sqlite3.OperationalError):
            row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row is not None and int(row[0]) != SCHEMA_VERSION:
            # an index from another version: drop and rebuild (it is only a cache)
            for (name,) in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table') AND name NOT LIKE 'sqlite_%'"
                " AND name NOT LIKE 'memory_fts_%'"
            ).fetchall():
                self.db.execute(f'DROP TABLE IF EXISTS "{name}"')
        self.db.executescript(_SCHEMA)
        if row is None or int(row[0]) != SCHEMA_VERSION:
            # only then: a write here at every open told every other connection the database had
            # changed (data_version), so a warm process dropped its cached matrix and statistics
            # each time a CLI or hook process opened the index, and it cost every hook two WAL
            # frames and a checkpoint at close (~15 ms) (issue 29)
            self.db.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
            )
        # an index from before the triggers has no state token yet: a new random one names
        # whatever it holds now (no matrix file can carry it), and the triggers guard it from here
        _with_state_token(self.db, lambda db: None)

    def close(self) -> None:
        self.db.close()

    def _write(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        with self._lock:
            return immediate(self.db, lambda db: _with_state_token(db, fn))

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[None]:
        """One read transaction (one view of the file) for the statements inside, under the lock."""
        with self._lock:
            if self.db.in_transaction:
                yield
                return
            self.db.execute("BEGIN")
            try:
                yield
            finally:
                self.db.execute("COMMIT")

    def _state_token(self) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'vectors_state'").fetchone()
        return str(row[0]) if row else None

    # --- writing ------------------------------------------------------------------------------
    def file_states(self, project: str, paths: Collection[str] | None = None) -> dict[str, FileState]:
        if paths is None:
            rows = self.db.execute(
                "SELECT path, mtime_ns, size, hash FROM files WHERE project=?", (project,)
            ).fetchall()
        else:
            wanted, rows = sorted(paths), []
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                rows += self.db.execute(
                    "SELECT path, mtime_ns, size, hash FROM files WHERE project = ?"
                    f" AND path IN ({','.join('?' * len(chunk))})",
                    [project, *chunk],
                ).fetchall()
        return {r[0]: FileState(r[0], r[1], r[2], r[3]) for r in rows}

    def sync_state(self, project: str) -> dict[str, Any] | None:
        """What the last reindex saw of git (`ccmemory.app.gitdelta`); None: walk everything."""
        import json

        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (f"sync:{project}",)).fetchone()
        try:
            state = json.loads(row[0]) if row else None
        except ValueError:
            return None
        return state if isinstance(state, dict) else None

    def set_sync_state(self, project: str, state: dict[str, Any] | None) -> None:
        import json

        key = f"sync:{project}"
        with self._lock:
            if state is None:
                self.db.execute("DELETE FROM meta WHERE key = ?", (key,))
            else:
                self.db.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, json.dumps(state))
                )

    def apply(
        self,
        project: str,
        upserts: Sequence[FileRecord],
        removed: Iterable[str],
        status_of: Callable[[str], str],
        adders: dict[str, str] | None = None,
    ) -> None:
        """Store file records, then re-derive every memory whose id they touch, set-based."""
        removed = list(removed)
        paths = removed + [r.path for r in upserts]

        def work(db: sqlite3.Connection) -> None:
            affected: set[str] = set()
            for start in range(0, len(paths), 500):
                chunk = paths[start : start + 500]
                affected.update(
                    r[0]
                    for r in db.execute(
                        "SELECT mem_id FROM files WHERE project = ? AND mem_id IS NOT NULL"
                        f" AND path IN ({','.join('?' * len(chunk))})",
                        [project, *chunk],
                    )
                )
            db.executemany(
                "DELETE FROM files WHERE project = ? AND path = ?", [(project, p) for p in removed]
            )
            db.executemany(
                "INSERT OR REPLACE INTO files(project, path, mtime_ns, size, hash, mem_id, error,"
                " error_line, payload) VALUES (?,?,?,?,?,?,?,?,?)",
                [
                    (
                        project,
                        rec.path,
                        rec.mtime_ns,
                        rec.size,
                        rec.hash,
                        rec.memory.id if rec.memory else None,
                        rec.error,
                        rec.error_line,
                        payload(rec.memory) if rec.memory else None,
                    )
                    for rec in upserts
                ],
            )
            affected.update(rec.memory.id for rec in upserts if rec.memory)
            self._derive(db, project, sorted(affected), status_of, adders or {})

        self._write(work)
        self._maybe_analyze()

    def _maybe_analyze(self) -> None:
        """Planner statistics, refreshed when the table has doubled since they were taken. Without
        them SQLite probes the superseded/topic subqueries by project only, and a search costs
        O(memories x relations): 0.6 s instead of 20 ms at 2k memories."""
        with self._lock:
            (rows,) = self.db.execute("SELECT count(*) FROM memories").fetchone()
            row = self.db.execute("SELECT value FROM meta WHERE key = 'analyzed_rows'").fetchone()
            if row is not None and rows < 2 * int(row[0]) + 100:
                return
            self.db.execute("PRAGMA analysis_limit = 1000")
            self.db.execute("ANALYZE")
            self.db.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('analyzed_rows', ?)", (str(rows),)
            )

    def _derive(
        self,
        db: sqlite3.Connection,
        project: str,
        ids: list[str],
        status_of: Callable[[str], str],
        adders: dict[str, str],
    ) -> None:
        """Rebuild the rows of these ids from their winning files (first valid path per id)."""
        if not ids:
            return
        db.execute("CREATE TEMP TABLE IF NOT EXISTS _aff(id TEXT PRIMARY KEY)")
        db.execute("DELETE FROM _aff")
        db.executemany("INSERT OR IGNORE INTO _aff(id) VALUES (?)", [(i,) for i in ids])
        db.execute(
            "DELETE FROM memory_fts WHERE rowid IN (SELECT rid FROM memories WHERE project = ?"
            " AND id IN (SELECT id FROM _aff))",
            (project,),
        )
        for table, col in (
            ("memories", "id"),
            ("relations", "src"),
            ("mem_topics", "mem_id"),
            ("mem_files", "mem_id"),
        ):
            db.execute(
                f"DELETE FROM {table} WHERE project = ? AND {col} IN (SELECT id FROM _aff)", (project,)
            )
        winners: dict[str, tuple[str, str, str]] = {}
        for mem_id, path, fhash, data in db.execute(
            "SELECT mem_id, path, hash, payload FROM files WHERE project = ? AND error IS NULL AND"
            " mem_id IN (SELECT id FROM _aff) ORDER BY mem_id, path",
            (project,),
        ):
            winners.setdefault(mem_id, (path, fhash, data))
        (next_rid,) = db.execute("SELECT coalesce(max(rid), 0) + 1 FROM memories").fetchone()
        mem_rows, fts_rows, rel_rows, topic_rows, file_rows = [], [], [], [], []
        for mem_id in sorted(winners):
            path, fhash, data = winners[mem_id]
            dm = derive(data, path=path, status=status_of(path), project=project, hash=fhash)
            if not dm.memory.author:  # the git adder, asked for only when it is used
                dm = dataclasses.replace(dm, author_git=adders.get(path))
            im = dm.memory
            rid = next_rid
            next_rid += 1
            analysed = analyzer.memory_fields(im.title, im.body, dm.fields_text)
            mem_rows.append(
                (
                    rid,
                    project,
                    im.id,
                    path,
                    im.type,
                    im.title,
                    im.body,
                    im.created,
                    im.author,
                    dm.author_git,
                    im.session,
                    im.branch,
                    im.confidence,
                    im.source,
                    im.status,
                    *dm.columns.values(),  # fields, topics, files, supersedes, relations
                    fhash,
                    dm.text_hash,
                    *bm25.field_lengths(analysed),
                )
            )
            fts_rows.append((rid, *analysed))
            rel_rows += [(project, e.src, e.type, e.dst, e.reason) for e in dm.edges]
            topic_rows += [(project, im.id, t) for t in dm.topics]
            file_rows += [(project, im.id, f) for f in dm.files]
        db.executemany(
            "INSERT INTO memories(rid, project, id, path, type, title, body, created, author_fm, author_git,"
            " session, branch, confidence, source, status, fields, topics, files, supersedes,"
            " relations, hash, text_hash, len_title, len_body, len_fields)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            mem_rows,
        )
        db.executemany("INSERT INTO memory_fts(rowid, title, body, fields) VALUES (?,?,?,?)", fts_rows)
        db.executemany("INSERT INTO relations(project, src, type, dst, reason) VALUES (?,?,?,?,?)", rel_rows)
        db.executemany("INSERT OR IGNORE INTO mem_topics(project, mem_id, topic) VALUES (?,?,?)", topic_rows)
        db.executemany("INSERT OR IGNORE INTO mem_files(project, mem_id, file) VALUES (?,?,?)", file_rows)

    def refresh_status(
        self,
        project: str,
        status_of: Callable[[str], str],
        adders: Mapping[str, str] | None = None,
        only: Collection[str] | None = None,
        git_authors: bool = False,
    ) -> int:
        def work(db: sqlite3.Connection) -> int:
            cols = "SELECT rid, path, status, author_fm, author_git FROM memories WHERE project = ?"
            if only is None:
                rows = db.execute(cols, (project,)).fetchall()
            else:
                wanted = sorted(only)
                rows = []
                if git_authors:
                    rows = db.execute(cols + " AND author_fm IS NULL", (project,)).fetchall()
                seen = {r[0] for r in rows}
                for start in range(0, len(wanted), 500):
                    chunk = wanted[start : start + 500]
                    rows += [
                        r
                        for r in db.execute(
                            cols + f" AND path IN ({','.join('?' * len(chunk))})", [project, *chunk]
                        ).fetchall()
                        if r[0] not in seen
                    ]
            changes = []
            for rid, path, status, author_fm, author_git in rows:
                new_status = status_of(path)
                new_git = (
                    None if author_fm else (adders or {}).get(path) if adders is not None else author_git
                )
                if new_status != status or new_git != author_git:
                    changes.append((new_status, new_git, rid))
            db.executemany("UPDATE memories SET status=?, author_git=? WHERE rid=?", changes)
            return len(changes)

        result: int = self._write(work)
        return result

    def clear(self, project: str) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "DELETE FROM memory_fts WHERE rowid IN (SELECT rid FROM memories WHERE project=?)",
                (project,),
            )
            for table in ("files", "memories", "relations", "mem_topics", "mem_files"):
                db.execute(f"DELETE FROM {table} WHERE project=?", (project,))
            db.execute("DELETE FROM meta WHERE key = ?", (f"sync:{project}",))

        self._write(work)

    # --- reading ------------------------------------------------------------------------------
    _COLS = (
        "m.id, m.type, m.title, m.body, m.created, m.path, m.status, m.project, "
        f"{_EFFECTIVE_AUTHOR}, m.session, m.branch, m.topics, m.files, m.confidence, m.source, "
        "m.supersedes, m.relations, m.fields, m.hash"
    )

    _NAMES = (
        "id", "type", "title", "body", "created", "path", "status", "project", "author", "session",
        "branch", "topics", "files", "confidence", "source", "supersedes", "relations", "fields", "hash",
    )  # fmt: skip

    @classmethod
    def _row(cls, r: Sequence[Any]) -> IndexedMemory:
        return IndexedMemory.from_columns(dict(zip(cls._NAMES, r, strict=True)))

    def _where(self, f: Filters) -> tuple[str, list[Any]]:
        clauses = ["m.project = ?"]
        params: list[Any] = [f.project]
        if f.ids is not None:
            clauses.append(f"m.id IN ({','.join('?' * len(f.ids))})")
            params += list(f.ids)
        if f.types:
            clauses.append(f"m.type IN ({','.join('?' * len(f.types))})")
            params += list(f.types)
        if f.status:
            clauses.append("m.status = ?")
            params.append(f.status)
        if f.viewer is not None:
            clauses.append(f"(m.status = 'curated' OR {_EFFECTIVE_AUTHOR} = ?)")
            params.append(f.viewer)
        if f.since:
            clauses.append("m.created >= ?")
            params.append(format_timestamp(f.since))
        if f.until:
            clauses.append("m.created <= ?")
            params.append(format_timestamp(f.until))
        if f.topics:
            topics = [normalise_topic(t) for t in f.topics]
            clauses.append(
                "EXISTS (SELECT 1 FROM mem_topics t WHERE t.project = m.project AND t.mem_id = m.id"
                f" AND t.topic IN ({','.join('?' * len(topics))}))"
            )
            params += topics
        if f.files:
            ors = []
            for file in f.files:
                if file.endswith("/"):
                    ors.append("substr(x.file, 1, ?) = ?")
                    params += [len(file), file]
                else:
                    ors.append("x.file = ?")
                    params.append(file)
            clauses.append(
                "EXISTS (SELECT 1 FROM mem_files x WHERE x.project = m.project AND x.mem_id = m.id"
                f" AND ({' OR '.join(ors)}))"
            )
        if not f.include_superseded:
            sql, extra = _superseded_sql(f.viewer)
            clauses.append(f"NOT {sql}")
            params += extra
        return " AND ".join(clauses), params

    def get(self, project: str, ids: Sequence[str]) -> list[IndexedMemory]:
        if not ids:
            return []
        by_id: dict[str, IndexedMemory] = {}
        ids = list(ids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self.db.execute(
                f"SELECT {self._COLS} FROM memories m WHERE m.project = ? AND m.id IN "
                f"({','.join('?' * len(chunk))})",
                [project, *chunk],
            ).fetchall()
            for r in rows:
                by_id[r[0]] = self._row(r)
        return [by_id[i] for i in ids if i in by_id]

    def resolve(self, project: str, ref: str) -> list[str]:
        look = ref_lookup(ref)
        if look is None:
            return []
        rows = self.db.execute(
            "SELECT id FROM memories WHERE project = ? AND (id = ? OR path = ?)",
            (project, look.id, look.path),
        ).fetchall()
        if rows:
            return sorted(r[0] for r in rows)
        if look.prefix is not None:
            # the id range lets SQLite seek the (project, id) index: substr() alone read every
            # id of the project (10-14 ms at 100k, ten times per `ccmemory search` for short ids)
            above = _after_prefix(look.prefix)
            bound, params = ("", []) if above is None else (" AND id < ?", [above])
            rows = self.db.execute(
                f"SELECT id FROM memories WHERE project = ? AND id >= ?{bound}"
                " AND substr(id, 1, ?) = ? ORDER BY id LIMIT ?",
                [project, look.prefix, *params, len(look.prefix), look.prefix, PREFIX_LIMIT],
            ).fetchall()
            return [r[0] for r in rows]
        return []

    def query(self, f: Filters, limit: int = 50, offset: int = 0) -> list[IndexedMemory]:
        where, params = self._where(f)
        rows = self.db.execute(
            f"SELECT {self._COLS} FROM memories m WHERE {where}"
            " ORDER BY m.created DESC, m.id DESC LIMIT ? OFFSET ?",
            [*params, limit, offset],
        ).fetchall()
        return [self._row(r) for r in rows]

    def count(self, f: Filters) -> int:
        where, params = self._where(f)
        row = self.db.execute(f"SELECT count(*) FROM memories m WHERE {where}", params).fetchone()
        return int(row[0])

    def file_links(self, f: Filters, matching: Callable[[str], bool] | None = None) -> list[tuple[str, str]]:
        """(memory id, file path/folder/glob as written) of every memory passing ``f`` that names
        files, ordered by id then file (file-tied recall, ccmemory.features.recall). With
        ``matching``, only the files it accepts: it is asked once per distinct file (read from
        the covering index mem_files_file), then only those files' links are read; reading every
        link of a 100k vault and matching each took about 1 s in a hook."""
        where, params = self._where(f)
        only = ""
        if matching is not None:
            names = [
                r[0]
                for r in self.db.execute(
                    "SELECT DISTINCT file FROM mem_files WHERE project = ?", (f.project,)
                )
                if matching(r[0])
            ]
            if not names:
                return []
            if len(names) <= _MAX_FILE_NAMES:
                only = f" AND x.file IN ({','.join('?' * len(names))})"
                params = [*params, *names]
        # with a list of files, the links of those files come first (CROSS JOIN fixes the order):
        # given memories_type, SQLite otherwise started from every memory of the recall types
        join = "CROSS JOIN" if only else "JOIN"
        rows = self.db.execute(
            f"SELECT x.mem_id, x.file FROM mem_files x {join} memories m"
            f" ON m.project = x.project AND m.id = x.mem_id WHERE {where}{only} ORDER BY 1, 2",
            params,
        ).fetchall()
        if matching is not None and not only:  # too many files for one IN list
            accepted = set(names)
            return [(r[0], r[1]) for r in rows if r[1] in accepted]
        return [(r[0], r[1]) for r in rows]

    def text_search(
        self, text: str, f: Filters, limit: int = 50, *, groups: Sequence[Sequence[str]] | None = None
    ) -> list[tuple[str, float]]:
        """Candidates holding any analysed query term, or every term of one of ``groups`` (at
        most bm25.CANDIDATE_CAP, FTS5's bm25 order), scored by `ccmemory.text.bm25` on the query's
        terms with the project's statistics, like every backend."""
        terms = analyzer.query_terms(text)
        if not terms:
            return []
        match = fts_match_groups(groups) if groups is not None else fts_match_terms(terms)
        if not match:
            return []
        hits = self._text_candidates(match, f)
        if not hits:
            return []
        id_of = dict(hits)
        marks = ",".join("?" * len(id_of))
        cands = [
            bm25.Candidate(id_of[r[0]], (r[1], r[2], r[3]))
            for r in self.db.execute(
                f"SELECT rowid, title, body, fields FROM memory_fts WHERE rowid IN ({marks})", list(id_of)
            )
        ]
        return bm25.rank(terms, cands, self._text_stats(f.project, terms))[:limit]

    def _text_candidates(self, match: str, f: Filters) -> list[tuple[int, str]]:
        """The first bm25.CANDIDATE_CAP memories passing the filters in (FTS5 bm25, id) order.

        Fast path: filter only FTS5's best PREFIX matches (FTS5 ranks its matches without touching
        the memories table; joining and filtering every match of a common word cost 5-20 ms at
        10k). The prefix answer is exact when all matches fit in it, or when the last candidate
        kept scores strictly better than the worst match examined (nothing after it can outrank or
        tie it); otherwise the full query runs. The prefix is filtered in two steps, its first
        _FIRST matches, then the rest only when those do not settle it."""
        cap = bm25.CANDIDATE_CAP
        where, params = self._where(f)
        prefix = self.db.execute(
            f"SELECT rowid, {_BM25} AS r FROM memory_fts WHERE memory_fts MATCH ? ORDER BY r LIMIT ?",
            (match, _PREFIX),
        ).fetchall()
        if not prefix:
            return []
        score = dict(prefix)
        kept: list[tuple[int, str]] = []
        done = 0
        # the best _FIRST matches first: usually enough (most pass the filters), else the rest
        for end in sorted({min(_FIRST, len(prefix)), len(prefix)}):
            rids = [rid for rid, _ in prefix[done:end]]
            # NOT INDEXED keeps the rowid lookups: with sampled statistics (ANALYZE under an
            # analysis limit) the planner otherwise walks the project's whole (project, id) index
            # and tests each rid against the list (12-15 ms at 100k instead of under 1 ms)
            kept += self.db.execute(
                f"SELECT m.rid, m.id FROM memories m NOT INDEXED WHERE m.rid IN ({','.join('?' * len(rids))})"
                f" AND {where}",
                [*rids, *params],
            ).fetchall()
            done = end
            kept.sort(key=lambda row: (score[row[0]], row[1]))
            if (end == len(prefix) < _PREFIX) or (
                len(kept) >= cap and score[kept[cap - 1][0]] < prefix[end - 1][1]
            ):
                return kept[:cap]
        return self.db.execute(
            f"WITH hits AS MATERIALIZED (SELECT rowid AS rid, {_BM25} AS r FROM memory_fts"
            " WHERE memory_fts MATCH ?)"
            " SELECT m.rid, m.id FROM hits JOIN memories m ON m.rid = hits.rid"
            f" WHERE {where} ORDER BY hits.r, m.id LIMIT ?",
            [match, *params, cap],
        ).fetchall()

    def _text_stats(self, project: str, terms: list[str]) -> bm25.Stats:
        """The project's statistics, kept per connection until the database changes (the stamp):
        totals, and the document frequency of each term asked so far (FTS5 counts a term's
        documents by reading its whole doclist: about 0.25 ms per common term at 100k)."""
        (version,) = self.db.execute("PRAGMA data_version").fetchone()
        stamp = version * 1_000_000_007 + self.db.total_changes  # as _vector_matrix's cache
        cached = self._text_cache.get(project)
        if cached is None or cached[0] != stamp or len(cached[2]) > _DF_CACHED:
            n, lt, lb, lf = self.db.execute(
                "SELECT count(*), coalesce(sum(len_title), 0), coalesce(sum(len_body), 0),"
                " coalesce(sum(len_fields), 0) FROM memories WHERE project = ?",
                (project,),
            ).fetchone()
            # two subqueries: SQLite answers a lone min() or max() from an index, not both at once
            lo, hi = self.db.execute(
                "SELECT (SELECT min(project) FROM memories), (SELECT max(project) FROM memories)"
            ).fetchone()
            # FTS5's own counts are this project's when it is the only one in the file
            cached = (stamp, (int(n), (int(lt), int(lb), int(lf)), lo == hi == project), {})
            self._text_cache[project] = cached
        (n, lengths, single), known = cached[1], cached[2]
        missing = [t for t in terms if t not in known]
        if missing and single:  # the usual case: one project per file, so FTS5's own counts are its
            marks = ",".join("?" * len(missing))
            rows = self.db.execute(f"SELECT term, doc FROM memory_vocab WHERE term IN ({marks})", missing)
            known.update(dict.fromkeys(missing, 0))
            known.update((t, int(d)) for t, d in rows)
        else:
            for t in missing:
                (known[t],) = self.db.execute(
                    "SELECT count(*) FROM memory_fts f JOIN memories m ON m.rid = f.rowid"
                    " WHERE memory_fts MATCH ? AND m.project = ?",
                    (fts_match_terms([t]), project),
                ).fetchone()
        return bm25.Stats(n, lengths, {t: known[t] for t in terms})

    def doc_freqs(self, project: str, terms: Sequence[str]) -> dict[str, int]:
        if not terms:
            return {}
        return dict(self._text_stats(project, list(dict.fromkeys(terms))).df)

    def edges(self, project: str, ids: Sequence[str]) -> list[Edge]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            "SELECT r.src, r.type, r.dst, r.reason FROM relations r"
            " JOIN memories a ON a.project = r.project AND a.id = r.src"
            " JOIN memories b ON b.project = r.project AND b.id = r.dst"
            f" WHERE r.project = ? AND (r.src IN ({marks}) OR r.dst IN ({marks}))"
            " ORDER BY r.src, r.type, r.dst",
            [project, *ids, *ids],
        ).fetchall()
        return [Edge(*r) for r in rows]

    def dangling(self, project: str) -> list[Edge]:
        rows = self.db.execute(
            "SELECT r.src, r.type, r.dst, r.reason FROM relations r WHERE r.project = ? AND NOT EXISTS"
            " (SELECT 1 FROM memories b WHERE b.project = r.project AND b.id = r.dst)"
            " ORDER BY r.src, r.type, r.dst",
            (project,),
        ).fetchall()
        return [Edge(*r) for r in rows]

    def superseded_ids(self, f: Filters) -> set[str]:
        g = dataclasses.replace(f, include_superseded=True)
        where, params = self._where(g)
        sql, extra = _superseded_sql(f.viewer)
        rows = self.db.execute(
            f"SELECT m.id FROM memories m WHERE {where} AND {sql}", [*params, *extra]
        ).fetchall()
        return {r[0] for r in rows}

    def related_by_topic_or_file(
        self, f: Filters, ids: Sequence[str], limit: int = 20
    ) -> list[tuple[str, str, int]]:
        if not ids:
            return []
        where, params = self._where(f)
        marks = ",".join("?" * len(ids))
        counts: dict[tuple[str, str], int] = {}
        for table, col in (("mem_topics", "topic"), ("mem_files", "file")):
            values = [
                r[0]
                for r in self.db.execute(
                    f"SELECT DISTINCT {col} FROM {table} WHERE project = ? AND mem_id IN ({marks})",
                    [f.project, *ids],
                )
            ]
            # a topic or file shared by very many memories connects nothing in particular
            kept = [
                v
                for v in values
                if self.db.execute(
                    f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE project = ? AND {col} = ? LIMIT ?)",
                    (f.project, v, MAX_SHARED + 1),
                ).fetchone()[0]
                <= MAX_SHARED
            ]
            if not kept:
                continue
            rows = self.db.execute(
                f"SELECT o.mem_id, s.mem_id, count(*) FROM {table} s"
                f" CROSS JOIN {table} o INDEXED BY {table}_{col}"
                f" ON o.project = s.project AND o.{col} = s.{col} AND o.mem_id != s.mem_id"
                " JOIN memories m ON m.project = o.project AND m.id = o.mem_id"
                f" WHERE s.project = ? AND s.mem_id IN ({marks}) AND o.mem_id NOT IN ({marks})"
                f" AND s.{col} IN ({','.join('?' * len(kept))})"
                f" AND {where} GROUP BY o.mem_id, s.mem_id",
                [f.project, *ids, *ids, *kept, *params],
            ).fetchall()
            for other, via, n in rows:
                counts[(other, via)] = counts.get((other, via), 0) + int(n)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0], kv[0][1]))
        return [(o, v, n) for (o, v), n in ranked[:limit]]

    def file_problems(self, project: str) -> list[FileProblem]:
        out = [
            FileProblem(p, line, err)
            for p, line, err in self.db.execute(
                "SELECT path, error_line, error FROM files WHERE project = ? AND error IS NOT NULL",
                (project,),
            ).fetchall()
        ]
        # ids held by more than one valid file, from the partial index files_valid (not a join
        # over every file: 160 ms at 100k memories), then their losing files
        # (named: with ANALYZE's sampled statistics the planner prefers files_mem and reads every
        # row, 0.12-0.27 s at 100k; a read-only index from another version may lack it)
        query = (
            "SELECT mem_id FROM files {} WHERE project = ? AND error IS NULL AND mem_id IS NOT NULL"
            " GROUP BY mem_id HAVING count(*) > 1"
        )
        try:
            dup = [r[0] for r in self.db.execute(query.format("INDEXED BY files_valid"), (project,))]
        except sqlite3.OperationalError:
            dup = [r[0] for r in self.db.execute(query.format(""), (project,))]
        rows = []
        for start in range(0, len(dup), 500):
            chunk = dup[start : start + 500]
            rows += self.db.execute(
                "SELECT f.path, f.mem_id, m.path FROM files f JOIN memories m ON m.project = f.project AND"
                " m.id = f.mem_id WHERE f.project = ? AND f.error IS NULL AND f.path != m.path"
                f" AND f.mem_id IN ({','.join('?' * len(chunk))})",
                [project, *chunk],
            ).fetchall()
        for path, mem_id, winner in rows:
            out.append(FileProblem(path, 1, f"duplicate id {mem_id}: also used by {winner}"))
        return sorted(out, key=lambda p: (p.path, p.line or 0))

    def invalid_files(self, project: str, limit: int) -> tuple[int, list[str]]:
        rows = self.db.execute(
            "SELECT path FROM files WHERE project = ? AND error IS NOT NULL ORDER BY path",
            (project,),
        ).fetchall()
        return len(rows), [p for (p,) in rows[:limit]]

    def stats(self, project: str) -> dict[str, Any]:
        by_type = dict(
            self.db.execute(
                "SELECT type, count(*) FROM memories WHERE project = ? GROUP BY type ORDER BY type",
                (project,),
            ).fetchall()
        )
        by_status = dict(
            self.db.execute(
                "SELECT status, count(*) FROM memories WHERE project = ? GROUP BY status ORDER BY status",
                (project,),
            ).fetchall()
        )
        (nrel,) = self.db.execute("SELECT count(*) FROM relations WHERE project = ?", (project,)).fetchone()
        (nerr,) = self.db.execute(
            "SELECT count(*) FROM files WHERE project = ? AND error IS NOT NULL", (project,)
        ).fetchone()
        (nvec,) = self.db.execute("SELECT count(*) FROM vectors").fetchone()
        return stats_summary(
            self.backend, self.location, by_type, by_status, relations=nrel, invalid_files=nerr, vectors=nvec
        )

    def dump(self, project: str) -> dict[str, Any]:
        mems = self.db.execute(
            "SELECT id, path, type, title, body, created, author_fm, author_git, session, branch,"
            " confidence, source, status, fields, topics, files, supersedes, relations, hash, text_hash"
            " FROM memories WHERE project = ? ORDER BY id",
            (project,),
        ).fetchall()
        fts = self.db.execute(
            "SELECT m.id, f.title, f.body, f.fields FROM memory_fts f JOIN memories m ON"
            " m.rid = f.rowid WHERE m.project = ? ORDER BY m.id",
            (project,),
        ).fetchall()
        (fts_total,) = self.db.execute("SELECT count(*) FROM memory_fts").fetchone()
        return {
            "memories": [tuple(r) for r in mems],
            "fts": [tuple(r) for r in fts],
            "fts_total": fts_total,
            "relations": [
                tuple(r)
                for r in self.db.execute(
                    "SELECT src, type, dst, reason FROM relations WHERE project = ? ORDER BY 1,2,3",
                    (project,),
                )
            ],
            "topics": [
                tuple(r)
                for r in self.db.execute(
                    "SELECT mem_id, topic FROM mem_topics WHERE project = ? ORDER BY 1, 2", (project,)
                )
            ],
            "files": [
                tuple(r)
                for r in self.db.execute(
                    "SELECT mem_id, file FROM mem_files WHERE project = ? ORDER BY 1, 2", (project,)
                )
            ],
            "file_rows": [
                tuple(r)
                for r in self.db.execute(
                    "SELECT path, size, hash, mem_id, error, error_line FROM files WHERE project = ?"
                    " ORDER BY path",
                    (project,),
                )
            ],
        }

    # --- vectors --------------------------------------------------------------------------------
    def missing_vectors(self, project: str, embedder: str) -> list[tuple[str, str]]:
        if self._vectors_complete(project, embedder):
            return []  # the usual answer, without the anti-join (~0.4 s at 100k memories)
        rows = self.db.execute(
            f"SELECT m.text_hash, {self._COLS} FROM memories m WHERE m.project = ? AND NOT EXISTS"
            " (SELECT 1 FROM vectors v WHERE v.embedder = ? AND v.text_hash = m.text_hash)"
            " ORDER BY m.id",
            (project, embedder),
        ).fetchall()
        seen: dict[str, str] = {}
        for r in rows:
            seen.setdefault(r[0], embed_text(self._row(r[1:])))
        return sorted(seen.items())

    def store_vectors(self, embedder: str, dim: int, items: Sequence[tuple[str, Any]]) -> None:
        import numpy as np

        def work(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT OR REPLACE INTO vectors(embedder, text_hash, dim, vec) VALUES (?,?,?,?)",
                [(embedder, h, dim, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items],
            )

        self._write(work)

    def _vectors_complete(self, project: str, embedder: str) -> bool:
        """Every memory of the project has a vector: a matrix built from the index's current
        state (kept in memory, or the file beside the index) holds one row per memory. False
        when that cannot be told cheaply (then the caller asks SQLite)."""
        (version,) = self.db.execute("PRAGMA data_version").fetchone()
        stamp = version * 1_000_000_007 + self.db.total_changes  # as _vector_matrix's cache
        if self._complete.get((project, embedder)) == stamp:
            return True  # nothing written since the last check (a warm process asks per search)
        with self._snapshot():
            token = self._state_token()
            (n,) = self.db.execute("SELECT count(*) FROM memories WHERE project = ?", (project,)).fetchone()
        entry = self._vector_matrix(project, embedder, cheap=True)
        complete = token is not None and entry is not None and entry[5] == token and len(entry[1]) == n
        if complete:
            self._complete[(project, embedder)] = stamp
        return complete

    def _vector_matrix(self, project: str, embedder: str, *, cheap: bool = False) -> Any:
        """All of a project's vectors as one matrix, cached until the database changes:
        ``[stamp, ids, matrix, live, masks, token]`` where ``live`` (rows not superseded) and
        ``masks`` (see :meth:`_filter_mask`) are filled lazily and ``token`` is the index state
        it was built from (ccmemory.index.matrixfile). A new process maps the file the last
        reader wrote for that state; else it reads SQLite (and writes the file). With ``cheap``,
        None instead of reading SQLite."""
        import numpy as np

        from ccmemory.index import matrixfile

        (version,) = self.db.execute("PRAGMA data_version").fetchone()
        changes = self.db.total_changes
        key = (project, embedder)
        cached = self._vec_cache.get(key)
        stamp = version * 1_000_000_007 + changes
        if cached and cached[0] == stamp:
            return cached
        on_disk = self.location != ":memory:"
        path = matrixfile.path_for(self.location, project, embedder)
        with self._snapshot():
            token = self._state_token()
            found = matrixfile.read(path, token, project, embedder) if token and on_disk else None
            if found is None:
                if cheap:
                    return None
                rows = self.db.execute(
                    "SELECT m.id, v.vec, v.dim FROM memories m JOIN vectors v ON v.embedder = ? AND"
                    " v.text_hash = m.text_hash WHERE m.project = ? ORDER BY m.id",
                    (embedder, project),
                ).fetchall()
        if found is not None:
            ids, matrix = found
        else:
            ids = [r[0] for r in rows]
            if rows:
                dim = rows[0][2]
                matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
                if token and on_disk and not self._readonly:
                    matrixfile.write(path, token, project, embedder, ids, matrix)
            else:
                matrix = np.zeros((0, 0), dtype=np.float32)
        entry = [stamp, ids, matrix, None, {}, token]
        self._vec_cache[key] = entry
        return entry

    def _live_mask(self, project: str, entry: list[Any]) -> Any:
        """Boolean mask over ``entry``'s rows: False for memories another one supersedes."""
        import numpy as np

        if entry[3] is None:
            banned = superseded(
                self.db.execute(
                    "SELECT r.src, r.dst FROM relations r JOIN memories s ON s.project = r.project"
                    " AND s.id = r.src WHERE r.project = ? AND r.type = 'SUPERSEDES' AND r.src != r.dst",
                    (project,),
                )
            )
            ids = entry[1]
            entry[3] = np.fromiter((i not in banned for i in ids), dtype=bool, count=len(ids))
        return entry[3]

    def _filter_mask(self, f: Filters, entry: list[Any]) -> Any:
        """Boolean mask over ``entry``'s rows: True for the memories ``f`` selects. Kept with the
        matrix (so until the database changes) for the last few filters: recall's prompt search
        filters by type, a shared index by viewer, and at 100k memories the filter query and the
        mask took ~0.3 s a search, thirty times the cosine itself (issue 29)."""
        import numpy as np

        where, params = self._where(f)
        masks: dict[tuple[str, tuple[Any, ...]], Any] = entry[4]
        key = (where, tuple(params))
        mask = masks.get(key)
        if mask is None:
            allowed = {r[0] for r in self.db.execute(f"SELECT m.id FROM memories m WHERE {where}", params)}
            mask = np.fromiter((i in allowed for i in entry[1]), dtype=bool, count=len(entry[1]))
            if len(masks) >= _FILTER_MASKS:
                masks.pop(next(iter(masks)))  # the oldest
            masks[key] = mask
        return mask

    def vector_search(
        self, embedder: str, vector: Any, f: Filters, limit: int = 50
    ) -> list[tuple[str, float]]:
        import numpy as np

        entry = self._vector_matrix(f.project, embedder)
        ids, matrix = entry[1], entry[2]
        if not ids:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if matrix.shape[1] != query.shape[0]:
            raise IndexUnavailable(
                f"vector dimension mismatch: index has {matrix.shape[1]}, query has {query.shape[0]}"
            )
        # numpy's own single-threaded loop, not BLAS: OpenBLAS splits this product over its
        # threads, which then spin-wait after it; on 2 cores the next full-text query ran ~20 ms
        # slower (issue 29, 100k). As fast here (the matrix is read once either way); these
        # float32 scores only select the candidates, cosine.exact_scores scores them.
        scores = np.einsum("ij,j->i", matrix, query)
        plain = Filters(project=f.project, include_superseded=True)
        if f == Filters(project=f.project):
            # the common case (only superseded memories hidden): a mask cached with the matrix
            scores = np.where(self._live_mask(f.project, entry), scores, -np.inf)
        elif f != plain:
            scores = np.where(self._filter_mask(f, entry), scores, -np.inf)
        k = min(limit, len(ids))
        top = [i for i in np.argpartition(-scores, k - 1)[:k] if np.isfinite(scores[i])]
        # selected in float32 here; scored by the one function both backends use (cosine.py)
        return exact_scores([ids[i] for i in top], matrix[top], query)

    # --- projects -----------------------------------------------------------------------------
    def projects(self) -> list[str]:
        rows = self.db.execute(
            "SELECT project FROM files UNION SELECT project FROM project_links"
            " UNION SELECT other FROM project_links ORDER BY 1"
        ).fetchall()
        return [r[0] for r in rows]

    def link_projects(self, project: str, links: Sequence[tuple[str, str]]) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM project_links WHERE project = ?", (project,))
            db.executemany(
                "INSERT OR REPLACE INTO project_links(project, other, relation) VALUES (?,?,?)",
                [(project, other, rel) for other, rel in links if other != project],
            )

        self._write(work)

    def related_projects(self, project: str) -> list[tuple[str, str]]:
        rows = self.db.execute(
            "SELECT other, relation FROM project_links WHERE project = ?"
            " UNION SELECT project, relation FROM project_links WHERE other = ? ORDER BY 1, 2",
            (project, project),
        ).fetchall()
        out: dict[str, str] = {}
        for other, rel in rows:
            out.setdefault(other, rel)
        return sorted(out.items())

    def applying_to(self, target: str, f: Filters, limit: int = 50) -> list[IndexedMemory]:
        where, params = self._where(f)
        rows = self.db.execute(
            f"SELECT {self._COLS} FROM memories m WHERE {where} AND m.fields LIKE '%applies_to%'"
            " AND EXISTS (SELECT 1 FROM json_each(m.fields, '$.applies_to') j WHERE j.value = ?)"
            " ORDER BY m.created DESC, m.id DESC LIMIT ?",
            [*params, target, limit],
        ).fetchall()
        return [self._row(r) for r in rows]

    def projects_applying_to(self, target: str) -> list[str]:
        rows = self.db.execute(
            "SELECT DISTINCT m.project FROM memories m WHERE m.project != ? AND m.fields LIKE '%applies_to%'"
            " AND EXISTS (SELECT 1 FROM json_each(m.fields, '$.applies_to') j WHERE j.value = ?) ORDER BY 1",
            (target, target),
        ).fetchall()
        return [r[0] for r in rows]
