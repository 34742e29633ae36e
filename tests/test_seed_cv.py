"""The seed's Correction Velocity (issue 31), measured: hand-timed sessions (the hooks' spool lines
and a Claude Code transcript, times chosen by hand) go through the real capture worker with the
rules provider; it logs each correction's prompt, the wrong-statement proxy (Claude's last action
before the prompt) and the memory's creation time; `ccmemory stats` gives the mean, computed here
by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ccmemory.core import spool
from ccmemory.features.capture import jobs
from ccmemory.features.capture.paths import LocalPaths
from ccmemory.features.capture.providers.choose import Choice
from ccmemory.features.capture.velocity import LOG
from ccmemory.features.capture.worker import Worker
from tests.capture_helpers import make_repo, memory_files, read_memory
from tests.lifecycle_util import cli

DAY = "2026-01-10"


def at(clock: str) -> str:
    return f"{DAY}T{clock}Z"


def epoch(clock: str) -> float:
    return datetime.fromisoformat(f"{DAY}T{clock}+00:00").timestamp()


class Transcript:
    """A main-line Claude Code transcript written record by record, each at a chosen time."""

    def __init__(self, path: Path, session: str) -> None:
        self.path, self.session, self.n = path, session, 0

    def add(self, clock: str, rtype: str, content: Any, **extra: Any) -> None:
        self.n += 1
        parent = f"{self.session}-{self.n - 1}" if self.n > 1 else None
        message: dict[str, Any] = {"role": rtype, "content": content}
        if rtype == "assistant":
            message["id"] = f"msg-{self.n}"
        rec = {
            "type": rtype,
            "uuid": f"{self.session}-{self.n}",
            "parentUuid": parent,
            "sessionId": self.session,
            "timestamp": at(clock),
            "isSidechain": False,
            "message": message,
            **extra,
        }
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")

    def tool(self, clock: str, done: str, tid: str, command: str) -> None:
        self.add(
            clock,
            "assistant",
            [{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": command}}],
        )
        result = [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}]
        self.add(done, "user", result, toolUseResult={"stdout": "ok", "stderr": "", "exitCode": 0})


class Session:
    """What the hooks would have done: spool lines (prompts and tool events with their `ts`) and a
    job per closed segment, its `created` set to the hook's (chosen) time; then the worker runs."""

    def __init__(self, repo: Path, session: str, transcript: Path | None) -> None:
        self.repo, self.session, self.paths = repo, session, LocalPaths(repo)
        self.transcript = transcript

    def spool(self, event: dict[str, Any]) -> int:
        return spool.append(self.paths.spool(self.session), event)

    def close_segment(self, clock: str, trigger: str) -> None:
        end = spool.size(self.paths.spool(self.session))
        job = jobs.enqueue(
            self.paths,
            session=self.session,
            spool_to=end,
            trigger=trigger,
            transcript_path=str(self.transcript) if self.transcript else None,
            cwd=str(self.repo),
        )
        assert job is not None
        data = jobs.load(job)
        data["created"] = epoch(clock)
        jobs.write_json(job, data, overwrite=True)
        worker = Worker(self.repo, choice=Choice("rules", "rules only"))
        try:
            assert worker.drain(idle_seconds=0, settle=0) == 1
        finally:
            worker.close()


def test_correction_velocity_from_hand_timed_sessions(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    local = repo / ".ccmemory" / "local"
    data = json.loads(cli(repo, "stats", "--json").stdout)["seed_metrics"]["correction_velocity"]
    assert data["value"] is None and "correction-velocity.jsonl" in data["why"]

    # session 1, with a transcript: Claude's wrong statement is its reply at 10:00:09.250
    tx = Transcript(tmp_path / "s-one.jsonl", "s-one")
    one = Session(repo, "s-one", tx.path)
    one.spool({"k": "prompt", "text": "Add the install step to the README", "ts": at("10:00:00")})
    tx.add("10:00:00.000", "user", "Add the install step to the README")
    tx.tool("10:00:04.000", "10:00:05.000", "toolu_1", "npm install")
    one.spool(
        {"k": "tool", "id": "toolu_1", "name": "Bash", "cmd": "npm install", "exit": 0, "ts": at("10:00:05")}
    )
    tx.add("10:00:09.250", "assistant", [{"type": "text", "text": "I added `npm install` to the README."}])
    one.close_segment("10:02:00", "UserPromptSubmit")  # the next prompt closes the segment
    one.spool({"k": "prompt", "text": "No, use pnpm instead of npm", "ts": at("10:02:00")})
    tx.add("10:02:00.000", "user", "No, use pnpm instead of npm")
    tx.tool("10:02:03.000", "10:02:04.000", "toolu_2", "pnpm install")
    one.spool(
        {"k": "tool", "id": "toolu_2", "name": "Bash", "cmd": "pnpm install", "exit": 0, "ts": at("10:02:04")}
    )
    tx.add("10:02:07.500", "assistant", [{"type": "text", "text": "Switched the README to pnpm."}])
    one.close_segment("10:02:08", "Stop")

    # session 2, hooks only (no transcript): the wrong statement is the last tool event, 11:00:30
    two = Session(repo, "s-two", None)
    two.spool({"k": "prompt", "text": "Run the test suite", "ts": at("11:00:00")})
    two.spool(
        {"k": "tool", "id": "toolu_3", "name": "Bash", "cmd": "make test", "exit": 0, "ts": at("11:00:30")}
    )
    two.close_segment("11:05:00", "UserPromptSubmit")
    two.spool(
        {
            "k": "prompt",
            "text": "/correction tests run with make test -> tests run with tox",
            "ts": at("11:05:00"),
        }
    )
    two.close_segment("11:05:20", "Stop")

    # session 3: a correction as the very first prompt follows no statement of Claude's: no row
    three = Session(repo, "s-three", None)
    three.spool({"k": "prompt", "text": "It's Helm, not kubectl", "ts": at("12:00:00")})
    three.close_segment("12:00:10", "Stop")

    corrections = {
        m.session: m for m in (read_memory(f) for f in memory_files(repo)) if m.type == "correction"
    }
    assert set(corrections) == {"s-one", "s-two", "s-three"}  # capture extracted all three
    rows = [json.loads(x) for x in (local / LOG).read_text().splitlines()]
    got = {r["session"]: r for r in rows}
    assert set(got) == {"s-one", "s-two"} and len(rows) == 2
    assert got["s-one"] | {"written": None} == {
        "id": corrections["s-one"].id,
        "session": "s-one",
        "prompt": "2026-01-10T10:02:00.000Z",
        "wrong": "2026-01-10T10:00:09.250Z",
        "wrong_from": "transcript",
        "created": at("10:02:08"),
        "written": None,
    }
    assert (got["s-two"]["wrong"], got["s-two"]["wrong_from"]) == ("2026-01-10T11:00:30.000Z", "spool")
    assert (got["s-two"]["prompt"], got["s-two"]["created"]) == ("2026-01-10T11:05:00.000Z", at("11:05:20"))
    assert got["s-two"]["id"] == corrections["s-two"].id
    assert datetime.fromisoformat(got["s-one"]["written"]) > datetime(2026, 1, 10, tzinfo=UTC)
    # nothing but ids and times: no prompt or memory text in the log
    assert "pnpm" not in (local / LOG).read_text() and "tox" not in (local / LOG).read_text()

    # by hand: 10:02:08 − 10:00:09.250 = 118.75 s; 11:05:20 − 11:00:30 = 290 s
    want = (118.75 + 290) / 2
    cv = json.loads(cli(repo, "stats", "--json").stdout)["seed_metrics"]["correction_velocity"]
    assert cv["value"] == pytest.approx(want) and cv["corrections"] == 2 and cv["unit"] == "seconds"
    assert cv["display"] == "3.4 min" and cv["name"] == "Correction Velocity (CV)"
    assert "capture's own delay is included" in cv["formula"]


def test_no_row_while_telemetry_is_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CCMEMORY_TELEMETRY", "0")
    repo = make_repo(tmp_path)
    s = Session(repo, "s-off", None)
    s.spool({"k": "prompt", "text": "Run the test suite", "ts": at("11:00:00")})
    s.spool(
        {"k": "tool", "id": "toolu_9", "name": "Bash", "cmd": "make test", "exit": 0, "ts": at("11:00:30")}
    )
    s.close_segment("11:05:00", "UserPromptSubmit")
    s.spool({"k": "prompt", "text": "No, use pnpm instead of npm", "ts": at("11:05:00")})
    s.close_segment("11:05:20", "Stop")
    assert any(read_memory(f).type == "correction" for f in memory_files(repo))
    assert not (repo / ".ccmemory" / "local" / LOG).exists()


def test_a_job_run_again_logs_a_written_correction_once(tmp_path: Path) -> None:
    """A worker killed after writing the memory but before logging it: the re-run (from the stored
    plan, the memory already there) logs it; a further re-run adds no second line."""
    repo = make_repo(tmp_path)
    s = Session(repo, "s-again", None)
    s.spool({"k": "prompt", "text": "Run the test suite", "ts": at("11:00:00")})
    s.spool(
        {"k": "tool", "id": "toolu_8", "name": "Bash", "cmd": "make test", "exit": 0, "ts": at("11:00:30")}
    )
    s.close_segment("11:05:00", "UserPromptSubmit")
    s.spool({"k": "prompt", "text": "No, use pnpm instead of npm", "ts": at("11:05:00")})
    s.close_segment("11:05:20", "Stop")
    log = repo / ".ccmemory" / "local" / LOG
    first = log.read_text()
    log.unlink()  # as if killed between the memory file and its line
    done = sorted(s.paths.done.glob("*.json"), key=lambda p: jobs.load(p)["created"])[-1]
    for _ in range(2):
        job = jobs.load(done)
        assert "cv" in job and "plan" in job
        job["attempts"] = 0
        jobs.write_json(s.paths.pending / done.name, job, overwrite=True)
        worker = Worker(repo, choice=Choice("rules", "rules only"))
        try:
            worker.drain(idle_seconds=0, settle=0)
        finally:
            worker.close()
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["id"] == json.loads(first)["id"]
    assert (lines[0]["wrong"], lines[0]["created"]) == ("2026-01-10T11:00:30.000Z", at("11:05:20"))
