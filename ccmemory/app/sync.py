"""Vault + git -> index. Incremental by (path, mtime, size, content hash); never touches files."""

from __future__ import annotations

import hashlib
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ccmemory.app import gitdelta
from ccmemory.app.changes import RACY_NS, ChangeCounts
from ccmemory.core import gitstate
from ccmemory.core.vault import MemoryFileError, Vault, decode, parse_text, read_bytes_checked
from ccmemory.core.walk import Skipped
from ccmemory.index.base import FileProblem, FileRecord, FileState, Index


@dataclass
class ReindexReport(ChangeCounts):
    unchanged: int = 0
    errors: list[FileProblem] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)  # symlinks, FIFOs...: never read
    seconds: float = 0.0
    reference: dict[str, int] = field(default_factory=dict)  # ccmemory.app.refsync.RefReport
    sessions: dict[str, Any] = field(default_factory=dict)  # index.sessions_sqlite.SyncReport

    def as_dict(self) -> dict[str, object]:
        return {
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "status_changed": self.status_changed,
            "errors": [{"path": e.path, "line": e.line, "reason": e.reason} for e in self.errors],
            "skipped": [{"path": s.rel, "level": s.level, "reason": s.reason} for s in self.skipped],
            "seconds": round(self.seconds, 3),
            **({"reference": self.reference} if self.reference else {}),
            **({"sessions": self.sessions} if self.sessions else {}),
        }


def scan(vault: Vault, skipped: list[Skipped] | None = None) -> dict[str, tuple[str, int, int]]:
    """rel path -> (abs path, mtime_ns, size) for every memory file, from the one vault walker
    (`Vault.walk`: regular files only, symlinks and special files reported in `skipped`)."""
    entries, skips = vault.walk()
    if skipped is not None:
        skipped.extend(skips)
    return {e.rel: (e.path, e.mtime_ns, e.size) for e in entries}


