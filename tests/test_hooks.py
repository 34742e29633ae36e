"""The hook handlers as Claude Code runs them: real subprocesses, real git repos, exact stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.capture_helpers import (
    FIXTURES,
    all_local_text,
    assert_no_secrets,
    hook_env,
    make_repo,
    memory_files,
    read_memory,
    run_hook,
    secret_text,
    wait_for_worker,
)
from tests.replay import replay

EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Stop", "SessionEnd"]


def _payload(repo: Path, event: str, **extra: object) -> dict[str, object]:
    return {
        "session_id": "s-1",
        "transcript_path": str(repo / "missing.jsonl"),
        "cwd": str(repo),
        "permission_mode": "default",
        "hook_event_name": event,
        **extra,
    }


@pytest.mark.parametrize("event", EVENTS)
@pytest.mark.parametrize("stdin", [b"", b"not json at all {", b"[1, 2, 3]", b"\xff\xfe\x00garbage"])
def test_garbage_stdin_exits_zero_and_logs(tmp_path: Path, event: str, stdin: bytes) -> None:
    repo = make_repo(tmp_path)
    proc = run_hook(event, None, repo, raw=stdin)
    assert proc.returncode == 0
    assert proc.stdout == b""
    log = (repo / ".ccmemory" / "local" / "logs" / "hooks.log").read_text()
    assert event in log and ("stdin" in log)


def test_no_vault_means_no_op(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    subprocess.run(["git", "init", "-q", str(plain)], check=True)
    proc = run_hook(
        "PostToolUse",
        {"session_id": "x", "cwd": str(plain), "tool_name": "Read", "tool_input": {"file_path": "a"}},
        plain,
    )
    assert proc.returncode == 0 and proc.stdout == b""
    assert not (plain / ".ccmemory").exists()


def test_disable_env_is_a_no_op(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    env = hook_env(CCMEMORY_DISABLE="1")
    for event in EVENTS:
        proc = run_hook(event, _payload(repo, event, prompt="No, use pnpm instead of npm"), repo, env)
        assert proc.returncode == 0 and proc.stdout == b""
    assert not (repo / ".ccmemory" / "local").exists()


def test_post_tool_use_spools_a_redacted_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    cmd = (
        f"curl -H 'Authorization: Bearer {'Zq8Xk2Lm9NwR7d9Kq2mXv8Lp'}' https://x && "
        f"GITHUB_TOKEN={'ghp_R7d9Kq2mXv8LpT4nWz6Yb3Hc5Jf1Gs0Ae9Uu'} make"
    )
    payload = _payload(
        repo,
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": cmd},
        tool_response={"stdout": "ok", "stderr": "", "interrupted": False, "isImage": False},
        tool_use_id="toolu_01",
    )
    proc = run_hook("PostToolUse", payload, repo)
    assert proc.returncode == 0 and proc.stdout == b""
    line = json.loads((repo / ".ccmemory/local/spool/s-1.jsonl").read_text().splitlines()[0])
    assert line["k"] == "tool" and line["name"] == "Bash" and line["exit"] == 0
    assert "ghp_" not in line["cmd"] and "Zq8Xk2Lm9" not in line["cmd"]
    assert "[REDACTED:" in line["cmd"]
    assert not (repo / ".ccmemory/local/jobs/pending").exists()  # no job on the fast path


def test_hook_fast_path_imports_nothing_heavy(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    payload = _payload(
        repo,
        "PostToolUse",
        tool_name="Edit",
        tool_input={"file_path": str(repo / "a.py")},
        tool_response={"filePath": str(repo / "a.py")},
        tool_use_id="t1",
    )
    for event, extra in (("PostToolUse", {}), ("UserPromptSubmit", {"prompt": "hello"})):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "ccmemory", "hook", event],
            input=json.dumps({**payload, **extra, "hook_event_name": event}).encode(),
            capture_output=True,
            cwd=repo,
            env=hook_env(CCMEMORY_NO_WORKER="1"),
        )
        assert proc.returncode == 0
        imported = {ln.split("|")[-1].strip() for ln in proc.stderr.decode().splitlines()}
        heavy = [
            "click",
            "yaml",
            "frontmatter",
            "anthropic",
            "numpy",
            "httpx",
            "sqlite3",
            "ccmemory.core.vault",
            "ccmemory.app.service",
            "subprocess",
            "tempfile",
            "shutil",
        ]
        if event == "PostToolUse":  # not even json/re when nothing looks like a secret
            heavy += ["json", "re", "pathlib", "typing", "dataclasses"]
        for name in heavy:
            assert name not in imported, f"{event} imported {name}"


def test_session_start_injects_context_within_budget_and_records_ids(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    for i in range(60):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "ccmemory",
                "new",
                "preference",
                f"Preference number {i} about formatting the widgets in module {i}",
            ],
            cwd=repo,
            check=True,
            capture_output=True,
            env=hook_env(),
        )
    proc = run_hook(
        "SessionStart",
        _payload(repo, "SessionStart", source="startup"),
        repo,
        hook_env(CCMEMORY_CONTEXT_BUDGET="200"),
    )
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Preference number" in ctx
    assert len(ctx) <= 200 * 4
    surfaced = [json.loads(x) for x in (repo / ".ccmemory/local/surfaced.jsonl").read_text().splitlines()]
    assert surfaced[-1]["session"] == "s-1" and surfaced[-1]["ids"]
    assert all(i in ctx for i in surfaced[-1]["ids"])
    # switched off: nothing printed
    off = run_hook(
        "SessionStart", _payload(repo, "SessionStart", source="resume"), repo, hook_env(CCMEMORY_CONTEXT="0")
    )
    assert off.returncode == 0 and off.stdout == b""


def test_session_end_returns_fast_and_detaches(tmp_path: Path) -> None:
    import time

    repo = make_repo(tmp_path)
    run_hook(
        "UserPromptSubmit", _payload(repo, "UserPromptSubmit", prompt="No, use pnpm instead of npm"), repo
    )
    start = time.monotonic()
    proc = run_hook("SessionEnd", _payload(repo, "SessionEnd", reason="prompt_input_exit"), repo)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0 and proc.stdout == b""
    assert elapsed < 1.5
    wait_for_worker(repo)
    files = memory_files(repo)
    assert [p.parent.name for p in files] == ["corrections"]


def test_full_disk_is_survived(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    local = repo / ".ccmemory" / "local"
    local.mkdir()
    (local / "spool").write_text("a file where the spool folder should be")  # writes fail
    proc = run_hook(
        "PostToolUse", _payload(repo, "PostToolUse", tool_name="Read", tool_input={"file_path": "x"}), repo
    )
    assert proc.returncode == 0 and proc.stdout == b""
    assert "PostToolUse" in (local / "logs" / "hooks.log").read_text()


def test_secrets_never_reach_spool_logs_or_memories(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    secret = secret_text()
    env = hook_env()
    run_hook(
        "UserPromptSubmit",
        _payload(repo, "UserPromptSubmit", prompt=f"No, use the vault client instead of env files. {secret}"),
        repo,
        env,
    )
    run_hook(
        "PostToolUse",
        _payload(
            repo,
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": f"deploy {secret}"},
            tool_response={"stdout": secret, "stderr": "", "interrupted": False},
            tool_use_id="toolu_x",
        ),
        repo,
        env,
    )
    run_hook("Stop", _payload(repo, "Stop", stop_hook_active=False), repo, env)
    run_hook("PostToolUse", None, repo, env, raw=f"not json {secret}".encode())
    wait_for_worker(repo)
    files = memory_files(repo)
    assert files, "the correction should have been captured"
    for f in files:
        assert_no_secrets(f.read_text(), str(f))
    assert_no_secrets(all_local_text(repo), ".ccmemory/local")


# --- replays of the fixture transcripts ------------------------------------------------------

FIXTURE_FILES = sorted(p for p in FIXTURES.glob("*/*.jsonl") if not p.name.startswith("agent-"))


@pytest.mark.parametrize("source", FIXTURE_FILES, ids=lambda p: p.name[:30])
def test_replay_fixture_transcripts(tmp_path: Path, source: Path) -> None:
    repo = make_repo(tmp_path)
    result = replay(source, repo)
    assert set(result.codes) == {0}
    if "compact" in source.name:
        assert "PreCompact" in result.events
    for event, outs in result.outputs.items():
        if event != "SessionStart":
            assert all(o == b"" for o in outs), f"{event} printed something"
    wait_for_worker(repo)
    local = repo / ".ccmemory" / "local"
    assert not list((local / "jobs" / "dead").glob("*.json")) if (local / "jobs/dead").exists() else True
    # every human prompt reached the spool
    spool = (local / "spool" / "replay-session.jsonl").read_text()
    assert result.events.count("UserPromptSubmit") == spool.count('"k":"prompt"')
    # the worker consumed the whole spool
    cursor = json.loads((local / "state" / "replay-session.json").read_text())
    assert cursor["spool"] == len(spool.encode())
    for f in memory_files(repo):
        assert read_memory(f).session == "replay-session"
    # the logs hold no failures
    log = (local / "logs" / "worker.log").read_text()
    assert "failed" not in log


SYNTHETIC = [
    {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "syn",
        "cwd": "/w",
        "gitBranch": "feature/x",
        "timestamp": "2026-11-20T10:00:00Z",
        "message": {"role": "user", "content": "Add retries to the HTTP client"},
    },
    {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "sessionId": "syn",
        "timestamp": "2026-11-20T10:00:05Z",
        "requestId": "req_1",
        "message": {
            "id": "msg_1",
            "role": "assistant",
            "type": "message",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "npm install got"}}
            ],
        },
    },
    {
        "type": "user",
        "uuid": "u2",
        "parentUuid": "a1",
        "sessionId": "syn",
        "timestamp": "2026-11-20T10:00:09Z",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "added 1 package"}],
        },
        "toolUseResult": {"stdout": "added 1 package", "stderr": "", "interrupted": False},
    },
    {
        "type": "assistant",
        "uuid": "a2",
        "parentUuid": "u2",
        "sessionId": "syn",
        "timestamp": "2026-11-20T10:00:12Z",
        "requestId": "req_2",
        "message": {
            "id": "msg_2",
            "role": "assistant",
            "type": "message",
            "content": [{"type": "text", "text": "Installed got with npm."}],
        },
    },
    {
        "type": "user",
        "uuid": "u3",
        "parentUuid": "a2",
        "sessionId": "syn",
        "timestamp": "2026-11-20T10:01:00Z",
        "message": {"role": "user", "content": "No, we use pnpm instead of npm in this repo"},
    },
    {
        "type": "assistant",
        "uuid": "a3",
        "parentUuid": "u3",
        "sessionId": "syn",
        "timestamp": "2026-11-20T10:01:05Z",
        "requestId": "req_3",
        "message": {
            "id": "msg_3",
            "role": "assistant",
            "type": "message",
            "content": [{"type": "text", "text": "Switched to pnpm."}],
        },
    },
    {
        "type": "user",
        "uuid": "u4",
        "parentUuid": "a3",
        "sessionId": "syn",
        "timestamp": "2026-11-20T10:02:00Z",
        "message": {
            "role": "user",
            "content": "<command-message>decision is running…</command-message>\n"
            "<command-name>/decision</command-name>\n<command-args>Retry HTTP calls "
            "three times with jitter because the gateway drops idle sockets</command-args>",
        },
    },
    {
        "type": "assistant",
        "uuid": "a4",
        "parentUuid": "u4",
        "sessionId": "syn",
        "timestamp": "2026-11-20T10:02:05Z",
        "requestId": "req_4",
        "message": {
            "id": "msg_4",
            "role": "assistant",
            "type": "message",
            "content": [{"type": "text", "text": "Noted."}],
        },
    },
]


def test_replay_synthetic_session_writes_expected_memories(tmp_path: Path) -> None:
    src = tmp_path / "syn.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in SYNTHETIC) + "\n")
    repo = make_repo(tmp_path)
    result = replay(src, repo, session="syn")
    assert set(result.codes) == {0}
    wait_for_worker(repo)
    files = memory_files(repo)
    kinds = sorted(p.parent.name for p in files)
    assert kinds == ["corrections", "decisions"], kinds
    decision = read_memory(next(p for p in files if p.parent.name == "decisions"))
    assert decision.source == "explicit"
    assert decision.title == "Retry HTTP calls three times with jitter"
    assert decision.fields["rationale"] == "the gateway drops idle sockets"
    correction = read_memory(next(p for p in files if p.parent.name == "corrections"))
    assert "pnpm" in correction.title and correction.session == "syn"
    assert correction.branch == "main"  # the repository's branch at capture time
    # a second replay of the same session writes nothing new
    replay(src, repo, session="syn")
    wait_for_worker(repo)
    assert memory_files(repo) == files


def test_hook_help_names_every_event_and_reads_no_stdin(tmp_path: Path) -> None:
    """`ccmemory hook --help` printed nothing (it read the payload from stdin: in a terminal it
    waited for input); every command has --help (README)."""
    from ccmemory.surfaces import hooks

    proc = subprocess.run(
        [sys.executable, "-m", "ccmemory", "hook", "--help"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        timeout=30,
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0 and out.startswith("Usage: ccmemory hook EVENT")
    assert all(event in out for event in hooks.EVENTS)
