"""Atomic file writes: the one implementation behind memory files, capture jobs and caches.

Stdlib ``os`` only, so the capture hooks can use it without importing anything heavy.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

#: `mode=` value for files people read and commit: 0o666 minus the umask, as an editor makes them.
UMASK = -1


def atomic_write(path: Path, data: bytes, *, overwrite: bool, mode: int = 0o600) -> None:
    """Write via a temp file in the same folder, fsync, then link/rename into place.

    With overwrite=False the final step is `os.link`, which fails if the name exists, so two
    writers can never clobber each other: the loser gets FileExistsError.

    The temp file is always created private (0600, O_EXCL: nobody else can open it while it is
    being written); just before it is linked into place it gets `mode`: 0600 by default
    (capture jobs, caches), or with `mode=UMASK` 0o666 minus the process umask, like any file
    an editor writes (memory files, which are committed and shared).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = str(path.parent / f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    final_mode = (0o666 & ~current_umask()) if mode == UMASK else mode
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if final_mode != 0o600:
                os.fchmod(fh.fileno(), final_mode)
            os.fsync(fh.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except OSError as exc:
                if isinstance(exc, FileExistsError):
                    raise
                # filesystems without hard links: best effort exclusive rename
                if path.exists():
                    raise FileExistsError(str(path)) from exc
                os.rename(tmp, path)
                tmp = ""
        _fsync_dir(path.parent)
    finally:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_umask_lock = threading.Lock()


def current_umask() -> int:
    """The process umask, without changing it: read from /proc on Linux (thread-safe); elsewhere
    the set-and-restore dance, under a lock."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask
