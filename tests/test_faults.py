"""Faults (issue 32): a full disk, a locked or truncated index, git's index.lock held, the MCP
server killed mid-write. Nothing lost, a clear message (no traceback) each time.

"Disk full" is a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) on the child process: every write
past the limit fails with an OSError, as on a full disk, without needing a small filesystem (or
root, which ignores read-only permissions)."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT, RunCli, cli_env, git


def _full_disk(limit: int = 200) -> None:  # preexec_fn of the child
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _run(cwd: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ccmemory", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
        preexec_fn=(lambda: _full_disk(limit)) if limit else None,
    )


def _files(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in (repo / ".ccmemory").rglob("*")
        if p.is_file() and "local" not in p.relative_to(repo).parts
    }


def _seed(repo: Path, run_cli: RunCli) -> list[str]:
    ids = [
        json.loads(
            run_cli(repo, "new", "fact", f"Otter holt number {i}", "--body", f"holt {i}", "--json").stdout
        )["id"]
        for i in range(3)
    ]
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "seed")
    return ids


def test_a_full_disk_during_new_and_reindex_loses_nothing(repo: Path, run_cli: RunCli) -> None:
    ids = _seed(repo, run_cli)
    before = _files(repo)
    new = _run(repo, "new", "fact", "A fact too big for the disk", "--body", "x" * 5000, limit=1000)
    assert new.returncode == 1 and "Traceback" not in new.stderr
    assert "File too large" in new.stderr and "none is half-written" in new.stderr
    assert _files(repo) == before  # no partial file, no temporary file left behind
    full = _run(repo, "reindex", "--full", limit=1000)
    assert full.returncode != 0 and "Traceback" not in full.stderr and full.stderr.strip()
    assert _files(repo) == before
    # with space again, everything comes back from the files
    run_cli(repo, "reindex", "--full")
    hits = json.loads(run_cli(repo, "search", "otter holt", "--json", "--limit", "10").stdout)
    assert {h["id"] for h in hits} == set(ids)


def test_a_locked_index_is_a_clear_message(repo: Path, run_cli: RunCli) -> None:
    _seed(repo, run_cli)
    db = sqlite3.connect(repo / ".ccmemory" / "local" / "index.db", timeout=0)
    try:
        db.execute("BEGIN EXCLUSIVE")
        proc = _run(repo, "new", "fact", "Written while the index is locked")
        assert "Traceback" not in proc.stderr
        if proc.returncode == 0:  # the file is the source of truth: written, the index catches up
            assert (repo / proc.stdout.strip()).is_file()
        else:
            assert "locked" in proc.stderr
    finally:
        db.rollback()
        db.close()
    run_cli(repo, "reindex")
    titles = [h["title"] for h in json.loads(run_cli(repo, "search", "locked index", "--json").stdout)]
    assert ("Written while the index is locked" in titles) == (proc.returncode == 0)


def test_a_truncated_index_is_rebuilt_from_the_files(repo: Path, run_cli: RunCli) -> None:
    ids = _seed(repo, run_cli)
    db = repo / ".ccmemory" / "local" / "index.db"
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    proc = _run(repo, "search", "otter holt", "--json")
    assert "Traceback" not in proc.stderr
    if proc.returncode != 0:
        assert "reindex" in proc.stderr
        run_cli(repo, "reindex", "--full")
    hits = json.loads(run_cli(repo, "search", "otter holt", "--json", "--limit", "10").stdout)
    assert {h["id"] for h in hits} == set(ids)


def test_git_index_lock_held_does_not_stop_promote_or_reindex(repo: Path, run_cli: RunCli) -> None:
    """Another git command holds .git/index.lock (an editor's git, a hung commit): promote works
    with plumbing (never the index or the working tree), reindex reads trees, nothing is touched."""
    _seed(repo, run_cli)
    git(repo, "checkout", "-q", "-b", "feature")
    made = json.loads(run_cli(repo, "new", "decision", "Otters get a ramp", "--json").stdout)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ramp")
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    try:
        proc = _run(repo, "promote", "--json")
        assert proc.returncode == 0, proc.stderr
        reindex = _run(repo, "reindex", "--json")
        assert reindex.returncode == 0, reindex.stderr
        assert lock.read_text() == ""  # the other command's lock is left alone
    finally:
        lock.unlink()
    assert git(repo, "branch", "--show-current").strip() == "feature"
    hits = json.loads(run_cli(repo, "search", "otters ramp", "--json").stdout)
    assert hits[0]["id"] == made["id"] and hits[0]["status"] == "curated"


def test_the_mcp_server_killed_mid_write_leaves_whole_files_only(repo: Path) -> None:
    """Kill -9 the server while it records in a loop: every memory file that exists parses, and
    no temporary file is taken for a memory by the next reindex."""
    from ccmemory.core.vault import Vault

    script = (
        "import sys; sys.path.insert(0, sys.argv[2])\n"
        "from ccmemory.app.service import Service\n"
        "from ccmemory.core.vault import Vault\n"
        "from ccmemory.surfaces.mcp.tools import record\n"
        "with Service(Vault(__import__('pathlib').Path(sys.argv[1]))) as svc:\n"
        "    for i in range(10000):\n"
        "        record.record(svc, 'fact', title=f'Otter census entry {i}', body='count ' * 400)\n"
        "        print(i, flush=True)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(repo), str(REPO_ROOT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert proc.stdout is not None
    for _ in range(5):  # a few records done, then killed in the middle of the next ones
        proc.stdout.readline()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    vault = Vault(repo)
    written = sorted((repo / ".ccmemory" / "facts").glob("*.md"))
    assert len(written) >= 5 and sorted(vault.iter_paths()) == written  # a leftover .tmp is no memory
    for path in written:
        assert vault.read(path).title.startswith("Otter census entry")  # whole, parseable files only
    report = json.loads(_run(repo, "reindex", "--json").stdout)
    assert report["errors"] == [] and report["added"] + report["unchanged"] >= 5


def _server_pid(repo: Path) -> int:
    """The `ccmemory mcp` process serving ``repo`` (the MCP client does not say its child's pid)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if b"ccmemory" in cmd and b"mcp" in cmd and cwd == str(repo):
            return int(entry.name)
    raise AssertionError("no ccmemory mcp process found")


def test_the_real_mcp_server_killed_mid_record_leaves_whole_files_only(repo: Path) -> None:
    """The same through the real MCP client over stdio: records in flight when the server gets
    SIGKILL; whatever was written is whole, and the next reindex takes it without error."""
    import contextlib
    import threading
    import time

    from ccmemory.core.vault import Vault
    from tests._mcp_client import SyncClient

    client = SyncClient.stdio(repo, env={"CCMEMORY_MCP_REFRESH_SECONDS": "0"})
    try:
        for i in range(5):
            client.call("record_fact", {"title": f"Heron count {i}", "body": "heron " * 300})
        pid = _server_pid(repo)

        def more() -> None:
            with contextlib.suppress(BaseException):  # the server dies under these calls
                for i in range(5, 200):
                    client.call_raw("record_fact", {"title": f"Heron count {i}", "body": "heron " * 300})

        worker = threading.Thread(target=more, daemon=True)
        worker.start()
        deadline = time.monotonic() + 30
        while len(list((repo / ".ccmemory" / "facts").glob("*.md"))) < 8:
            assert time.monotonic() < deadline, "the server stopped writing"
            time.sleep(0.01)
        os.kill(pid, signal.SIGKILL)
        worker.join(timeout=30)
    finally:
        with contextlib.suppress(BaseException):
            client.close()
    vault = Vault(repo)
    written = sorted((repo / ".ccmemory" / "facts").glob("*.md"))
    assert len(written) >= 8 and sorted(vault.iter_paths()) == written
    for path in written:
        assert vault.read(path).title.startswith("Heron count")
    report = json.loads(_run(repo, "reindex", "--json").stdout)
    assert report["errors"] == [] and report["added"] + report["unchanged"] >= 8
