"""The local session index (issue 28): session records (`.ccmemory/local/sessions/<id>.json`,
ccmemory.features.sessions) mirrored into SQLite for search, whole sessions and single prompts.

Where: in the embedded memory index file (`.ccmemory/local/index.db`) when the backend is SQLite,
in its own tables; with Neo4j in a local file of its own (`.ccmemory/local/sessions.db`): session
records are private and never go to the shared server (`index_file`). The tables are this
module's alone, with their own schema version (`meta` key ``sessions_schema``); the memory index
drops them with its own tables when its schema changes, and `reindex --full` of the memory index
swaps in a file without them: either way the next sync rebuilds them from the records.

The JSON records are the source of truth. `sync` brings the index level with the folder by file
name, modification time and size (a record that cannot be read is skipped, its name and reason
reported, and not read again until it changes); `upsert_file` / `remove_files` keep it level when
a record is written, pruned or archived. `refresh` is what a search runs first: nothing when the
folder has not changed since the last sync (its own modification time, which every record write,
rename and delete changes), else a sync by name (records added or deleted; a record rewritten by
ccmemory was indexed by its writer; `ccmemory reindex` compares mtime and size of every record).

Full text: the same analysis as the memories (ccmemory.text.analyzer; FTS5 ``unicode61`` over the
analysed terms) and the same scoring in Python (ccmemory.text.bm25, BM25F over a session's summary,
prompts, and files changed + commands + errors; a prompt alone for prompt search), with the
statistics of the sessions searched. Query text is analysed into terms and each is quoted
(ccmemory.index.query.fts_match_terms): it never becomes FTS5 syntax. Records are redacted when
written (ccmemory.features.sessions.record); this module stores only what they hold.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccmemory.core.errors import IndexUnavailable
from ccmemory.index.query import fts_match_terms
from ccmemory.index.sqlitetx import immediate
from ccmemory.text import analyzer, bm25

log = logging.getLogger("ccmemory.index.sessions")

SCHEMA_KEY = "sessions_schema"
SCHEMA_VERSION = 1
BUILT_KEY = "sessions_built"  # the folder's mtime_ns at the last complete sync
#: matches scored exactly per query, taken in FTS5's bm25 order over the same terms and field
#: weights; every match is scored when there are no more (all the bench's queries)
CANDIDATE_CAP = 400
_TABLES = (
    "sessions",
    "session_prompts",
    "session_fts",
    "session_vocab",
    "session_prompt_fts",
    "session_prompt_vocab",
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS sessions(
  rid INTEGER PRIMARY KEY, file TEXT NOT NULL UNIQUE, id TEXT, mtime_ns INTEGER NOT NULL,
  size INTEGER NOT NULL, error TEXT, at TEXT NOT NULL DEFAULT '', started TEXT, ended TEXT,
  branch TEXT, summary TEXT NOT NULL DEFAULT '', len_summary INTEGER NOT NULL DEFAULT 0,
  len_prompts INTEGER NOT NULL DEFAULT 0, len_extra INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS sessions_at ON sessions(at, id) WHERE error IS NULL;
CREATE INDEX IF NOT EXISTS sessions_id ON sessions(id);
CREATE TABLE IF NOT EXISTS session_prompts(
  pid INTEGER PRIMARY KEY, rid INTEGER NOT NULL, n INTEGER NOT NULL, text TEXT NOT NULL,
  len INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS session_prompts_rid ON session_prompts(rid, n);
CREATE VIRTUAL TABLE IF NOT EXISTS session_fts USING fts5(
  summary, prompts, extra, tokenize = 'unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE IF NOT EXISTS session_vocab USING fts5vocab(session_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS session_prompt_fts USING fts5(
  text, tokenize = 'unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE IF NOT EXISTS session_prompt_vocab USING fts5vocab(session_prompt_fts, 'row');
"""
_BM25 = "bm25(session_fts, 4.0, 1.0, 2.0)"


def index_file(vault_dir: Path, backend: str) -> Path:
    """The memory index file with SQLite; a local file of its own with Neo4j (never the server),
    and with any other value (privacy first)."""
    return vault_dir / "local" / ("index.db" if backend == "sqlite" else "sessions.db")


