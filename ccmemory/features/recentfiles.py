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
    one = _status_one_call(root, args, outside)
    if one is not None:
        return one
    tracked = gitstate.git(root, *args, "-uno", *outside, check=False, timeout=5)
    names = sorted(e.name for e in os.scandir(root) if e.name not in (".git", VAULT_DIR))
    if not names:
        return tracked
    listed = gitstate.git(root, *args, "--", *(f":(top,literal){n}" for n in names), check=False, timeout=5)
    return tracked + "".join(line + "\n" for line in listed.splitlines() if line.startswith("?? "))


# --- one `git status` instead of two (Linux) ---------------------------------------------------------
# Each status reads the whole git index (14.7 MB, ~13 ms at 100k memories) and refreshes it. One
# status gives the same lines when git does not walk into the vault for untracked files: git
# skips an ignored folder, so the vault is added as `/.ccmemory/` to the patterns of the user's
# own global excludes file (core.excludesFile, else $XDG_CONFIG_HOME/git/ignore or
# ~/.config/git/ignore), handed to git as an in-memory file for this one call. Why the lines are
# the same: ignore rules never change the tracked lines; the added pattern matches the top
# `.ccmemory` folder only (a path is also ignored when a parent folder is, and no path outside the
# vault has it as a parent), whose lines the pathspec leaves out anyway; within the excludes
# file's patterns it comes last, and a `.gitignore` or info/exclude that re-includes the vault
# wins over it, so git only walks the vault as before. Porcelain v1 prints the tracked lines,
# sorted, then the untracked ones, sorted: the two calls' concatenation. Anything unusual (no
# memfd, a global excludes file that is not a plain readable file, a git config error): the two
# calls.
_EXCLUDES_MAX = 1 << 20


def _status_one_call(root: Path, args: tuple[str, ...], outside: tuple[str, ...]) -> str | None:
    from ccmemory.core import gitstate
    from ccmemory.core.layout import VAULT_DIR

    if not hasattr(os, "memfd_create") or not os.path.isdir("/dev/fd"):
        return None
    patterns = _global_excludes(root)
    if patterns is None:
        return None
    fd = os.memfd_create("ccmemory-excludes")
    try:
        data = memoryview(patterns + f"\n/{VAULT_DIR}/\n".encode())
        while data:
            data = data[os.write(fd, data) :]
        return gitstate.git(
            root,
            "-c",
            f"core.excludesFile=/dev/fd/{fd}",
            *args,
            *outside,
            check=False,
            timeout=5,
            pass_fds=(fd,),
        )
    finally:
        os.close(fd)


def _global_excludes(root: Path) -> bytes | None:
    """The patterns of the global excludes file git would read for `root` (b"" when there is
    none); None when they cannot be known for sure."""
    import subprocess

    try:
        proc = subprocess.run(
            ["git", "config", "--path", "--get", "core.excludesFile"],
            cwd=root,
            capture_output=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode == 0:
        value = os.fsdecode(proc.stdout.removesuffix(b"\n"))
        if not value:
            return b""
        path = os.path.join(root, value)  # git reads a relative path from the top of the work tree
    elif proc.returncode == 1 and not proc.stdout:  # not set: git's default place
        xdg = os.environ.get("XDG_CONFIG_HOME")
        home = os.environ.get("HOME")
        if xdg:
            path = os.path.join(xdg, "git", "ignore")
        elif home:
            path = os.path.join(home, ".config", "git", "ignore")
        else:
            return b""
    else:
        return None
    return _read_plain(path)


def _read_plain(path: str) -> bytes | None:
    """A regular file's bytes (symlinks followed, as git does); b"" when it does not exist (git
    skips it); None for anything else (a FIFO is never opened for reading in blocking mode)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, NotADirectoryError):
        return b""
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _EXCLUDES_MAX:
            return None
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
