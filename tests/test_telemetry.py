"""The local telemetry store: append-only inboxes, ingest once, ids and counts only, retention, off."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ccmemory.core import spool, telemetry
from tests.conftest import make_memory


def store(tmp_path: Path, **kw: object) -> telemetry.Store:
    return telemetry.Store(tmp_path / "local", telemetry.TelemetryConfig(**kw))  # type: ignore[arg-type]


def test_inbox_lines_are_ingested_once_and_torn_tails_wait(tmp_path: Path) -> None:
    local = tmp_path / "local"
    telemetry.emit(local, "searched", ["a", "b"], session="s1")
    telemetry.emit(local, "retrieved", ["a"], session="s1")
    with (local / telemetry.INBOX).open("a") as fh:
        fh.write('{"ts": "2099-01-01T00:00:00Z", "k": "retr')  # a torn line (crash mid-write)
    st = store(tmp_path)
    assert st.ingest() == 3
    assert st.ingest() == 0  # offsets remembered: nothing twice
    with (local / telemetry.INBOX).open("a") as fh:
        fh.write('ieved", "ids": ["c"]}\n')
    assert st.ingest() == 1
    kinds = sorted((k, m) for _, k, _, m, _ in st.events())
    assert kinds == [("retrieved", "a"), ("retrieved", "c"), ("searched", "a"), ("searched", "b")]


def test_the_hooks_surfaced_log_is_read_and_a_search_with_no_hits_counts(tmp_path: Path) -> None:
    local = tmp_path / "local"
    spool.append(
        local / "surfaced.jsonl", {"ts": telemetry.now_iso(), "session": "s", "ids": ["x", "y"], "chars": 9}
    )
    telemetry.emit(local, "searched", [], session="s")
    st = store(tmp_path)
    st.ingest()
    rows = st.events()
    assert sorted((k, m, n) for _, k, _, m, n in rows) == [
        ("searched", None, 0),
        ("surfaced", "x", 1),
        ("surfaced", "y", 1),
    ]


def test_only_ids_and_counts_are_stored(tmp_path: Path) -> None:
    """The MCP search path records result ids, never the query text."""
    from ccmemory.app.service import Service
    from ccmemory.app.vaultinit import init_vault
    from ccmemory.core.vault import Vault
    from ccmemory.surfaces.mcp import ops
    from tests.conftest import init_git

    root = init_git(tmp_path / "repo")
    init_vault(root)
    m = make_memory("decision", "Use the pangolin queue", body="Secret-free body about pangolins.")
    Vault(root).write_new(m)
    with Service(Vault(root)) as svc:
        svc.reindex()
        out = ops.search(svc, "zebra pangolin marmot", mode="text", limit=5, offset=0)
        assert [r["id"] for r in out["results"]] == [m.id]
        ops.get_memory(svc, m.id)
    inbox = (root / ".ccmemory" / "local" / telemetry.INBOX).read_text()
    assert "pangolin" not in inbox and "zebra" not in inbox
    lines = [json.loads(line) for line in inbox.splitlines()]
    assert [(e["k"], e["ids"]) for e in lines] == [("searched", [m.id]), ("retrieved", [m.id])]
    assert set().union(*(e.keys() for e in lines)) <= {"ts", "k", "ids", "session", "n", "source"}
    st = telemetry.open_store(root / ".ccmemory", None)
    st.ingest()
    db = sqlite3.connect(root / ".ccmemory" / "local" / telemetry.DB)
    dump = "\n".join(db.iterdump())
    assert "pangolin" not in dump and "zebra" not in dump
    # never in git: .ccmemory/local is ignored
    import subprocess

    ignored = subprocess.run(
        ["git", "check-ignore", ".ccmemory/local/telemetry.db"], cwd=root, capture_output=True
    )
    assert ignored.returncode == 0


def test_retention_deletes_old_events(tmp_path: Path) -> None:
    local = tmp_path / "local"
    spool.append(local / telemetry.INBOX, {"ts": "2001-01-01T00:00:00Z", "k": "retrieved", "ids": ["old"]})
    telemetry.emit(local, "retrieved", ["new"])
    st = store(tmp_path, retention_days=30)
    st.ingest()
    assert [m for _, _, _, m, _ in st.events()] == ["new"]


def test_off_switch(tmp_path: Path) -> None:
    assert not telemetry.config_from({"telemetry": {"enabled": False}}).enabled
    assert not telemetry.config_from({}, env={"CCMEMORY_TELEMETRY": "0"}).enabled
    assert telemetry.config_from({"telemetry": {"retention_days": 7}}, env={}).retention_days == 7
    local = tmp_path / "local"
    telemetry.emit(local, "retrieved", ["a"])
    st = store(tmp_path, enabled=False)
    assert st.ingest() == 0 and st.events() == []
    st.add("promoted", ["a"])
    assert st.events() == []
    st.dismiss("finding:1")  # a user's choice is kept even with telemetry off
    assert st.dismissed() == {"finding:1"}


def test_off_switch_stops_mcp_emission(tmp_path: Path) -> None:
    from ccmemory.app.service import Service
    from ccmemory.app.vaultinit import init_vault
    from ccmemory.core.vault import Vault
    from ccmemory.surfaces.mcp import ops
    from tests.conftest import init_git

    root = init_git(tmp_path / "repo")
    init_vault(root)
    cfg = root / ".ccmemory" / "config.yaml"
    cfg.write_text(cfg.read_text() + "\ntelemetry:\n  enabled: false\n")
    m = make_memory("decision", "Use the okapi cache")
    Vault(root).write_new(m)
    with Service(Vault(root)) as svc:
        svc.reindex()
        ops.get_memory(svc, m.id)
    assert not (root / ".ccmemory" / "local" / telemetry.INBOX).exists()


def test_session_spans_come_from_the_spools(tmp_path: Path) -> None:
    local = tmp_path / "local"
    for ts in ("2026-11-20T10:00:00Z", "2026-11-20T10:30:00Z", "2026-11-20T11:30:00Z"):
        spool.append(local / "spool" / "abc.jsonl", {"k": "tool", "ts": ts})
    st = store(tmp_path)
    st.ingest()
    assert st.sessions() == [("abc", "2026-11-20T10:00:00Z", "2026-11-20T11:30:00Z")]


def test_the_real_session_start_hook_feeds_the_dashboard(tmp_path: Path) -> None:
    """The hook is unchanged: its surfaced.jsonl line becomes 'surfaced' events per memory."""
    from ccmemory.app.service import Service
    from ccmemory.core.vault import Vault
    from ccmemory.surfaces.dashboard.data import Dash
    from tests.capture_helpers import hook_env, run_hook
    from tests.dashboard_util import build_project
    from tests.lifecycle_util import reindex

    project = build_project(tmp_path / "repo")
    reindex(project.root)  # the hook reads the index (capture.store), as after any ccmemory command
    payload = {
        "session_id": "s-hook",
        "cwd": str(project.root),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    proc = run_hook("SessionStart", payload, project.root, hook_env())
    assert proc.returncode == 0 and b"additionalContext" in proc.stdout
    line = json.loads((project.root / ".ccmemory/local/surfaced.jsonl").read_text().splitlines()[-1])
    dash = Dash(Service(Vault(project.root)), refresh_seconds=0)
    try:
        rows = {s["session"]: s for s in dash.retrievals(limit=50)["sessions"]}
        assert rows["s-hook"]["surfaced"] == len(line["ids"]) > 0
        assert rows["s-hook"]["memories"] == len(set(line["ids"]))
    finally:
        dash.close()


def test_real_mcp_calls_over_stdio_are_counted(tmp_path: Path) -> None:
    """search / get_memory / trace_decision through the real MCP client and server process."""
    from ccmemory.app.service import Service
    from ccmemory.core.vault import Vault
    from ccmemory.surfaces.dashboard.data import Dash
    from tests._mcp_client import SyncClient
    from tests.dashboard_util import build_project

    project = build_project(tmp_path / "repo")
    with SyncClient.stdio(project.root, env={"CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as c:
        found = c.call("search", {"query": "PostgreSQL managed platform team", "mode": "text"})
        assert project.ids["db3"] in [r["id"] for r in found["results"]]
        c.call("get_memory", {"id": project.ids["db3"]})
        c.call("trace_decision", {"id": project.ids["db3"]})
    dash = Dash(Service(Vault(project.root)), refresh_seconds=0)
    try:
        dash.refresh(force=True)  # ingests the inbox the server process appended to
        events = dash.store.events(["searched", "retrieved"])
        mcp = [e for e in events if (e[2] or "").startswith("mcp-")]
        assert sorted(k for _, k, _, mid, _ in mcp if mid == project.ids["db3"]) == [
            "retrieved",
            "retrieved",
            "searched",
        ]
        detail = dash.memory(project.ids["db3"])
        assert detail is not None and detail["usage"]["retrieved"] >= 2
    finally:
        dash.close()
