"""Layout of capture's local, never-committed state under `.ccmemory/local/`. Stdlib only."""

from __future__ import annotations

import os
import re
from pathlib import Path

VAULT_DIR = ".ccmemory"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def find_root(start: str | os.PathLike[str] | None) -> Path | None:
    """The nearest folder at or above `start` holding `.ccmemory/` (no resolve of symlinks
    beyond abspath: this runs on every hook)."""
    here = Path(os.path.abspath(start or os.getcwd()))
    for folder in (here, *here.parents):
        if (folder / VAULT_DIR).is_dir():
            return folder
    return None


def safe_name(value: str, limit: int = 100) -> str:
    """A file-name-safe token for a session id or job key."""
    cleaned = _SAFE.sub("_", value).strip("._")[:limit]
    return cleaned or "unknown"


class LocalPaths:
    """Where capture keeps spools, jobs, cursors, logs and locks for one repository."""

    def __init__(self, root: Path):
        self.root = root
        self.local = root / VAULT_DIR / "local"
        self.spool_dir = self.local / "spool"
        self.jobs = self.local / "jobs"
        self.pending = self.jobs / "pending"
        self.done = self.jobs / "done"
        self.dead = self.jobs / "dead"
        self.state = self.local / "state"
        self.logs = self.local / "logs"
        self.lock = self.local / "worker.lock"
        self.surfaced = self.local / "surfaced.jsonl"
        self.usage = self.local / "usage.jsonl"

    def spool(self, session: str) -> Path:
        return self.spool_dir / f"{safe_name(session)}.jsonl"

    def cursor(self, session: str) -> Path:
        return self.state / f"{safe_name(session)}.json"
