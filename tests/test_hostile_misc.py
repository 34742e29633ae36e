"""Issue 19's smaller scenarios: the index rebuild and its corruption, the MCP server facing
hostile files and malformed JSON-RPC, hook stdin, capture leftovers, init, worktrees and `--at`."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.capture_helpers import hook_env, make_repo, run_hook
from tests.conftest import REPO_ROOT, RunCli, cli_env, init_git
from tests.test_hostile_files import BOMBS, memory


def fill(repo: Path, n: int) -> None:
    from ccmemory.core.model import new_id

    folder = repo / ".ccmemory" / "facts"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"m{i:05d}.md").write_text(
            memory(f"Fact number {i} about walruses", new_id()), encoding="utf-8"
        )


def live_count(repo: Path) -> int:
    import sqlite3

    db = sqlite3.connect(repo / ".ccmemory" / "local" / "index.db", timeout=30)
    try:
        return int(db.execute("SELECT count(*) FROM memories").fetchone()[0])
    finally:
        db.close()


# --- reindex --full beside the live index (3) ---------------------------------------------------


def test_full_rebuild_keeps_the_live_index_readable(repo: Path) -> None:
    from ccmemory.app.service import Service
    from ccmemory.core.vault import Vault

    fill(repo, 450)
    seen: list[int] = []
    contexts: list[str] = []

    def during(n: int, total: int) -> None:
        seen.append(live_count(repo))
        if not contexts:  # a real SessionStart hook in the middle of the rebuild
            payload = {
                "session_id": "s-1",
                "cwd": str(repo),
                "hook_event_name": "SessionStart",
                "source": "startup",
            }
            out = run_hook("SessionStart", payload, repo, hook_env()).stdout
            contexts.append(json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else "")

    with Service(Vault(repo)) as svc:
        svc.reindex()
        assert live_count(repo) == 450
        # during the rebuild (progress runs while the fresh index is being filled) a reader of
        # the live file still sees every memory; before issue 19 it saw an empty index
        report = svc.reindex(full=True, progress=during)
        assert report.added == 450 and seen and set(seen) == {450}
        assert contexts and "walruses" in contexts[0]
        assert live_count(repo) == 450
        assert svc.search("walruses", limit=5)
    assert not list((repo / ".ccmemory" / "local").glob("index.db.rebuild-*"))


def test_killed_full_rebuild_leaves_the_old_index(repo: Path, run_cli: RunCli) -> None:
    fill(repo, 3000)
    run_cli(repo, "reindex", "--no-embed")
    assert live_count(repo) == 3000
    local = repo / ".ccmemory" / "local"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccmemory", "reindex", "--full", "--no-embed"],
        cwd=repo,
        env=cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 60
    while time.time() < deadline and not list(local.glob("index.db.rebuild-*")):
        time.sleep(0.01)
    assert list(local.glob("index.db.rebuild-*")), "the rebuild never started"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert live_count(repo) == 3000  # untouched: the old index answers
    found = json.loads(run_cli(repo, "search", "walruses", "--json", "--mode", "text").stdout)
    assert found
    run_cli(repo, "reindex", "--full", "--no-embed")  # and the next rebuild cleans the leftover
    assert not list(local.glob("index.db.rebuild-*"))
    assert live_count(repo) == 3000


def test_corrupt_pages_are_found_by_full_and_rebuilt(repo: Path, run_cli: RunCli) -> None:
    fill(repo, 300)
    run_cli(repo, "reindex", "--no-embed")
    db = repo / ".ccmemory" / "local" / "index.db"
    import sqlite3

    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(db.read_bytes())
    assert len(data) > 8 * 4096
    for page in range(3, len(data) // 4096):  # keep the header and schema pages, garble the rest
        data[page * 4096 + 8 : page * 4096 + 200] = b"\xa5" * 192
    db.write_bytes(bytes(data))
    out = json.loads(run_cli(repo, "reindex", "--full", "--no-embed", "--json").stdout)
    assert out["added"] == 300
    assert live_count(repo) == 300
    assert list(db.parent.glob("index.db.corrupt-*"))  # moved aside, never deleted


# --- MCP facing hostile files and bad JSON-RPC (3) ----------------------------------------------


class RawMCP:
    """The MCP server over stdio with raw JSON-RPC lines and a deadline on every read (the SDK
    client would wait forever on a hung server; this fails the test instead)."""

    def __init__(self, repo: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ccmemory", "mcp"],
            cwd=repo,
            env={**cli_env(), "PYTHONPATH": str(REPO_ROOT), "CCMEMORY_MCP_TOOLS": "full"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.buf = b""

    def send(self, obj: Any) -> None:
        assert self.proc.stdin is not None
        line = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def read(self, want_id: int, timeout: float = 60) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.time() + timeout
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                msg = json.loads(line)
                if msg.get("id") == want_id:
                    return dict(msg)
            left = deadline - time.time()
            assert left > 0, f"no reply to request {want_id} within {timeout}s (server hung?)"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                assert chunk, "server exited"
                self.buf += chunk

    def handshake(self) -> None:
        from mcp_types import LATEST_PROTOCOL_VERSION  # type: ignore[import-not-found,unused-ignore]

        self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": LATEST_PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "hostile", "version": "0"},
                },
            }
        )
        assert "result" in self.read(1)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, rid: int, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.send(
            {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": tool, "arguments": args}}
        )
        return self.read(rid)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


def test_mcp_first_call_survives_fifo_and_yaml_bombs(tmp_path: Path) -> None:
    from tests._mcp_client import make_repo as mcp_repo

    repo = mcp_repo(tmp_path / "repo")
    fill(repo, 3)
    facts = repo / ".ccmemory" / "facts"
    os.mkfifo(facts / "fifo.md")
    for name in ("deep_flow_list", "alias_bomb"):
        (facts / f"{name}.md").write_text(memory("Bomb", extra=BOMBS[name]), encoding="utf-8")
    (facts / "link.md").symlink_to("/etc/passwd")
    server = RawMCP(repo)
    try:
        server.handshake()
        reply = server.call(2, "search", {"query": "walruses"})
        assert "result" in reply and not reply["result"].get("isError"), reply
        assert len(reply["result"]["structuredContent"]["results"]) == 3
    finally:
        server.close()


def test_mcp_malformed_requests_do_not_stop_the_server(tmp_path: Path) -> None:
    """mcp 2.3's stdio transport drops a line that fails JSON-RPC validation before our code sees
    it (mcp/server/stdio.py hands the exception, without the line or its id, to the dispatcher,
    which logs it), so an error *reply* with the request's id is not possible without replacing
    the SDK transport. What we can and do guarantee: the server keeps serving."""
    from tests._mcp_client import make_repo as mcp_repo

    repo = mcp_repo(tmp_path / "repo")
    server = RawMCP(repo)
    try:
        server.handshake()
        for bad in (
            b'{"jsonrpc": "2.0", "id": 7, "method": 123}',
            b'{"jsonrpc": "1.0", "id": 8, "method": "tools/list"}',
            b'{"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": "x"',
            b"\xff\xfe not json",
            b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}',
        ):
            server.send(bad)
        server.send({"jsonrpc": "2.0", "id": 10, "method": "tools/list"})
        assert len(server.read(10)["result"]["tools"]) > 10
    finally:
        server.close()


# --- hook stdin, capture leftovers (2) ----------------------------------------------------------


@pytest.mark.parametrize(
    "raw", [b'{"session_id": "a\x01b"}', b'{"prompt": "bad \\x escape"}', b'{"a": "\\ud800\\u12"}']
)
def test_invalid_json_strings_on_hook_stdin_are_logged(tmp_path: Path, raw: bytes) -> None:
    repo = make_repo(tmp_path)
    proc = run_hook("UserPromptSubmit", None, repo, hook_env(), raw=raw)
    assert proc.returncode == 0 and proc.stdout == b""
    log = (repo / ".ccmemory" / "local" / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert "stdin is not JSON (DecodeError" in log and "SystemError" not in log


def test_worker_leftover_tmp_files_are_swept(tmp_path: Path) -> None:
    from ccmemory.features.capture import jobs
    from ccmemory.features.capture.paths import LocalPaths

    repo = make_repo(tmp_path)
    paths = LocalPaths(repo)
    for folder in (paths.pending, paths.done, paths.dead):
        folder.mkdir(parents=True, exist_ok=True)
    stale = paths.pending / ".s-000000000001.json.4242.123.tmp"
    stale_done = paths.done / ".s-000000000002.json.4242.456.tmp"
    fresh = paths.pending / f".s-000000000003.json.{os.getpid()}.789.tmp"
    for p in (stale, stale_done, fresh):
        p.write_text("{")
    old = time.time() - jobs.STALE_TMP_SECONDS - 60
    for p in (stale, stale_done):
        os.utime(p, (old, old))
    (paths.pending / "s-000000000004.json").write_text("{}")
    jobs._swept = False
    assert [p.name for p in jobs.pending(paths)] == ["s-000000000004.json"]
    assert not stale.exists() and not stale_done.exists() and fresh.exists()


# --- init, worktree, --at (3) -------------------------------------------------------------------


def test_init_refuses_a_bare_repository_and_a_git_dir(tmp_path: Path, run_cli: RunCli) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    before = sorted(p.name for p in bare.iterdir())
    proc = run_cli(bare, "init", check=False)
    assert proc.returncode == 1 and "bare git repository" in proc.stderr
    assert sorted(p.name for p in bare.iterdir()) == before
    normal = init_git(tmp_path / "normal")
    proc = run_cli(normal / ".git", "init", check=False)
    assert proc.returncode == 1 and "inside a .git folder" in proc.stderr
    assert not (normal / ".git" / ".ccmemory").exists()


def test_branch_is_captured_in_a_git_worktree(tmp_path: Path) -> None:
    from ccmemory.features.capture.worker import git_branch

    main = init_git(tmp_path / "main")
    (main / "f").write_text("x")
    subprocess.run(["git", "-C", str(main), "add", "f"], check=True)
    subprocess.run(["git", "-C", str(main), "commit", "-qm", "x"], check=True)
    wt = tmp_path / "wt"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", "-b", "feature/x", str(wt)], check=True)
    assert (wt / ".git").is_file()
    assert git_branch(wt) == "feature/x"
    assert git_branch(main) in ("main", "master")


@pytest.mark.parametrize(
    ("rev", "expect"),
    [
        ("", "needs a revision"),
        ("main..HEAD", "not a range"),
        ("--all", "not a revision"),
        ("nosuch", "no such revision"),
    ],
)
@pytest.mark.parametrize("command", ["search", "show"])
def test_at_gives_clear_errors(repo: Path, run_cli: RunCli, rev: str, expect: str, command: str) -> None:
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "init"], check=True)
    proc = run_cli(repo, command, "x", "--at", rev, check=False)
    assert proc.returncode == 1 and expect in proc.stderr and "fatal:" not in proc.stderr, proc.stderr


def test_hooks_never_write_through_a_symlinked_local(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".ccmemory" / "local").symlink_to(elsewhere, target_is_directory=True)
    for event, extra in (
        ("UserPromptSubmit", {"prompt": "hello"}),
        ("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {}}),
        ("SessionStart", {"source": "startup"}),
    ):
        payload = {"session_id": "s-1", "cwd": str(repo), "hook_event_name": event, **extra}
        proc = run_hook(event, payload, repo, hook_env())
        assert proc.returncode == 0
    assert list(elsewhere.iterdir()) == []
