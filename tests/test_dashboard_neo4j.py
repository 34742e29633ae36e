"""The dashboard over a real shared Neo4j index: the same figures as over the local index, and the
Team page says its authors come from the shared index."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from ccmemory.app.service import Service
from ccmemory.core.config import Config
from ccmemory.core.vault import Vault
from ccmemory.surfaces.dashboard.data import Dash
from tests.dashboard_util import build_project
from tests.neo4j_server import Neo4jServer

pytestmark = pytest.mark.neo4j


def test_dashboard_on_neo4j_matches_the_local_index(neo4j_server: Neo4jServer, tmp_path: Path) -> None:
    from ccmemory.index.neo4j import Neo4jIndex

    project = build_project(tmp_path / "repo")
    vault = Vault(project.root)
    cfg = Config(
        project=f"dash-{uuid.uuid4().hex[:8]}",
        backend="neo4j",
        neo4j_uri=neo4j_server.uri,
        neo4j_user=neo4j_server.user,
        neo4j_password=neo4j_server.password,
        user_id="alice@example.com",
    )
    idx = Neo4jIndex(neo4j_server.uri, neo4j_server.user, neo4j_server.password, connection_timeout=5)
    shared = Dash(Service(vault, cfg, idx), refresh_seconds=0)
    local = Dash(Service(Vault(project.root)), refresh_seconds=0)
    try:
        a, b = shared.overview(), local.overview()
        for key in ("memories", "by_type", "by_status"):
            assert a["stats"][key] == b["stats"][key], key
        assert a["superseded"] == b["superseded"] == 2
        for name in ("evolution_rate", "rule_exception_rate", "graph_density", "decision_reuse_rate"):
            assert a["metrics"][name]["value"] == b["metrics"][name]["value"], name
        team = shared.team()
        assert team["source"].startswith("neo4j")
        assert sum(r["memories"] for r in team["authors"]) == len(project.ids)
        chain = shared.patterns()["supersession_chains"][0]
        assert [m["id"] for m in chain] == [project.ids[k] for k in ("db", "db2", "db3")]
        dev = {m["id"] for items in shared.review()["developmental"]["by_branch"].values() for m in items}
        assert dev == {project.ids["feat"], project.ids["dup"]}
    finally:
        shared.close()
        local.close()
