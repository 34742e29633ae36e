"""The curated rules in force, written into a marked block of an agent's rule file.

`ccmemory export --to claude-md|agents-md|cursor` writes preferences, corrections, gotchas,
exceptions and decisions that are curated (on the main branch) and not superseded, one line each,
between `<!-- ccmemory:begin -->` and `<!-- ccmemory:end -->`; the rest of the file is left as it
is. Running it again regenerates the block (same memories, same bytes). The block stays within a
character budget: lines that do not fit are counted in its last line, never cut mid-rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccmemory.features.interop.block import _BLOCK, BEGIN, END
from ccmemory.features.interop.block import strip_block as strip_block  # re-exported

if TYPE_CHECKING:
    from ccmemory.app.service import Service

RULE_TYPES = ("correction", "gotcha", "exception", "preference", "decision")
TARGETS = {"claude-md": "CLAUDE.md", "agents-md": "AGENTS.md", "cursor": ".cursor/rules/ccmemory.mdc"}
CURSOR_HEADER = "---\ndescription: Project rules kept by ccmemory\nalwaysApply: true\n---\n"
DEFAULT_BUDGET = 6000


def rules(svc: Service) -> list[Any]:
    """The curated memories in force of the rule types, in a stable order (type, then title)."""
    from ccmemory.features.analysis import all_memories

    mems = [m for m in all_memories(svc, types=RULE_TYPES, include_superseded=False) if m.status == "curated"]
    order = {t: i for i, t in enumerate(RULE_TYPES)}
    return sorted(mems, key=lambda m: (order[m.type], m.title.casefold(), m.id))


def _line(m: Any) -> str:
    text = " ".join(m.title.split())
    right = m.fields.get("right_belief") if m.type == "correction" else None
    if right:
        text += f" — {' '.join(str(right).split())}"
    elif m.type == "exception" and m.fields.get("rule_broken"):
        text += f" (exception to: {' '.join(str(m.fields['rule_broken']).split())})"
    return f"- **{m.type}**: {text[:300]} `{m.id[:10]}`"


def block(mems: Sequence[Any], budget: int = DEFAULT_BUDGET) -> str:
    head = [BEGIN, "## Project memory (ccmemory)", ""]
    lines: list[str] = []
    used = sum(len(x) + 1 for x in head) + len(END) + 80
    for n, m in enumerate(mems):
        line = _line(m)
        if used + len(line) + 1 > budget:
            lines.append(f"- … and {len(mems) - n} more: `ccmemory search` or the MCP tools")
            break
        lines.append(line)
        used += len(line) + 1
    if not mems:
        lines.append("- (no curated rules yet)")
    return "\n".join([*head, *lines, END]) + "\n"


def merge(existing: str, new_block: str, *, cursor: bool = False) -> str:
    """`existing` with its ccmemory block replaced by `new_block` (appended when it has none)."""
    if _BLOCK.search(existing):
        return _BLOCK.sub(lambda _: new_block, existing, count=1)
    if not existing.strip():
        return (CURSOR_HEADER if cursor else "") + new_block
    return existing.rstrip("\n") + "\n\n" + new_block


def write(svc: Service, target: str, out: Path | None, budget: int = DEFAULT_BUDGET) -> tuple[Path, int]:
    """Regenerate the block in `out` (default: the target's file at the repository root)."""
    from ccmemory.core.atomic import UMASK, atomic_write
    from ccmemory.core.walk import read_regular

    path = out or (svc.vault.root / TARGETS[target])
    mems = rules(svc)
    existing = read_regular(path, 2 * 1024 * 1024).decode("utf-8", "replace") if path.exists() else ""
    text = merge(existing, block(mems, budget), cursor=target == "cursor")
    if text != existing:
        atomic_write(path, text.encode("utf-8"), overwrite=True, mode=UMASK)
    return path, len(mems)


# --- decisions as ADRs --------------------------------------------------------------------------

ADR_MARK = "ccmemory_id"


def adr_files(svc: Service) -> dict[str, str]:
    """MADR files for every decision (superseded ones too: their status says by which record),
    numbered by creation: file name -> text. Developmental decisions are `proposed`."""
    from ccmemory.core.vault import slugify
    from ccmemory.features.analysis import all_memories

    decisions = sorted(all_memories(svc, types=["decision"]), key=lambda m: (m.created, m.id))
    names = {m.id: f"{n:04d}-{slugify(m.title)[:60]}.md" for n, m in enumerate(decisions, 1)}
    later: dict[str, str] = {}
    for m in decisions:
        for old in m.supersedes:
            later.setdefault(old, m.id)
    out: dict[str, str] = {}
    for m in decisions:
        if m.id in later:
            status = f"superseded by [{names[later[m.id]][:4]}]({names[later[m.id]]})"
        else:
            status = "accepted" if m.status == "curated" else "proposed"
        parts = [
            "---",
            f"status: {status}",
            f"date: {str(m.created)[:10]}",
            f"{ADR_MARK}: {m.id}",
            "---",
            f"# {m.title}",
            "",
            "## Context and Problem Statement",
            "",
            m.body.strip() or "(not recorded)",
        ]
        options = m.fields.get("options_considered") or []
        if options:
            parts += ["", "## Considered Options", "", *[f"* {o}" for o in options]]
        parts += ["", "## Decision Outcome", "", str(m.fields.get("rationale") or m.title)]
        if m.fields.get("revisit_trigger"):
            parts += ["", f"Revisit when: {m.fields['revisit_trigger']}"]
        out[names[m.id]] = "\n".join(parts) + "\n"
    return out


def write_adrs(svc: Service, folder: Path) -> tuple[int, list[str]]:
    """Write the ADR files into `folder`, replacing only files ccmemory wrote (they carry
    `ccmemory_id:`); a file of the same name written by someone else is left alone and named."""
    from ccmemory.core.atomic import UMASK, atomic_write
    from ccmemory.core.walk import read_regular

    folder.mkdir(parents=True, exist_ok=True)
    kept: list[str] = []
    written = 0
    for name, text in adr_files(svc).items():
        path = folder / name
        if path.exists():
            old = read_regular(path, 2 * 1024 * 1024).decode("utf-8", "replace")
            if f"\n{ADR_MARK}: " not in old:
                kept.append(name)
                continue
            if old == text:
                continue
        atomic_write(path, text.encode("utf-8"), overwrite=True, mode=UMASK)
        written += 1
    return written, kept