def load_record(path: Path, rel: str, mtime_ns: int, size: int) -> FileRecord:
    """Read and parse one file; a bad file becomes a record carrying its error.

    A file modified within the last two seconds is "racy" (as in git): a second edit in the same
    timestamp tick with the same size would be invisible to the (mtime, size) check. Its mtime is
    stored as -1 so the next reindex hashes it again.
    """
    # a hand-written file without `created:` is indexed with its modification time until fixed
    modified = datetime.fromtimestamp(mtime_ns // 1_000_000_000, UTC) if mtime_ns > 0 else None
    if time.time_ns() - mtime_ns < RACY_NS:
        mtime_ns = -1
    try:
        data = read_bytes_checked(path, rel)
    except MemoryFileError as exc:
        return FileRecord(rel, mtime_ns, size, "", None, exc.reason, exc.line)
    return record_from_bytes(data, rel, mtime_ns, modified)


def record_from_bytes(data: bytes, rel: str, mtime_ns: int, modified: datetime | None = None) -> FileRecord:
    """The index record of a memory file's bytes (read from disk by `load_record`, or just
    written by `Service.record`: the same parse either way, so both index the same thing)."""
    digest = hashlib.sha256(data).hexdigest()
    try:
        parsed = parse_text(decode(data, rel), rel, created_fallback=modified)
    except MemoryFileError as exc:
        return FileRecord(rel, mtime_ns, len(data), digest, None, exc.reason, exc.line)
    return FileRecord(rel, mtime_ns, len(data), digest, parsed.memory)


BATCH = 2000  # file records per `Index.apply` (one transaction each)


class _ParseAhead:
    """`load_record` of each of `rels`, in order (iterate once). With `ahead` and more than one
    batch of them, a helper thread starts reading and parsing at once and keeps ahead of the
    caller, who meanwhile asks git for status and applies the previous batch (waiting on the
    index server: `Index.parse_ahead`). An unexpected parse failure is raised to the caller;
    `close` (also on leaving the `with`) stops the helper."""

    def __init__(self, on_disk: dict[str, tuple[str, int, int]], rels: list[str], ahead: bool) -> None:
        self.on_disk, self.rels = on_disk, rels
        self.out: queue.SimpleQueue[FileRecord | BaseException | None] = queue.SimpleQueue()
        self.stop = threading.Event()
        self.helper: threading.Thread | None = None
        if ahead and len(rels) > BATCH:
            self.helper = threading.Thread(target=self._work, name="ccmemory-parse", daemon=True)
            self.helper.start()

    def _load(self, rel: str) -> FileRecord:
        path, mtime, size = self.on_disk[rel]
        return load_record(Path(path), rel, mtime, size)

    def _work(self) -> None:
        try:
            for rel in self.rels:
                if self.stop.is_set():
                    return
                self.out.put(self._load(rel))
        except BaseException as exc:  # handed to the caller, raised there
            self.out.put(exc)
        self.out.put(None)

    def __iter__(self) -> Iterator[FileRecord]:
        if self.helper is None:
            yield from (self._load(rel) for rel in self.rels)
            return
        while (item := self.out.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self) -> None:
        self.stop.set()

    def __enter__(self) -> _ParseAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _full_beside(
    vault: Vault,
    index: Index,
    project: str,
    main_branch: str | None,
    progress: Callable[[int, int], None] | None,
    local_author: str | None = None,
) -> ReindexReport | None:
    """`reindex --full` for a backend that can build a fresh index beside the live one and swap
    it in atomically (SQLite: `fresh_beside` / `swap_in`): readers (SessionStart context, MCP)
    keep the old index during the rebuild, and a killed rebuild leaves it untouched. A corrupt
    live file is moved aside first. None: the backend cannot, fall back to clear + refill."""
    if not index.healthy():
        index.reset_corrupt()
    fresh = index.fresh_beside(project)
    if fresh is None:
        return None
    try:
        report = reindex(
            vault,
            fresh,
            project,
            main_branch=main_branch,
            full=False,
            progress=progress,
            local_author=local_author,
        )
    except BaseException:
        index.discard(fresh)
        raise
    index.swap_in(fresh)
    return report


def _relink(
    vault: Vault,
    index: Index,
    project: str,
    records: list[FileRecord],
    status_of: Callable[[str], str],
    adders: dict[str, str] | None,
) -> None:
    """Relation targets written as a path or an id prefix become ids (`resolve.relink`)."""
    from ccmemory.app.resolve import relink

    def reload(rel: str) -> FileRecord | None:
        path = vault.abs(rel)
        try:
            st = path.stat()
        except OSError:
            return None
        return load_record(path, rel, st.st_mtime_ns, st.st_size)

    relink(index, project, records, reload, status_of, adders)


def reindex(
    vault: Vault,
    index: Index,
    project: str,
    *,
    main_branch: str | None = None,
    full: bool = False,
    progress: Callable[[int, int], None] | None = None,
    local_author: str | None = None,
) -> ReindexReport:
    started = time.perf_counter()
    if full:
        rebuilt = _full_beside(vault, index, project, main_branch, progress, local_author)
        if rebuilt is not None:
            rebuilt.seconds = time.perf_counter() - started
            return rebuilt
    report = ReindexReport()
    if full:
        index.clear(project)
    stored = None if full else index.sync_state(project)
    state = _capture(vault, index, project, main_branch, local_author, stored is not None)
    plan = gitdelta.plan(vault.root, stored, state) if stored and state else None
    plan, on_disk, known, view = _survey(vault, index, project, plan, state, main_branch, report)
    changed = _changed(on_disk, known)
    removed = sorted(set(known) - set(on_disk))
    if plan is None:
        report.unchanged = len(on_disk) - len(changed)
    else:
        before = gitdelta.State.from_dict(stored or {})
        old_files = before.files if before else 0
        report.unchanged = old_files - len(removed) - sum(1 for rel in changed if rel in known)

    with _ParseAhead(on_disk, sorted(changed), index.parse_ahead) as parsed:
        adders = _adders(vault, view, on_disk, local_author, plan is not None)
        if not full:
            # before applying changes, so a re-derived memory's new status is counted too
            report.status_changed = _refresh_status(index, project, plan, view, adders)
        report.removed = len(removed)
        records = _apply_in_batches(
            index, project, parsed, known, removed, report, progress, len(changed), view.status_of, adders
        )
    if records or removed:
        _relink(vault, index, project, records, view.status_of, adders)
    report.errors = index.file_problems(project)
    _reference(vault, index, project, view.status_of, full, report)
    if state is not None and not report.skipped:
        state.files = len(on_disk) if plan is None else report.unchanged + report.added + report.updated
        # git rewrote files while they were read: recorded, but the next reindex walks
        state.settled = gitdelta.settled(state)
        index.set_sync_state(project, state.as_dict())
    report.seconds = time.perf_counter() - started
    return report


def _survey(
    vault: Vault,
    index: Index,
    project: str,
    plan: gitdelta.Delta | None,
    state: gitdelta.State | None,
    main_branch: str | None,
    report: ReindexReport,
) -> tuple[gitdelta.Delta | None, dict[str, tuple[str, int, int]], dict[str, FileState], Any]:
    """(plan, files on disk, their stored states, git view): the plan's paths only, or (no plan,
    or one of its paths is something only the walk handles) every file of the vault."""
    found = gitdelta.entries(vault, plan.paths) if plan is not None else None
    if plan is not None and found is not None and state is not None:
        view = gitdelta.LazyView(vault.root, state.main_branch, state.main, [*plan.paths, *plan.status_paths])
        return plan, found, index.file_states(project, plan.paths), view
    on_disk = scan(vault, report.skipped)
    return None, on_disk, index.file_states(project), gitstate.snapshot(vault.root, main_branch)


def _refresh_status(
    index: Index, project: str, plan: gitdelta.Delta | None, view: Any, adders: dict[str, str]
) -> int:
    """Status and git authors: of every memory after a walk; after a shortcut, only where the
    main branch's tree changed, and (HEAD moved) of memories whose author comes from git."""
    if plan is None:
        return index.refresh_status(project, view.status_of, adders)
    if not (plan.status_paths or plan.head_moved):
        return 0
    return index.refresh_status(
        project, view.status_of, adders, only=plan.status_paths, git_authors=plan.head_moved
    )


def _capture(
    vault: Vault, index: Index, project: str, main_branch: str | None, local_author: str | None, stored: bool
) -> gitdelta.State | None:
    """Git's view before any file is read (`gitdelta.capture`); the `stored` one is forgotten
    until this reindex has finished (one cut short leaves none: the next one walks)."""
    if stored:
        index.set_sync_state(project, None)
    if not gitstate.is_repo(vault.root):
        return None
    return gitdelta.capture(vault.root, gitstate.main_branch(vault.root, main_branch), local_author)


def _changed(on_disk: dict[str, tuple[str, int, int]], known: dict[str, FileState]) -> list[str]:
    """The files new on disk or whose stat data (mtime, size) differs from what the index holds."""
    return [
        rel
        for rel, (_, mtime, size) in on_disk.items()
        if rel not in known or known[rel].mtime_ns != mtime or known[rel].size != size
    ]


def _adders(
    vault: Vault,
    view: Any,
    on_disk: dict[str, tuple[str, int, int]],
    local_author: str | None,
    partial: bool = False,
) -> dict[str, str]:
    """Path -> who added it (git), for files without `author:`. `partial`: `on_disk` holds only
    the paths a shortcut reindex looks at, so the local author is the answer for any path git
    never saw added (`gitdelta.Adders`)."""
    if partial:
        return gitdelta.Adders(vault.root, local_author)
    adders = gitstate.adders(vault.root) if view.in_repo else {}
    if local_author:
        # a file not committed yet was added by whoever's working tree it is in: a hand-written
        # file without `author:` is theirs (and visible to them under the team rule)
        adders = {**dict.fromkeys(on_disk, local_author), **adders}
    return adders


def _apply_in_batches(
    index: Index,
    project: str,
    parsed: Iterable[FileRecord],
    known: dict[str, FileState],
    removed: list[str],
    report: ReindexReport,
    progress: Callable[[int, int], None] | None,
    total: int,
    status_of: Callable[[str], str],
    adders: dict[str, str],
) -> list[FileRecord]:
    """Count and apply the parsed records BATCH at a time (the removals with the first batch);
    returns them all."""
    records: list[FileRecord] = []
    pending: list[FileRecord] = []
    applied = False
    for n, rec in enumerate(parsed, 1):
        _count(report, known.get(rec.path), rec)
        records.append(rec)
        pending.append(rec)
        if progress and (n % 200 == 0 or n == total):
            progress(n, total)
        if len(pending) == BATCH:
            index.apply(project, pending, [] if applied else removed, status_of, adders)
            applied, pending = True, []
    if pending or (removed and not applied):
        index.apply(project, pending, [] if applied else removed, status_of, adders)
    return records


def _count(report: ReindexReport, old: FileState | None, rec: FileRecord) -> None:
    if old is None:
        report.added += 1
    elif old.hash == rec.hash and rec.hash:
        report.unchanged += 1  # touched, same content: only the stat data is refreshed
    else:
        report.updated += 1


def _reference(
    vault: Vault,
    index: Index,
    project: str,
    status_of: Callable[[str], str],
    full: bool,
    report: ReindexReport,
) -> None:
    """The reference tree (.ccmemory/reference/) rides along with every reindex."""
    from ccmemory.app.refsync import reindex_reference

    ref = reindex_reference(vault, index, project, status_of, full=full)
    if ref.files or ref.removed:
        report.reference = ref.as_dict()
    report.errors = sorted([*report.errors, *ref.problems], key=lambda p: (p.path, p.line or 0))
