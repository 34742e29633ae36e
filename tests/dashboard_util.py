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

from ccmemory.core import telemetry
from ccmemory.core.model import Relation
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


COOKIE_RULE = {"rule_broken": "tokens live in httpOnly cookies"}
# a table, one memory a row: kept as it is by the formatter
# fmt: off
#: (key, type, title, days ago, other fields) of the memories committed on main, oldest relations
#: first: `supersedes` and `depends_on` name keys written before.
ON_MAIN: list[tuple[str, str, str, float, dict[str, Any]]] = [
    ("db", "decision", "Use PostgreSQL for the orders service", 40, {"topics": ["database"], "session": "s-old"}),
    ("db2", "decision", "Use PostgreSQL 16 with logical replication", 20,
     {"topics": ["database"], "supersedes": "db"}),
    ("db3", "decision", "Use PostgreSQL 17 managed by the platform team", 10,
     {"topics": ["database"], "supersedes": "db2"}),
    ("auth", "decision", "Tokens live in httpOnly cookies", 31,
     {"topics": ["auth"], "session": "s-old", "depends_on": "db"}),
    ("ex1", "exception", "Batch exports may bypass the cookie rule", 5, {"topics": ["auth"], "fields": COOKIE_RULE}),
    ("ex2", "exception", "The CLI may keep a token file", 4, {"topics": ["auth"], "fields": COOKIE_RULE}),
    ("c1", "correction", "pytest needs -p no:cacheprovider here", 3,
     {"topics": ["testing"],
      "fields": {"wrong_belief": "plain pytest works", "right_belief": "use -p no:cacheprovider"}}),
    ("c2", "correction", "The test runner is not tox", 2,
     {"topics": ["testing"],
      "fields": {"wrong_belief": "tox runs the tests", "right_belief": "scripts/test runs them"}}),
    ("p1", "preference", "Prefer small pull requests", 3, {"topics": ["process"]}),
    ("p2", "preference", "Prefer type hints everywhere", 2, {"topics": ["style"]}),
    ("p3", "preference", "Run the tests with scripts/test, never with tox", 1,
     {"topics": ["testing"], "body": "The test runner is not tox: scripts/test runs the tests."}),
    ("q", "question", "Should we shard the orders table?", 2, {"topics": ["database"]}),
    ("hostile", "insight", HOSTILE_TITLE, 1, {"body": HOSTILE_BODY, "topics": ["security"]}),
    ("lowconf", "fact", "Maybe the cache TTL is 60 seconds", 1,
     {"topics": ["cache"], "confidence": 0.4, "source": "llm", "session": "s-new"}),
]
#: ... and on the branch `feature`; `dup` repeats a curated title: `check --base main` calls it a
#: duplicate.
ON_FEATURE: list[tuple[str, str, str, float, dict[str, Any]]] = [
    ("feat", "decision", "Cache invalidation uses the cassowary pattern", 0.5,
     {"topics": ["cache"], "source": "llm", "session": "s-new"}),
    ("dup", "decision", "Tokens live in httpOnly cookies!", 0.4,
     {"topics": ["auth"], "source": "explicit", "session": "s-new"}),
]
# fmt: on


def build_project(root: Path) -> Project:
    from ccmemory.app.vaultinit import init_vault

    init_git(root)
    init_vault(root)
    p = Project(root)
    now = datetime.now(UTC).replace(microsecond=0)

    def add(key: str, mtype: str, title: str, days_ago: float, **kw: Any) -> None:
        kw.setdefault("created", now - timedelta(days=days_ago))
        kw.setdefault("body", f"{title}. Written down for the {key} case.")
        if "supersedes" in kw:  # keys of memories written before
            kw["supersedes"] = [p.ids[kw["supersedes"]]]
        if "depends_on" in kw:
            kw["relations"] = [Relation("DEPENDS_ON", p.ids[kw.pop("depends_on")])]
        mid, rel = add_memory(root, title, mtype, **kw)
        p.ids[key], p.paths[key] = mid, rel

    for key, mtype, title, days_ago, kw in ON_MAIN:
        add(key, mtype, title, days_ago, **kw)
    commit_all(root, "memories on main")
    git(root, "checkout", "-q", "-b", "feature")
    for key, mtype, title, days_ago, kw in ON_FEATURE:
        add(key, mtype, title, days_ago, **kw)
    commit_all(root, "feature memories")
    # telemetry: the session-start hook's log and an MCP retrieval, as the real emitters write them
    local = root / ".ccmemory" / "local"
    from ccmemory.core import spool

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
    # recall (issue 27) injected the auth decision for a prompt, then Claude fetched it in full
    telemetry.emit(local, "recalled", [p.ids["auth"]], session="s-recall", source="prompt")
    telemetry.emit(local, "injected", (), session="s-recall", count=42, source="prompt")
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
        from ccmemory.app.service import Service
        from ccmemory.core.vault import Vault
        from ccmemory.surfaces.dashboard.data import Dash
        from ccmemory.surfaces.dashboard.server import Server

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
