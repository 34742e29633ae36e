"""What came of a recalled memory in the same session: its files edited, its id cited.

Recall remembers, per session (``state.SessionState``), which memories it showed and the files
they name. Two later signals are logged as telemetry (ids and counts only):

- ``followed``: Claude is about to edit (Edit, MultiEdit, Write, NotebookEdit) a file that a
  memory shown earlier in the session names: the PreToolUse hook calls :func:`edited`;
- ``cited``: an assistant reply of the session contains a shown memory's id (the injected lines
  end with it): the capture worker calls :func:`cited` with the replies it reads.

Each memory counts once per session for each signal. Both are heuristics: an edit of the file
does not prove the memory was heeded, and Claude may follow a memory without naming it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import Any

#: Tools that change the file they name (Read is not a follow-up).
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
_ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")


def edited(
    root: str, session: str, raw_config: dict[str, Any], tool_name: str, touched: Sequence[str]
) -> list[str]:
    """Shown memories whose files cover one of ``touched`` (logged as ``followed``)."""
    if tool_name not in EDIT_TOOLS or not touched:
        return []
    from ccmemory.features.recall.paths import match
    from ccmemory.features.recall.state import SessionState

    state = SessionState(root, session)
    hits = [
        mid
        for mid, patterns in state.files.items()
        if mid not in state.followed and any(match(p, t) for p in patterns for t in touched)
    ]
    if hits:
        state.followed.update(hits)
        state.save()
        _emit(root, raw_config, "followed", hits, session, tool_name)
    return hits


def cited(root: str, session: str, raw_config: dict[str, Any], replies: Iterable[str]) -> list[str]:
    """Shown memories whose full id appears in one of ``replies`` (logged as ``cited``)."""
    from ccmemory.features.recall.state import SessionState

    state = SessionState(root, session)
    if not state.shown:
        return []
    named = {m for text in replies for m in _ULID.findall(text or "")}
    hits = sorted(mid for mid in named if mid in state.shown and mid not in state.cited)
    if hits:
        state.cited.update(hits)
        state.save()
        _emit(root, raw_config, "cited", hits, session, "reply")
    return hits


def _emit(
    root: str, raw_config: dict[str, Any], kind: str, ids: list[str], session: str, source: str
) -> None:
    from ccmemory.core import telemetry

    if telemetry.config_from(raw_config).enabled:
        telemetry.emit(os.path.join(root, ".ccmemory", "local"), kind, ids, session=session, source=source)
