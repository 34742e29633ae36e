"""Architecture decision records in: a folder of ADRs (adr-tools, MADR, log4brains: `docs/adr/`,
`doc/architecture/decisions/`) becomes decisions.

Read from each `NNNN-title.md`: the title (the first `# ` heading, without adr-tools' `N. `
prefix), the date (front matter `date:`, a `Date:` line or a `* Date:` bullet), the status (front
matter `status:`, a `## Status` section's first line, or a `* Status:` bullet), "Superseded by"
links to another ADR of the folder, the considered options (MADR's `## Considered Options` list)
and the decision itself (`## Decision Outcome` or `## Decision`, first paragraph) as the rationale.
The whole record is the body. A superseded ADR is imported too, and the one that replaces it
supersedes it, so `trace` shows the chain. Provenance and re-import work as for rule files
(`imported_from`, a hash of the text: unchanged → nothing written, changed → superseded).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ccmemory.app.service import Service

ADR_NAME = re.compile(r"^(\d{1,5})-[\w.-]+\.md$")
MAX_BYTES = 512 * 1024
_DATE = re.compile(r"^\s*(?:[*-]\s*)?date:\s*(\d{4}-\d{2}-\d{2})", re.I | re.M)
_STATUS_LINE = re.compile(r"^\s*(?:[*-]\s*)?status:\s*(.+)$", re.I | re.M)
_SUPERSEDED_BY = re.compile(r"superseded by\s*(?:\[[^\]]*\]\(([^)]+)\)|(?:adr[- ]?)?(\d{1,5}))", re.I)


def is_adr_folder(path: Path) -> bool:
    return path.is_dir() and any(ADR_NAME.match(p.name) for p in path.iterdir() if p.is_file())


@dataclass
class Record:
    number: int
    name: str
    title: str
    text: str
    created: datetime | None
    status: str
    superseded_by: int | None
    rationale: str = ""
    options: list[str] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]


def _sections(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in re.finditer(r"^##\s+(.+?)\s*\n(.*?)(?=^##\s|\Z)", text, re.M | re.S):
        out[m.group(1).strip().lower()] = m.group(2).strip()
    return out


def _first_paragraph(text: str) -> str:
    return " ".join(text.split("\n\n", 1)[0].split())[:1000]


def parse(name: str, text: str) -> Record | None:
    """One ADR file, or None when it has no title."""
    number = int(ADR_NAME.match(name).group(1)) if ADR_NAME.match(name) else 0  # type: ignore[union-attr]
    front, body = "", text
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end > 0:
            front, body = text[4:end], text[end + 4 :]
    heading = re.search(r"^#\s+(.+)$", body, re.M)
    if not heading:
        return None
    title = re.sub(r"^\d+\.\s*", "", heading.group(1)).strip()
    sections = _sections(body)
    date = _DATE.search(front) or _DATE.search(body)
    created = datetime.strptime(date.group(1), "%Y-%m-%d").replace(tzinfo=UTC) if date else None
    status_m = _STATUS_LINE.search(front) or _STATUS_LINE.search(body)
    status = status_m.group(1) if status_m else sections.get("status", "").split("\n", 1)[0]
    later = _SUPERSEDED_BY.search(front + "\n" + body)
    superseded_by = None
    if later:
        ref = later.group(1) or later.group(2) or ""
        num = re.match(r"(?:.*/)?(\d{1,5})", ref)
        superseded_by = int(num.group(1)) if num else None
    decision = sections.get("decision outcome") or sections.get("decision") or ""
    options = re.findall(r"^\s*[*-]\s+(.+)$", sections.get("considered options", ""), re.M)
    return Record(
        number,
        name,
        title[:200],
        text,
        created,
        " ".join(status.split()).strip("*_ ").lower()[:80],
        superseded_by,
        _first_paragraph(decision),
        [o.strip() for o in options][:20],
    )


@dataclass
class AdrReport:
    written: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[str] = field(default_factory=list)  # files without a title
    planned: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "written": self.written,
            "superseded": self.superseded,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            **({"would_write": self.planned} if self.planned else {}),
        }


def import_folder(svc: Service, folder: Path, rel: str, *, dry_run: bool = False) -> AdrReport:
    """Decisions for the folder's ADRs, oldest number first (see the module doc)."""
    from ccmemory.core import gitstate
    from ccmemory.core.redact import redact
    from ccmemory.core.walk import read_regular
    from ccmemory.features.interop.rulesin import imported_memories

    report = AdrReport()
    records: list[Record] = []
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if not (path.is_file() and ADR_NAME.match(path.name)):
            continue
        rec = parse(path.name, redact(read_regular(path, MAX_BYTES).decode("utf-8", "replace")))
        if rec is None:
            report.skipped.append(f"{rel}/{path.name}")
        else:
            records.append(rec)
    known = imported_memories(svc)
    branch = gitstate.current_branch(svc.vault.root) if gitstate.is_repo(svc.vault.root) else None
    ids: dict[int, str] = {}  # ADR number -> memory id in force
    replaced_by: dict[int, int] = {r.number: r.superseded_by for r in records if r.superseded_by}
    for rec in sorted(records, key=lambda r: r.number):
        where = f"{rel}/{rec.name}"
        old = known.get(where)
        if old is not None and str(old.extra.get("rule_hash") or "") == rec.digest:
            report.unchanged += 1
            ids[rec.number] = old.id
            continue
        if dry_run:
            report.planned.append(
                {"type": "decision", "title": rec.title, "from": where, "status": rec.status}
            )
            continue
        earlier = [ids[n] for n, later in replaced_by.items() if later == rec.number and n in ids]
        fields: dict[str, Any] = {}
        if rec.rationale:
            fields["rationale"] = rec.rationale
        if rec.options:
            fields["options_considered"] = rec.options
        memory = svc.draft(
            "decision",
            rec.title,
            body=rec.text,
            source="import",
            supersedes=[*earlier, *([old.id] if old is not None else [])],
            fields=fields,
            branch=branch,
        )
        if rec.created is not None:
            memory.created = rec.created
        memory.extra.update(
            {"imported_from": where, "rule_hash": rec.digest, "adr_status": rec.status or "unknown"}
        )
        report.written.append(svc.record(memory).path)  # indexed at once: a later ADR may supersede it
        ids[rec.number] = memory.id
        if old is not None:
            report.superseded.append(old.id)
    return report
