"""The one vault walker and the one safe file reader (docs/security.md).

A pull request is untrusted input: every name under `.ccmemory/` may be a symlink out of the repo,
a FIFO that blocks a reader forever, a directory loop or a huge file. `walk` lists regular files
only (symlinks are never followed and are reported, special files are reported and skipped);
`read_regular` opens with O_NOFOLLOW|O_NONBLOCK, checks with fstat that it got a regular file and
reads at most the size cap. `check`, `reindex` (sync.scan), `watch`, the site and MCP all read the
vault through these two functions. Stdlib only.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from ccmemory.core.errors import CcmemoryError

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 32  # nested folders below a walked root; deeper ones are reported, not entered


class Entry(NamedTuple):
    """A regular file found by `walk`: absolute path, root-relative POSIX path, mtime, size."""

    path: str
    rel: str
    mtime_ns: int
    size: int


class Skipped(NamedTuple):
    """A name `walk` did not list, and why (`level` is "error" for symlinks, else "warning")."""

    rel: str
    level: str
    reason: str


class UnsafeFile(CcmemoryError, OSError):
    """`read_regular` refused the file (symlink, special file, too big, vanished)."""


_O_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


def _limit(n: int) -> str:
    return f"{n // (1024 * 1024)} MB" if n % (1024 * 1024) == 0 else f"{n // 1024} KB"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


def walk(
    base: str | Path,
    rel_base: str,
    *,
    suffix: str = ".md",
    roots: Iterable[str] | None = None,
) -> tuple[list[Entry], list[Skipped]]:
    """Every regular `*suffix` file under `base` (or under `base/<r>` for each r in `roots`).

    Dot-names are ignored. Symlinks (to files or folders) are reported as errors and not followed,
    so a loop or a link out of the repository is never entered; FIFOs, sockets and devices with
    the suffix are reported as warnings. `rel` paths are `rel_base/...` with `/` separators.
    Reusable for any subtree (e.g. `.ccmemory/reference/`).
    """
    base = str(base)
    found: list[Entry] = []
    skipped: list[Skipped] = []
    stack: list[tuple[str, str, int]] = []
    for r in sorted(roots) if roots is not None else [""]:
        folder = os.path.join(base, r) if r else base
        rel = f"{rel_base}/{r}" if r else rel_base
        try:
            st = os.lstat(folder)
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode):
            skipped.append(
                Skipped(rel, "error", "symlink not followed (memory folders must be real folders)")
            )
        elif stat.S_ISDIR(st.st_mode):
            stack.append((folder, rel, 0))
    while stack:
        folder, rel_folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            rel = f"{rel_folder}/{name}"
            try:
                if entry.is_symlink():
                    skipped.append(
                        Skipped(rel, "error", "symlink not followed (memory files must be regular files)")
                    )
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if depth >= MAX_DEPTH:
                        skipped.append(
                            Skipped(rel, "warning", f"folder nested deeper than {MAX_DEPTH} levels, not read")
                        )
                    else:
                        stack.append((entry.path, rel, depth + 1))
                    continue
                if not name.endswith(suffix):
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # vanished while walking
            if stat.S_ISREG(st.st_mode):
                found.append(Entry(entry.path, rel, st.st_mtime_ns, st.st_size))
            else:
                skipped.append(Skipped(rel, "warning", f"{_kind(st.st_mode)}, not a regular file: skipped"))
    found.sort(key=lambda e: e.rel)
    skipped.sort(key=lambda s: s.rel)
    return found, skipped


def read_regular(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file, never following a symlink and never blocking on a FIFO.

    Raises UnsafeFile with a short reason (no path: callers add theirs).
    """
    try:
        fd = os.open(path, _O_FLAGS)
    except FileNotFoundError:
        raise UnsafeFile("file disappeared while reading") from None
    except OSError as exc:
        if os.path.islink(path):
            raise UnsafeFile("symlink not followed (memory files must be regular files)") from None
        raise UnsafeFile(f"cannot open: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(f"{_kind(st.st_mode)}, not a regular file")
        if st.st_size > max_bytes:
            raise UnsafeFile(f"file is {st.st_size} bytes; memory files are limited to {_limit(max_bytes)}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a regular file: plain blocking reads from here
        chunks: list[bytes] = []
        left = max_bytes + 1
        # reads sized from fstat (one more byte to see the end): a 1 MiB request per read made
        # Python allocate (and the kernel map) 1 MiB for every small memory file
        step = min(max(st.st_size + 1, 4096), 1 << 20)
        while left > 0:
            chunk = os.read(fd, min(left, step))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:  # grew while reading
            raise UnsafeFile(f"file grew past {_limit(max_bytes)} while reading (the limit)")
        return data
    finally:
        os.close(fd)


def inside(root: str | Path, *parts: str) -> Path:
    """`root/parts...`, refusing any result outside `root` (the one check every product write uses).

    Parts must be relative; `..`, absolute parts, NUL bytes and anything that would leave `root`
    after normalisation raise ValueError. Symlinks are not resolved: the writers below create the
    folders themselves, and the walker never follows links.
    """
    root_s = os.path.abspath(str(root))
    for part in parts:
        if "\x00" in part or os.path.isabs(part) or part.startswith(("/", "\\")):
            raise ValueError(f"unsafe path part {part!r}")
    joined = os.path.normpath(os.path.join(root_s, *parts))
    if joined != root_s and not joined.startswith(root_s.rstrip(os.sep) + os.sep):
        raise ValueError(f"path {'/'.join(parts)!r} leaves {root_s}")
    if any(seg == ".." for p in parts for seg in p.replace("\\", "/").split("/")):
        raise ValueError(f"path {'/'.join(parts)!r} contains '..'")
    return Path(joined)