def open_local(vault_dir: Path, backend: str) -> SessionIndex:
    """The session index of the vault at `vault_dir` (`.ccmemory/`), over its `local/sessions/`
    records, in `index_file`'s file (the caller closes it). IndexUnavailable, naming the file,
    when `local/` is a symlink (never written through) or the file cannot be used."""
    local = vault_dir / "local"
    if local.is_symlink():
        raise IndexUnavailable(f"{local} is a symlink: the session index is not written through it")
    path = index_file(vault_dir, backend)
    try:
        return SessionIndex(path, local / "sessions")
    except (OSError, sqlite3.Error) as exc:
        raise IndexUnavailable(f"session index {path} cannot be used: {exc}", UNUSABLE_HINT) from None


UNUSABLE_HINT = "session records are untouched; run `ccmemory reindex --full` to rebuild the index from them"


def session_fields(rec: dict[str, Any]) -> tuple[str, str, str]:
    """A record's analysed summary, prompts, and files changed + commands + errors."""
    prompts = "\n".join(str(p) for p in rec.get("prompts") or [])
    extra = " ".join(
        [
            *(str(f) for f in rec.get("files_changed") or []),
            *(str(c.get("cmd", "")) for c in rec.get("commands") or [] if isinstance(c, dict)),
            *(str(e) for e in rec.get("errors") or []),
        ]
    )
    return analyzer.analyse(str(rec.get("summary") or "")), analyzer.analyse(prompts), analyzer.analyse(extra)


def when(rec: dict[str, Any]) -> str:
    """The time a record is sorted and filtered by (`since`): its end, else its start."""
    return str(rec.get("end") or rec.get("start") or "")


@dataclass
class SyncReport:
    indexed: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file name, reason)

    def as_dict(self) -> dict[str, Any]:
        return {
            "indexed": self.indexed,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "skipped": [{"file": f, "reason": r} for f, r in self.skipped],
        }


@dataclass(frozen=True)
class PromptHit:
    session: str
    file: str
    n: int  # the prompt's place in its session, from 1
    text: str
    started: str | None
    ended: str | None
    branch: str | None
    score: float


def _record_files(folder: Path) -> dict[str, os.stat_result]:
    """file name -> stat of every record file (`*.json` directly in the folder, no dot-file)."""
    if folder.is_symlink() or not folder.is_dir():
        return {}
    out = {}
    with os.scandir(folder) as it:
        for e in it:
            if e.name.endswith(".json") and not e.name.startswith("."):
                with contextlib.suppress(OSError):
                    if e.is_file(follow_symlinks=False):
                        out[e.name] = e.stat(follow_symlinks=False)
    return out


def _record_names(folder: Path) -> list[str]:
    if folder.is_symlink() or not folder.is_dir():
        return []
    return [n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith(".")]


