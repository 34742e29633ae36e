"""A real project for the dashboard tests: git repo, memories on main and on a feature branch,
hostile text, telemetry events, and the dashboard served by uvicorn on 127.0.0.1 in a thread."""

from __future__ import annotations

import http.client
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ccmemory import telemetry
from ccmemory.model import Relation
from tests.conftest import git, init_git
from tests.lifecycle_util import add_memory, commit_all

HOSTILE_TITLE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
HOSTILE_BODY = (
    "Click [me](javascript:window.__pwned=3) or <script>window.__pwned=4</script>\n\n"
    '<img src=x onerror="window.__pwned=5"> and [ok](https://example.com)'
)


@dataclass
class Project:
    root: Path
    ids: dict[str, str] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)


def build_project(root: Path) -> Project:
    from ccmemory.cli.cmd_core import init_vault

    init_git(root)
    init_vault(root)
    p = Project(root)
    now = datetime.now(UTC).replace(microsecond=0)

    def add(key: str, title: str, mtype: str = "decision", days_ago: float = 1, **kw: Any) -> None:
        kw.setdefault("created", now - timedelta(days=days_ago))
        kw.setdefault("body", f"{title}. Written down for the {key} case.")
        mid, rel = add_memory(root, title, mtype, **kw)
        p.ids[key], p.paths[key] = mid, rel

    add("db", "Use PostgreSQL for the orders service", topics=["database"], days_ago=40, session="s-old")
    add(
        "db2",
        "Use PostgreSQL 16 with logical replication",
        topics=["database"],
        days_ago=20,
        supersedes=[p.ids["db"]],
    )
    add(
        "db3",
        "Use PostgreSQL 17 managed by the platform team",
        topics=["database"],
        days_ago=10,
        supersedes=[p.ids["db2"]],
    )
    add(
        "auth",
        "Tokens live in httpOnly cookies",
        topics=["auth"],
        days_ago=31,
        session="s-old",
        relations=[Relation("DEPENDS_ON", p.ids["db"])],
    )
    add(
        "ex1",
        "Batch exports may bypass the cookie rule",
        "exception",
        topics=["auth"],
        days_ago=5,
        fields={"rule_broken": "tokens live in httpOnly cookies"},
    )
    add(
        "ex2",
        "The CLI may keep a token file",
        "exception",
        topics=["auth"],
        days_ago=4,
        fields={"rule_broken": "tokens live in httpOnly cookies"},
    )
    add(
        "c1",
        "pytest needs -p no:cacheprovider here",
        "correction",
        topics=["testing"],
        days_ago=3,
        fields={"wrong_belief": "plain pytest works", "right_belief": "use -p no:cacheprovider"},
    )
    add(
        "c2",
        "The test runner is not tox",
        "correction",
        topics=["testing"],
        days_ago=2,
        fields={"wrong_belief": "tox runs the tests", "right_belief": "scripts/test runs them"},
    )
    add("p1", "Prefer small pull requests", "preference", topics=["process"], days_ago=3)
    add("p2", "Prefer type hints everywhere", "preference", topics=["style"], days_ago=2)
    add(
        "p3",
        "Run the tests with scripts/test, never with tox",
        "preference",
        topics=["testing"],
        days_ago=1,
        body="The test runner is not tox: scripts/test runs the tests.",
    )
    add("q", "Should we shard the orders table?", "question", topics=["database"], days_ago=2)
    add("hostile", HOSTILE_TITLE, "insight", body=HOSTILE_BODY, topics=["security"], days_ago=1)
    add(
        "lowconf",
        "Maybe the cache TTL is 60 seconds",
        "fact",
        topics=["cache"],
        days_ago=1,
        confidence=0.4,
        source="llm",
        session="s-new",
    )
    commit_all(root, "memories on main")
    git(root, "checkout", "-q", "-b", "feature")
    add(
        "feat",
        "Cache invalidation uses the cassowary pattern",
        topics=["cache"],
        days_ago=0.5,
        source="llm",
        session="s-new",
    )
    # a new decision that repeats a curated title: `check --base main` calls it a duplicate
    add(
        "dup",
        "Tokens live in httpOnly cookies!",
        topics=["auth"],
        days_ago=0.4,
        source="explicit",
        session="s-new",
    )
    commit_all(root, "feature memories")
    # telemetry: the session-start hook's log and an MCP retrieval, as the real emitters write them
    local = root / ".ccmemory" / "local"
    from ccmemory.capture import spool

    spool.append(
        local / "surfaced.jsonl",
        {
            "ts": telemetry.now_iso(),
            "session": "s-new",
            "source": "startup",
            "ids": [p.ids["auth"], p.ids["db3"]],
            "chars": 300,
        },
        fsync=False,
    )
    telemetry.emit(local, "retrieved", [p.ids["auth"]], session="mcp-1")
    telemetry.emit(local, "searched", [p.ids["auth"], p.ids["c1"]], session="mcp-1")
    spool.append(
        local / "spool" / "s-new.jsonl",
        {"k": "tool", "ts": (now - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")},
    )
    spool.append(local / "spool" / "s-new.jsonl", {"k": "tool", "ts": now.strftime("%Y-%m-%dT%H:%M:%SZ")})
    return p


class Running:
    """The dashboard served in a background thread (real uvicorn, real socket)."""

    def __init__(self, root: Path):
        from ccmemory.dashboard.data import Dash
        from ccmemory.dashboard.server import Server
        from ccmemory.service import Service
        from ccmemory.vault import Vault

        self.dash = Dash(Service(Vault(root)), refresh_seconds=0.0)
        self.dash.refresh(force=True)
        self.server = Server(self.dash)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.uvicorn.started:
            if time.monotonic() > deadline:
                raise TimeoutError("dashboard did not start")
            time.sleep(0.05)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def request(
        self,
        method: str,
        path: str,
        *,
        host: str | None = None,
        headers: dict[str, str] | None = None,
        token: bool = True,
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        h = {"Host": host or f"127.0.0.1:{self.server.port}", **(headers or {})}
        if token:
            h["Cookie"] = f"ccm_dash_{self.server.port}={self.server.token}"
        conn.request(method, path, headers=h)
        r = conn.getresponse()
        body = r.read()
        conn.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body

    def close(self) -> None:
        self.server.stop()
        self.thread.join(timeout=10)
        self.dash.close()
