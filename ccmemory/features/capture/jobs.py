"""Durable extraction jobs: one JSON file each under `.ccmemory/local/jobs/`.

  pending/<session>-<spool offset>.json   waiting (or being worked on)
  done/...                                finished (kept as the idempotency record)
  dead/...                                failed `max_attempts` times; `reason` says why

A job names a session and the spool offset its segment ends at, so the same segment is never
queued twice (Stop and the next UserPromptSubmit often point at the same offset). Stdlib only:
hooks enqueue jobs and start the worker.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from ccmemory.core.atomic import atomic_write
from ccmemory.features.capture.paths import LocalPaths, safe_name


def job_name(session: str, spool_to: int) -> str:
    return f"{safe_name(session)}-{spool_to:012d}.json"


def write_json(path: Path, data: dict[str, Any], *, overwrite: bool) -> bool:
    """Atomic JSON write (ccmemory.core.atomic). False when it exists and not overwrite."""
    try:
        atomic_write(path, json.dumps(data, ensure_ascii=False).encode("utf-8"), overwrite=overwrite)
    except FileExistsError:
        return False
    return True


def enqueue(
    paths: LocalPaths,
    *,
    session: str,
    spool_to: int,
    trigger: str,
    transcript_path: str | None,
    cwd: str | None,
) -> Path | None:
    """Queue the segment of `session` ending at `spool_to`. None when already queued or done."""
    name = job_name(session, spool_to)
    for folder in (paths.pending, paths.done, paths.dead):
        if (folder / name).exists():
            return None
    job = {
        "session": session,
        "spool_to": spool_to,
        "trigger": trigger,
        "transcript_path": transcript_path,
        "cwd": cwd,
        "created": time.time(),
        "attempts": 0,
    }
    path = paths.pending / name
    return path if write_json(path, job, overwrite=False) else None


STALE_TMP_SECONDS = 300  # no atomic write of a small job file takes this long
_swept = False


def sweep_tmp(paths: LocalPaths, now: float | None = None) -> int:
    """Remove temp files (`.<name>.<pid>.<ns>.tmp`, ccmemory.core.atomic) that a killed writer left in
    pending/, done/ and dead/. Only files older than STALE_TMP_SECONDS: a live writer's temp file
    is never touched. Returns how many were removed."""
    now = time.time() if now is None else now
    removed = 0
    for folder in (paths.pending, paths.done, paths.dead):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not (entry.name.startswith(".") and entry.name.endswith(".tmp")):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
                if entry.is_file(follow_symlinks=False) and now - st.st_mtime > STALE_TMP_SECONDS:
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue
    return removed


def pending(paths: LocalPaths) -> list[Path]:
    global _swept
    if not _swept:  # once per process (the worker): leftovers of a kill -9
        _swept = True
        sweep_tmp(paths)
    try:
        names = [p for p in paths.pending.iterdir() if p.suffix == ".json"]
    except FileNotFoundError:
        return []
    return sorted(names, key=lambda p: p.name)  # per session in spool order


def load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("job file is not a JSON object")
    return data


def finish(paths: LocalPaths, path: Path, job: dict[str, Any]) -> None:
    job["finished"] = time.time()
    write_json(paths.done / path.name, job, overwrite=True)
    path.unlink(missing_ok=True)


def dead_letter(paths: LocalPaths, path: Path, job: dict[str, Any] | None, reason: str) -> None:
    data = dict(job or {})
    data["reason"] = reason[:2000]
    data["dead_at"] = time.time()
    write_json(paths.dead / path.name, data, overwrite=True)
    path.unlink(missing_ok=True)


def worker_running(paths: LocalPaths) -> bool:
    """True when some process holds the worker lock."""
    import fcntl

    try:
        fd = os.open(paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def spawn_worker(paths: LocalPaths) -> bool:
    """Start the detached worker unless one holds the lock. A lost race is harmless: the second
    worker fails to take the lock and exits at once."""
    from ccmemory.core import settings

    if settings.NO_WORKER.get() or worker_running(paths):
        return False
    import subprocess

    paths.logs.mkdir(parents=True, exist_ok=True)
    subprocess.Popen(
        [sys.executable, "-m", "ccmemory.features.capture.worker", str(paths.root)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=str(paths.root),
        start_new_session=True,
        close_fds=True,
    )
    return True
