"""`ccmemory sessions prune`: an age and a size cap on the session records. Only `*.json` files
directly under `.ccmemory/local/sessions/` are ever deleted (the dot-file vector cache is not
a record and is left alone)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from ccmemory.features.sessions.store import files


@dataclass
class PruneReport:
    deleted: list[str] = field(default_factory=list)
    kept: int = 0
    bytes_kept: int = 0


def prune(
    root: Path, *, max_age_days: float | None, max_mb: float | None, dry_run: bool = False
) -> PruneReport:
    """Delete records older than `max_age_days` (by file time), then the oldest until the folder
    holds at most `max_mb`. Only `<sessions>/*.json` files are ever touched."""
    report = PruneReport()
    now = time.time()
    found = sorted(files(root), key=lambda p: p.stat().st_mtime, reverse=True)
    survivors: list[tuple[Path, int]] = []
    for p in found:
        st = p.stat()
        if max_age_days is not None and now - st.st_mtime > max_age_days * 86400:
            report.deleted.append(p.stem)
            if not dry_run:
                p.unlink(missing_ok=True)
        else:
            survivors.append((p, st.st_size))
    limit = None if max_mb is None else int(max_mb * 1024 * 1024)
    total = 0
    for p, size in survivors:
        if limit is not None and total + size > limit:
            report.deleted.append(p.stem)
            if not dry_run:
                p.unlink(missing_ok=True)
            continue
        total += size
        report.kept += 1
    report.bytes_kept = total
    if not dry_run and report.deleted:
        from ccmemory.features.sessions.index import note_removed

        note_removed(root, [f"{stem}.json" for stem in report.deleted])
    return report
