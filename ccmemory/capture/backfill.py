"""Backfill: turn existing Claude Code transcripts into memories (`ccmemory import PATH`).

Each human turn of a transcript is one segment, keyed by the session id and the uuid of the turn's
first record. A done-marker per segment (`jobs/done/import-*.json`) plus deterministic memory ids
make a second run a no-op; the duplicate check against existing memories catches the rest.
Sub-agent files (`agent-*.jsonl`) are skipped: their "user" turns are the main agent's words.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ccmemory.capture import jobs
from ccmemory.capture.extract import Context, Plan, Planner, apply_plan
from ccmemory.capture.paths import LocalPaths, safe_name
from ccmemory.capture.providers.choose import Choice
from ccmemory.capture.segment import build
from ccmemory.capture.settings import CaptureSettings
from ccmemory.capture.store import Store
from ccmemory.capture.transcript import is_subagent_file, read_events
from ccmemory.capture.usage import Budget
from ccmemory.model import parse_timestamp


@dataclass
class SegmentJob:
    key: str
    session: str
    branch: str | None
    cwd: str | None
    events: list[dict[str, Any]]
    created: datetime


@dataclass
class ImportReport:
    files: int = 0
    segments: int = 0
    skipped_done: int = 0
    written: list[Path] = field(default_factory=list)
    duplicates: int = 0
    llm_calls: int = 0


def transcript_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such file or folder")
    return sorted(p for p in path.rglob("*.jsonl") if not is_subagent_file(p))


def segments_of(path: Path) -> Iterator[SegmentJob]:
    conv, _ = read_events(path, complete=True)
    session = conv.session or path.stem
    current: list[dict[str, Any]] = []
    key_uuid: str | None = None
    index = 0
    created = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)

    def flush() -> SegmentJob | None:
        if not current:
            return None
        anchor = key_uuid or hashlib.sha256(repr(current[0]).encode()).hexdigest()[:16]
        return SegmentJob(
            f"import:{session}:{anchor}:{index}", session, conv.branch, conv.cwd, list(current), created
        )

    for ev, uuid in zip(conv.events, conv.record_uuids, strict=False):
        if ev.get("k") in ("prompt", "command") and current:
            job = flush()
            if job:
                yield job
            current, key_uuid, index = [], None, index + 1
        if not current:
            key_uuid = uuid
            ts = parse_timestamp(ev.get("ts")) if ev.get("ts") else None
            created = ts or created
        current.append(ev)
    job = flush()
    if job:
        yield job


def import_path(
    root: Path,
    path: Path,
    *,
    choice: Choice,
    settings: CaptureSettings,
    store: Store,
    progress: Callable[[Iterator[SegmentJob], int], Any] | None = None,
) -> ImportReport:
    paths = LocalPaths(root)
    report = ImportReport()
    files = transcript_files(path)
    report.files = len(files)
    work = [seg for f in files for seg in segments_of(f)]
    report.segments = len(work)
    iterator: Any = progress(iter(work), len(work)) if progress else iter(work)
    if hasattr(iterator, "__enter__"):
        with iterator as bar:
            _run(bar, root, paths, choice, settings, store, report)
    else:
        _run(iterator, root, paths, choice, settings, store, report)
    return report


def _run(
    items: Any,
    root: Path,
    paths: LocalPaths,
    choice: Choice,
    settings: CaptureSettings,
    store: Store,
    report: ImportReport,
) -> None:
    for job in items:
        marker = (
            paths.done / f"import-{safe_name(job.session, 60)}-"
            f"{hashlib.sha256(job.key.encode()).hexdigest()[:20]}.json"
        )
        if marker.exists():
            report.skipped_done += 1
            continue
        seg = build(job.events, job.cwd)
        ctx = Context(
            root=root,
            session=job.session,
            branch=job.branch,
            author=None,
            job_key=job.key,
            created=job.created,
            source="import",
        )
        planner = Planner(store, choice, settings, Budget(paths, job.session, settings))
        plan: Plan = planner.plan(seg, ctx)
        report.llm_calls += int(plan.llm_called)
        report.duplicates += sum(1 for s in plan.skipped if s["reason"].startswith("duplicate"))
        written, _ = apply_plan(plan, store)
        report.written += written
        jobs.write_json(marker, {"key": job.key, "plan": plan.to_json()}, overwrite=True)
