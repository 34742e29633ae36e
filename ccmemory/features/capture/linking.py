"""Links for an explicit memory (`ccmemory new`, the MCP record_* tools): never dropped, linked.

The nearest existing memories come from the index's own hybrid search; `polarity.classify`
decides per pair. A reversal of an existing memory of the same type becomes `supersedes`; a
restatement or a memory on the same subject becomes a RELATES_TO relation. Links the caller gave
are kept and never added twice. Only the new memory carries the links; old files are untouched.
"""

from __future__ import annotations

import logging
from typing import Any

from ccmemory.app.resolve import written_reference
from ccmemory.core.model import Memory, Relation, fields_text
from ccmemory.features.capture import polarity

log = logging.getLogger("ccmemory.features.capture")

MAX_LINKS = 3


def link_explicit(svc: Any, memory: Memory, *, mode: str = "hybrid") -> list[str]:
    """Add links to `memory` in place; returns one line per link added (for the user)."""
    query = f"{memory.title}\n{memory.body}"[:500]
    try:
        hits = svc.search(query, limit=5, mode=mode, expand=False).hits
    except Exception as exc:  # the index is a cache: the memory is written unlinked
        log.info("no links for the new memory (search failed: %s)", exc)
        return []
    text = f"{memory.title}\n{memory.body}\n{memory.text_fields()}"
    have = set(memory.supersedes) | {r.target for r in memory.relations}
    notes: list[str] = []
    related = 0
    for hit in hits:
        m = getattr(hit, "memory", hit)
        target = written_reference(m)  # never a provisional id: it changes when the file gets one
        if getattr(hit, "weak", False) or m.id == memory.id or {m.id, target} & have:  # far: no link
            continue
        old_text = f"{m.title}\n{m.body}\n{fields_text(m.type, m.fields)}"
        wrong = str(memory.fields.get("wrong_belief") or "")
        verdict = polarity.classify(
            memory.type, memory.title, text, m.type, m.title, old_text, new_rejected=wrong
        )
        if verdict == "supersedes" and len(memory.supersedes) < MAX_LINKS:
            memory.supersedes.append(target)
            notes.append(f"supersedes {target} ({m.title})")
        elif verdict in ("duplicate", "related") and related < MAX_LINKS:
            reason = "restates it" if verdict == "duplicate" else "same subject"
            memory.relations.append(Relation("RELATES_TO", target, reason))
            notes.append(f"relates to {target} ({m.title}): {reason}")
            related += 1
        else:
            continue
        have.add(target)
    return notes
