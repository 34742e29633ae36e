"""The reference tree -> the index, incrementally (the memory reindex calls :func:`reindex_reference`).

Same rules as memories: compare (path, mtime, size) with what the index has, re-read only what
changed (content hash decides "updated"), drop what vanished, refresh git status of the rest.
The index stays a function of the files: a full rebuild gives the same rows (tests check it).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ccmemory.app.changes import RACY_NS, ChangeCounts
from ccmemory.core.reftree import REF_ROOT
from ccmemory.core.reftree.record import RefRecord, load
from ccmemory.core.reftree.scan import scan_tree
from ccmemory.core.vault import Vault
from ccmemory.index.base import FileProblem, supports_reference


@dataclass
class RefReport(ChangeCounts):
    files: int = 0
    chunks_written: int = 0
    problems: list[FileProblem] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "chunks_written": self.chunks_written,
            "status_changed": self.status_changed,
        }


supports = supports_reference  # the name the reference modules know


def scan(vault: Vault) -> tuple[dict[str, tuple[str, int, int]], dict[str, str]]:
    return scan_tree(os.path.join(str(vault.dir), REF_ROOT.split("/", 1)[1]), REF_ROOT)


def reindex_reference(
    vault: Vault,
    index: Any,
    project: str,
    status_of: Callable[[str], str],
    *,
    full: bool = False,
    only: list[str] | None = None,
) -> RefReport:
    """Bring the index's reference chunks in line with the tree. ``only``: limit to these rel paths
    (a just-cached file), without removing anything else."""
    report = RefReport()
    if not supports(index):
        return report
    if full:
        index.ref_clear(project)
    on_disk, skipped = scan(vault)
    report.files = len(on_disk)
    known = index.ref_file_states(project)
    if only is not None:
        on_disk = {k: v for k, v in on_disk.items() if k in only}
        removed = [p for p in only if p in known and p not in on_disk]
    else:
        removed = sorted(set(known) - set(on_disk))
    if not full:
        report.status_changed = index.ref_refresh_status(project, status_of)
    now = time.time_ns()
    records: list[RefRecord] = []
    for rel in sorted(on_disk):
        path, mtime, size = on_disk[rel]
        old = known.get(rel)
        if old is not None and old.mtime_ns == mtime and old.size == size:
            continue
        rec = load(path, rel, -1 if now - mtime < RACY_NS else mtime, size)
        if old is None:
            report.added += 1
        elif old.hash != rec.hash or not rec.hash:
            report.updated += 1
        records.append(rec)
        report.chunks_written += len(rec.chunks)
    for start in range(0, max(len(records), 1), 200):
        part = records[start : start + 200]
        if part or (removed and start == 0):
            index.ref_apply(project, part, removed if start == 0 else [], status_of)
    report.removed = len(removed)
    report.problems = index.ref_problems(project) + [
        FileProblem(rel, None, reason) for rel, reason in sorted(skipped.items())
    ]
    return report
