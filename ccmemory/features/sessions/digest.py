"""The SessionStart lines: the last few sessions of this branch, one line each (when, open item
first, then the gist), within a small token budget (~4 characters per token)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ccmemory.features.sessions import record, store

DEFAULT_COUNT = 3
DEFAULT_TOKENS = 150
HEADER = "Recent sessions on this branch (ccmemory sessions show ID):\n"


def _line(rec: dict[str, Any]) -> str:
    when = str(rec.get("end") or rec.get("start") or "?")[:16].replace("T", " ")
    items = record.open_items(rec)
    prompts = rec.get("prompts") or []
    gist = record._clip(prompts[0], 70) if prompts else "no prompt"
    head = f"OPEN {record._clip(items[0], 60)}; " if items else ""
    return f"- {when} [{str(rec['id'])[:8]}] {head}asked: {gist}\n"


def text(
    root: Path,
    branch: str | None,
    *,
    count: int = DEFAULT_COUNT,
    tokens: int = DEFAULT_TOKENS,
    exclude: str | None = None,
) -> str:
    if count <= 0 or tokens <= 0:
        return ""
    recs = [r for r in store.recent(root, branch=branch, count=count + 1) if r["id"] != exclude][:count]
    budget = tokens * 4
    out = HEADER
    shown = 0
    for rec in recs:
        line = _line(rec)
        if len(out) + len(line) > budget:
            break
        out += line
        shown += 1
    return out if shown else ""
