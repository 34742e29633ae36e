"""Local, private usage telemetry (docs/dashboard.md, "Telemetry").

Two halves:

- **Emitting** is append-only and cheap: one JSON line (`capture.spool.append`, no fsync) in
  `.ccmemory/local/telemetry.jsonl`. The SessionStart hook keeps writing its own line to
  `.ccmemory/local/surfaced.jsonl` exactly as before, so no hook got slower.
- **The store** is SQLite, `.ccmemory/local/telemetry.db`. `Store.ingest()` copies new lines of both
  JSONL inboxes into it (remembering byte offsets), reads session spans (first and last timestamp)
  from the capture spools, and applies the retention window. The dashboard's own actions
  (promoted, dismissed, visited) are written to the store directly.

What is kept: event kind, time, session id, memory ids and counts. Never a query, a prompt, a
memory's text or a file path. `.ccmemory/local/` is git-ignored. Config (`.ccmemory/config.yaml`):

```yaml
telemetry:
  enabled: true          # false (or CCMEMORY_TELEMETRY=0): nothing is recorded or ingested
  retention_days: 180    # older events are deleted on ingest
```
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KINDS = (
    "captured",
    "surfaced",
    "searched",
    "retrieved",
    "cited",
    "promoted",
    "dismissed",
    "recalled",  # memories injected for a prompt or a file (ids; source prompt | file)
    "injected",  # tokens injected by recall (n; no ids)
    "followed",  # recalled memories whose files were then edited in the session (ids)
)
INBOX = "telemetry.jsonl"
SURFACED = "surfaced.jsonl"
DB = "telemetry.db"
DEFAULT_RETENTION_DAYS = 180
MAX_IDS = 200  # ids kept per event line

SCHEMA = """
CREATE TABLE IF NOT EXISTS events(
  ts TEXT NOT NULL, kind TEXT NOT NULL, session TEXT, memory_id TEXT, n INTEGER, source TEXT
);
CREATE INDEX IF NOT EXISTS events_kind_ts ON events(kind, ts);
CREATE INDEX IF NOT EXISTS events_memory ON events(memory_id);
CREATE TABLE IF NOT EXISTS sessions(session TEXT PRIMARY KEY, start TEXT, end TEXT, mtime INTEGER);
CREATE TABLE IF NOT EXISTS offsets(file TEXT PRIMARY KEY, inode INTEGER, offset INTEGER);
CREATE TABLE IF NOT EXISTS dismissed(key TEXT PRIMARY KEY, ts TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS visits(ts TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS derived(id TEXT NOT NULL, hash TEXT NOT NULL, name TEXT NOT NULL,
  value INTEGER, PRIMARY KEY(id, name));
"""


@dataclass(frozen=True)
class TelemetryConfig:
    enabled: bool = True
    retention_days: int = DEFAULT_RETENTION_DAYS


def config_from(raw: dict[str, Any] | None, env: dict[str, str] | None = None) -> TelemetryConfig:
    """`telemetry:` of config.yaml, then CCMEMORY_TELEMETRY=0 turns it off."""
    env = dict(os.environ) if env is None else env
    section = (raw or {}).get("telemetry")
    section = section if isinstance(section, dict) else {}
    enabled = section.get("enabled", True)
    if isinstance(enabled, str):
        enabled = enabled.strip().lower() not in ("0", "false", "no", "off")
    from ccmemory.core import settings

    if not settings.TELEMETRY.get(env):
        enabled = False
    try:
        days = int(section.get("retention_days", DEFAULT_RETENTION_DAYS))
    except (TypeError, ValueError):
        days = DEFAULT_RETENTION_DAYS
    return TelemetryConfig(bool(enabled), max(days, 1))


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def emit(
    local_dir: str | os.PathLike[str],
    kind: str,
    ids: Sequence[str] = (),
    *,
    session: str | None = None,
    count: int | None = None,
    source: str | None = None,
) -> None:
    """Append one event line to the inbox. Ids and counts only; never raises."""
    if kind not in KINDS:
        raise ValueError(f"unknown telemetry event {kind!r}")
    try:
        from ccmemory.core import spool

        event: dict[str, Any] = {"ts": now_iso(), "k": kind, "ids": [str(i) for i in ids][:MAX_IDS]}
        if session:
            event["session"] = str(session)[:120]
        event["n"] = len(ids) if count is None else int(count)
        if source:
            event["source"] = str(source)[:40]
        spool.append(os.path.join(os.fspath(local_dir), INBOX), event, fsync=False)
    except Exception:
        pass


def _iso_days_ago(days: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - days * 86400))


def _first_last_ts(path: Path) -> tuple[str | None, str | None]:
    """First and last `ts` of a spool file, reading only its head and tail."""
    try:
        with path.open("rb") as fh:
            head = fh.read(65536)
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 65536))
            tail = fh.read()
    except OSError:
        return None, None

    def ts_of(lines: Iterable[bytes]) -> str | None:
        for line in lines:
            try:
                value = json.loads(line).get("ts")
            except (ValueError, AttributeError):
                continue
            if isinstance(value, str) and len(value) == 20:
                return value
        return None

    return ts_of(head.split(b"\n")), ts_of(reversed(tail.split(b"\n")))


class Store:
    """The SQLite telemetry store of one repository (`.ccmemory/local/telemetry.db`)."""

    def __init__(self, local_dir: Path, config: TelemetryConfig | None = None):
        self.local = local_dir
        self.config = config or TelemetryConfig()
        local_dir.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(local_dir / DB), check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    # --- writing --------------------------------------------------------------------------------
    def add(
        self, kind: str, ids: Sequence[str], *, session: str | None = None, source: str | None = None
    ) -> None:
        """Record an event directly (the dashboard's own actions)."""
        if not self.config.enabled:
            return
        ts = now_iso()
        rows: list[tuple[Any, ...]] = [(ts, kind, session, i, 1, source) for i in ids]
        rows = rows or [(ts, kind, session, None, 0, source)]
        self.db.executemany("INSERT INTO events VALUES (?,?,?,?,?,?)", rows)

    def dismiss(self, key: str) -> None:
        """Dismissal is remembered even with telemetry off: it is a user choice, not a measurement."""
        self.db.execute("INSERT OR REPLACE INTO dismissed VALUES (?, ?)", (key, now_iso()))
        if self.config.enabled:
            self.add("dismissed", [], source=key[:40])

    def dismissed(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT key FROM dismissed")}

    def visit(self) -> str | None:
        """Record a visit of the overview; returns the previous visit's time."""
        row = self.db.execute("SELECT max(ts) FROM visits").fetchone()
        self.db.execute("INSERT INTO visits VALUES (?)", (now_iso(),))
        return row[0] if row else None

    def last_visit(self) -> str | None:
        row = self.db.execute("SELECT max(ts) FROM visits").fetchone()
        return row[0] if row else None

    # --- ingest ---------------------------------------------------------------------------------
    def ingest(self) -> int:
        """Copy new inbox lines and session spans into the store; apply retention. Returns rows added."""
        if not self.config.enabled:
            return 0
        added = self._ingest_file(self.local / SURFACED, "surfaced")
        added += self._ingest_file(self.local / INBOX, None)
        self._ingest_sessions()
        cutoff = _iso_days_ago(self.config.retention_days)
        self.db.execute("DELETE FROM events WHERE ts < ?", (cutoff,))
        self.db.execute("DELETE FROM sessions WHERE end < ?", (cutoff,))
        return added

    def _ingest_file(self, path: Path, kind: str | None) -> int:
        try:
            st = path.stat()
        except OSError:
            return 0
        row = self.db.execute("SELECT inode, offset FROM offsets WHERE file = ?", (path.name,)).fetchone()
        offset = row[1] if row and row[0] == st.st_ino and row[1] <= st.st_size else 0
        if offset == st.st_size:
            return 0
        with path.open("rb") as fh:
            fh.seek(offset)
            data = fh.read(st.st_size - offset)
        end = data.rfind(b"\n") + 1  # only complete lines; a torn tail is read next time
        rows: list[tuple[Any, ...]] = []
        for line in data[:end].split(b"\n"):
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if not isinstance(ev, dict):
                continue
            k = kind or ev.get("k")
            ts = ev.get("ts")
            if k not in KINDS or not isinstance(ts, str):
                continue
            ids = [i for i in ev.get("ids") or [] if isinstance(i, str)][:MAX_IDS]
            session = ev.get("session") if isinstance(ev.get("session"), str) else None
            source = ev.get("source") if isinstance(ev.get("source"), str) else None
            n = ev.get("n") if isinstance(ev.get("n"), int) else len(ids)
            if ids:
                rows += [(ts, k, session, i, 1, source) for i in ids]
            else:
                rows.append((ts, k, session, None, n, source))
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO events VALUES (?,?,?,?,?,?)", rows)
        self.db.execute("INSERT OR REPLACE INTO offsets VALUES (?,?,?)", (path.name, st.st_ino, offset + end))
        self.db.execute("COMMIT")
        return len(rows)

    def _ingest_sessions(self) -> None:
        spool_dir = self.local / "spool"
        try:
            entries = list(os.scandir(spool_dir))
        except OSError:
            return
        known = {r[0]: r[1] for r in self.db.execute("SELECT session, mtime FROM sessions")}
        updates = []
        for entry in entries:
            if not entry.name.endswith(".jsonl"):
                continue
            session = entry.name[: -len(".jsonl")]
            mtime = entry.stat().st_mtime_ns
            if known.get(session) == mtime:
                continue
            start, end = _first_last_ts(Path(entry.path))
            if start and end:
                updates.append((session, start, end, mtime))
        if updates:
            self.db.executemany("INSERT OR REPLACE INTO sessions VALUES (?,?,?,?)", updates)

    def purge(self) -> None:
        """Delete every recorded event and session span (what the off switch leaves behind)."""
        self.db.execute("DELETE FROM events")
        self.db.execute("DELETE FROM sessions")

    # --- derived per-memory facts (a cache: e.g. "re-explained", keyed by the memory's hash) -----
    def derived(self, name: str) -> dict[str, tuple[str, int]]:
        rows = self.db.execute("SELECT id, hash, value FROM derived WHERE name = ?", (name,))
        return {r[0]: (r[1], r[2]) for r in rows}

    def set_derived(self, name: str, items: Sequence[tuple[str, str, int]]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO derived VALUES (?,?,?,?)", [(i, h, name, v) for i, h, v in items]
        )

    # --- reading --------------------------------------------------------------------------------
    def stamp(self) -> tuple[int, int]:
        """Changes when events are added (for caches)."""
        row = self.db.execute("SELECT count(*), coalesce(max(rowid), 0) FROM events").fetchone()
        return int(row[0]), int(row[1])

    def events(
        self, kinds: Sequence[str] | None = None, *, since: str | None = None, limit: int | None = None
    ) -> list[tuple[str, str, str | None, str | None, int]]:
        """(ts, kind, session, memory_id, n), newest first."""
        sql = "SELECT ts, kind, session, memory_id, n FROM events WHERE 1=1"
        params: list[Any] = []
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        if since:
            sql += " AND ts >= ?"
            params.append(since)
        sql += " ORDER BY ts DESC, rowid DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [tuple(r) for r in self.db.execute(sql, params)]

    def sessions(self) -> list[tuple[str, str, str]]:
        """(session, start, end) spans read from the capture spools."""
        return [tuple(r) for r in self.db.execute("SELECT session, start, end FROM sessions ORDER BY start")]


def open_store(vault_dir: Path, raw_config: dict[str, Any] | None) -> Store:
    return Store(vault_dir / "local", config_from(raw_config))
