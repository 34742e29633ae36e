"""`ccmemory sessions archive`: move old records out of the live folder into one compressed file per
month, `.ccmemory/local/sessions/archive/<YYYY-MM>.jsonl.gz` (one JSON record a line).

An archived record is no longer listed, searched or shown at SessionStart (its vectors leave the
search cache on the next search); `sessions show ID` still reads it. Nothing outside
`.ccmemory/local/sessions/` is read or written, and a record file is deleted only after the archive
that holds it has been written (atomically) and read back.
"""

from __future__ import annotations

import gzip
import json
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ccmemory.core.atomic import atomic_write
from ccmemory.features.sessions.store import files, load, safe_name, sessions_dir

_MONTH = re.compile(r"\d{4}-\d{2}\Z")
MAX_ARCHIVE_BYTES = 512 * 1024 * 1024  # a month of records never comes near this; refuse a bomb


@dataclass
class ArchiveReport:
    archived: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # archive files written, relative to the root
    kept: int = 0


def archive_dir(root: Path) -> Path:
    return sessions_dir(root) / "archive"


def _when(rec: dict[str, Any], path: Path) -> float:
    """The record's end (else start) time as epoch seconds; the file's time when it has none."""
    for key in ("end", "start"):
        try:
            stamp = datetime.fromisoformat(str(rec.get(key) or "").replace("Z", "+00:00"))
        except ValueError:
            continue
        if stamp.tzinfo is not None:
            return stamp.timestamp()
    return path.stat().st_mtime


def _month(rec: dict[str, Any], when: float) -> str:
    month = str(rec.get("end") or rec.get("start") or "")[:7]
    return month if _MONTH.match(month) else time.strftime("%Y-%m", time.gmtime(when))


def read_month(path: Path) -> list[dict[str, Any]]:
    """The records of one archive file (lines that are not records are skipped)."""
    if path.is_symlink() or not path.is_file():
        return []
    out: list[dict[str, Any]] = []
    with gzip.open(path, "rb") as fh:
        data = fh.read(MAX_ARCHIVE_BYTES + 1)
    for line in data[:MAX_ARCHIVE_BYTES].splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("id"), str):
            out.append(rec)
    return out


def _write_month(path: Path, new: list[dict[str, Any]]) -> None:
    """The month's file with `new` added; a record archived twice keeps its newer copy."""
    merged = {r["id"]: r for r in read_month(path)}
    merged.update({r["id"]: r for r in new})
    rows = sorted(merged.values(), key=lambda r: (str(r.get("end") or r.get("start") or ""), r["id"]))
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    atomic_write(path, gzip.compress(text, mtime=0), overwrite=True)
    held = {r["id"] for r in read_month(path)}
    if not all(r["id"] in held for r in new):
        raise OSError(f"{path.name}: the archive did not read back; no record removed")


def archive(root: Path, *, older_than_days: float, dry_run: bool = False) -> ArchiveReport:
    """Move records whose session ended more than `older_than_days` ago into the month archives."""
    report = ArchiveReport()
    cutoff = time.time() - older_than_days * 86400
    folder = archive_dir(root)
    if folder.is_symlink():
        raise OSError(f"{folder} is a symlink; refusing to archive into it")
    by_month: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for path in files(root):
        rec = load(path)
        if rec is None:
            continue  # unreadable: left where it is (prune may delete it)
        when = _when(rec, path)
        if when >= cutoff:
            report.kept += 1
            continue
        by_month.setdefault(_month(rec, when), []).append((path, rec))
    for month in sorted(by_month):
        batch = by_month[month]
        target = folder / f"{month}.jsonl.gz"
        report.files.append(target.relative_to(root).as_posix())
        report.archived.extend(sorted(rec["id"] for _, rec in batch))
        if dry_run:
            continue
        _write_month(target, [rec for _, rec in batch])
        for path, _ in batch:
            path.unlink(missing_ok=True)
        from ccmemory.features.sessions.index import note_removed

        note_removed(root, [path.name for path, _ in batch])
    return report


def read_archived(root: Path, session: str) -> dict[str, Any] | None:
    """An archived record by exact id or unique id prefix; None when none or several match."""
    folder = archive_dir(root)
    if folder.is_symlink() or not folder.is_dir():
        return None
    want = safe_name(session)
    exact: dict[str, Any] | None = None
    prefixed: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.jsonl.gz")):
        for rec in read_month(path):
            if rec["id"] == session:
                exact = rec
            elif safe_name(rec["id"]).startswith(want):
                prefixed[rec["id"]] = rec
    if exact is not None:
        return exact
    return next(iter(prefixed.values())) if len(prefixed) == 1 else None