def _read(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        return None, "not a session record (no string `id`)"
    return data, None


class SessionIndex:
    """The session tables of one SQLite file. Several processes (the capture worker, the CLI,
    the MCP server) use it at once: WAL, a busy timeout, every write in one transaction."""

    def __init__(self, location: Path | str, folder: Path):
        self.location = str(location)
        self.folder = folder
        if self.location != ":memory:":
            Path(self.location).parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.location, timeout=30, isolation_level=None, check_same_thread=False)
        self._lock = threading.RLock()
        try:
            self.db.execute("PRAGMA busy_timeout = 30000")
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = NORMAL")
            self._ensure_schema()
        except BaseException:
            self.db.close()
            raise

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> SessionIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ensure_schema(self) -> None:
        with self._lock:
            self.db.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (SCHEMA_KEY,)).fetchone()
            have = {
                r[0]
                for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
            }
            if row is not None and row[0] == str(SCHEMA_VERSION) and have.issuperset(_TABLES):
                return
            self.db.execute("BEGIN IMMEDIATE")
            try:
                if row is not None and row[0] != str(SCHEMA_VERSION):  # another version: rebuild
                    for name in _TABLES:
                        self.db.execute(f'DROP TABLE IF EXISTS "{name}"')
                for stmt in _SCHEMA.split(";"):
                    if stmt.strip():
                        self.db.execute(stmt)
                self.db.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (SCHEMA_KEY, str(SCHEMA_VERSION))
                )
                self.db.execute("DELETE FROM meta WHERE key = ?", (BUILT_KEY,))
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def _write(self, fn: Any) -> Any:
        with self._lock:
            return immediate(self.db, fn)

    # --- writing --------------------------------------------------------------------------------
    def _delete(self, db: sqlite3.Connection, files: Iterable[str]) -> int:
        count = 0
        for name in files:
            row = db.execute("SELECT rid FROM sessions WHERE file = ?", (name,)).fetchone()
            if row is None:
                continue
            rid = row[0]
            db.execute("DELETE FROM session_fts WHERE rowid = ?", (rid,))
            pids = [p for (p,) in db.execute("SELECT pid FROM session_prompts WHERE rid = ?", (rid,))]
            db.executemany("DELETE FROM session_prompt_fts WHERE rowid = ?", [(p,) for p in pids])
            db.execute("DELETE FROM session_prompts WHERE rid = ?", (rid,))
            db.execute("DELETE FROM sessions WHERE rid = ?", (rid,))
            count += 1
        return count

    def _insert(
        self,
        db: sqlite3.Connection,
        name: str,
        st: os.stat_result,
        rec: dict[str, Any] | None,
        error: str | None,
    ) -> None:
        self._delete(db, [name])
        if rec is None:
            db.execute(
                "INSERT INTO sessions(file, mtime_ns, size, error) VALUES (?,?,?,?)",
                (name, st.st_mtime_ns, st.st_size, error or "unreadable"),
            )
            return
        fs, fp, fx = session_fields(rec)
        cur = db.execute(
            "INSERT INTO sessions(file, id, mtime_ns, size, at, started, ended, branch, summary,"
            " len_summary, len_prompts, len_extra) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                name,
                rec["id"],
                st.st_mtime_ns,
                st.st_size,
                when(rec),
                rec.get("start"),
                rec.get("end"),
                rec.get("branch") if isinstance(rec.get("branch"), str) else None,
                str(rec.get("summary") or ""),
                *bm25.field_lengths((fs, fp, fx)),
            ),
        )
        rid = cur.lastrowid
        db.execute(
            "INSERT INTO session_fts(rowid, summary, prompts, extra) VALUES (?,?,?,?)", (rid, fs, fp, fx)
        )
        for n, prompt in enumerate(rec.get("prompts") or [], 1):
            text = str(prompt)
            terms = analyzer.analyse(text)
            pc = db.execute(
                "INSERT INTO session_prompts(rid, n, text, len) VALUES (?,?,?,?)",
                (rid, n, text, len(terms.split())),
            )
            db.execute("INSERT INTO session_prompt_fts(rowid, text) VALUES (?,?)", (pc.lastrowid, terms))

    def upsert_file(self, path: Path) -> str | None:
        """Index (or re-index) one record file; None, or why it was skipped (it is remembered as
        unreadable until it changes). A file that is gone is removed from the index."""
        try:
            st = path.stat()
        except FileNotFoundError:
            self.remove_files([path.name])
            return None
        rec, error = _read(path)
        self._write(lambda db: self._insert(db, path.name, st, rec, error))
        return error

    def remove_files(self, names: Iterable[str]) -> int:
        """Drop the records of these file names (pruned, archived); how many were indexed."""
        names = list(names)
        return int(self._write(lambda db: self._delete(db, names))) if names else 0

    def built(self) -> bool:
        return self._meta(BUILT_KEY) is not None

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _folder_stamp(self) -> str | None:
        """The folder's mtime_ns, or None when it changed too recently to trust (two writes in
        one timestamp tick would look like one, as git's racy files)."""
        try:
            st = self.folder.stat()
        except OSError:
            return "absent"
        if time.time_ns() - st.st_mtime_ns < 2_000_000_000:
            return None
        return str(st.st_mtime_ns)

    def sync(self, *, full: bool = False, by_name: bool = False, progress: Any = None) -> SyncReport:
        """Bring the index level with the record files: by name, mtime and size; `full`: every
        record read again; `by_name`: only records added or deleted (no stat of the others: a
        record rewritten by ccmemory was indexed by its writer, `upsert_file`)."""
        report = SyncReport()
        stamp = self._folder_stamp()
        if by_name and self.built():
            names = set(_record_names(self.folder))
            known_names = {f for (f,) in self.db.execute("SELECT file FROM sessions").fetchall()}
            on_disk = {}
            for name in sorted(names - known_names):
                with contextlib.suppress(OSError):
                    st = os.lstat(self.folder / name)
                    if stat.S_ISREG(st.st_mode):  # as _record_files: never through a link
                        on_disk[name] = st
            gone = sorted(known_names - names)
            todo = sorted(on_disk)
            report.unchanged = len(names) - len(todo)
        else:
            on_disk = _record_files(self.folder)
            known = {
                f: (m, s)
                for f, m, s in self.db.execute("SELECT file, mtime_ns, size FROM sessions").fetchall()
            }
            gone = sorted(set(known) - set(on_disk))
            todo = sorted(
                n for n, st in on_disk.items() if full or known.get(n) != (st.st_mtime_ns, st.st_size)
            )
            report.unchanged = len(on_disk) - len(todo)
        batch: list[tuple[str, os.stat_result, dict[str, Any] | None, str | None]] = []

        def flush() -> None:
            rows = list(batch)
            batch.clear()

            def work(db: sqlite3.Connection) -> None:
                for name, st, rec, error in rows:
                    self._insert(db, name, st, rec, error)

            self._write(work)

        for done, name in enumerate(todo, 1):
            rec, error = _read(self.folder / name)
            if error is not None:
                report.skipped.append((name, error))
                log.info("session record %s skipped: %s", name, error)
            else:
                report.indexed += 1
            batch.append((name, on_disk[name], rec, error))
            if len(batch) >= 500:
                flush()
            if progress is not None:
                progress(done, len(todo))
        if batch:
            flush()
        report.removed = self.remove_files(gone)
        with self._lock:  # '' (a folder changed too recently to trust): the next refresh syncs
            self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (BUILT_KEY, stamp or ""))
        return report

    def refresh(self) -> SyncReport | None:
        """What a search runs first: nothing when the folder is unchanged since the last sync, else
        a sync by name (records added or deleted; the first time, every record)."""
        stamp = self._meta(BUILT_KEY)
        if stamp and stamp == self._folder_stamp():
            return None
        return self.sync(by_name=True)

    # --- reading --------------------------------------------------------------------------------
    def count(self) -> int:
        (n,) = self.db.execute("SELECT count(*) FROM sessions WHERE error IS NULL").fetchone()
        return int(n)

    def _stats(self, terms: list[str], since: str | None) -> bm25.Stats:
        cond, params = ("AND at >= ?", [since]) if since else ("", [])
        n, ls, lp, lx = self.db.execute(
            "SELECT count(*), coalesce(sum(len_summary), 0), coalesce(sum(len_prompts), 0),"
            f" coalesce(sum(len_extra), 0) FROM sessions WHERE error IS NULL {cond}",
            params,
        ).fetchone()
        df = self._doc_freq(
            terms,
            since,
            "session_vocab",
            "SELECT count(*) FROM session_fts f JOIN sessions s ON s.rid = f.rowid"
            " WHERE session_fts MATCH ? AND s.at >= ?",
        )
        return bm25.Stats(int(n), (int(ls), int(lp), int(lx)), df)

    def _doc_freq(self, terms: list[str], since: str | None, vocab: str, count_since: str) -> dict[str, int]:
        """How many records (or prompts) hold each term: the vocabulary table `vocab` (a constant
        name) keeps it for the whole history; `count_since` counts it among those since `since`."""
        if not since:
            marks = ",".join("?" * len(terms))
            rows = self.db.execute(f"SELECT term, doc FROM {vocab} WHERE term IN ({marks})", terms)
            return {t: int(d) for t, d in rows}
        return {
            t: int(self.db.execute(count_since, (fts_match_terms([t]), since)).fetchone()[0]) for t in terms
        }

    def rank_sessions(
        self, query: str, *, since: str | None = None, limit: int = 50
    ) -> list[tuple[str, float]]:
        """(session id, calibrated BM25F score), best first (ties by id)."""
        terms = analyzer.query_terms(query)
        if not terms:
            return []
        match = fts_match_terms(terms)
        if since:
            rows = self.db.execute(
                f"WITH hits AS MATERIALIZED (SELECT rowid AS rid, {_BM25} AS r FROM session_fts"
                " WHERE session_fts MATCH ?) SELECT h.rid FROM hits h JOIN sessions s ON s.rid = h.rid"
                " WHERE s.at >= ? ORDER BY h.r LIMIT ?",
                (match, since, CANDIDATE_CAP),
            ).fetchall()
        else:
            rows = self.db.execute(
                f"SELECT rowid FROM session_fts WHERE session_fts MATCH ? ORDER BY {_BM25} LIMIT ?",
                (match, CANDIDATE_CAP),
            ).fetchall()
        if not rows:
            return []
        rids = [r[0] for r in rows]
        marks = ",".join("?" * len(rids))
        cands = []
        for sid, fs, fp, fx in self.db.execute(
            f"SELECT s.id, f.summary, f.prompts, f.extra FROM sessions s JOIN session_fts f"
            f" ON f.rowid = s.rid WHERE s.rid IN ({marks})",
            rids,
        ):
            cands.append(bm25.Candidate(str(sid), (fs, fp, fx)))
        # one candidate per id (two files naming one session: the first found counts)
        cands = list({c.id: c for c in reversed(cands)}.values())
        return bm25.rank(terms, cands, self._stats(terms, since))[: max(0, limit)]

    def rank_prompts(self, query: str, *, since: str | None = None, limit: int = 10) -> list[PromptHit]:
        """Single prompts matching `query`, best first: BM25 over the prompt's own text, with the
        statistics of every prompt indexed (of sessions since `since` when given)."""
        terms = analyzer.query_terms(query)
        if not terms:
            return []
        match = fts_match_terms(terms)
        if since:
            rows = self.db.execute(
                "WITH hits AS MATERIALIZED (SELECT rowid AS pid, bm25(session_prompt_fts) AS r"
                " FROM session_prompt_fts WHERE session_prompt_fts MATCH ?)"
                " SELECT h.pid FROM hits h JOIN session_prompts p ON p.pid = h.pid"
                " JOIN sessions s ON s.rid = p.rid WHERE s.at >= ? ORDER BY h.r LIMIT ?",
                (match, since, CANDIDATE_CAP),
            ).fetchall()
        else:  # only readable records have prompts indexed
            rows = self.db.execute(
                "SELECT rowid FROM session_prompt_fts WHERE session_prompt_fts MATCH ?"
                " ORDER BY bm25(session_prompt_fts) LIMIT ?",
                (match, CANDIDATE_CAP),
            ).fetchall()
        if rows:
            marks = ",".join("?" * len(rows))
            rows = self.db.execute(
                f"SELECT rowid, text FROM session_prompt_fts WHERE rowid IN ({marks})", [r[0] for r in rows]
            ).fetchall()
        if not rows:
            return []
        cands = [bm25.Candidate(str(pid), (t, "", "")) for pid, t in rows]
        if since:
            n, total = self.db.execute(
                "SELECT count(*), coalesce(sum(p.len), 0) FROM session_prompts p JOIN sessions s"
                " ON s.rid = p.rid WHERE s.at >= ?",
                (since,),
            ).fetchone()
        else:
            n, total = self.db.execute(
                "SELECT count(*), coalesce(sum(len), 0) FROM session_prompts"
            ).fetchone()
        df = self._doc_freq(
            terms,
            since,
            "session_prompt_vocab",
            "SELECT count(*) FROM session_prompt_fts f JOIN session_prompts p ON p.pid = f.rowid"
            " JOIN sessions s ON s.rid = p.rid WHERE session_prompt_fts MATCH ? AND s.at >= ?",
        )
        ranked = bm25.rank(terms, cands, bm25.Stats(int(n), (int(total), 0, 0), df))
        # bm25.rank breaks ties by id (here the prompt's row id as text): order them by number
        ranked.sort(key=lambda kv: (-kv[1], int(kv[0])))
        ranked = ranked[: max(0, limit)]
        if not ranked:
            return []
        marks = ",".join("?" * len(ranked))
        info = {
            str(pid): row
            for pid, *row in self.db.execute(
                "SELECT p.pid, s.id, s.file, p.n, p.text, s.started, s.ended, s.branch FROM session_prompts p"
                f" JOIN sessions s ON s.rid = p.rid WHERE p.pid IN ({marks})",
                [int(k) for k, _ in ranked],
            )
        }
        return [PromptHit(*info[k], score=s) for k, s in ranked if k in info]  # type: ignore[misc]

    def files_of(self, ids: Iterable[str]) -> dict[str, str]:
        """session id -> its record's file name."""
        ids = list(ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT id, file FROM sessions WHERE error IS NULL AND id IN ({marks}) ORDER BY rid DESC", ids
        ).fetchall()
        return {str(i): str(f) for i, f in rows}

    def semantic_texts(self, *, since: str | None = None, prompts: int = 11) -> list[dict[str, Any]]:
        """Per session the summary and first `prompts` prompts, as the semantic half reads them
        (`{"id", "summary", "prompts"}`), without reading the record files."""
        cond, params = ("AND s.at >= ?", [since]) if since else ("", [])
        out: dict[int, dict[str, Any]] = {}
        for rid, sid, summary in self.db.execute(
            f"SELECT s.rid, s.id, s.summary FROM sessions s WHERE s.error IS NULL {cond} ORDER BY s.rid",
            params,
        ):
            out[rid] = {"id": sid, "summary": summary, "prompts": []}
        for rid, text in self.db.execute(
            "SELECT p.rid, p.text FROM session_prompts p JOIN sessions s ON s.rid = p.rid"
            f" WHERE s.error IS NULL AND p.n <= ? {cond} ORDER BY p.rid, p.n",
            [prompts, *params],
        ):
            if rid in out:
                out[rid]["prompts"].append(text)
        return list({v["id"]: v for v in out.values()}.values())
