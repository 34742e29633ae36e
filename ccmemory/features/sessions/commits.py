"""The commits a session started and ended on (issue 28), read from git, never stored by a hook.

- at start: the newest commit of HEAD's history committed at or before the session's first event
  (`git rev-list -1 --before=<start> HEAD`); kept once known, so a later rewrite of the record
  never moves it.
- at end: HEAD itself when the capture worker rewrites a live session's record (it runs right
  after Stop / SessionEnd); for `ccmemory import` of a past transcript, the newest commit at or
  before the session's last event, as for the start.

Outside git, before the first commit, or when no commit is that old: None (shown as `-`), no error.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path


def _epoch(when: str | None) -> int | None:
    if not when:
        return None
    try:
        stamp = datetime.fromisoformat(when.replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        return None  # a naive time cannot be placed against commit times
    return int(stamp.timestamp())


def commit_at(root: Path, when: str | None) -> str | None:
    """The commit HEAD's history was at `when` (an ISO time); None when unknown."""
    from ccmemory.core.gitstate import GitError, git

    epoch = _epoch(when)
    if epoch is None:
        return None
    try:
        out = git(root, "rev-list", "-1", f"--before=@{epoch}", "HEAD", "--", check=False, timeout=10)
    except GitError:
        return None
    line = out.strip().splitlines()[0] if out.strip() else ""
    return line if _is_sha(line) else None


def head(root: Path) -> str | None:
    from ccmemory.core.gitstate import GitError, head_commit

    try:
        sha = head_commit(root)
    except GitError:
        return None
    return sha if sha and _is_sha(sha) else None


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)
