"""`ccmemory search` through the warm process (issue 29): with a real `ccmemory mcp` serving the
repository's recall socket, the CLI's answer is the one it computes itself, byte for byte, under
every filter; without a server, an old one or a broken one, it searches itself."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ccmemory.features.recall import warm
from ccmemory.index.base import Filters
from tests.capture_helpers import hook_env

WARM = "answered by the warm process"


def _run(repo: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "ccmemory", *args],
        cwd=repo,
        env=hook_env(**env),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def _new(repo: Path, *args: str) -> str:
    return str(json.loads(_run(repo, "new", *args, "--json").stdout)["id"])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Memories dated 2001-2003 (their recency weight is then constant to the last bit, so two
    searches a second apart score alike), a supersession, relations, shared topics, files, and
    committed (curated) and uncommitted (developmental) memories."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "dev@example.com"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    subprocess.run(["git", "config", "user.name", "Dev"], cwd=repo, check=True)
    _run(repo, "init", "--no-git-hooks")
    old = _new(repo, "decision", "Database migrations take a global lock", "-t", "db", "-b", "One at a time.")
    lock = _new(
        repo,
        "decision",
        "Postgres advisory locks serialise database migrations",
        "-t",
        "db",
        "-t",
        "deploy",
        "-s",
        old,
        "-f",
        "db/migrate.py",
        "-b",
        "Two deploys ran migrations at once and corrupted the schema; pg_advisory_lock fixes it.",
    )
    _new(
        repo,
        "gotcha",
        "The ERP gateway drops invoice batches above 500 documents",
        "-t",
        "invoicing",
        "-f",
        "services/invoicing/",
        "-b",
        "Split the nightly export into batches of at most 500 invoices.",
    )
    _new(
        repo,
        "pattern",
        "Every deploy script waits for the migration lock",
        "-t",
        "deploy",
        "-r",
        f"DEPENDS_ON:{lock}:needs the lock",
        "-b",
        "The deploy blocks until the advisory lock is free.",
    )
    _new(repo, "fact", "The staging cluster has three nodes", "-t", "infra", "-b", "Sized for load tests.")
    _new(repo, "failed_approach", "Table locks for schema changes", "-t", "db", "-b", "Blocked all writes.")
    _backdate(repo)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "memories"], cwd=repo, check=True)
    _new(repo, "question", "Should migrations run before the deploy?", "-t", "deploy", "-b", "Not decided.")
    _backdate(repo)
    _run(repo, "reindex")
    return repo


def _backdate(repo: Path) -> None:
    """Every memory created in 2001-2003 (its recency weight is 0.8 to the last bit)."""
    for i, path in enumerate(sorted((repo / ".ccmemory").rglob("*.md"))):
        text = path.read_text(encoding="utf-8")
        if path.name == "README.md" or re.search(r"(?m)^created: 200[1-3]-", text):
            continue
        when = f"200{1 + i % 3}-0{1 + i % 9}-1{i % 10}T08:00:00Z"
        path.write_text(re.sub(r"(?m)^created: .*$", f"created: {when}", text), encoding="utf-8")


SEARCHES = [
    ["database migration lock"],
    ["database migration lock", "--explain"],
    ["stop two deploys from changing the schema together", "--mode", "semantic"],
    ["migrations", "--type", "decision", "--type", "pattern"],
    ["locks", "--topic", "db", "--include-superseded"],
    ["deploy", "--file", "db/", "--limit", "2"],
    ["deploy", "--status", "developmental"],
    ["migration", "--since", "2002-01-01", "--until", "2003-12-31T00:00:00Z"],
    ["invoice batches", "--literal-time"],
    ["lock", "--mode", "text"],
]


def _wait_for_server(repo: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if warm.ask(str(repo), {"op": "files", "paths": ["db/migrate.py"], "limit": 3}, 5) is not None:
            return
        time.sleep(0.3)
    raise AssertionError("the MCP server did not serve the recall socket")


@pytest.mark.slow
def test_cli_search_answered_by_a_running_mcp_server_is_the_in_process_answer(repo: Path) -> None:
    from tests._mcp_client import SyncClient

    cold = {args[0] + " ".join(args[1:]): _search(repo, args, "0") for args in SEARCHES}
    client = SyncClient.stdio(repo, env=hook_env())
    try:
        _wait_for_server(repo)
        sock = Path(warm.socket_path(str(repo)))
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600
        for args in SEARCHES:
            key = args[0] + " ".join(args[1:])
            hot = _search(repo, args, "1")
            again = _search(repo, args, "0")  # the server's presence changes nothing in process
            assert hot[0] == again[0] == cold[key][0], args
            explained = _run(repo, "search", *args, "--explain").stderr
            if "--mode" in args and "text" in args:
                assert "searched in this process" in explained
            else:
                assert WARM in explained, (args, explained)
        # a memory recorded by another process after the server started: the server scans for
        # missing vectors as a fresh process would, so the paraphrase finds it in both
        _new(repo, "insight", "Zero-downtime schema changes need expand and contract", "-b", "Two steps.")
        _backdate(repo)
        _run(repo, "reindex", "--no-embed")
        args = ["evolving tables without an outage", "--mode", "semantic"]
        hot, again = _search(repo, args, "1"), _search(repo, args, "0")
        assert hot[0] == again[0] and "expand and contract" in hot[0]
    finally:
        client.close()
    assert not Path(warm.socket_path(str(repo))).exists()  # the server took its socket away
    stopped = _run(repo, "search", "database migration lock", "--explain")
    assert "searched in this process: no warm process" in stopped.stderr
    assert "Postgres advisory locks serialise database migrations" in stopped.stdout


def _search(repo: Path, args: list[str], warm_on: str) -> tuple[str, str]:
    """(--json output, text output) of one search, with the warm path on or off."""
    as_json = _run(repo, "search", *args, "--json", CCMEMORY_SEARCH_WARM=warm_on).stdout
    text = _run(repo, "search", *args, CCMEMORY_SEARCH_WARM=warm_on).stdout
    return as_json, text


def test_the_cli_falls_back_when_the_server_is_old_broken_silent_or_on_another_index(
    repo: Path, tmp_path: Path
) -> None:
    """Whatever the socket does, the CLI answers by searching itself (silently; --explain says
    why), and never waits longer than its timeout."""
    import socket
    import threading

    expected = _run(repo, "search", "database migration lock", "--mode", "hybrid").stdout
    path = warm.socket_path(str(repo))
    answers = {
        "old": b'{"error": "unknown request \'search\'"}\n',
        "garbage": b"not json at all\n",
        "wrong": b'{"mode": "hybrid", "hits": [{"memory": {"nope": 1}}], "notices": [], "vectors_pending": 0}\n',
    }
    for name, reply in answers.items():
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(4)

        def serve(srv: socket.socket = server, out: bytes = reply) -> None:
            with srv:
                while True:
                    try:
                        conn, _ = srv.accept()
                    except OSError:
                        return
                    with conn:
                        conn.recv(1 << 16)
                        conn.sendall(out)

        t = threading.Thread(target=serve, daemon=True)
        t.start()
        try:
            quiet = _run(repo, "search", "database migration lock")
            assert quiet.stdout == expected and quiet.stderr == "", name
            loud = _run(repo, "search", "database migration lock", "--explain").stderr
            assert "searched in this process: the warm process" in loud, (name, loud)
        finally:
            server.close()
            os.unlink(path)
    # a server that accepts and never answers: the client gives up after its timeout
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(path)
    silent.listen(4)
    try:
        f = Filters(project="p")
        started = time.monotonic()
        resp, why = warm.search(str(repo), "q", f, limit=3, mode="hybrid", index="x", timeout=0.5)
        assert resp is None and "did not answer" in why and time.monotonic() - started < 2
    finally:
        silent.close()
        os.unlink(path)


def test_the_server_side_checks_the_request(repo: Path) -> None:
    """Only data on the wire: filters are rebuilt field by field (no code, no query syntax),
    a request for another project or index, a bad mode, limit or filter is refused."""
    from ccmemory.app.service import Service

    with Service.open(repo) as svc:
        f = svc.filters(types=["decision"], since=None)
        good = {
            "op": "search",
            "query": "lock",
            "mode": "text",
            "limit": 3,
            "filters": warm.filters_to_wire(f),
            "index": svc.index.location,
        }
        reply = warm.answer(svc, good)
        assert [h["memory"]["type"] for h in reply["hits"]] == ["decision"]
        assert warm.response_from_wire(json.loads(json.dumps(reply))).hits[0].memory.type == "decision"
        bad = [
            {"mode": "code"},
            {"limit": 0},
            {"limit": True},
            {"limit": 501},
            {"query": ["lock"]},
            {"index": "/elsewhere/index.db"},
            {"filters": {**warm.filters_to_wire(f), "project": "other"}},
            {"filters": {**warm.filters_to_wire(f), "types": "decision"}},
            {"filters": {**warm.filters_to_wire(f), "since": "last week"}},
            {"filters": {**warm.filters_to_wire(f), "where": "1=1"}},
            {"filters": {**warm.filters_to_wire(f), "include_superseded": "yes"}},
        ]
        for change in bad:
            assert "error" in warm.answer(svc, {**good, **change}), change
    round_trip = Filters(
        project="p",
        types=["decision"],
        status="curated",
        viewer="me",
        since=datetime(2002, 1, 1, tzinfo=UTC),
        topics=["db"],
        files=["db/"],
        include_superseded=True,
        ids=["a"],
    )
    assert warm.filters_from_wire(json.loads(json.dumps(warm.filters_to_wire(round_trip)))) == round_trip
