"""Semantic search warming up: the background embedding worker and its bookkeeping.

Vectors are embedded by ``python -m ccmemory.features.lifecycle.background ROOT`` (one per repository,
holding ``.ccmemory/local/reindex.lock``). While it embeds it keeps the number of vectors it
still has to compute in ``.ccmemory/local/embed.status`` (rewritten atomically after each chunk
it commits), so a search in another process can say how many are left in O(1) instead of
scanning the index for missing vectors. The count is only believed while the lock is held (the
worker removes the file when it takes the lock and leaves its last count when done); any change
to the file tells a long-lived process (MCP server) that its own list of missing vectors is stale.

Standard library only: imported on the search path.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

LOCK = "reindex.lock"
PENDING = "reindex.pending"
STATUS = "embed.status"


def _local(root: Path) -> Path:
    return root / ".ccmemory" / "local"


def worker_running(root: Path) -> bool:
    """True if a background reindex/embedding worker holds the repository's lock now."""
    import fcntl

    try:
        fd = os.open(_local(root) / LOCK, os.O_RDWR)
    except OSError:
        return False  # never created: no worker ever ran here
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def write_status(local: Path, embedder: str, pending: int) -> None:
    """The worker's own count of vectors still to compute (atomic replace)."""
    tmp = local / f".{STATUS}.{os.getpid()}"
    with contextlib.suppress(OSError):
        tmp.write_text(json.dumps({"embedder": embedder, "pending": int(pending)}), encoding="utf-8")
        os.replace(tmp, local / STATUS)


def clear_status(local: Path) -> None:
    with contextlib.suppress(OSError):
        (local / STATUS).unlink()


def stamp(root: Path) -> tuple[int, int, int] | None:
    """Changes whenever a worker writes its status: a search that scanned for missing vectors
    before that scans again (one ``stat``)."""
    try:
        st = (_local(root) / STATUS).stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def read_status(root: Path, embedder: str) -> int | None:
    """Vectors the running worker still has to compute for ``embedder``; None if it has not
    said (still in its text phase, another embedder) or the file is unreadable. The file is
    untrusted input like everything under ``.ccmemory/``: anything but a small JSON object
    with a non-negative integer is ignored."""
    try:
        raw = (_local(root) / STATUS).read_bytes()[:4096]
        data = json.loads(raw)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("embedder") != embedder:
        return None
    n = data.get("pending")
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None


def start_background_embedding(root: Path) -> bool:
    """Make sure the background worker will embed what is missing: start
    ``python -m ccmemory.features.lifecycle.background ROOT`` detached, unless one holds the lock already.
    The pending mark is set first, so a worker about to finish runs once more and sees what
    the caller just indexed. True if a worker runs now."""
    import subprocess
    import sys

    local = _local(root)
    try:
        local.mkdir(parents=True, exist_ok=True)
        (local / PENDING).touch()
    except OSError:
        return False
    if worker_running(root):
        return True  # it sees the mark before it lets go of the lock
    try:
        subprocess.Popen(
            [sys.executable, "-m", "ccmemory.features.lifecycle.background", str(root)],
            cwd=str(root),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return False
    return True
