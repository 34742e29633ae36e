"""The secret corpus (tests/secret_corpus.py: 68 kinds, each with a near miss) through redact()
and through every entry point: `ccmemory new`, the UserPromptSubmit and PostToolUse hooks, the
MCP record tool, the index and `check` of a hand-written file (issue 32)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ccmemory.core.redact import redact
from tests.capture_helpers import hook_env, make_repo, run_hook
from tests.conftest import RunCli
from tests.secret_corpus import CORPUS, NEAR_MISSES


def surviving(secret: str, text: str) -> list[str]:
    """10-character pieces of ``secret`` still in ``text`` (a partial leak counts)."""
    pieces = {secret[i : i + 10] for i in range(0, max(1, len(secret) - 9), 5)}
    return sorted(p for p in pieces if p in text)


def leaks(text: str) -> list[str]:
    return [kind for kind, _t, secret, _n in CORPUS if surviving(secret, text)]


def test_the_corpus_is_broad() -> None:
    assert len(CORPUS) >= 60 and len({k for k, *_ in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize(("kind", "text", "secret", "near"), CORPUS, ids=[c[0] for c in CORPUS])
def test_each_kind_is_redacted_and_its_near_miss_kept(kind: str, text: str, secret: str, near: str) -> None:
    out = redact(text)
    assert surviving(secret, out) == [], out
    assert "[REDACTED:" in out
    assert redact(near) == near  # no false positive on text of the same shape
    assert redact(out) == out  # idempotent


ALL = "\n".join(t for _k, t, _s, _n in CORPUS)


def test_cli_new_and_the_index_never_hold_one(repo: Path, run_cli: RunCli) -> None:
    rel = json.loads(
        run_cli(
            repo, "new", "decision", "Deploy notes", "--body", ALL, "--field", f"rationale={ALL}", "--json"
        ).stdout
    )["path"]
    assert leaks((repo / rel).read_text(encoding="utf-8")) == []
    db = (repo / ".ccmemory" / "local" / "index.db").read_bytes().decode("utf-8", "replace")
    assert leaks(db) == []
    assert redact(NEAR_MISSES[0]) == NEAR_MISSES[0]


def test_hooks_never_spool_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    env = hook_env(CCMEMORY_NO_WORKER="1")
    prompt = {"session_id": "s-1", "cwd": str(repo), "prompt": ALL}
    assert run_hook("UserPromptSubmit", prompt, repo, env).returncode == 0
    for i, (_k, text, _s, _n) in enumerate(CORPUS):
        tool = {
            "session_id": "s-1",
            "cwd": str(repo),
            "tool_name": "Bash",
            "tool_input": {"command": text[:3000]},
            "tool_response": {"stdout": text, "stderr": "", "interrupted": False},
            "tool_use_id": f"t{i}",
        }
        assert run_hook("PostToolUse", tool, repo, env).returncode == 0
    local = "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in (repo / ".ccmemory" / "local").rglob("*")
        if p.is_file()
    )
    assert "t0" in local or "prompt" in local  # something was spooled
    assert leaks(local) == []


def test_mcp_record_never_writes_one(tmp_path: Path) -> None:
    from tests._mcp_client import SyncClient
    from tests._mcp_client import make_repo as mcp_repo

    repo = mcp_repo(tmp_path / "repo")
    with SyncClient.stdio(repo, env=hook_env(CCMEMORY_MCP_REFRESH_SECONDS="0")) as client:
        tools = {t.name for t in client.list_tools()}
        name, args = ("record_fact", {}) if "record_fact" in tools else ("record", {"type": "fact"})
        client.call(name, {**args, "title": "Deploy notes", "body": ALL})
    files = "".join(p.read_text(encoding="utf-8") for p in (repo / ".ccmemory").rglob("*.md"))
    assert "Deploy notes" in files and leaks(files) == []


def test_check_and_the_pre_commit_hook_refuse_a_staged_hand_written_one(repo: Path, run_cli: RunCli) -> None:
    folder = repo / ".ccmemory" / "facts"
    folder.mkdir(parents=True, exist_ok=True)
    kinds = [
        c for c in CORPUS if c[0] in ("sendgrid key", "discord bot token", "netrc", "redis url without user")
    ]
    for i, (_k, text, _s, _n) in enumerate(kinds):
        (folder / f"hand-{i}.md").write_text(
            f"---\nid: 01JD00000000000000000000{i:02d}\ntype: fact\ntitle: Hand written {i}\n"
            f"created: 2026-11-20T14:03:11Z\n---\n\n{text}\n",
            encoding="utf-8",
        )
    proc = run_cli(repo, "check", "--json", check=False)
    found = [f for f in json.loads(proc.stdout) if "secret" in f["message"]]
    assert proc.returncode == 1 and len({f["path"] for f in found}) == len(kinds)
    assert leaks(json.dumps(found)) == []  # the report names the kind, never the value
    run_cli(repo, "init")  # installs the pre-commit hook
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    commit = subprocess.run(["git", "commit", "-qm", "notes"], cwd=repo, capture_output=True, text=True)
    assert commit.returncode != 0 and "secret" in (commit.stdout + commit.stderr).lower()
