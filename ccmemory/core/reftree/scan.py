"""Walk the reference tree: regular ``*.md`` files only, no symlinks, bounded size.

The walking is the one vault walker's (:func:`ccmemory.core.walk.walk`: lstat, never follow a
symlink to a file or folder, skip dot-names, report special files, bounded depth); this module
adds the reference tree's own size cap, reporting larger files instead of reading them. Files
are read with the one safe reader (:func:`ccmemory.core.walk.read_regular`) under the same cap.
"""

from __future__ import annotations

from ccmemory.core.walk import walk

MAX_BYTES = 2 * 1024 * 1024  # a cached PDF of a long paper can pass 1 MB of text


def scan_tree(base: str, rel_base: str) -> tuple[dict[str, tuple[str, int, int]], dict[str, str]]:
    """(files, skipped): rel path -> (abs path, mtime_ns, size) for each ``*.md`` under ``base``,
    and rel path -> reason for each name that was not taken (symlink, special file, too big)."""
    entries, skips = walk(base, rel_base)
    files: dict[str, tuple[str, int, int]] = {}
    skipped = {s.rel: s.reason for s in skips}
    for e in entries:
        if e.size > MAX_BYTES:
            skipped[e.rel] = f"file is {e.size} bytes; reference files are limited to {MAX_BYTES}"
        else:
            files[e.rel] = (e.path, e.mtime_ns, e.size)
    return files, skipped
