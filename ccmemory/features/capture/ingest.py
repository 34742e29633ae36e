"""A passage in (meeting notes, a pull-request description, a design-doc excerpt), typed memories
out (issue 30, the seeds' `graph_ingest`): the passage goes through the same capture pipeline as
a session — the configured provider (an LLM, or rules only), redaction, the one builder, the
duplicate and supersession checks against the memories in force — as if a user had typed it.

Each paragraph is one "prompt" of a synthetic segment (at most `MAX_PARAGRAPHS`), so the rules
provider sees explicit statements one by one and an LLM sees the whole passage at once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ccmemory.app.service import Service

MAX_CHARS = 20_000
MAX_PARAGRAPHS = 40


@dataclass
class Ingested:
    provider: str
    planned: list[dict[str, Any]] = field(default_factory=list)  # type, title of each memory
    written: list[str] = field(default_factory=list)  # repo-relative paths
    skipped: list[dict[str, str]] = field(default_factory=list)  # duplicates and the like
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "memories": self.planned,
            "written": self.written,
            "skipped": self.skipped,
            "notes": self.notes,
        }


def paragraphs(text: str) -> list[str]:
    parts = [" ".join(p.split()) for p in text.replace("\r\n", "\n").split("\n\n")]
    return [p for p in parts if p][:MAX_PARAGRAPHS]


def ingest(
    root: Path, text: str, *, service: type[Service], dry_run: bool = False, author: str | None = None
) -> Ingested:
    """Plan (and unless `dry_run`, write) the memories a passage holds."""
    from ccmemory.core import gitstate
    from ccmemory.core.redact import redact
    from ccmemory.core.vault import Vault
    from ccmemory.features.capture import settings as settings_mod
    from ccmemory.features.capture.extract import Context, Planner, apply_plan
    from ccmemory.features.capture.providers.choose import choose
    from ccmemory.features.capture.segment import Segment
    from ccmemory.features.capture.store import Store

    clean = redact(text[:MAX_CHARS])
    settings = settings_mod.load(root)
    choice = choose(settings)
    out = Ingested(choice.name)
    seg = Segment(prompts=paragraphs(clean))
    if not seg.prompts:
        out.notes.append("the passage is empty")
        return out
    key = "ingest-" + hashlib.sha256(clean.encode()).hexdigest()[:16]
    branch = gitstate.current_branch(root) if gitstate.is_repo(root) else None
    ctx = Context(root, None, branch, author, key, datetime.now(UTC), source="import")
    store = Store(Vault(root), service=service)
    try:
        plan = Planner(store, choice, settings, None).plan(seg, ctx)
        out.planned = [{"type": m.get("type"), "title": m.get("title")} for m in plan.memories]
        out.skipped = list(plan.skipped)
        out.notes = list(plan.notes)
        if not dry_run:
            written, _ = apply_plan(plan, store)
            out.written = [Vault(root).rel(p) for p in written]
    finally:
        store.close()
    return out
