"""One reindex at a time per repository.

Every reindex records git's state (`gitdelta.State`) taken before it reads the files, and the next
one trusts the index to hold exactly those files (it looks only at what git says changed since).
Two reindexes of one repository at once broke that: a git hook's background reindex started in
the middle of a rebase could read the older files, a CLI read that caught up after the rebase
(`ccmemory.surfaces.cli.common`) could write the newer ones and record the newer state, and then
the first wrote its older files over them: an index behind its own record, which no later
incremental reindex corrects (seen as an intermittent test failure after `git rebase`). So every
reindex holds an exclusive lock on ``.ccmemory/local/reindex.run.lock`` (an ``flock``, released
by the kernel if the process dies). It is not the background worker's coalescing lock
(``reindex.lock``, held across its embedding too): this one covers one reindex only.

A thread that already holds it takes it again freely (a reindex that refills a moved-aside index).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

LOCK = "reindex.run.lock"
_POLL = 0.05

_held = threading.local()


def _keys() -> set[str]:
    keys: set[str] | None = getattr(_held, "keys", None)
    if keys is None:
        keys = _held.keys = set()
    return keys


@contextlib.contextmanager
def exclusive(local: Path, *, timeout: float | None = None) -> Iterator[bool]:
    """Hold the repository's reindex lock (``local`` is its ``.ccmemory/local``). Yields True once
    held; False, holding nothing, when another process or thread still held it after ``timeout``
    seconds (None: wait as long as it takes). Yields True without a lock where none can be made
    safely: no ``local`` folder yet (it is never created here: a vault whose ``local`` is not
    git-ignored, say on a Neo4j backend, must not get an untracked file from it), ``local`` a
    symlink (committed in a pull request: nothing is written through it; the index refuses it
    next), a read-only folder (which no reindex can write either)."""
    import fcntl

    key = os.path.realpath(local)
    keys = _keys()
    if key in keys:
        yield True
        return
    if os.path.islink(local) or not os.path.isdir(local):
        yield True
        return
    try:
        fd = os.open(local / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError:
        yield True
        return
    try:
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        yield False
                        return
                    time.sleep(_POLL)
        keys.add(key)
        try:
            yield True
        finally:
            keys.discard(key)
    finally:
        os.close(fd)  # releases the lock
