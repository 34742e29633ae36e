"""Session records on disk: `.ccmemory/local/sessions/<id>.json` (local, git-ignored, private).

Written atomically (ccmemory.core.atomic); a record that cannot be read is skipped with a note and
never deleted except by `ccmemory sessions prune` (ccmemory.features.sessions.prune).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from ccmemory.core.atomic import atomic_write
from ccmemory.core.layout import LOCAL_DIR, VAULT_DIR

log = logging.getLogger("ccmemory.features.sessions")
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def safe_name(value: str, limit: int = 100) -> str:
    """A file-name-safe form of a session id (the same rule as the capture spool's file names)."""
    cleaned = "".join(c if c in _SAFE else "_" for c in value).strip("._")[:limit]
    return cleaned or "unknown"


def sessions_dir(root: Path) -> Path:
    return root / VAULT_DIR / LOCAL_DIR / "sessions"


def record_path(root: Path, session: str) -> Path:
    return sessions_dir(root) / f"{safe_name(session)}.json"


def write(root: Path, rec: dict[str, Any]) -> Path:
    path = record_path(root, str(rec["id"]))
    atomic_write(path, json.dumps(rec, ensure_ascii=False, indent=1).encode("utf-8"), overwrite=True)
    return path


def read(root: Path, session: str) -> dict[str, Any] | None:
    """The record of `session` (exact id, or a unique id prefix), None when there is none."""
    path = record_path(root, session)
    if not path.is_file():
        matches = [p for p in files(root) if p.stem.startswith(safe_name(session))]
        if len(matches) != 1:
            return None
        path = matches[0]
    return _load(path)


def read_exact(root: Path, session: str) -> dict[str, Any] | None:
    """The live record whose file is exactly this session's (no prefix match, no archive)."""
    path = record_path(root, session)
    return _load(path) if path.is_file() else None


def files(root: Path) -> list[Path]:
    folder = sessions_dir(root)
    if folder.is_symlink() or not folder.is_dir():
        return []
    return [p for p in folder.iterdir() if p.suffix == ".json" and not p.name.startswith(".")]


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.info("session record %s skipped: %s", path.name, exc)
        return None
    return data if isinstance(data, dict) and isinstance(data.get("id"), str) else None


def all_records(root: Path, *, since: str | None = None, branch: str | None = None) -> list[dict[str, Any]]:
    """Every readable record, newest first (by end, then start time)."""
    out = []
    for path in files(root):
        rec = _load(path)
        if rec is None:
            continue
        when = str(rec.get("end") or rec.get("start") or "")
        if since and when < since:
            continue
        if branch and rec.get("branch") != branch:
            continue
        out.append(rec)
    out.sort(key=lambda r: (str(r.get("end") or r.get("start") or ""), r["id"]), reverse=True)
    return out


def recent(root: Path, *, branch: str | None, count: int, scan: int = 200) -> list[dict[str, Any]]:
    """The newest `count` records of `branch`, reading at most the `scan` most recently written
    files (SessionStart must stay fast however long the history grows)."""

    def mtime(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0

    found = []
    for path in sorted(files(root), key=mtime, reverse=True)[:scan]:
        rec = _load(path)
        if rec is not None and (branch is None or rec.get("branch") == branch):
            found.append(rec)
    found.sort(key=lambda r: (str(r.get("end") or r.get("start") or ""), r["id"]), reverse=True)
    return found[:count]


def load(path: Path) -> dict[str, Any] | None:
    """One record file (None when unreadable)."""
    return _load(path)
