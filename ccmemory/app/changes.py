"""What an incremental pass changed, shared by the memory and the reference-tree reindex."""

from __future__ import annotations

from dataclasses import dataclass

#: A file modified less than this long ago (ns) may still change within the same mtime tick
#: ("racy git"): its record is stored with mtime -1, so the next pass reads it again.
RACY_NS = 2_000_000_000


@dataclass
class ChangeCounts:
    """What one incremental pass changed: the part the memory report (ReindexReport) and the
    reference tree's (reference.sync.RefReport) share."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    status_changed: int = 0
