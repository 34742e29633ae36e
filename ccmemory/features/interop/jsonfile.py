"""Every memory as one JSON document, and back: a lossless round trip of the files' content.

The document (schema version 1, docs/import-export.md):

    {"format": "ccmemory-export", "version": 1, "project": "...",
     "memories": [Memory.to_dict(), ...]}      # sorted by id

Paths and status are not exported: the vault names a file from its content, and status comes
from git. An imported document is untrusted input: each entry is checked by the same validation
as a memory file (`Memory.from_dict`), redacted by the vault's writer, and an entry whose id is
already in the vault is skipped (importing twice writes nothing new).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
    """Every memory file of the vault (invalid files left out: `check` names them)."""
    mems = []
    for path in vault.iter_paths():
        try:
            mems.append(vault.read(path).to_dict())
        except (ValueError, OSError):
            continue
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


def import_document(vault: Vault, data: Any, *, dry_run: bool = False) -> ImportReport:
    """Write each valid entry not yet in the vault; report the others by entry number."""
    from ccmemory.core.model import Memory

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
    for n, entry in enumerate(entries[:MAX_ENTRIES], 1):
        try:
            memory = Memory.from_dict(entry)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            report.errors.append((n, str(exc)[:300] or type(exc).__name__))
            continue
        except RecursionError:
            report.errors.append((n, "nested too deeply"))
            continue
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
