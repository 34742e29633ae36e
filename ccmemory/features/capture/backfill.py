"""Backfill: turn existing Claude Code transcripts into memories (`ccmemory import PATH`).

Each human turn of a transcript is one segment, keyed by the session id and the uuid of the turn's
first record. Consecutive segments of a session share one LLM call (up to `batch_segments` and
`batch_chars`). A done-marker per segment, provider and extractor version
(`jobs/done/import-<session>-<key>-<provider>-v<N>.json`) makes a second run a no-op; a rules
import followed by an LLM import runs the LLM (a segment done by an LLM counts as done for the
rules), and `force` ignores the markers. Deterministic memory ids and the duplicate check keep
every re-run free of duplicates.
Sub-agent files (`agent-*.jsonl`) are skipped: their "user" turns are the main agent's words.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ccmemory.core.model import parse_timestamp
from ccmemory.features.capture import jobs
from ccmemory.features.capture.extract import EXTRACTOR_VERSION, Context, Planner, apply_plan
from ccmemory.features.capture.paths import LocalPaths, safe_name
from ccmemory.features.capture.providers.choose import Choice
from ccmemory.features.capture.segment import build
from ccmemory.features.capture.settings import CaptureSettings
from ccmemory.features.capture.store import Store
from ccmemory.features.capture.transcript import is_subagent_file, read_events
from ccmemory.features.capture.usage import Budget


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
    input_tokens: int = 0
    # per session: LLM calls and input tokens
    sessions: dict[str, dict[str, int]] = field(default_factory=dict)


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
    force: bool = False,
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
            _run(bar, root, paths, choice, settings, store, report, force)
    else:
        _run(iterator, root, paths, choice, settings, store, report, force)
    return report


def _marker_base(job: SegmentJob) -> str:
    return f"import-{safe_name(job.session, 60)}-{hashlib.sha256(job.key.encode()).hexdigest()[:20]}"


def is_done(paths: LocalPaths, job: SegmentJob, choice: Choice) -> bool:
    """Done with this extractor version by this kind of provider: any LLM marker satisfies an LLM
    import; a rules (or none) import is satisfied by its own marker or an LLM's."""
    found = [m.name for m in paths.done.glob(f"{_marker_base(job)}-*-v{EXTRACTOR_VERSION}.json")]
    non_llm = ("rules", "none")
    llm_done = any(not any(n.endswith(f"-{x}-v{EXTRACTOR_VERSION}.json") for x in non_llm) for n in found)
    if choice.is_llm:
        return llm_done
    return llm_done or any(n.endswith(f"-{choice.name}-v{EXTRACTOR_VERSION}.json") for n in found)


def _run(
    items: Any,
    root: Path,
    paths: LocalPaths,
    choice: Choice,
    settings: CaptureSettings,
    store: Store,
    report: ImportReport,
    force: bool,
) -> None:
    batch: list[tuple[SegmentJob, Any, Context]] = []
    chars = 0

    def flush() -> None:
        nonlocal chars
        if not batch:
            return
        session = batch[0][0].session
        planner = Planner(store, choice, settings, Budget(paths, session, settings))
        plans = planner.plan_batch([(seg, ctx) for _, seg, ctx in batch])
        report.llm_calls += planner.calls
        report.input_tokens += planner.input_tokens
        per = report.sessions.setdefault(session, {"llm_calls": 0, "input_tokens": 0, "segments": 0})
        per["llm_calls"] += planner.calls
        per["input_tokens"] += planner.input_tokens
        per["segments"] += len(batch)
        for (job, _, _), plan in zip(batch, plans, strict=True):
            report.duplicates += sum(1 for s in plan.skipped if s["reason"].startswith("duplicate"))
            written, _ = apply_plan(plan, store)
            report.written += written
            name = f"{_marker_base(job)}-{safe_name(choice.name, 20)}-v{EXTRACTOR_VERSION}.json"
            marker = paths.done / name
            jobs.write_json(marker, {"key": job.key, "plan": plan.to_json()}, overwrite=True)
        batch.clear()
        chars = 0

    for job in items:
        if not force and is_done(paths, job, choice):
            report.skipped_done += 1
            continue
        seg = build(job.events, job.cwd)
        size = len(seg.to_text())
        full = len(batch) >= settings.batch_segments or chars + size > settings.batch_chars
        if batch and (batch[0][0].session != job.session or full or not choice.is_llm):
            flush()
        ctx = Context(
            root=root,
            session=job.session,
            branch=job.branch,
            author=None,
            job_key=job.key,
            created=job.created,
            source="import",
        )
        batch.append((job, seg, ctx))
        chars += size
    flush()
