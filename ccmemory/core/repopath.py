"""A memory's ``files:`` entries as the file recall compares them: repository-relative paths.

File recall (``features/recall/paths.py``) matches a touched file's repository-relative path
(``/`` separators, no ``./``) against each entry, so an entry written as typed (``/home/me/r/src/a.py``,
``./a.py`` from a subfolder, ``src/../lib/b.py``) never matches, and an absolute one puts a
machine-local path into a committed file. Every writer of a new memory turns its entries into
that form here (`repo_path`); ``ccmemory check`` flags hand-written ones that are not in it
(`entry_problem`).

Kept as they are: globs (``src/**/*.tsx``, ``*.tf``: only ``.``/``..`` segments are resolved) and
folders (``infra/``: the trailing slash is kept). Stdlib only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_GLOB = re.compile(r"[*?\[]")


def _inside(path: str, root: str) -> str | None:
    """`path` (absolute, normalised) relative to `root`, with `/` separators; None when outside."""
    root = os.path.normpath(root)
    if path == root:
        return ""
    prefix = root.rstrip(os.sep) + os.sep
    return path[len(prefix) :].replace(os.sep, "/") if path.startswith(prefix) else None


def _within(path: str, root: str) -> str | None:
    """`_inside`, or the same through symlinks (``/tmp/r`` and ``/private/tmp/r`` are one folder)."""
    rel = _inside(path, root)
    return rel if rel is not None else _inside(os.path.realpath(path), os.path.realpath(root))


def repo_path(entry: str, root: str | Path, cwd: str | Path | None = None) -> str | None:
    """`entry` as a repository-relative ``files:`` entry, or None when it names no path inside the
    repository at `root` (outside it, or the repository itself).

    A relative path is taken relative to `cwd` when `cwd` lies inside the repository (the CLI's
    current folder), else relative to the root (MCP, capture). A glob is a pattern over repository
    paths, as in a file: relative to the root unless it starts with ``./`` or ``../``
    (``src/**/*.tsx`` and ``*.tf`` stay as written; ``./*.py`` in ``src/`` is ``src/*.py``).
    ``~`` is the home folder. A path that reaches the repository through a symlink (``/tmp`` ->
    ``/private/tmp``) counts as inside it.
    """
    text = entry.strip().replace("\\", "/")
    if not text or (os.name != "nt" and _DRIVE.match(text)):  # a Windows drive path names no path here
        return None
    folder = text.endswith("/")
    root_s = os.fspath(root)
    base = root_s
    here = not _GLOB.search(text) or text.startswith(("./", "../"))
    if here and cwd is not None and _within(os.path.normpath(os.path.abspath(cwd)), root_s) is not None:
        base = os.fspath(cwd)
    path = os.path.expanduser(text) if text.startswith("~") else text
    path = os.path.normpath(os.path.join(base, path))  # an absolute `path` replaces `base`
    rel = _within(path, root_s)
    if not rel:
        return None
    return rel + "/" if folder else rel


def repo_paths(
    entries: Iterable[str], root: str | Path, cwd: str | Path | None = None
) -> tuple[list[str], list[str]]:
    """(the entries as repository paths, distinct and in order; the entries naming no path inside
    the repository, as given)."""
    kept: list[str] = []
    outside: list[str] = []
    for entry in entries:
        if not entry.strip():
            continue
        rel = repo_path(entry, root, cwd)
        if rel is None:
            outside.append(entry)
        else:
            kept.append(rel)
    return list(dict.fromkeys(kept)), outside


def entry_problem(entry: str) -> str | None:
    """Why a hand-written ``files:`` entry cannot match file recall (absolute, or leaving the
    repository through ``..``), or None."""
    text = entry.strip().replace("\\", "/")
    if text.startswith(("/", "~")) or _DRIVE.match(text):
        return "is an absolute path"
    if os.path.normpath(text).replace("\\", "/").split("/")[0] == "..":
        return "leaves the repository"
    return None
