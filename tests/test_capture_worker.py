"""The detached worker: durable jobs, kill -9 recovery without duplicates, dead letters, one
worker per repository, no lost spool events."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ccmemory.core import spool
from ccmemory.features.capture import jobs
from ccmemory.features.capture.paths import LocalPaths
from ccmemory.features.capture.providers.base import ProviderError
from ccmemory.features.capture.providers.choose import Choice
from ccmemory.features.capture.settings import CaptureSettings
from ccmemory.features.capture.worker import Worker
from tests.capture_helpers import hook_env, make_repo, memory_files, read_memory

PROMPTS = [
    "No, use pnpm instead of npm",
    "I prefer small focused commits with imperative messages",
    "FYI the staging database requires a VPN connection",
]


def spool_session(repo: Path, session: str = "s1") -> LocalPaths:
    paths = LocalPaths(repo)
    for text in PROMPTS:
        end = spool.append(paths.spool(session), {"k": "prompt", "text": text})
    jobs.enqueue(paths, session=session, spool_to=end, trigger="Stop", transcript_path=None, cwd=str(repo))
    return paths


def start_worker(repo: Path, **env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "ccmemory.features.capture.worker", str(repo)],
        env=hook_env(**env),
        cwd=repo,
        start_new_session=True,
    )


def test_job_names_dedupe_segments(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    paths = LocalPaths(repo)
    first = jobs.enqueue(paths, session="s", spool_to=10, trigger="Stop", transcript_path=None, cwd=None)
    again = jobs.enqueue(
        paths, session="s", spool_to=10, trigger="UserPromptSubmit", transcript_path=None, cwd=None
    )
    assert first is not None and again is None


def test_kill_9_mid_job_then_rerun_writes_no_duplicates(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    paths = spool_session(repo)
    proc = start_worker(repo, CCMEMORY_WORKER_TEST_PAUSE="3")
    deadline = time.time() + 60
    while time.time() < deadline and not memory_files(repo):
        time.sleep(0.05)
    assert memory_files(repo), "worker wrote nothing"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(memory_files(repo)) == 1
    pending = jobs.pending(paths)
    assert len(pending) == 1
    job = json.loads(pending[0].read_text())
    assert job["attempts"] == 1 and len(job["plan"]["memories"]) == 3  # the plan survived
    rerun = subprocess.run(
        [sys.executable, "-m", "ccmemory.features.capture.worker", str(repo), "--once"],
        env=hook_env(),
        cwd=repo,
        timeout=120,
    )
    assert rerun.returncode == 0
    files = memory_files(repo)
    ids = [read_memory(f).id for f in files]
    assert len(files) == 3 and len(set(ids)) == 3
    assert sorted(ids) == sorted(m["id"] for m in job["plan"]["memories"])
    assert jobs.pending(paths) == [] and len(list(paths.done.glob("*.json"))) == 1
    # running again changes nothing
    subprocess.run(
        [sys.executable, "-m", "ccmemory.features.capture.worker", str(repo), "--once"],
        env=hook_env(),
        cwd=repo,
        timeout=120,
    )
    assert memory_files(repo) == files


class FailingProvider:
    name = "failing"

    def complete(self, system: str, prompt: str, *, model: str, max_tokens: int) -> object:
        raise ProviderError("simulated outage: 503 from upstream")


def test_repeated_failures_go_to_dead_letters_and_keep_the_spool(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    paths = spool_session(repo)
    spool_before = paths.spool("s1").read_bytes()
    settings = CaptureSettings(worker_max_attempts=2)
    worker = Worker(repo, choice=Choice("failing", "t", FailingProvider()), settings=settings)  # type: ignore[arg-type]
    job = jobs.pending(paths)[0]
    worker.run_job(job)
    assert jobs.pending(paths) == [job]
    assert "simulated outage" in json.loads(job.read_text())["last_error"]
    worker.run_job(job)
    assert jobs.pending(paths) == []
    dead = list(paths.dead.glob("*.json"))
    assert len(dead) == 1
    reason = json.loads(dead[0].read_text())["reason"]
    assert "ProviderError" in reason and "simulated outage" in reason
    assert paths.spool("s1").read_bytes() == spool_before  # the events are still there
    assert memory_files(repo) == []


def test_a_job_that_kills_the_worker_every_time_is_dead_lettered(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    paths = spool_session(repo)
    job = jobs.pending(paths)[0]
    data = json.loads(job.read_text())
    data["attempts"] = 3  # three workers died on it
    job.write_text(json.dumps(data))
    Worker(repo, settings=CaptureSettings(provider="test")).run_job(job)
    dead = list(paths.dead.glob("*.json"))
    assert len(dead) == 1 and "too many attempts" in json.loads(dead[0].read_text())["reason"]


def test_unreadable_job_file_is_dead_lettered(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    paths = LocalPaths(repo)
    paths.pending.mkdir(parents=True)
    (paths.pending / "broken-000000000001.json").write_text("{not json")
    Worker(repo, settings=CaptureSettings(provider="test")).drain(idle_seconds=0, settle=0)
    assert [p.name for p in paths.dead.glob("*.json")] == ["broken-000000000001.json"]


def test_only_one_worker_per_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    spool_session(repo)
    first = start_worker(repo, CCMEMORY_WORKER_TEST_PAUSE="1", CCMEMORY_WORKER_IDLE="1")
    time.sleep(1.5)
    started = time.monotonic()
    second = start_worker(repo)
    assert second.wait(timeout=30) == 0
    assert time.monotonic() - started < 10  # exited at once: the lock is taken
    assert first.poll() is None
    assert first.wait(timeout=60) == 0  # and the first one exits when idle
    assert len(memory_files(repo)) == 3


def test_hooks_spawn_at_most_one_worker(tmp_path: Path) -> None:
    from tests.capture_helpers import run_hook, wait_for_worker

    repo = make_repo(tmp_path)
    env = hook_env(CCMEMORY_WORKER_IDLE="2")
    base = {"session_id": "s9", "transcript_path": "", "cwd": str(repo)}
    for i in range(6):
        run_hook(
            "UserPromptSubmit",
            {
                **base,
                "hook_event_name": "UserPromptSubmit",
                "prompt": f"No, use tool{i} instead of tool{i + 100}",
            },
            repo,
            env,
        )
    out = subprocess.run(
        ["pgrep", "-f", f"ccmemory.features.capture.worker {repo}"], capture_output=True, text=True
    )
    assert len(out.stdout.split()) <= 1
    wait_for_worker(repo)
    deadline = time.time() + 10
    while (
        time.time() < deadline
        and subprocess.run(
            ["pgrep", "-f", f"ccmemory.features.capture.worker {repo}"], capture_output=True
        ).stdout
    ):
        time.sleep(0.1)
    assert (
        subprocess.run(
            ["pgrep", "-f", f"ccmemory.features.capture.worker {repo}"], capture_output=True
        ).stdout
        == b""
    ), "the worker did not exit when idle"
    assert len(memory_files(repo)) == 5  # the sixth prompt's segment is still open (no Stop yet)


def test_worker_command_status_and_retry_dead(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from ccmemory.surfaces.cli.cmd_worker import command

    repo = make_repo(tmp_path)
    paths = spool_session(repo)
    job = jobs.pending(paths)[0]
    jobs.dead_letter(paths, job, jobs.load(job), "ProviderError: simulated")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("CCMEMORY_NO_WORKER", "1")
    out = CliRunner().invoke(command, ["--status", "--json"])
    info = json.loads(out.output)
    assert info["pending"] == [] and info["dead"][0]["reason"] == "ProviderError: simulated"
    assert CliRunner().invoke(command, ["--retry-dead"]).output.startswith("1 job(s)")
    assert [p.name for p in jobs.pending(paths)] == [job.name]
    monkeypatch.setenv("CCMEMORY_PROVIDER", "test")
    CliRunner().invoke(command, ["--once"])
    assert len(memory_files(repo)) == 3 and jobs.pending(paths) == []
