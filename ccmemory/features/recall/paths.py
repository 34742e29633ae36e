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


_COMMAND_NOISE = re.compile(r"^(?:\$\{?\w+\}?|\d+|\.+)$")
_SEGMENTS = re.compile(r"[;&|\n]+")
#: Commands that only look (list, read, search, show state): no memory applies to *running* them.
#: Their paths still get file recall.
_INSPECT = frozenset(
    "ls ll cat less more head tail grep rg ag find fd tree pwd echo printf which type file wc stat "
    "du df env printenv history clear true false sleep date whoami id uname man".split()
)
_GIT_INSPECT = frozenset(
    "status log diff show branch fetch remote rev-parse blame grep ls-files describe".split()
)


def _program(words: list[str]) -> tuple[str, str]:
    """The program of a command segment and its first argument (environment assignments skipped)."""
    rest = [w for w in words if w and not re.match(r"^\w+=", w)]
    prog = rest[0].rsplit("/", 1)[-1] if rest else ""
    return prog, (rest[1] if len(rest) > 1 else "")


def command_words(command: str) -> str:
    """The words of a shell command that say what it does, for recall by meaning or text:
    program and subcommand names, arguments, the parts of paths and the words of an environment
    assignment's name (``TESTCONTAINERS_RYUK_DISABLED=true`` gives ``testcontainers ryuk disabled``);
    options, variables, assigned values and numbers are left out. ``docker compose up -d redpanda`` gives
    ``docker compose up redpanda``; ``RECORD=1 go test ./services/rating/...`` gives
    ``go test services rating``. A command that only looks (``ls``, ``cat``, ``git status``…)
    gives nothing, and ``cd`` only adds its folder to another command."""
    segments = []
    for seg in _SEGMENTS.split(command[:2000]):
        words = [w for w in _SHELL_SPLIT.split(seg) if w]
        prog, sub = _program(words)
        if not prog or prog in _INSPECT or (prog == "git" and sub in _GIT_INSPECT):
            continue
        segments.append((prog, words))
    if not any(prog != "cd" for prog, _ in segments):
        return ""
    out: list[str] = []
    for _, words in segments:
        for word in words:
            if re.match(r"^\w+=", word):  # an assignment's name says what it sets, its value rarely
                out.extend(p.lower() for p in word.split("=", 1)[0].split("_") if len(p) > 1)
                continue
            if word.startswith("-") or "://" in word:
                continue
            for part in re.split(r"[/=:,@]+", word):
                part = part.strip(".~+")
                if part and not _COMMAND_NOISE.match(part) and re.search(r"[A-Za-z]", part):
                    out.append(part)
    return " ".join(dict.fromkeys(out))


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
