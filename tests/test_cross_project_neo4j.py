"""Across projects on a real shared Neo4j server: three real repositories (app -> infra related,
blog not), two users (alice, bob), the CLI and the MCP server over stdio against the same server.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ccmemory.app.service import Service
from ccmemory.core.config import load_config
from ccmemory.core.vault import Vault
from ccmemory.features import personal
from ccmemory.features.context import context_for
from ccmemory.features.crossproject import cross_search
from tests._mcp_client import SyncClient
from tests.conftest import RunCli, git, init_git, make_memory
from tests.neo4j_server import Neo4jServer

pytestmark = pytest.mark.neo4j

ALICE = "alice@example.com"
BOB = "bob@example.com"


def neo_env(server: Neo4jServer, user: str, home: Path) -> dict[str, str]:
    return {
        "CCMEMORY_BACKEND": "neo4j",
        "CCMEMORY_NEO4J_URI": server.uri,
        "CCMEMORY_NEO4J_USER": server.user,
        "CCMEMORY_NEO4J_PASSWORD": server.password,
        "CCMEMORY_USER_ID": user,
        "CCMEMORY_HOME": str(home),
    }


def service(root: Path, user: str, server: Neo4jServer) -> Service:
    from ccmemory.index.neo4j import Neo4jIndex

    cfg = load_config(root, env=neo_env(server, user, Path("/nonexistent")))
    assert cfg.backend == "neo4j"
    idx = Neo4jIndex(server.uri, server.user, server.password, scope=user, connection_timeout=5)
    return Service(Vault(root), cfg, idx)


@pytest.fixture
def shared(
    tmp_path: Path, neo4j_server: Neo4jServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, Any]]:
    home = tmp_path / "personal"
    monkeypatch.setenv("CCMEMORY_HOME", str(home))
    uid = uuid.uuid4().hex[:8]
    names = {k: f"{k}-{uid}" for k in ("app", "infra", "blog")}
    roots: dict[str, Path] = {}
    ids: dict[str, str] = {}
    for key, name in names.items():
        root = init_git(tmp_path / key, ALICE)
        (root / ".ccmemory").mkdir()
        conf: dict[str, Any] = {"project": name, "backend": "neo4j"}
        if key == "app":  # only app declares the link: infra sees it through the RELATED_TO edge
            conf["related_to"] = [
                {"name": names["infra"], "remote": "git@example.com:infra.git", "relation": "technical"}
            ]
        (root / ".ccmemory" / "config.yaml").write_text(yaml.safe_dump(conf))
        roots[key] = root

    def add(key: str, mid: str, mtype: str, title: str, **kw: Any) -> None:
        m = make_memory(mtype, title, **kw)
        ids[mid] = m.id
        Vault(roots[key]).write_new(m)

    add(
        "app",
        "app_deploy",
        "decision",
        "Deploy the app as one container image",
        author=ALICE,
        body="The app ships as a single container.",
        topics=["deploy"],
    )
    add(
        "infra",
        "infra_deploy",
        "decision",
        "Deploy containers with Terraform on Hetzner",
        author=ALICE,
        body="Every container is deployed by Terraform.",
        topics=["deploy"],
    )
    add(
        "infra",
        "infra_logs",
        "fact",
        "Services log JSON lines to stdout",
        author=ALICE,
        applies_to=[names["blog"]],
        body="The log shipper only parses JSON lines.",
    )
    add(
        "blog",
        "blog_deploy",
        "decision",
        "Deploy the blog container with Netlify",
        author=ALICE,
        body="Static deploy.",
        topics=["deploy"],
    )
    for root in roots.values():
        git(root, "add", ".")
        git(root, "commit", "-q", "-m", "curated")
    git(roots["infra"], "checkout", "-q", "-b", "bob/k8s")
    add(
        "infra",
        "bob_secret",
        "decision",
        "Deploy containers to bob's secret Kubernetes cluster",
        author=BOB,
        body="Bob's private plan for deploying containers.",
        topics=["deploy"],
    )
    svcs = {(k, u): service(roots[k], u, neo4j_server) for k in names for u in (ALICE, BOB)}
    for key in names:
        svcs[(key, ALICE)].reindex()
    try:
        yield {"roots": roots, "names": names, "ids": ids, "svc": svcs, "home": home, "server": neo4j_server}
    finally:
        for key, name in names.items():
            svc = svcs[(key, ALICE)]
            svc.index.link_projects(name, [])
            svc.index.drop_project(name)  # type: ignore[attr-defined]
        for svc in svcs.values():
            svc.close()


def test_related_projects_become_graph_edges(shared: dict[str, Any]) -> None:
    n = shared["names"]
    app = shared["svc"][("app", ALICE)]
    res = cross_search(app, "deploy containers", mode="text")
    assert app.index.related_projects(n["app"]) == [(n["infra"], "technical")]
    assert app.index.related_projects(n["infra"]) == [(n["app"], "technical")]
    assert {n["app"], n["infra"], n["blog"]} <= set(app.index.projects())
    assert [s.name for s in res.sources if s.relation == "technical"] == [n["infra"]]


def test_alice_gets_the_related_decision_but_never_bobs_draft(shared: dict[str, Any]) -> None:
    ids, n = shared["ids"], shared["names"]
    resp = cross_search(shared["svc"][("app", ALICE)], "deploy containers", mode="text", limit=20)
    got = {c.hit.memory.id: c for c in resp.hits}
    assert ids["infra_deploy"] in got and ids["app_deploy"] in got
    c = got[ids["infra_deploy"]]
    assert c.to_dict()["project"] == n["infra"] and c.to_dict()["relation"] == "technical"
    assert c.citation() == {"project": n["infra"], "id": ids["infra_deploy"], "path": c.hit.memory.path}
    assert ids["bob_secret"] not in got
    assert ids["blog_deploy"] not in got  # unrelated project
    keys = [(-round(x.hit.score, 6), x.source is not None) for x in resp.hits]
    assert keys == sorted(keys)


def test_bob_sees_his_own_draft_across_projects(shared: dict[str, Any]) -> None:
    ids = shared["ids"]
    resp = cross_search(shared["svc"][("app", BOB)], "deploy containers", mode="text", limit=20)
    assert ids["bob_secret"] in {c.hit.memory.id for c in resp.hits}


def test_the_link_works_from_the_other_side(shared: dict[str, Any]) -> None:
    ids, n = shared["ids"], shared["names"]
    cross_search(shared["svc"][("app", ALICE)], "deploy", mode="text")  # app stores its links
    resp = cross_search(shared["svc"][("infra", ALICE)], "single container app", mode="text")
    assert [c.project for c in resp.hits if c.hit.memory.id == ids["app_deploy"]] == [n["app"]]


def test_cli_and_mcp_on_neo4j(shared: dict[str, Any], run_cli: RunCli) -> None:
    ids, n, roots = shared["ids"], shared["names"], shared["roots"]
    env = neo_env(shared["server"], ALICE, shared["home"])
    hits = json.loads(
        run_cli(
            roots["app"],
            "search",
            "deploy containers",
            "--mode",
            "text",
            "--json",
            "--cross-project",
            env=env,
        ).stdout
    )
    by_id = {h["id"]: h for h in hits}
    assert by_id[ids["infra_deploy"]]["project"] == n["infra"]
    assert by_id[ids["infra_deploy"]]["source"] == shared["server"].uri
    assert ids["bob_secret"] not in by_id and ids["blog_deploy"] not in by_id
    with SyncClient.stdio(roots["app"], env={**env, "CCMEMORY_MCP_REFRESH_SECONDS": "0"}) as c:
        out = c.call("query_context", {"task": "deploy containers", "include_cross_project": True})
        cross = out["cross_project"]
        assert cross["available"] is True and cross["backend"] == "neo4j"
        found = {r["id"]: r for r in cross["results"]}
        assert found[ids["infra_deploy"]]["project"] == n["infra"]
        assert ids["bob_secret"] not in found
    with SyncClient.stdio(
        roots["app"], env={**env, "CCMEMORY_USER_ID": BOB, "CCMEMORY_MCP_REFRESH_SECONDS": "0"}
    ) as c:
        out = c.call("query_context", {"task": "deploy containers", "include_cross_project": True})
        assert ids["bob_secret"] in {r["id"] for r in out["cross_project"]["results"]}


def test_applies_to_reaches_an_unrelated_project_on_the_shared_index(shared: dict[str, Any]) -> None:
    ids, n = shared["ids"], shared["names"]
    blog = shared["svc"][("blog", ALICE)]
    ctx = context_for(blog, 4000)
    assert ids["infra_logs"] in ctx.ids and f"(from project {n['infra']})" in ctx.text
    resp = cross_search(blog, "JSON log lines", mode="text")
    assert [
        (c.project, c.source.relation if c.source else None)
        for c in resp.hits
        if c.hit.memory.id == ids["infra_logs"]
    ] == [(n["infra"], "applies_to")]
    assert ids["infra_logs"] not in context_for(shared["svc"][("app", ALICE)], 4000).ids
    # blog is not related to infra: only infra's memory that applies to blog crosses
    wide = cross_search(blog, "deploy containers JSON log lines", mode="text", limit=50)
    assert {c.hit.memory.id for c in wide.hits if c.project == n["infra"]} == {ids["infra_logs"]}


def test_global_preference_in_every_projects_session_start(shared: dict[str, Any]) -> None:
    personal.record_global(
        make_memory("preference", "Use uv for Python packages", author=ALICE), service=Service
    )
    for key in ("app", "infra", "blog"):
        for user in (ALICE, BOB):
            text = context_for(shared["svc"][(key, user)], 4000).text
            assert "Use uv for Python packages" in text and "(from personal vault)" in text, (key, user)


def test_reindex_stores_the_links(shared: dict[str, Any]) -> None:
    n = shared["names"]
    app = shared["svc"][("app", ALICE)]
    app.index.link_projects(n["app"], [])
    assert app.index.related_projects(n["app"]) == []
    app.reindex()
    assert app.index.related_projects(n["app"]) == [(n["infra"], "technical")]
