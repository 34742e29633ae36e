"""Walk the reference tree: regular ``*.md`` files only, no symlinks, bounded size.

One function (:func:`scan_tree`) so it can be swapped for the shared vault walker
(``ccmemory/walk.py``, issue #19) when that lands: it follows the same rules — lstat, never
follow a symlink (file or folder), skip dot-names, skip anything that is not a regular file,
report files over the size cap instead of reading them.
"""

from __future__ import annotations

import os
import stat

MAX_BYTES = 2 * 1024 * 1024  # a cached PDF of a long paper can pass 1 MB of text


def scan_tree(base: str, rel_base: str) -> tuple[dict[str, tuple[str, int, int]], dict[str, str]]:
    """(files, skipped): rel path -> (abs path, mtime_ns, size) for each ``*.md`` under ``base``,
    and rel path -> reason for each ``*.md`` that was not taken (symlink, special file, too big)."""
    files: dict[str, tuple[str, int, int]] = {}
    skipped: dict[str, str] = {}
    if os.path.islink(base):
        skipped[rel_base] = "symbolic link: the reference folder must be a real folder (not followed)"
        return files, skipped
    stack = [(base, rel_base)]
    while stack:
        folder, rel_folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            rel = f"{rel_folder}/{name}"
            try:
                st = entry.stat(follow_symlinks=False)
            except (FileNotFoundError, PermissionError):
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append((entry.path, rel))
            elif not name.endswith(".md"):
                continue
            elif stat.S_ISLNK(st.st_mode):
                skipped[rel] = "symbolic link: reference files must be regular files (not followed)"
            elif not stat.S_ISREG(st.st_mode):
                skipped[rel] = "not a regular file (not read)"
            elif st.st_size > MAX_BYTES:
                skipped[rel] = f"file is {st.st_size} bytes; reference files are limited to {MAX_BYTES}"
            else:
                files[rel] = (entry.path, st.st_mtime_ns, st.st_size)
    return files, skipped


def read_regular(path: str, limit: int = MAX_BYTES) -> bytes:
    """Read a file without following a symlink and without blocking on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        chunks = []
        total = 0
        while True:
            block = os.read(fd, 1 << 16)
            if not block:
                break
            total += len(block)
            if total > limit:
                raise OSError(f"file grew past {limit} bytes while reading")
            chunks.append(block)
        return b"".join(chunks)
    finally:
        os.close(fd)
