"""Layout of capture's local, never-committed state under `.ccmemory/local/`.

Stdlib only, and no `pathlib` at import time: the hook fast path uses the string functions
(`find_root_str`, `spool_path_str`); the worker uses `LocalPaths`.
"""

from __future__ import annotations

import os

from ccmemory.core.layout import VAULT_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

_SAFE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def find_root_str(start: str | None) -> str | None:
    """The nearest folder at or above `start` holding `.ccmemory/`, as a string."""
    here = os.path.abspath(start or os.getcwd())
    while True:
        if os.path.isdir(os.path.join(here, VAULT_DIR)):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def find_root(start: str | os.PathLike[str] | None) -> Path | None:
    from pathlib import Path

    found = find_root_str(os.fspath(start) if start is not None else None)
    return Path(found) if found else None


def local_dir_str(root: str) -> str:
    return os.path.join(root, VAULT_DIR, "local")


def spool_path_str(root: str, session: str) -> str:
    return os.path.join(local_dir_str(root), "spool", f"{safe_name(session)}.jsonl")


def safe_name(value: str, limit: int = 100) -> str:
    """A file-name-safe token for a session id or job key."""
    cleaned = "".join(c if c in _SAFE_CHARS else "_" for c in value).strip("._")[:limit]
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


def git_branch(root: Path) -> str | None:
    """The checked-out branch, read from HEAD without running git. In a `git worktree` (or a
    submodule) `.git` is a file `gitdir: <path>` naming the real git folder: follow it."""
    from pathlib import Path

    dot_git = Path(root) / ".git"
    try:
        if dot_git.is_file():
            line = dot_git.read_text(encoding="utf-8").strip()
            if not line.startswith("gitdir:"):
                return None
            gitdir = Path(line[len("gitdir:") :].strip())
            dot_git = gitdir if gitdir.is_absolute() else root / gitdir
        text = (dot_git / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text[len("ref: refs/heads/") :] if text.startswith("ref: refs/heads/") else None
