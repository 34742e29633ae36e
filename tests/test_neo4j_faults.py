"""Neo4j killed in the middle of `ccmemory reindex --full` (issue 32): one clear message, the
memory files untouched, and the next `reindex` fills the index again once a server is back.

The test starts a server of its own (`scripts/neo4j-dev` with a separate state folder and a fixed
port), so killing it never disturbs the session's shared test server."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, cli_env
from tests.neo4j_server import _unavailable

pytestmark = pytest.mark.neo4j
N = 3000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Dedicated:
    def __init__(self, state: Path):
        self.env = {
            **os.environ,
            "CCMEMORY_NEO4J_DEV_STATE": str(state),
            "CCMEMORY_NEO4J_DEV_PORT": str(_free_port()),
        }
        self.state = state

    def dev(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(REPO_ROOT / "scripts" / "neo4j-dev"), *args],
            capture_output=True, text=True, env=self.env, timeout=900,
        )  # fmt: skip

    def start(self) -> dict[str, str]:
        proc = self.dev("start", "--json")
        if proc.returncode != 0:
            _unavailable(f"a dedicated Neo4j did not start: {proc.stderr.strip()[-2000:]}")
        info: dict[str, str] = json.loads(proc.stdout.strip().splitlines()[-1])
        return info

    def pid(self) -> int:
        return int(json.loads((self.state / "server.json").read_text())["pid"])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Dedicated]:
    d = Dedicated(tmp_path / "neo4j-state")
    try:
        yield d
    finally:
        d.dev("stop")


def _digest(repo: Path) -> str:
    h = hashlib.sha256()
    for p in sorted((repo / ".ccmemory").rglob("*")):
        if p.is_file() and "local" not in p.relative_to(repo).parts:
            h.update(str(p.relative_to(repo)).encode() + p.read_bytes())
    return h.hexdigest()


def _count(info: dict[str, str], project: str) -> int:
    from neo4j import GraphDatabase

    with GraphDatabase.driver(info["uri"], auth=(info["user"], info["password"])) as driver:
        records, _, _ = driver.execute_query("MATCH (m:Memory {project: $p}) RETURN count(m) AS n", p=project)
        return int(records[0]["n"])


def test_neo4j_killed_mid_reindex_is_one_message_and_the_next_reindex_recovers(
    repo: Path, server: Dedicated
) -> None:
    from ccmemory.core.vault import Vault
    from tests.conftest import git, make_memory

    info = server.start()
    vault = Vault(repo)
    for i in range(N):
        vault.write_new(
            make_memory("fact", f"Otter census entry {i}", body=f"holt {i} " * 20, topics=[f"t{i % 9}"])
        )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "seed")
    env = cli_env(
        {
            "CCMEMORY_BACKEND": "neo4j",
            "CCMEMORY_NEO4J_URI": info["uri"],
            "CCMEMORY_NEO4J_PASSWORD": info["password"],
            "CCMEMORY_PROJECT": "otters",
        }
    )

    def ccm(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "ccmemory", *args], cwd=repo, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    first = ccm("reindex", "--full", "--no-embed")
    assert first.wait(timeout=600) == 0, first.communicate()
    assert _count(info, "otters") == N
    before = _digest(repo)
    again = ccm("reindex", "--full", "--no-embed")
    deadline = time.monotonic() + 120
    while _count(info, "otters") == N and again.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # wait until the clear-and-refill has begun
    assert again.poll() is None, "the reindex ended before the server could be killed"
    os.kill(server.pid(), signal.SIGKILL)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 1, (out, err)
    assert "Traceback" not in err
    assert "server unreachable or connection lost" in err and "Memory files are untouched" in err, err
    assert _digest(repo) == before
    # a server again (same port, empty: a rebuilt one), the next plain reindex fills it
    server.dev("stop")
    info = server.start()
    nxt = ccm("reindex", "--no-embed", "--json")
    out, err = nxt.communicate(timeout=600)
    assert nxt.returncode == 0, err
    assert _count(info, "otters") == N
    found = ccm("search", "otter census entry 1234", "--json", "--mode", "text", "--limit", "1")
    out, _ = found.communicate(timeout=300)
    assert json.loads(out)[0]["title"] == "Otter census entry 1234"
    assert _digest(repo) == before
