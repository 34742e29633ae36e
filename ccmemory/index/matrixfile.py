"""The SQLite index's vector matrix kept in a file beside it, for processes that start cold.

A new process (every `ccmemory search`) read a project's vectors row by row from SQLite to build
the matrix vector search scans: about 1.1 s at 100,000 memories (issue 29). The same matrix is
written once to ``<index file>.vectors-<digest of project and embedder>`` in the index's folder
(``.ccmemory/local/``), atomically, and memory-mapped by the next process (~0.1 s at 100k, most
of it the checksum, which a settled file skips: below).

Trust: the file names the index state it was built from, a random token the index keeps in its
``meta`` table. SQLite triggers delete that token whenever a memory's id, project or text hash,
or any vector, is inserted, updated or deleted (by this code or any other writer of the file),
and :meth:`SQLiteIndex._write` puts a new one in the same transaction; so a file whose token is
not the current one describes another state and is ignored. A file that is short, long, has
another project, embedder or layout, or fails its CRC-32 is ignored too (then the matrix is read
from SQLite again and the file rewritten). The index stays the source: deleting the file costs
one slow read.

The checksum of a file that passed it is not computed again while the file is unchanged (~60 ms
of every cold search at 100k): a reader that checked it records the file's stat (device, inode,
size, modification and change times) in ``<file>.checked``, and a reader that finds the same stat
there skips the CRC. Only a file whose change time is ``SETTLED_NS`` in the past gets a record,
as git treats a "racily clean" file: the kernel's file clock is coarse (a few ms), so a change
made in the same tick as the check could keep every field; one made a second later cannot (it
moves the change time, which no user-space call sets back).

Layout: ``MAGIC``, an 8-byte little-endian header length, the header (JSON: token, project,
embedder, rows, dim, ids_len, crc), the ids joined by newlines (UTF-8), zero padding to a
multiple of 64 bytes, then ``rows x dim`` float32 little-endian values (the bytes SQLite holds).
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import sys
import time
import zlib
from pathlib import Path
from typing import Any

MAGIC = b"ccmemory-vectors 1\n"
_ALIGN = 64
#: how long after its last change a file must have been checked for the check to be recorded
SETTLED_NS = 1_000_000_000


def path_for(location: str, project: str, embedder: str) -> Path:
    digest = hashlib.sha256(f"{project}\0{embedder}".encode()).hexdigest()[:16]
    return Path(f"{location}.vectors-{digest}")


def _data_offset(header_len: int, ids_len: int) -> int:
    end = len(MAGIC) + 8 + header_len + ids_len
    return -(-end // _ALIGN) * _ALIGN


def write(path: Path, token: str, project: str, embedder: str, ids: list[str], matrix: Any) -> bool:
    """Write the matrix file atomically; False (nothing written) when it cannot be represented
    (an id with a newline, not float32, a big-endian machine) or the folder is not writable."""
    from ccmemory.core.atomic import atomic_write

    if sys.byteorder != "little" or str(matrix.dtype) != "float32" or any("\n" in i for i in ids):
        return False
    blob = "\n".join(ids).encode("utf-8")
    data = matrix.tobytes()
    rows, dim = (int(matrix.shape[0]), int(matrix.shape[1])) if matrix.ndim == 2 else (0, 0)
    head = {
        "token": token,
        "project": project,
        "embedder": embedder,
        "rows": rows,
        "dim": dim,
        "ids_len": len(blob),
        "crc": zlib.crc32(data, zlib.crc32(blob)),
    }
    header = json.dumps(head, sort_keys=True).encode("utf-8")
    pad = _data_offset(len(header), len(blob)) - (len(MAGIC) + 8 + len(header) + len(blob))
    parts = [MAGIC, len(header).to_bytes(8, "little"), header, blob, b"\0" * pad, data]
    try:
        atomic_write(path, b"".join(parts), overwrite=True)
    except OSError:
        return False
    return True


def read(path: Path, token: str, project: str, embedder: str) -> tuple[list[str], Any] | None:
    """``(ids, matrix)`` from the file when it is whole and was built from the index state
    ``token`` for this project and embedder; None otherwise (never raises for a bad file). The
    matrix is a read-only view of the mapped file."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            size = st.st_size
            if size < len(MAGIC) + 8:
                return None
            # read ahead in one go (the checksum, or the search's scan, reads every page): ~10 %
            # faster than page faults
            populate = getattr(mmap, "MAP_POPULATE", 0)
            mm = mmap.mmap(fh.fileno(), 0, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ)
    except (OSError, ValueError):
        return None
    stamp = _stat_stamp(st)
    checked = _checked(path) == stamp
    found = _parse(mm, size, token, project, embedder, verify=not checked)
    if found is None:
        mm.close()
    elif not checked and time.time_ns() - st.st_ctime_ns > SETTLED_NS:
        _record_checked(path, stamp)
    return found


def _stat_stamp(st: os.stat_result) -> str:
    return f"{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}"


def _checked_path(path: Path) -> Path:
    return path.with_name(path.name + ".checked")


def _checked(path: Path) -> str | None:
    """The stat of the file as a reader last found it whole (None: no record)."""
    try:
        return _checked_path(path).read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None


def _record_checked(path: Path, stamp: str) -> None:
    import contextlib

    from ccmemory.core.atomic import atomic_write

    with contextlib.suppress(OSError):  # a read-only folder: every reader sums again, nothing else
        atomic_write(_checked_path(path), stamp.encode("ascii"), overwrite=True)


def _parse(
    mm: mmap.mmap, size: int, token: str, project: str, embedder: str, *, verify: bool = True
) -> tuple[list[str], Any] | None:
    import numpy as np

    try:
        if mm[: len(MAGIC)] != MAGIC:
            return None
        header_len = int.from_bytes(mm[len(MAGIC) : len(MAGIC) + 8], "little")
        start = len(MAGIC) + 8
        if header_len > size - start:
            return None
        head = json.loads(bytes(mm[start : start + header_len]))
        if not isinstance(head, dict) or (head.get("token"), head.get("project"), head.get("embedder")) != (
            token,
            project,
            embedder,
        ):
            return None
        rows, dim, ids_len = int(head["rows"]), int(head["dim"]), int(head["ids_len"])
        offset = _data_offset(header_len, ids_len)
        if rows <= 0 or dim <= 0 or ids_len < 0 or size != offset + rows * dim * 4:
            return None
        blob_at = start + header_len
        blob = bytes(mm[blob_at : blob_at + ids_len])
        if verify:
            view = memoryview(mm)[offset:]
            try:
                if zlib.crc32(view, zlib.crc32(blob)) != head["crc"]:
                    return None
            finally:
                view.release()
        ids = blob.decode("utf-8").split("\n")
        if len(ids) != rows:
            return None
        matrix = np.frombuffer(mm, dtype="<f4", count=rows * dim, offset=offset).reshape(rows, dim)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, OverflowError):
        return None
    return ids, matrix
