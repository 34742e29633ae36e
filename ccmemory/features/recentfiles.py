"""Files changed recently (the working tree's changes, then the last commits'), for the digest's
section "About files changed recently".

Git takes 20-80 ms for them at 100k memories (two `git status`, two `git log`). :func:`prefetch`
starts that work in a daemon thread (git runs while Python imports and queries the index: the
thread waits on the child processes, without the GIL); :func:`take` hands over its answer once, or
asks git itself when nothing was prefetched for that folder.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from ccmemory.core.background import in_background

_PENDING: dict[str, Callable[[], list[str]]] = {}
_LOCK = threading.Lock()


def prefetch(root: Path) -> None:
    """Start finding ``root``'s recent files in a thread, unless that is already under way."""
    key = os.path.realpath(root)
    with _LOCK:
        if key not in _PENDING:
            _PENDING[key] = in_background(recent_files, root, name="ccmemory-recent-files")


def take(root: Path) -> list[str]:
    """The prefetched answer for ``root`` (waiting for it), else one computed now."""
    with _LOCK:
        pending = _PENDING.pop(os.path.realpath(root), None)
    return pending() if pending is not None else recent_files(root)


def recent_files(root: Path, commits: int = 20) -> list[str]:
    """Files changed in the working tree and in the last ``commits`` commits, newest first."""
    from ccmemory.core import gitstate

    if not gitstate.is_repo(root):
        return []
    out: list[str] = []
    # the vault (.ccmemory/ at the top, dropped below anyway) is left out by git itself: memory
    # commits list every memory file they touch (a vault added in one commit: 100k names, 0.8 s)
    outside = ("--", ":/", ":(top,exclude).ccmemory")
    try:
        status = status_outside_vault(root, outside)
        out += [line[3:].strip() for line in status.splitlines() if len(line) > 3]
        # the last `commits` commits whatever they touch (a pathspec would pick other commits),
        # then their files outside the vault, in the same order
        shas = gitstate.git(root, "log", f"-n{commits}", "--format=%H", check=False, timeout=5).split()
        log = (
            gitstate.git(
                root,
                "log",
                "--no-walk=unsorted",
                "--name-only",
                "--format=",
                *shas,
                *outside,
                check=False,
                timeout=5,
            )
            if shas
            else ""
        )
        out += [line.strip() for line in log.splitlines() if line.strip()]
    except Exception:  # git missing or slow: the digest goes on without this section
        return []
    return [f for f in dict.fromkeys(out) if not f.startswith(".ccmemory/")][:200]


def status_outside_vault(root: Path, outside: tuple[str, ...]) -> str:
    """`git status --porcelain --no-renames` of the paths outside the vault. An exclude pathspec
    does not stop git's walk for untracked files from entering .ccmemory/ (0.1-0.2 s at 100k
    memories): at the top of the work tree, the tracked changes (`-uno`) come first, then the
    untracked lines of the top-level entries but the vault, as one status lists them."""
    from ccmemory.core import gitstate
    from ccmemory.core.layout import VAULT_DIR

    args = ("status", "--porcelain", "--no-renames")
    if not (root / ".git").exists():  # a vault below the top: one status of the whole tree
        return gitstate.git(root, *args, *outside, check=False, timeout=5)
    tracked = gitstate.git(root, *args, "-uno", *outside, check=False, timeout=5)
    names = sorted(e.name for e in os.scandir(root) if e.name not in (".git", VAULT_DIR))
    if not names:
        return tracked
    listed = gitstate.git(root, *args, "--", *(f":(top,literal){n}" for n in names), check=False, timeout=5)
    return tracked + "".join(line + "\n" for line in listed.splitlines() if line.startswith("?? "))
