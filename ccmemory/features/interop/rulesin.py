"""Agent rule files in: one memory per rule.

Read: `CLAUDE.md` (any folder), `AGENTS.md`, `GEMINI.md`, `.cursorrules`, `.windsurfrules`,
`.github/copilot-instructions.md`, `.cursor/rules/*.mdc`. A rule is a list item (`-`, `*`, `1.`),
with its continuation lines, or a short paragraph under a heading; headings become the memory's
topic, code blocks and the block `ccmemory export` writes are skipped. Typed by its wording:

- `never` / `don't` / `do not` / `avoid` with a reason (`because`, `otherwise`, `or it`, `breaks`,
  `fails`) → **gotcha** (a trap, and why);
- `always` / `never` / `prefer` / `use` / `don't` / `do not` / `avoid` / `must` / `should` at the
  start → **preference** (how things are done here);
- anything else → **fact** (how things are).

Each memory records where it came from (`imported_from: FILE:LINE` in its frontmatter, kept like
any unknown key) and the rule's text hash (`rule_hash`); importing the same file again writes
nothing, and a rule whose text changed at the same place supersedes the memory it came from.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ccmemory.app.service import Service

RULE_FILES = (
    "CLAUDE.md",
    "AGENTS.md",
    "GEMINI.md",
    ".cursorrules",
    ".windsurfrules",
    "copilot-instructions.md",
)
MAX_BYTES = 1024 * 1024
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_GOTCHA = re.compile(
    r"\b(never|don'?t|do not|avoid)\b.*\b(because|otherwise|or it|or else|breaks?|fails?)\b", re.I
)
_PREFERENCE = re.compile(r"^(always|never|prefer|use|don'?t|do not|avoid|must|should|keep|run|write)\b", re.I)


def is_rule_file(path: Path) -> bool:
    return path.name in RULE_FILES or (path.suffix == ".mdc" and path.parent.name == "rules")


@dataclass
class Rule:
    line: int
    text: str
    heading: str = ""

    @property
    def type(self) -> str:
        if _GOTCHA.search(self.text):
            return "gotcha"
        if _PREFERENCE.match(self.text):
            return "preference"
        return "fact"

    @property
    def digest(self) -> str:
        return hashlib.sha256(" ".join(self.text.split()).casefold().encode()).hexdigest()[:16]


def parse(text: str) -> list[Rule]:
    """The rules of a rule file's text (front matter, code blocks and the ccmemory block left out)."""
    from ccmemory.features.interop.block import strip_block

    lines = strip_block(text).split("\n")
    if lines and lines[0].strip() == "---":  # .mdc front matter
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
        lines = [""] * (end + 1) + lines[end + 1 :]
    rules: list[Rule] = []
    heading, fenced, current, para = "", False, None, None
    for n, raw in enumerate(lines, 1):
        if raw.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            current = para = None
            continue
        if fenced:
            continue
        if m := _HEADING.match(raw):
            heading, current, para = m.group(2), None, None
            continue
        if m := _ITEM.match(raw):
            current = Rule(n, m.group(2).strip(), heading)
            rules.append(current)
            para = None
            continue
        if not raw.strip():
            current = para = None
            continue
        target = current or para
        if target is not None:  # a continuation line
            target.text = f"{target.text} {raw.strip()}"
        else:
            para = Rule(n, raw.strip(), heading)
            rules.append(para)
    return [r for r in rules if len(r.text) >= 8 and len(r.text) <= 2000]


def _title(text: str) -> str:
    plain = re.sub(r"\*\*|`", "", " ".join(text.split()))  # bold and code marks; `_` may be in a name
    first = re.split(r"(?<=[.!?])\s", plain, maxsplit=1)[0]
    return (first if len(first) <= 150 else first[:147].rstrip() + "…").rstrip(".")


@dataclass
class RulesReport:
    written: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)  # ids replaced by a changed rule
    unchanged: int = 0
    planned: list[dict[str, Any]] = field(default_factory=list)  # dry run: what would be written

    def as_dict(self) -> dict[str, Any]:
        return {
            "written": self.written,
            "superseded": self.superseded,
            "unchanged": self.unchanged,
            **({"would_write": self.planned} if self.planned else {}),
        }


def imported_memories(svc: Service) -> dict[str, Any]:
    """`imported_from` -> the latest memory imported from there (read from the files: the index
    does not keep unknown frontmatter keys)."""
    vault = svc.vault
    by_where: dict[str, list[Any]] = {}
    for path in vault.iter_paths():
        try:
            m = vault.read(path)
        except (ValueError, OSError):
            continue
        if m.extra.get("imported_from"):
            by_where.setdefault(str(m.extra["imported_from"]), []).append(m)
    out: dict[str, Any] = {}
    for where, group in by_where.items():
        # the latest import of a place is the one no other import of the same place replaced (a
        # memory superseded for another reason, e.g. by a later ADR, still stands for its place)
        replaced = {old for m in group for old in m.supersedes}
        current = [m for m in group if m.id not in replaced]
        if current:
            out[where] = max(current, key=lambda m: m.id)
    return out


def import_file(svc: Service, path: Path, rel: str, *, dry_run: bool = False) -> RulesReport:
    """Write a memory per new rule of `path` (named `rel` in provenance); see the module doc."""
    from ccmemory.core import gitstate
    from ccmemory.core.redact import redact
    from ccmemory.core.vault import Vault
    from ccmemory.core.walk import read_regular

    text = read_regular(path, MAX_BYTES).decode("utf-8", "replace")
    report = RulesReport()
    known = imported_memories(svc)
    vault: Vault = svc.vault
    # one git call for the branch, not two per rule (svc.draft asks git when no branch is given)
    branch = gitstate.current_branch(vault.root) if gitstate.is_repo(vault.root) else None
    for rule in parse(redact(text)):  # redacted first: nothing below (titles, dry-run output) sees a secret
        where = f"{rel}:{rule.line}"
        old = known.get(where)
        if old is not None and _hash_of(old) == rule.digest:
            report.unchanged += 1
            continue
        if dry_run:
            report.planned.append({"type": rule.type, "title": _title(rule.text), "from": where})
            continue
        memory = svc.draft(
            rule.type,
            _title(rule.text),
            body=rule.text,
            topics=[rule.heading] if rule.heading else [],
            source="import",
            supersedes=[old.id] if old is not None else [],
            branch=branch,
        )
        memory.extra.update({"imported_from": where, "rule_hash": rule.digest})
        report.written.append(vault.rel(vault.write_new(memory)))
        if old is not None:
            report.superseded.append(old.id)
    return report


def _hash_of(m: Any) -> str:
    return str(m.extra.get("rule_hash") or "")
