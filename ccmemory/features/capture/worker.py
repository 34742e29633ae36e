"""The detached capture worker: one per repository, guarded by `flock` on
`.ccmemory/local/worker.lock`, started on demand by hooks, exits after `idle_seconds` without work.

For each pending job (oldest first, once it is `settle_seconds` old so the transcript has caught
up): count the attempt durably, build the segment (spool range + new transcript records), plan the
memories (LLM or rules), store the plan in the job file, write the memories that do not exist yet,
advance the session cursor, move the job to done. A crash or `kill -9` at any point leaves the job
in pending: the re-run reuses a stored plan (no second LLM call) and skips ids already written.
After `max_attempts` the job goes to dead/ with its last error. Spool files are never truncated.

Run by hand: `python -m ccmemory.features.capture.worker [REPO] [--once]`.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ccmemory.core import settings as env_settings
from ccmemory.core import spool
from ccmemory.features.capture import jobs
from ccmemory.features.capture.events import merge_events
from ccmemory.features.capture.paths import LocalPaths, find_root, git_branch

log = logging.getLogger("ccmemory.features.capture")


class Worker:
    def __init__(self, root: Path, *, choice: Any = None, settings: Any = None):
        from ccmemory.app.service import Service
        from ccmemory.core.vault import Vault
        from ccmemory.features.capture import settings as settings_mod
        from ccmemory.features.capture.store import Store

        self.root = root
        self.paths = LocalPaths(root)
        self.settings = settings or settings_mod.load(root)
        self._choice = choice
        self.store = Store(Vault(root), service=Service)
        self.written: list[Path] = []

    @property
    def choice(self) -> Any:
        if self._choice is None:
            from ccmemory.features.capture.providers.choose import Choice, choose

            try:
                self._choice = choose(self.settings)
            except Exception as exc:  # e.g. SDK import failure: rules still work
                self._choice = Choice("rules", f"provider setup failed ({exc}): rules only")
            log.info("provider: %s (%s)", self._choice.name, self._choice.reason)
        return self._choice

    # --- cursor -------------------------------------------------------------------------------
    def cursor(self, session: str) -> dict[str, int]:
        try:
            data = json.loads(self.paths.cursor(session).read_text(encoding="utf-8"))
            return {"spool": int(data.get("spool", 0)), "transcript": int(data.get("transcript", 0))}
        except (OSError, ValueError, AttributeError):
            return {"spool": 0, "transcript": 0}

    def save_cursor(self, session: str, spool_at: int, transcript_at: int) -> None:
        cur = self.cursor(session)
        cur["spool"] = max(cur["spool"], spool_at)
        cur["transcript"] = max(cur["transcript"], transcript_at)
        jobs.write_json(self.paths.cursor(session), cur, overwrite=True)

    # --- one job ------------------------------------------------------------------------------
    def run_job(self, path: Path) -> None:
        from ccmemory.features.capture.extract import Plan, apply_plan

        try:
            job = jobs.load(path)
        except (OSError, ValueError) as exc:
            jobs.dead_letter(self.paths, path, None, f"unreadable job file: {exc}")
            return
        job["attempts"] = int(job.get("attempts", 0)) + 1
        if job["attempts"] > self.settings.worker_max_attempts:
            reason = job.get("last_error") or "too many attempts (worker killed mid-job?)"
            log.warning("job %s dead-lettered: %s", path.name, reason)
            jobs.dead_letter(self.paths, path, job, str(reason))
            return
        jobs.write_json(path, job, overwrite=True)  # the attempt counts even if we die now
        try:
            if "plan" not in job:
                plan, ranges, cv_rows = self.make_plan(job)
                job["plan"], job["ranges"] = plan.to_json(), ranges
                if cv_rows:
                    job["cv"] = cv_rows
                jobs.write_json(path, job, overwrite=True)
            plan = Plan.from_json(job["plan"])
            pause = env_settings.WORKER_TEST_PAUSE.value()
            if pause:
                self._apply_slowly(plan, pause)
            else:
                written, _ = apply_plan(plan, self.store)
                self.written += written
            if job.get("cv"):
                self._note_velocity(job["cv"])
            ranges = job["ranges"]
            self.save_cursor(job["session"], ranges["spool_to"], ranges["transcript_to"])
            jobs.finish(self.paths, path, job)
            self.session_record(job)
            log.info("job %s done: %d memories planned, notes=%s", path.name, len(plan.memories), plan.notes)
        except Exception as exc:
            from ccmemory.core.redact import redact

            job["last_error"] = redact(f"{type(exc).__name__}: {exc}")[:2000]
            log.warning(
                "job %s failed (attempt %d): %s\n%s",
                path.name,
                job["attempts"],
                job["last_error"],
                traceback.format_exc(limit=5),
            )
            if job["attempts"] >= self.settings.worker_max_attempts:
                jobs.dead_letter(self.paths, path, job, job["last_error"])
            else:
                job["retry_at"] = time.time() + min(60.0, 2.0 ** job["attempts"])
                jobs.write_json(path, job, overwrite=True)

    def _note_velocity(self, rows: list[dict[str, Any]]) -> None:
        """The correction-velocity rows (velocity.py) of the job's corrections now written (also by
        an earlier attempt killed before logging them); telemetry, so nothing while it is off."""
        from ccmemory.core import telemetry
        from ccmemory.core.config import read_config_file
        from ccmemory.features.capture import velocity

        try:
            if not telemetry.config_from(read_config_file(self.root / ".ccmemory")).enabled:
                return
            velocity.append(self.paths.local, rows, self.store.existing_ids(), datetime.now(UTC))
        except Exception:  # a metric only: never the capture's to fail
            log.warning("correction velocity not recorded", exc_info=True)

    def session_record(self, job: dict[str, Any]) -> None:
        """Rewrite the session's record (ccmemory.features.sessions) from its whole spool and
        transcript. Never fails the job: a problem is logged."""
        if not self.settings.sessions_enabled:
            return
        try:
            from ccmemory.features.capture.sessionrec import from_transcript

            session = str(job["session"])
            spooled, _ = spool.read_range(self.paths.spool(session), 0)
            call, final = self._summary_call(session, job)
            classify = self._classes_call(session) if call is not None else None
            tpath = job.get("transcript_path")
            notes: list[str] = []
            _, bad = from_transcript(
                self.root,
                Path(tpath) if isinstance(tpath, str) and tpath else None,
                session=session,
                spool_events=spooled,
                branch=git_branch(self.root),
                memories=self.store,
                max_bytes=self.settings.sessions_max_kb * 1024,
                live=True,
                publish=self.settings.sessions_publish_prompts if self.settings.sessions_publish else None,
                notes=notes,
                summarize_with=call,
                final=final,
                classify_with=classify,
            )
            for note in notes:
                log.info("session %s: %s", session, note)
            if bad:
                log.info("session %s: %d unreadable transcript line(s) skipped", session, bad)
        except Exception as exc:
            from ccmemory.core.redact import redact

            log.warning("session record for job %s skipped: %s", job.get("session"), redact(str(exc)))

    def _summary_call(self, session: str, job: dict[str, Any]) -> tuple[Any, bool]:
        """(the budgeted LLM call for the session's summary or None, whether the session is over)."""
        from ccmemory.features.capture.sessionsummary import FINAL_TRIGGERS, budgeted_call

        trigger = str(job.get("trigger") or "").split(":")[0]
        if trigger not in ("Stop", *FINAL_TRIGGERS):  # a prompt's job: no summary call
            return None, False
        from ccmemory.features.capture.usage import Budget

        call = budgeted_call(self.choice, self.settings, Budget(self.paths, session, self.settings))
        return call, trigger in FINAL_TRIGGERS

    def _classes_call(self, session: str) -> Any:
        """The budgeted LLM call that classes the session's prompts (autonomy score); made when
        a summary call is (the same jobs), None without a provider."""
        from ccmemory.features.capture.sessionsummary import budgeted_call
        from ccmemory.features.capture.usage import Budget
        from ccmemory.features.sessions.autonomy import MAX_TOKENS

        budget = Budget(self.paths, session, self.settings)
        return budgeted_call(
            self.choice, self.settings, budget, purpose="prompt-classes", max_tokens=MAX_TOKENS
        )

    def _apply_slowly(self, plan: Any, pause: float) -> None:
        """Test aid (CCMEMORY_WORKER_TEST_PAUSE): write one memory at a time with a pause, so a
        test can kill -9 the worker between two files."""
        from ccmemory.features.capture.extract import Plan, apply_plan

        for mem in plan.memories:
            written, _ = apply_plan(Plan(memories=[mem]), self.store)
            self.written += written
            time.sleep(pause)

    def make_plan(self, job: dict[str, Any]) -> tuple[Any, dict[str, int], list[dict[str, Any]]]:
        """(the plan, the spool and transcript ranges it read, its correction-velocity rows)."""
        from ccmemory.features.capture import velocity
        from ccmemory.features.capture.extract import Context, Planner
        from ccmemory.features.capture.segment import build
        from ccmemory.features.capture.transcript import read_events
        from ccmemory.features.capture.usage import Budget

        session = str(job["session"])
        cur = self.cursor(session)
        spool_to = int(job["spool_to"])
        events, _ = spool.read_range(self.paths.spool(session), cur["spool"], spool_to)
        tx_to = cur["transcript"]
        tx_events: list[dict[str, Any]] = []
        branch = None
        tpath = job.get("transcript_path")
        if tpath and Path(tpath).is_file():
            conv, tx_to = read_events(Path(tpath), cur["transcript"])
            tx_events, branch = conv.events, conv.branch
        merged = merge_events(events, tx_events)
        _note_citations(self.root, session, tx_events)
        seg = build(merged, str(self.root))
        ctx = Context(
            root=self.root,
            session=session,
            branch=git_branch(self.root) or branch,
            author=author(self.root),
            job_key=f"{session}:{spool_to}",
            created=datetime.fromtimestamp(float(job.get("created", time.time())), tz=UTC),
        )
        planner = Planner(self.store, self.choice, self.settings, Budget(self.paths, session, self.settings))
        plan = planner.plan(seg, ctx)
        transcript = Path(tpath) if tpath and Path(tpath).is_file() else None
        try:
            cv_rows = velocity.plan_rows(
                plan.memories, merged, self.paths.spool(session), spool_to, transcript
            )
        except Exception:  # a metric only: never the capture's to fail
            log.warning("correction velocity not worked out", exc_info=True)
            cv_rows = []
        ranges = {
            "spool_from": cur["spool"],
            "spool_to": spool_to,
            "transcript_from": cur["transcript"],
            "transcript_to": tx_to,
        }
        return plan, ranges, cv_rows

    # --- the loop -----------------------------------------------------------------------------
    def drain(self, *, idle_seconds: float | None = None, settle: float | None = None) -> int:
        """Process jobs until none is left for `idle_seconds`. Returns jobs processed."""
        idle = self.settings.worker_idle_seconds if idle_seconds is None else idle_seconds
        settle_s = self.settings.worker_settle_seconds if settle is None else settle
        done = 0
        dirty = False  # jobs ran since the suggestions were last computed
        last = time.monotonic()
        while True:
            ready = [p for p in jobs.pending(self.paths) if _age(p) >= settle_s and _due(p)]
            if ready:
                self.run_job(ready[0])
                done += 1
                dirty = True
                last = time.monotonic()
                continue
            if dirty:  # the queue is empty: the pattern job, once per batch of jobs
                self.pattern_job()
                dirty = False
            if time.monotonic() - last >= idle and not _waiting(self.paths):
                return done
            time.sleep(0.2)

    def pattern_job(self) -> None:
        """Recompute the suggestions (features.suggest) and keep them in .ccmemory/local/, so the
        dashboard, MCP and `ccmemory suggest` answer without recomputing. Off the hook path (this
        is the detached worker); a failure is logged, never the capture's to fail."""
        svc = self.store.service()
        if svc is None:
            return
        try:
            from ccmemory.features import suggest

            svc.reindex()  # the memories just written by path, and anything changed by hand
            found = suggest.refresh(svc)
            log.info("pattern job: %d suggestion(s)", len(found))
        except Exception:
            log.warning("pattern job failed", exc_info=True)

    def close(self) -> None:
        self.store.close()


def _note_citations(root: Path, session: str, events: list[dict[str, Any]]) -> None:
    """Recalled memories whose id Claude wrote in a reply (telemetry ``cited``; issue 27)."""
    replies = [str(e.get("text") or "") for e in events if e.get("k") == "assistant"]
    if not replies:
        return
    try:
        from ccmemory.core.config import read_config_file
        from ccmemory.features.recall.follow import cited

        cited(str(root), session, read_config_file(root / ".ccmemory"), replies)
    except Exception:  # telemetry only: never the capture's to fail
        log.debug("citation telemetry skipped", exc_info=True)


def _age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return 0.0


def _due(path: Path) -> bool:
    try:
        return float(jobs.load(path).get("retry_at", 0)) <= time.time()
    except (OSError, ValueError, TypeError):
        return True  # unreadable: let run_job dead-letter it


def _waiting(paths: LocalPaths) -> bool:
    return bool(jobs.pending(paths))


def author(root: Path) -> str | None:
    env = env_settings.USER_ID.get()
    if env:
        return env
    import subprocess

    try:
        out = subprocess.run(
            ["git", "config", "user.email"], cwd=root, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def setup_logging(paths: LocalPaths) -> None:
    from ccmemory.features.capture.logsetup import RedactingFormatter

    paths.logs.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(paths.logs / "worker.log", encoding="utf-8")
    handler.setFormatter(RedactingFormatter("%(asctime)s %(process)d %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)


def run(root: Path, *, once: bool = False) -> int:
    import fcntl

    paths = LocalPaths(root)
    paths.local.mkdir(parents=True, exist_ok=True)
    fd = os.open(paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # another worker owns this repository
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        setup_logging(paths)
        worker = Worker(root)
        try:
            worker.drain(idle_seconds=0 if once else None, settle=0 if once else None)
        finally:
            worker.close()
        return 0
    finally:
        os.close(fd)  # releases the lock


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    once = "--once" in args
    args = [a for a in args if a != "--once"]
    root = find_root(args[0] if args else None)
    if root is None:
        print("ccmemory worker: no .ccmemory/ folder here", file=sys.stderr)
        return 1
    if env_settings.DISABLE.get():
        return 0
    return run(root, once=once)


if __name__ == "__main__":
    raise SystemExit(main())
