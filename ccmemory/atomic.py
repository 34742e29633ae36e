"""Atomic file writes: the one implementation behind memory files, capture jobs and caches.

Stdlib ``os`` only, so the capture hooks can use it without importing anything heavy.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def atomic_write(path: Path, data: bytes, *, overwrite: bool) -> None:
    """Write via a temp file in the same folder, fsync, then link/rename into place.

    With overwrite=False the final step is `os.link`, which fails if the name exists, so two
    writers can never clobber each other: the loser gets FileExistsError.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = str(path.parent / f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
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
