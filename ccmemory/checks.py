"""`ccmemory check`: every problem of every memory file, with path and line. Reads files only."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ccmemory.index.base import cited_reference
from ccmemory.model import FOLDER_TO_TYPE
from ccmemory.vault import (
    MemoryFileError,
    Vault,
    check_text,
    decode,
    key_line,
    parse_text,
    read_bytes_checked,
)


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    level: str  # error | warning
    message: str

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "level": self.level, "message": self.message}


def check_vault(vault: Vault) -> list[Finding]:
    findings: list[Finding] = []
    ids: dict[str, str] = {}
    targets: list[tuple[str, int, str]] = []
    entries, skipped = vault.walk()
    findings += [Finding(s.rel, 1, s.level, s.reason) for s in skipped]
    if os.path.islink(vault.local):  # git ignores `local/` folders, not a symlink named `local`
        why = "symlink: .ccmemory/local must be a real, git-ignored folder"
        findings.append(Finding(".ccmemory/local", 1, "error", why))
    for entry in entries:
        path, rel = Path(entry.path), entry.rel
        try:
            text = decode(read_bytes_checked(path, rel), rel)
        except MemoryFileError as exc:
            findings.append(Finding(rel, exc.line or 1, "error", exc.reason))
            continue
        try:
            parsed = parse_text(text, rel)
        except MemoryFileError as exc:
            problems = check_text(text)
            if problems:
                findings += [Finding(rel, line, p.level, p.message) for line, p in problems]
            else:
                findings.append(Finding(rel, exc.line or 1, "error", exc.reason))
            continue
        m = parsed.memory
        findings += [Finding(rel, key_line(text, w.key) or 1, "warning", w.message) for w in parsed.warnings]
        folder = path.relative_to(vault.dir).parts[0]
        if FOLDER_TO_TYPE.get(folder) != m.type:
            findings.append(
                Finding(rel, key_line(text, "type") or 1, "warning", f"a {m.type} in the {folder}/ folder")
            )
        if m.id in ids:
            findings.append(
                Finding(
                    rel, key_line(text, "id") or 1, "error", f"duplicate id {m.id}: also used by {ids[m.id]}"
                )
            )
        else:
            ids[m.id] = rel
        for target in m.supersedes:
            targets.append((rel, key_line(text, "supersedes") or 1, target))
        for r in m.relations:
            targets.append((rel, key_line(text, "relations") or 1, r.target))
    for rel, line, target in targets:
        if target not in ids and cited_reference(target) is None:
            findings.append(Finding(rel, line, "warning", f"links to unknown memory id {target}"))
    from ccmemory.reference.check import reference_findings

    findings += reference_findings(vault)
    return sorted(findings, key=lambda f: (f.path, f.line, f.level, f.message))
