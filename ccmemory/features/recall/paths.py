"""Which memory ``files:`` entries cover a path, and which paths a tool call touches.

A memory names files as written by people: an exact path (``services/billing/export.py``), a
folder (``infra/terraform/`` — a trailing slash, or any entry that is a prefix of the path at a
``/``), or a glob (``src/**/*.tsx``, ``*.tf``; ``**`` spans folders, ``*`` does not). Paths are
compared repository-relative, with ``/`` separators and without a leading ``./``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import lru_cache

EXACT, GLOB, FOLDER = 3, 2, 1  # how specific a match is (higher = more specific)

#: Tools whose input names one file, and the key holding it.
FILE_KEYS = {
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "Read": "file_path",
    "NotebookEdit": "notebook_path",
}
_GLOB_CHARS = re.compile(r"[*?\[]")
_SHELL_SPLIT = re.compile(r"""[\s;|&<>()'"`]+""")
_PATHISH = re.compile(r"^[\w.@+~-][\w./@+~-]*$")


def normalise(path: str) -> str:
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return re.sub(r"/{2,}", "/", path)


@lru_cache(maxsize=4096)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def match(pattern: str, path: str) -> int:
    """How ``pattern`` (a memory's ``files:`` entry) covers ``path``: EXACT, GLOB, FOLDER or 0."""
    pattern, path = normalise(pattern), normalise(path)
    if not pattern or not path:
        return 0
    if _GLOB_CHARS.search(pattern):
        if _glob_regex(pattern).match(path):
            return GLOB
        # a glob without a folder part (``*.tf``) matches the file name anywhere
        return GLOB if "/" not in pattern and _glob_regex(pattern).match(path.rsplit("/", 1)[-1]) else 0
    if pattern == path:
        return EXACT
    folder = pattern if pattern.endswith("/") else pattern + "/"
    return FOLDER if path.startswith(folder) else 0


def relative(path: str, root: str, cwd: str | None = None) -> str | None:
    """``path`` relative to the repository ``root`` (None when it lies outside it)."""
    path = path.strip()
    if not path:
        return None
    if not os.path.isabs(path):
        path = os.path.join(cwd or root, path)
    path = os.path.normpath(path)
    root = os.path.normpath(root)
    if path != root and not path.startswith(root + os.sep):
        return None
    rel = os.path.relpath(path, root)
    return None if rel == "." else normalise(rel)


def command_paths(command: str) -> list[str]:
    """Words of a shell command that look like file paths (hold a ``/`` or a file extension).

    Heuristic and cheap (no shell parsing): ``pytest tests/billing -x`` gives ``tests/billing``;
    ``--config=deploy/prod.yaml`` gives ``deploy/prod.yaml``; URLs and options are skipped.
    """
    out: list[str] = []
    for word in _SHELL_SPLIT.split(command[:4000]):
        if "=" in word:
            word = word.split("=", 1)[1]
        if not word or word.startswith("-") or "://" in word or not _PATHISH.match(word):
            continue
        if "/" in word or re.search(r"\.[A-Za-z][\w]{0,9}$", word):
            out.append(word.rstrip("/") or word)
    return list(dict.fromkeys(out))


def tool_paths(tool: str, tool_input: Mapping[str, object] | None, root: str, cwd: str | None) -> list[str]:
    """Repository-relative paths a tool call is about to touch (empty for other tools)."""
    if not isinstance(tool_input, Mapping):
        return []
    raw: list[str] = []
    key = FILE_KEYS.get(tool)
    if key is not None and isinstance(tool_input.get(key), str):
        raw.append(str(tool_input[key]))
    elif tool == "Bash" and isinstance(tool_input.get("command"), str):
        raw.extend(command_paths(str(tool_input["command"])))
    rels = (relative(p, root, cwd) for p in raw)
    return list(dict.fromkeys(r for r in rels if r))
