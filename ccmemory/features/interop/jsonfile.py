"""Every memory as one JSON document, and back: a lossless round trip of the files' content.

The document (schema version 1, docs/import-export.md):

    {"format": "ccmemory-export", "version": 1, "project": "...",
     "memories": [Memory.to_dict(), ...]}      # sorted by id

Paths and status are not exported: the vault names a file from its content, and status comes
from git. So a relation target written as a path (or an id prefix) is exported as the id it names,
or the link would dangle once the import names the files anew. A memory without `id:` yet is
exported under its provisional id (`DRAFT-…`); the import gives it a ULID derived from that id
and its `created` (the same on every import) and rewrites links to it, including path targets
of older exports (a provisional id is derived from the path).

An imported document is untrusted input: each entry is checked by the same validation as a memory
file (`Memory.from_dict`), redacted by the vault's writer, and an entry whose id is already in the
vault is skipped (importing twice writes nothing new).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ccmemory.core.model import Memory

if TYPE_CHECKING:
    from ccmemory.core.vault import Vault

FORMAT = "ccmemory-export"
VERSION = 1
MAX_ENTRIES = 200_000


@dataclass
class ImportReport:
    written: list[str] = field(default_factory=list)  # repo-relative paths
    existing: list[str] = field(default_factory=list)  # ids already in the vault
    errors: list[tuple[int, str]] = field(default_factory=list)  # (entry number, reason)

    def as_dict(self) -> dict[str, Any]:
        return {
            "written": self.written,
            "already_there": len(self.existing),
            "errors": [{"entry": i, "reason": r} for i, r in self.errors],
        }


def export(vault: Vault, project: str) -> dict[str, Any]:
    """Every memory file of the vault (invalid files left out: `check` names them), relation
    targets as the ids they name (a target that names no memory here is kept as written)."""
    from ccmemory.app.resolve import target_ids

    read: list[Memory] = []
    known: dict[str, str] = {}  # repo-relative path -> id
    for path in vault.iter_paths():
        try:
            memory = vault.read(path)
        except (ValueError, OSError):
            continue
        read.append(memory)
        known[vault.rel(path)] = memory.id
    refs = {t for m in read for t in [*m.supersedes, *(r.target for r in m.relations)]}
    ids = target_ids(refs, known)
    mems = [m.retargeted(lambda t: ids.get(t, t)).to_dict() for m in read]
    mems.sort(key=lambda d: (str(d["id"]), str(d["type"])))
    return {"format": FORMAT, "version": VERSION, "project": project, "memories": mems}


def is_export(data: Any) -> bool:
    return isinstance(data, dict) and data.get("format") == FORMAT


def existing_ids(vault: Vault) -> set[str]:
    out: set[str] = set()
    for path in vault.iter_paths():
        try:
            out.add(vault.read(path).id)
        except (ValueError, OSError):
            continue
    return out


def _parse(entries: list[Any], report: ImportReport) -> list[tuple[int, Memory]]:
    """(entry number, memory) of each valid entry; the others reported by number."""
    out: list[tuple[int, Memory]] = []
    for n, entry in enumerate(entries, 1):
        try:
            out.append((n, Memory.from_dict(entry)))
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            report.errors.append((n, str(exc)[:300] or type(exc).__name__))
        except RecursionError:
            report.errors.append((n, "nested too deeply"))
    return out


def _with_real_ids(memories: list[tuple[int, Memory]]) -> list[tuple[int, Memory]]:
    """Each memory exported under a provisional id gets a ULID derived from that id and its
    `created` (the same on every import, so importing twice writes nothing new); links to it,
    by provisional id or by the path that id derives from, follow."""
    from ccmemory.app.resolve import path_key
    from ccmemory.core.ids import stable_ulid
    from ccmemory.core.model import is_provisional, provisional_id

    real = {
        m.id: stable_ulid(f"ccmemory-import\0{m.id}", int(m.created.timestamp() * 1000))
        for _, m in memories
        if is_provisional(m.id)
    }
    if not real:
        return memories

    def new(target: str) -> str:
        if target in real or is_provisional(target):
            return real.get(target, target)
        if "/" in target or target.endswith(".md"):
            return real.get(provisional_id(path_key(target)), target)
        return target

    return [(n, replace(m, id=real.get(m.id, m.id)).retargeted(new)) for n, m in memories]


def import_document(vault: Vault, data: Any, *, dry_run: bool = False) -> ImportReport:
    """Write each valid entry not yet in the vault; report the others by entry number."""
    report = ImportReport()
    if not is_export(data):
        report.errors.append((0, f'not a ccmemory export (expected "format": "{FORMAT}")'))
        return report
    if data.get("version") != VERSION:
        report.errors.append((0, f"export version {data.get('version')!r} is not {VERSION}"))
        return report
    entries = data.get("memories")
    if not isinstance(entries, list):
        report.errors.append((0, '"memories" must be a list'))
        return report
    have = existing_ids(vault)
    for n, memory in _with_real_ids(_parse(entries[:MAX_ENTRIES], report)):
        if memory.id in have:
            report.existing.append(memory.id)
            continue
        if dry_run:
            report.written.append(vault.rel(vault.path_for(memory)))
        else:
            try:
                report.written.append(vault.rel(vault.write_new(memory)))
            except ValueError as exc:
                report.errors.append((n, str(exc)[:300]))
                continue
        have.add(memory.id)
    if len(entries) > MAX_ENTRIES:
        report.errors.append((MAX_ENTRIES + 1, f"more than {MAX_ENTRIES} entries: the rest was not read"))
    return report
