"""Pytest plugin: a real Neo4j 5.26 server for tests marked ``neo4j``.

Register it in ``tests/conftest.py`` with ``pytest_plugins = ["tests.neo4j_server"]``.

The session-scoped fixture ``neo4j_server`` gives ``uri``, ``user`` and ``password`` of either

* the server named by ``CCMEMORY_TEST_NEO4J_URI`` (with ``CCMEMORY_TEST_NEO4J_USER``, default
  ``neo4j``, and ``CCMEMORY_TEST_NEO4J_PASSWORD``, default ``ccmemory-test``), left running; or
* the throw-away server of ``scripts/neo4j-dev start`` (Neo4j Community from Maven Central on
  Java 17), stopped at the end of the session if this session started it.

With ``CI=true`` a missing Java or Maven, or a server that does not start, fails the tests that
need it; elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NEO4J_DEV = ROOT / "scripts" / "neo4j-dev"


@dataclass(frozen=True)
class Neo4jServer:
    uri: str
    user: str
    password: str
    version: str = ""
    started_here: bool = False

    @property
    def auth(self) -> tuple[str, str]:
        return (self.user, self.password)

    def wipe(self) -> None:
        """Delete every node, index and constraint of the default database."""
        from neo4j import GraphDatabase

        with GraphDatabase.driver(self.uri, auth=self.auth) as driver:
            driver.execute_query("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS")
            for kind in ("CONSTRAINTS", "INDEXES"):
                records, _, _ = driver.execute_query(f"SHOW {kind} YIELD name, type")
                for rec in records:
                    if kind == "INDEXES" and rec["type"] == "LOOKUP":
                        continue
                    word = "CONSTRAINT" if kind == "CONSTRAINTS" else "INDEX"
                    # Names come from the server's own catalogue, quoted as identifiers.
                    name = rec["name"].replace("`", "``")
                    driver.execute_query(f"DROP {word} `{name}` IF EXISTS")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


def _unavailable(reason: str) -> None:
    message = f"Neo4j test server unavailable: {reason}"
    if in_ci():
        pytest.fail(message + "\n(CI=true: neo4j tests must run, not skip)", pytrace=False)
    pytest.skip(message)


def _start() -> Neo4jServer:
    try:
        proc = subprocess.run(
            [sys.executable, str(NEO4J_DEV), "start", "--json"],
            capture_output=True,
            text=True,
            timeout=float(os.environ.get("CCMEMORY_NEO4J_DEV_TIMEOUT", "180")) + 600,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        _unavailable(f"`scripts/neo4j-dev start` did not run: {exc}")
        raise AssertionError("unreachable") from exc
    if proc.returncode != 0:
        _unavailable(f"`scripts/neo4j-dev start` exited {proc.returncode}:\n{proc.stderr.strip()[-4000:]}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    return Neo4jServer(
        uri=info["uri"],
        user=info["user"],
        password=info["password"],
        version=info.get("version", ""),
        started_here=not info["reused"],
    )


@pytest.fixture(scope="session")
def neo4j_server() -> Iterator[Neo4jServer]:
    uri = os.environ.get("CCMEMORY_TEST_NEO4J_URI")
    if uri:
        yield Neo4jServer(
            uri=uri,
            user=os.environ.get("CCMEMORY_TEST_NEO4J_USER", "neo4j"),
            password=os.environ.get("CCMEMORY_TEST_NEO4J_PASSWORD", "ccmemory-test"),
        )
        return
    server = _start()
    try:
        yield server
    finally:
        if server.started_here:
            subprocess.run([sys.executable, str(NEO4J_DEV), "stop"], capture_output=True, timeout=300)
