"""Session history (issue 28): records from real fixture transcripts and the capture worker,
redaction, search, SessionStart lines, prune, hostile transcripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.capture_helpers import (
    FIXTURES,
    assert_no_secrets,
    hook_env,
    make_repo,
    run_hook,
    secret_text,
    wait_for_worker,
)
from tests.conftest import RunCli
from tests.session_transcripts import write_transcript

SESSIONS = Path(".ccmemory/local/sessions")


def _import(run_cli: RunCli, repo: Path, path: Path) -> dict[str, object]:
    proc = run_cli(repo, "import", "--provider", "rules", "--json", str(path))
    out = json.loads(proc.stdout)
    assert isinstance(out, dict)
    return out


def _records(repo: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for p in sorted((repo / SESSIONS).glob("*.json")):
        rec = json.loads(p.read_text(encoding="utf-8"))
        out[rec["id"]] = rec
    return out


def test_every_fixture_transcript_yields_a_record_with_a_summary(tmp_path: Path, run_cli: RunCli) -> None:
    repo = make_repo(tmp_path)
    sessions = []
    for f in sorted(FIXTURES.rglob("*.jsonl")):
        if f.name.startswith("agent-"):
            continue  # a sub-agent file belongs to its parent session
        out = _import(run_cli, repo, f)
        ids = out["session_records"]
        assert isinstance(ids, list) and len(ids) == 1, (f, out)
        sessions.append(ids[0])
    records = _records(repo)
    assert sorted(records) == sorted(set(sessions))
    for rec in records.values():
        summary = str(rec["summary"])
        assert summary.startswith("Asked: ") and "Done: " in summary, rec["id"]
        assert rec["prompts"] and rec["start"] and rec["end"]
        assert rec["truncated"] is False
    # real shapes: the claude-reliability fixture edits files and runs git
    cov = next(r for r in records.values() if "multiply_numbers" in str(r["prompts"]))
    assert "src/math_utils.py" in cov["files_changed"]
    assert any("git" in str(c["cmd"]) for c in cov["commands"])
    listed = json.loads(run_cli(repo, "sessions", "list", "--json", "--limit", "50").stdout)
    assert {r["id"] for r in listed} == set(records)
    assert all(r["summary"] for r in listed)
    # git-ignored: nothing of it is offered to a commit
    status = run_cli(repo, "sessions", "list").stdout
    assert "Asked:" in status
    import subprocess

    porcelain = subprocess.run(
        ["git", "status", "--porcelain", "--ignored"], cwd=repo, capture_output=True, text=True
    )
    assert "sessions" not in "".join(x for x in porcelain.stdout.splitlines() if not x.startswith("!!"))


def test_a_secret_typed_in_a_prompt_is_never_in_a_record_or_output(tmp_path: Path, run_cli: RunCli) -> None:
    repo = make_repo(tmp_path)
    t = write_transcript(
        tmp_path / "t" / "secret.jsonl",
        "sess-secret",
        [
            {"prompt": "deploy the billing service with these credentials:\n" + secret_text()},
            {"prompt": "now rotate the billing key", "bash": (f"export TOKEN={secret_text().split()[2]}", 0)},
        ],
    )
    _import(run_cli, repo, t)
    raw = (repo / SESSIONS / "sess-secret.json").read_text(encoding="utf-8")
    assert_no_secrets(raw, "the session record")
    assert "billing" in raw and "[REDACTED" in raw
    found = run_cli(repo, "sessions", "search", "--json", "billing credentials").stdout
    assert json.loads(found)[0]["id"] == "sess-secret"
    assert_no_secrets(found, "sessions search --json")
    shown = run_cli(repo, "sessions", "show", "--json", "sess-secret").stdout
    assert_no_secrets(shown, "sessions show --json")


def test_search_finds_the_right_session_among_several(tmp_path: Path, run_cli: RunCli) -> None:
    repo = make_repo(tmp_path)
    topics = {
        "s-auth": ["Make the login form remember the user with a refresh token cookie"],
        "s-css": ["The sidebar overlaps the footer on small screens, fix the flexbox layout"],
        "s-db": ["Add a migration that creates an index on orders.customer_id in postgres"],
        "s-ci": ["The GitHub Actions workflow times out on the integration tests, split the job"],
        "s-docs": ["Write the README section about installing the CLI with pipx"],
    }
    for i, (sid, prompts) in enumerate(topics.items()):
        write_transcript(
            tmp_path / "t" / f"{sid}.jsonl", sid, [{"prompt": p} for p in prompts], day=f"2026-01-1{i}"
        )
    out = _import(run_cli, repo, tmp_path / "t")
    assert sorted(out["session_records"]) == sorted(topics)  # type: ignore[arg-type]
    queries = {
        "when did we fix the footer overlapping the sidebar": "s-css",
        "database index for customer orders": "s-db",
        "refresh token cookie login": "s-auth",
        "CI workflow timeout": "s-ci",
        "pipx install docs": "s-docs",
    }
    for query, want in queries.items():
        rows = json.loads(run_cli(repo, "sessions", "search", "--json", query).stdout)
        assert rows and rows[0]["id"] == want, (query, rows)
    # hybrid by default: the embedder ran (no notice) and its cache holds hashes and vectors, no text
    proc = run_cli(repo, "sessions", "search", "the footer and the sidebar")
    assert "semantic search off" not in proc.stderr and proc.stdout.startswith("s-css")
    cache = (repo / SESSIONS / ".vectors.json").read_text()
    assert "sidebar" not in cache and len(json.loads(cache)["v"]) >= len(topics)
    text_only = json.loads(run_cli(repo, "sessions", "search", "--json", "--text-only", "pipx").stdout)
    assert [r["id"] for r in text_only] == ["s-docs"]
    since = json.loads(run_cli(repo, "sessions", "list", "--json", "--since", "2026-01-13").stdout)
    assert {r["id"] for r in since} == {"s-ci", "s-docs"}
    text = run_cli(repo, "sessions", "show", "s-db").stdout
    assert "migration" in text
    assert "refresh token" in run_cli(repo, "sessions", "show", "s-a").stdout  # a unique id prefix
    ambiguous = run_cli(repo, "sessions", "show", "s-d", check=False)
    assert ambiguous.returncode == 1 and "names several" in ambiguous.stderr


def test_session_start_shows_the_last_sessions_of_this_branch_within_150_tokens(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo = make_repo(tmp_path)
    long = "please " + "refactor the payment retry logic and its exponential backoff " * 30
    for i in range(5):
        turns = [{"prompt": f"session {i}: {long}", "bash": ("pytest -q", 1 if i == 4 else 0)}]
        write_transcript(tmp_path / "t" / f"m{i}.jsonl", f"main-{i}", turns, day=f"2026-02-0{i + 1}")
    write_transcript(
        tmp_path / "t" / "other.jsonl",
        "feat-x",
        [{"prompt": "other branch work"}],
        branch="feat",
        day="2026-02-09",
    )
    _import(run_cli, repo, tmp_path / "t")
    payload = {"session_id": "now", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    proc = run_hook("SessionStart", payload, repo, hook_env())
    assert proc.returncode == 0, proc.stderr
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    part = ctx[ctx.index("Recent sessions") :]
    assert len(part) <= 150 * 4, len(part)
    lines = [x for x in part.splitlines()[1:] if x.startswith("- ")]
    assert 1 <= len(lines) <= 3
    assert "[main-4]"[:9] in lines[0] or "main-4" in lines[0]
    assert "OPEN last command failed" in lines[0]  # open items first
    assert "feat-x" not in part  # another branch
    off = run_hook("SessionStart", payload, repo, hook_env(CCMEMORY_CONTEXT="0"))
    assert off.stdout == b""


def test_prune_only_touches_the_sessions_folder(tmp_path: Path, run_cli: RunCli) -> None:
    import os

    repo = make_repo(tmp_path)
    for i in range(3):
        write_transcript(tmp_path / "t" / f"p{i}.jsonl", f"p-{i}", [{"prompt": f"task {i}"}])
    _import(run_cli, repo, tmp_path / "t")
    local = repo / ".ccmemory" / "local"
    keep = [local / "spool" / "x.jsonl", local / "notes.json", repo / ".ccmemory" / "keep.json"]
    for p in keep:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("{}")
        os.utime(p, (1, 1))  # ancient
    old = repo / SESSIONS / "p-0.json"
    os.utime(old, (1, 1))
    dry = json.loads(run_cli(repo, "sessions", "prune", "--max-age", "30", "--dry-run", "--json").stdout)
    assert dry["deleted"] == ["p-0"] and old.exists()
    out = json.loads(run_cli(repo, "sessions", "prune", "--max-age", "30", "--json").stdout)
    assert out["deleted"] == ["p-0"] and not old.exists()
    out = json.loads(run_cli(repo, "sessions", "prune", "--max-mb", "0", "--json").stdout)
    assert sorted(out["deleted"]) == ["p-1", "p-2"]
    assert list((repo / SESSIONS).glob("*.json")) == []
    assert all(p.exists() for p in keep)
    usage = run_cli(repo, "sessions", "prune", check=False)
    assert usage.returncode == 2 and "--max-age" in usage.stderr


def test_hostile_transcript_lines_are_skipped_with_a_message(tmp_path: Path, run_cli: RunCli) -> None:
    repo = make_repo(tmp_path)
    t = write_transcript(tmp_path / "t" / "h.jsonl", "sess-h", [{"prompt": "fix the flaky upload test"}])
    good = t.read_bytes()
    junk = b'not json\n[1, 2, 3]\n"a string"\n\xff\xfe\x00binary\n{"type": "user", "message": 7}\n'
    junk += b'{"type": "assistant", "message": {"content": [null, 5, {"type": "tool_use", "input": "x"}]}}\n'
    t.write_bytes(junk + good + b'{"truncated": ')
    proc = run_cli(repo, "import", "--provider", "rules", str(t))
    assert "session record(s) written" in proc.stdout
    assert "h.jsonl: 4 line(s) that are not JSON objects skipped" in proc.stderr
    rec = json.loads((repo / SESSIONS / "sess-h.json").read_text())
    assert rec["prompts"] == ["fix the flaky upload test"] and rec["bad_lines"] == 4
    empty = tmp_path / "t2" / "empty.jsonl"
    empty.parent.mkdir()
    empty.write_bytes(b"garbage\n\x00\n")
    proc = run_cli(repo, "import", "--provider", "rules", str(empty))
    assert "no prompt, tool call or reply found" in proc.stderr
    bad = repo / SESSIONS / "broken.json"
    bad.write_text("{not json")
    listed = json.loads(run_cli(repo, "sessions", "list", "--json").stdout)
    assert [r["id"] for r in listed] == ["sess-h"] and bad.exists()


def test_the_worker_writes_the_record_at_stop(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    t = write_transcript(
        tmp_path / "t" / "live.jsonl",
        "live-1",
        [
            {
                "prompt": "rename the retry helper",
                "edit": "src/retry.py",
                "bash": ("pytest -q tests/test_retry.py", 1),
            }
        ],
        cwd=str(repo),
    )
    env = hook_env()
    base = {"session_id": "live-1", "transcript_path": str(t), "cwd": str(repo)}
    run_hook(
        "UserPromptSubmit",
        {**base, "hook_event_name": "UserPromptSubmit", "prompt": "rename the retry helper"},
        repo,
        env,
    )
    run_hook("Stop", {**base, "hook_event_name": "Stop"}, repo, env)
    wait_for_worker(repo)
    rec = json.loads((repo / SESSIONS / "live-1.json").read_text())
    assert rec["prompts"] == ["rename the retry helper"]
    first = list(rec["memories"])
    assert rec["files_changed"] == ["src/retry.py"]
    assert rec["commands"] == [{"cmd": "pytest -q tests/test_retry.py", "exit": 1}]
    assert rec["branch"] == "main"
    assert "Open: last command failed (exit 1)" in rec["summary"]
    # the next turn captures a correction: the record lists the memory's id
    fix = "No, use pnpm instead of npm"
    run_hook("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": fix}, repo, env)
    run_hook("Stop", {**base, "hook_event_name": "Stop"}, repo, env)
    wait_for_worker(repo)
    rec = json.loads((repo / SESSIONS / "live-1.json").read_text())
    assert rec["prompts"] == ["rename the retry helper", fix]
    ids = [p.read_text() for p in (repo / ".ccmemory").rglob("*.md") if "local" not in p.parts]
    assert len(rec["memories"]) > len(first) and set(first) <= set(rec["memories"])
    assert all(any(m in t for t in ids) for m in rec["memories"])


def test_a_huge_session_is_capped_and_flagged() -> None:
    from ccmemory.features.sessions import record

    events = [{"k": "prompt", "text": f"prompt number {i} " + "x" * 1500} for i in range(200)]
    events += [
        {"k": "tool", "id": f"t{i}", "name": "Bash", "cmd": f"make target{i}", "exit": 0} for i in range(500)
    ]
    rec = record.build(events, session="big", max_bytes=20_000)
    assert rec["truncated"] is True
    assert record.size_of(rec) <= 20_000
    assert rec["prompts"][0].startswith("prompt number 0") and rec["prompts"][-1].startswith(
        "prompt number 199"
    )
    assert rec["summary"].startswith("Asked: prompt number 0")


def test_the_mcp_sessions_tool_lists_searches_and_gets(tmp_path: Path, run_cli: RunCli) -> None:
    from tests._mcp_client import SyncClient
    from tests._mcp_client import make_repo as mcp_repo

    repo = mcp_repo(tmp_path / "repo")
    write_transcript(tmp_path / "t" / "a.jsonl", "mcp-a", [{"prompt": "speed up the image thumbnail cache"}])
    write_transcript(
        tmp_path / "t" / "b.jsonl",
        "mcp-b",
        [{"prompt": "translate the error messages to German " + secret_text()}],
    )
    _import(run_cli, repo, tmp_path / "t")
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_TOOLS": "full"}) as client:
        tool = next(t for t in client.list_tools() if t.name == "sessions")
        size = len(json.dumps(tool.model_dump(mode="json", exclude_none=True)))
        assert size < 1200, size  # over ~400 characters: kept out of the lean set (docs/mcp.md)
        listed = client.call("sessions", {})
        assert {s["id"] for s in listed["sessions"]} == {"mcp-a", "mcp-b"}
        found = client.call("sessions", {"action": "search", "query": "German error messages"})
        assert found["sessions"][0]["id"] == "mcp-b"
        one = client.call("sessions", {"action": "get", "id": "mcp-b"})
        assert one["session"]["prompts"][0].startswith("translate the error messages")
        assert_no_secrets(json.dumps([listed, found, one]), "the MCP sessions tool")
        assert client.error("sessions", {"action": "get", "id": "nope"})["code"] == "not_found"
        assert client.error("sessions", {"action": "search"})["code"] == "invalid_argument"
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_TOOLS": ""}) as lean:
        assert "sessions" not in {t.name for t in lean.list_tools()}


def test_the_blind_dev_set_yields_clean_records(tmp_path: Path, run_cli: RunCli) -> None:
    """bench/sessions/dev (written blind): a record per transcript, its secrets redacted."""
    dev = Path(__file__).resolve().parent.parent / "bench" / "sessions" / "dev" / "transcripts"
    repo = make_repo(tmp_path)
    out = _import(run_cli, repo, dev)
    files = sorted(dev.glob("*.jsonl"))
    assert len(out["session_records"]) == len(files) >= 30  # type: ignore[arg-type]
    text = "".join(p.read_text() for p in (repo / SESSIONS).glob("*.json"))
    assert "AKIAIOSFODNN7EXAMPLE" not in text and "ghp_R2d2C3poB8bY5wingXw1ngLuk3Sky3Walk3r" not in text
    assert all(str(r["summary"]).startswith("Asked: ") for r in _records(repo).values())
