"""Across projects on the embedded index: three real git repositories on one machine (app and infra
related, blog not), searched through the CLI, the MCP server over stdio and the service; a personal
vault whose global preference shows in every project's session-start context.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ccmemory.app.service import Service
from ccmemory.core.config import load_config, parse_related
from ccmemory.core.model import Relation
from ccmemory.core.vault import Vault
from ccmemory.features import personal
from ccmemory.features.context import context_for
from ccmemory.features.crossproject import cross_search
from ccmemory.index.base import Filters
from tests._mcp_client import SyncClient
from tests.conftest import RunCli, git, init_git, make_memory

ALICE = "alice@example.com"
BOB = "bob@example.com"


def write_config(root: Path, **settings: Any) -> None:
    path = root / ".ccmemory" / "config.yaml"
    data = yaml.safe_load(path.read_text()) or {}
    data.update(settings)
    path.write_text(yaml.safe_dump(data))


def make_repo(base: Path, name: str) -> Path:
    from ccmemory.app.vaultinit import init_vault

    root = init_git(base / name, ALICE)
    init_vault(root)
    return root


def commit(root: Path, msg: str = "memories") -> None:
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", msg)


def reindex(root: Path) -> None:
    with Service(Vault(root)) as svc:
        svc.reindex()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "personal"
    monkeypatch.setenv("CCMEMORY_HOME", str(h))
    monkeypatch.setenv("CCMEMORY_USER_ID", ALICE)
    return h


def alice_env(**extra: str) -> dict[str, str]:
    """A CLI or MCP subprocess's environment here: alice, with this test's personal vault (the
    `home` fixture sets CCMEMORY_HOME)."""
    return {"CCMEMORY_HOME": os.environ["CCMEMORY_HOME"], "CCMEMORY_USER_ID": ALICE, **extra}


@pytest.fixture
def machine(tmp_path: Path, home: Path) -> Iterator[dict[str, Any]]:
    """app <-> infra related (technical); blog unrelated. Each with its own index."""
    app, infra, blog = (make_repo(tmp_path, n) for n in ("app", "infra", "blog"))
    ids: dict[str, str] = {}

    def add(root: Path, key: str, mtype: str, title: str, **kw: Any) -> None:
        m = make_memory(mtype, title, **kw)
        ids[key] = m.id
        Vault(root).write_new(m)

    add(
        app,
        "app_deploy",
        "decision",
        "Deploy the app as one container image",
        topics=["deploy"],
        body="The app ships as a single container; deploy pipelines build it.",
        author=ALICE,
    )
    add(
        infra,
        "infra_deploy",
        "decision",
        "Deploy containers with Terraform on Hetzner",
        topics=["deploy"],
        body="Every container is deployed by Terraform to Hetzner Cloud.",
        author=ALICE,
    )
    add(
        infra,
        "infra_logs",
        "fact",
        "Services log JSON lines to stdout",
        applies_to=["app"],
        body="Our log shipper only parses JSON lines.",
        author=ALICE,
    )
    add(
        blog,
        "blog_deploy",
        "decision",
        "Deploy the blog container with Netlify",
        topics=["deploy"],
        body="Static deploy on Netlify.",
        author=ALICE,
    )
    for root in (app, infra, blog):
        commit(root)
    # developmental memories on branches of infra: bob's (private to bob) and alice's own
    git(infra, "checkout", "-q", "-b", "wip")
    add(
        infra,
        "bob_secret",
        "decision",
        "Deploy containers to bob's secret Kubernetes cluster",
        topics=["deploy"],
        body="Bob's private plan for deploying containers.",
        author=BOB,
    )
    add(
        infra,
        "alice_wip",
        "decision",
        "Deploy containers behind Caddy (draft)",
        topics=["deploy"],
        body="Alice's draft about deploying containers.",
        author=ALICE,
    )
    write_config(app, related_to=[{"name": "infra", "path": "../infra", "relation": "technical"}])
    write_config(infra, related_to=[{"name": "app", "path": "../app", "relation": "technical"}])
    for root in (app, infra, blog):
        reindex(root)
    yield {"app": app, "infra": infra, "blog": blog, "ids": ids}


# --- config ------------------------------------------------------------------------------------


def test_related_to_is_validated_with_clear_messages(tmp_path: Path) -> None:
    good, problems = parse_related(
        [
            {"name": "infra", "path": "../infra", "relation": "technical"},
            {"name": "plan", "remote": "git@example.com:plan.git", "relation": "business"},
            {"name": "x", "path": "../x", "relation": "friends"},
            {"name": "y", "relation": "technical"},
            {"path": "../z", "relation": "technical"},
            "not a mapping",
            {"name": "infra", "path": "../infra2", "relation": "technical"},
            {"name": "w", "path": "../w", "relation": "technical", "colour": "red"},
        ],
        tmp_path / "repo",
        "repo/.ccmemory/config.yaml",
    )
    assert [(r.name, r.relation) for r in good] == [("infra", "technical"), ("plan", "business")]
    assert good[0].path == (tmp_path / "infra").resolve()
    assert good[1].path is None and good[1].remote == "git@example.com:plan.git"
    assert len(problems) == 6
    assert all(p.startswith("repo/.ccmemory/config.yaml: related_to entry #") for p in problems)
    assert "'friends' must be one of business, technical, shared_resource" in problems[0]
    assert "give a path" in problems[1]
    assert "no name" in problems[2]
    assert "must be a mapping" in problems[3]
    assert "listed twice" in problems[4]
    assert "unknown key(s) colour" in problems[5]
    assert parse_related("infra", tmp_path, "c.yaml")[1] == [
        "c.yaml: related_to must be a list of {name, path or remote, relation}"
    ]


# --- search ---------------------------------------------------------------------------------------


def test_cli_search_cross_project_labels_the_related_decision(
    machine: dict[str, Any], run_cli: RunCli
) -> None:
    ids = machine["ids"]
    env = alice_env()
    alone = json.loads(
        run_cli(machine["app"], "search", "deploy containers", "--mode", "text", "--json", env=env).stdout
    )
    assert {h["id"] for h in alone} == {ids["app_deploy"]}
    proc = run_cli(
        machine["app"], "search", "deploy containers", "--mode", "text", "--json", "--cross-project", env=env
    )
    hits = json.loads(proc.stdout)
    by_id = {h["id"]: h for h in hits}
    assert ids["infra_deploy"] in by_id, hits
    infra = by_id[ids["infra_deploy"]]
    assert infra["project"] == "infra" and infra["relation"] == "technical"
    assert infra["citation"]["file"] == str(machine["infra"] / infra["path"])
    assert infra["citation"]["project"] == "infra"
    assert Path(infra["citation"]["file"]).is_file()
    assert "project" not in by_id[ids["app_deploy"]]  # home hits are not relabelled
    # alice's own developmental draft crosses; bob's does not; the unrelated blog never shows
    assert ids["alice_wip"] in by_id
    assert ids["bob_secret"] not in by_id
    assert ids["blog_deploy"] not in by_id
    # the human form names the project
    text = run_cli(
        machine["app"], "search", "deploy containers", "--mode", "text", "--cross-project", env=env
    ).stdout
    assert "[infra · technical] [decision] Deploy containers with Terraform on Hetzner" in text
    assert str(machine["infra"]) in text


def test_cross_search_ranks_home_first_at_equal_score(machine: dict[str, Any]) -> None:
    with Service(Vault(machine["app"])) as svc:
        resp = cross_search(svc, "deploy containers", mode="text", limit=20)
    keys = [(-round(c.hit.score, 6), c.source is not None) for c in resp.hits]
    assert keys == sorted(keys)
    assert {c.project for c in resp.hits} == {None, "infra"}
    # a tie: the same memory text in both projects scores the same; the home one comes first
    twin = make_memory(
        "decision", "Rotate the deploy keys every quarter", body="Quarterly key rotation.", author=ALICE
    )
    git(machine["infra"], "checkout", "-q", "main")  # both curated
    for name in ("app", "infra"):
        m = make_memory("decision", twin.title, body=twin.body, author=ALICE, created=twin.created)
        Vault(machine[name]).write_new(m)
        commit(machine[name], "twin")
        reindex(machine[name])
    with Service(Vault(machine["app"])) as svc:
        resp = cross_search(svc, "rotate quarterly keys", mode="text", limit=5)
    top = [c for c in resp.hits if c.hit.memory.title == twin.title]
    assert len(top) == 2 and round(top[0].hit.score, 6) == round(top[1].hit.score, 6)
    assert [c.project for c in top] == [None, "infra"]


def test_related_index_is_opened_read_only_and_not_copied(machine: dict[str, Any]) -> None:
    db = machine["infra"] / ".ccmemory" / "local" / "index.db"
    before = {p.name: p.stat().st_mtime_ns for p in db.parent.iterdir()}
    app_db = machine["app"] / ".ccmemory" / "local" / "index.db"
    with Service(Vault(machine["app"])) as svc:
        resp = cross_search(svc, "deploy containers", mode="text")
        assert any(c.project == "infra" for c in resp.hits)
        # nothing of infra was copied into app's index (only the link app -> infra is stored)
        assert svc.index.count(Filters(project="infra", include_superseded=True)) == 0
        assert svc.index.file_states("infra") == {}
        assert svc.index.related_projects("app") == [("infra", "technical")]
    after = {p.name: p.stat().st_mtime_ns for p in db.parent.iterdir()}
    assert before["index.db"] == after["index.db"]
    assert app_db.is_file()


def test_missing_and_stale_related_indexes_are_reported_not_fatal(
    machine: dict[str, Any], tmp_path: Path
) -> None:
    ghost = init_git(tmp_path / "ghost", ALICE)
    (ghost / ".ccmemory").mkdir()
    write_config(
        machine["app"],
        related_to=[
            {"name": "infra", "path": "../infra", "relation": "technical"},
            {"name": "ghost", "path": "../ghost", "relation": "business"},
            {"name": "plan", "remote": "git@example.com:plan.git", "relation": "business"},
            {"name": "bad", "path": "../bad", "relation": "friends"},
            {"name": "me", "path": ".", "relation": "technical"},
        ],
    )
    Vault(machine["infra"]).write_new(make_memory("fact", "Hetzner firewall allows 443 only", author=ALICE))
    with Service(Vault(machine["app"])) as svc:
        resp = cross_search(svc, "deploy containers", mode="text")
    text = "\n".join(resp.notices)
    assert f"related project ghost: no index at {ghost / '.ccmemory' / 'local' / 'index.db'}" in text
    assert "related project plan: no path in related_to" in text
    assert "relation 'friends' must be one of" in text
    assert "related project me: its path is this repository; left out" in text
    assert "related project infra: its index is stale (1 memory file(s) changed" in text
    assert any(c.project == "infra" for c in resp.hits)  # still searched


def test_corrupt_related_index_is_reported(machine: dict[str, Any]) -> None:
    db = machine["infra"] / ".ccmemory" / "local" / "index.db"
    for p in db.parent.glob("index.db*"):
        p.unlink()
    db.write_bytes(b"this is not a database" * 100)
    with Service(Vault(machine["app"])) as svc:
        resp = cross_search(svc, "deploy containers", mode="text")
    assert [c.project for c in resp.hits] == [None]
    assert any("related project infra" in n and "cannot be read" in n for n in resp.notices), resp.notices
    assert db.read_bytes().startswith(b"this is not a database")  # never rewritten


def test_mcp_query_context_and_search_cross_project(machine: dict[str, Any]) -> None:
    ids = machine["ids"]
    env = alice_env(CCMEMORY_MCP_REFRESH_SECONDS="0")
    with SyncClient.stdio(machine["app"], env=env) as c:
        off = c.call("query_context", {"task": "deploy containers"})
        assert off["cross_project"] == {"requested": False, "available": False}
        assert ids["infra_deploy"] not in {r["id"] for r in off["results"]}
        on = c.call("query_context", {"task": "deploy containers", "include_cross_project": True})
        cross = on["cross_project"]
        assert cross["available"] is True and cross["backend"] == "sqlite"
        assert [p["project"] for p in cross["projects"]] == ["infra"]
        found = {r["id"]: r for r in cross["results"]}
        assert ids["infra_deploy"] in found and ids["bob_secret"] not in found
        r = found[ids["infra_deploy"]]
        assert r["project"] == "infra" and r["relation"] == "technical"
        assert r["citation"]["file"].endswith(r["path"]) and r["citation"]["id"] == ids["infra_deploy"]
        # without a task: the memories of related projects whose applies_to names this one
        bare = c.call("query_context", {"include_cross_project": True})["cross_project"]
        assert [x["id"] for x in bare["results"]] == [ids["infra_logs"]]
        assert bare["results"][0]["why"] == "its applies_to names app"
        s = c.call("search", {"query": "deploy containers", "mode": "text", "include_cross_project": True})
        projects = {x["id"]: x["project"] for x in s["results"]}
        assert projects[ids["infra_deploy"]] == "infra" and projects[ids["app_deploy"]] == "app"
        assert ids["blog_deploy"] not in projects and ids["bob_secret"] not in projects
    with SyncClient.stdio(machine["blog"], env=env) as c:
        out = c.call("query_context", {"task": "deploy containers", "include_cross_project": True})
        cross = out["cross_project"]
        assert cross["results"] == [] and "no related projects" in cross["reason"]


# --- applies_to -----------------------------------------------------------------------------------


def test_applies_to_surfaces_in_the_named_project_only(machine: dict[str, Any]) -> None:
    ids = machine["ids"]
    with Service(Vault(machine["app"])) as svc:
        ctx = context_for(svc, 4000)
        assert ids["infra_logs"] in ctx.ids
        assert "(from project infra)" in ctx.text
        assert "## From other projects (applies here)" in ctx.text
        resp = cross_search(svc, "JSON log lines", mode="text")
        assert [c.project for c in resp.hits if c.hit.memory.id == ids["infra_logs"]] == ["infra"]
    with Service(Vault(machine["infra"])) as svc:  # its own project: a normal memory
        assert ids["infra_logs"] in context_for(svc, 4000).ids
    with Service(Vault(machine["blog"])) as svc:
        assert ids["infra_logs"] not in context_for(svc, 4000).ids


def test_applies_to_round_trips_and_is_validated(tmp_path: Path) -> None:
    from ccmemory.core.vault import parse_text, render

    m = make_memory("fact", "Shared rule", applies_to=["app", "infra"])
    text = render(m)
    assert "applies_to: [app, infra]" in text or "applies_to:\n- app\n- infra" in text
    assert parse_text(text, "x.md").memory.applies_to == ["app", "infra"]
    bad = text.replace("applies_to: [app, infra]", "applies_to: {a: 1}")
    from ccmemory.core.model import validate

    meta = yaml.safe_load(bad.split("---")[1])
    assert any(p.key == "applies_to" and p.level == "error" for p in validate(meta))


# --- the personal vault ---------------------------------------------------------------------------


def test_global_preference_stated_once_shows_in_every_project(
    machine: dict[str, Any], run_cli: RunCli, home: Path
) -> None:
    env = alice_env()
    out = run_cli(
        machine["blog"],
        "new",
        "preference",
        "Use uv for Python packages",
        "--global",
        "--body",
        "Never pip install into the system Python.",
        env=env,
    ).stdout.strip()
    path = (machine["blog"] / out).resolve()  # printed relative to the current folder
    assert path.is_file() and path.is_relative_to(home)
    assert "scope: global" in path.read_text()
    assert not list((machine["blog"] / ".ccmemory" / "preferences").glob("*.md"))
    for name in ("app", "infra", "blog"):
        ctx = run_cli(machine[name], "context", env=env).stdout
        assert "## Your global preferences (all projects)" in ctx, (name, ctx)
        assert "Use uv for Python packages" in ctx and "(from personal vault)" in ctx
    # the session-start hook (a real subprocess reading a real payload) gives the same
    from tests.capture_helpers import hook_env, run_hook

    payload = {
        "hook_event_name": "SessionStart",
        "session_id": "s1",
        "cwd": str(machine["infra"]),
        "source": "startup",
    }
    proc = run_hook("SessionStart", payload, machine["infra"], hook_env(CCMEMORY_HOME=str(home)))
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Use uv for Python packages" in ctx, (proc.stdout, proc.stderr)


def test_project_memory_contradicting_a_global_one_wins_and_check_shows_it(
    machine: dict[str, Any], run_cli: RunCli, home: Path
) -> None:
    env = alice_env()
    run_cli(machine["app"], "new", "preference", "Use uv for Python packages", "--global", env=env)
    run_cli(
        machine["blog"],
        "new",
        "preference",
        "Don't use uv for Python packages",
        "--body",
        "The blog's host only has pip.",
        env=env,
    )
    blog_ctx = run_cli(machine["blog"], "context", env=env).stdout
    assert "Don't use uv for Python packages" in blog_ctx
    assert "(from personal vault)" not in blog_ctx
    assert "Use uv for Python packages" in run_cli(machine["app"], "context", env=env).stdout
    check = run_cli(machine["blog"], "check", env=env)
    assert "warning: overrides personal-vault preference 'Use uv for Python packages'" in check.stdout
    assert "the project memory wins here" in check.stdout
    clean = run_cli(machine["app"], "check", env=env)
    assert "personal-vault" not in clean.stdout


def test_mcp_record_preference_global_writes_the_personal_vault(machine: dict[str, Any], home: Path) -> None:
    env = alice_env(CCMEMORY_MCP_REFRESH_SECONDS="0")
    with SyncClient.stdio(machine["app"], env=env) as c:
        out = c.call("record_preference", {"title": "Prefer small commits", "scope": "global"})
        assert out["vault"] == "personal" and Path(out["path"]).is_relative_to(home)
        local = c.call("record_preference", {"title": "Prefer tabs in this repo", "scope": "project"})
        assert "vault" not in local and local["path"].startswith(".ccmemory/preferences/")
    with Service(Vault(machine["infra"])) as svc:
        assert "Prefer small commits" in context_for(svc, 4000).text
    with Service(Vault(machine["blog"])) as svc:
        text = context_for(svc, 4000).text
        assert "Prefer small commits" in text and "Prefer tabs in this repo" not in text


def test_broken_personal_vault_never_blocks_context(machine: dict[str, Any], home: Path) -> None:
    personal.init()
    (home / ".ccmemory" / "local").rmdir()
    (home / ".ccmemory" / "local").write_text("not a folder")
    with Service(Vault(machine["app"])) as svc:
        ctx = context_for(svc, 4000)
    assert machine["ids"]["app_deploy"] in ctx.ids
    got = personal.global_memories(ALICE, service=Service)
    assert got.memories == [] and got.notice and str(home) in got.notice


def test_global_section_respects_the_budget(machine: dict[str, Any], home: Path) -> None:
    for i in range(60):
        personal.record_global(
            make_memory("preference", f"Global rule number {i} about formatting code", author=ALICE, body=""),
            service=Service,
        )
    with Service(Vault(machine["app"])) as svc:
        for budget in (120, 300, 800):
            ctx = context_for(svc, budget)
            assert ctx.tokens <= budget
        assert "Global rule number" in context_for(svc, 800).text


# --- capture's hook point: a rule about the user, not this repo -----------------------------------

# A labelled set written for this test (not taken from the issue): (title, files, personal?)
CAPTURE_CASES = [
    ("I prefer small focused commits", [], True),
    ("My editor is Neovim; suggest vim keybindings", [], True),
    ("User prefers uv over pip", [], True),
    ("Always answer in British English everywhere", [], True),
    ("Use 4-space indents across all my projects", [], True),
    ("I prefer pytest fixtures in this repo", [], False),
    ("Use tabs here", [], False),
    ("Prefer the repository pattern for the data layer", [], False),
    ("I want src/api.py to stay small", ["src/api.py"], False),
    ("Keep our codebase free of print statements", [], False),
    ("Tests use the real Neo4j server", [], False),
]


# Held out: written after the rule was fixed and never used to change it (issue 18's report gives
# the score: 10/10 personal rules routed, 2 of 10 project rules wrongly routed). The two misses
# are kept, marked xfail(strict), so a change that fixes or worsens them shows.
HELD_OUT = [
    ("I like concise answers without preamble", True),
    ("My shell is fish, not bash", True),
    ("User prefers British spelling in prose", True),
    ("I never want emojis in commit messages", True),
    ("Always use conventional commits in every repo", True),
    ("User wants explanations before code changes", True),
    ("Prefer rg over grep everywhere", True),
    ("I use VS Code with vim keybindings", True),
    ("My timezone is CET; schedule things accordingly", True),
    ("The user likes type hints in all code", True),
    ("Use pnpm for the frontend workspace", False),
    ("Prefer composition over inheritance in the domain layer", False),
    ("Keep API handlers thin", False),
    ("I prefer the service layer in this codebase to stay synchronous", False),
    ("Name migrations with a timestamp prefix", False),
    pytest.param(
        "User prefers the dashboard to load lazily",
        False,
        marks=pytest.mark.xfail(strict=True, reason="a product preference phrased about the user"),
    ),
    ("Tests should hit the real database here", False),
    ("Our team prefers squash merges", False),
    pytest.param(
        "My plan for this feature: ship behind a flag",
        False,
        marks=pytest.mark.xfail(strict=True, reason="'my' + 'this feature' is not caught"),
    ),
    ("Log errors with structured fields", False),
]


@pytest.mark.parametrize(("title", "expected"), HELD_OUT)
def test_is_personal_rule_held_out(title: str, expected: bool) -> None:
    assert personal.is_personal_rule(make_memory("preference", title)) is expected


@pytest.mark.parametrize(("title", "files", "expected"), CAPTURE_CASES)
def test_is_personal_rule_is_conservative(title: str, files: list[str], expected: bool) -> None:
    m = make_memory("preference", title, files=files)
    assert personal.is_personal_rule(m) is expected


def test_captured_personal_rule_goes_to_the_personal_vault(tmp_path: Path, home: Path) -> None:
    from ccmemory.features.capture.store import Store

    repo = make_repo(tmp_path, "proj")
    store = Store(Vault(repo), service=Service)
    try:
        mine = store.record(make_memory("preference", "I prefer small focused commits", author=ALICE))
        theirs = store.record(make_memory("preference", "Use tabs in this project", author=ALICE))
        decision = store.record(make_memory("decision", "I decided to use Postgres", author=ALICE))
    finally:
        store.close()
    assert mine.is_relative_to(home) and "scope: global" in mine.read_text()
    assert theirs.is_relative_to(repo) and decision.is_relative_to(repo)


def test_related_to_in_config_is_loaded(machine: dict[str, Any]) -> None:
    cfg = load_config(machine["app"])
    assert [(r.name, r.relation, r.path) for r in cfg.related] == [
        ("infra", "technical", machine["infra"].resolve())
    ]
    assert cfg.related_problems == []


# --- contradictions across projects ---------------------------------------------------------------


def test_detect_issues_reports_the_same_topic_decided_differently(machine: dict[str, Any]) -> None:
    app, infra, blog = machine["app"], machine["infra"], machine["blog"]
    use = make_memory("decision", "Use Docker Compose for deploys", topics=["deploy"], author=ALICE)
    Vault(app).write_new(use)
    Vault(blog).write_new(
        make_memory("decision", "Avoid Docker Compose for deploys", topics=["deploy"], author=ALICE)
    )  # unrelated project: never compared
    git(infra, "checkout", "-q", "main")
    avoid = make_memory("decision", "Don't use Docker Compose for deploys", topics=["Deploy"], author=ALICE)
    Vault(infra).write_new(avoid)
    linked = make_memory("decision", "Deploy on Fridays", author=ALICE)
    Vault(infra).write_new(
        make_memory(
            "decision",
            "Never deploy on Fridays",
            author=ALICE,
            relations=[Relation("CONFLICTS_WITH", linked.id, "weekend outages")],
        )
    )
    Vault(app).write_new(linked)
    git(infra, "checkout", "-q", "-b", "bob/compose")
    Vault(infra).write_new(
        make_memory("decision", "Don't use Docker Compose for deploys (bob)", topics=["deploy"], author=BOB)
    )
    for root in (app, infra, blog):
        reindex(root)
    env = alice_env(CCMEMORY_MCP_REFRESH_SECONDS="0")
    with SyncClient.stdio(app, env=env) as c:
        plain = c.call("detect_issues", {"kinds": ["contradictions"]})
        assert "cross_project_contradictions" not in plain
        out = c.call("detect_issues", {"kinds": ["contradictions"], "include_cross_project": True})
    cross = out["cross_project_contradictions"]
    pairs = {(i["members"][0]["id"], i["members"][1]["id"]): i for i in cross["items"]}
    assert set(pairs) == {
        (use.id, avoid.id),
        (
            linked.id,
            next(
                i["members"][1]["id"] for i in cross["items"] if i["rule"] == "CONFLICTS_WITH across projects"
            ),
        ),
    }
    item = pairs[(use.id, avoid.id)]
    assert item["project"] == "infra" and item["relation"] == "technical"
    assert item["members"][0]["project"] == "app" and item["members"][1]["project"] == "infra"
    assert "topic 'deploy'" in item["rule"]
    assert out["summary"]["cross_project_contradictions"] == 2


def test_related_names_ignore_this_process_project_override(
    machine: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CCMEMORY_PROJECT", "app")  # names the home project only, never infra
    with Service(Vault(machine["app"])) as svc:
        resp = cross_search(svc, "deploy containers", mode="text")
    assert machine["ids"]["infra_deploy"] in {c.hit.memory.id for c in resp.hits if c.project == "infra"}


def test_doctor_reports_related_projects_and_the_personal_vault(
    machine: dict[str, Any], run_cli: RunCli, home: Path
) -> None:
    env = alice_env()
    write_config(
        machine["app"],
        related_to=[
            {"name": "infra", "path": "../infra", "relation": "technical"},
            {"name": "ghost", "path": "../ghost", "relation": "business"},
        ],
    )
    report = json.loads(run_cli(machine["app"], "doctor", "--json", env=env).stdout)
    cross = report["cross_project"]
    assert [(r["project"], r["relation"], r["memories"]) for r in cross["related"]] == [
        ("infra", "technical", 3)  # bob's developmental memory is not counted for alice
    ]
    assert any(n.startswith("related project ghost: no index") for n in cross["notices"])
    assert cross["personal_vault"] == {"path": str(home), "exists": False, "memory_files": 0}
    run_cli(machine["app"], "new", "fact", "My laptop runs Debian 13", "--global", env=env)
    text = run_cli(machine["app"], "doctor", env=env).stdout
    assert "related      infra (technical): 3 memories at" in text
    assert f"personal     {home} (1 memory file(s))" in text


def test_cli_new_applies_to_and_global_type_check(
    machine: dict[str, Any], run_cli: RunCli, home: Path
) -> None:
    env = alice_env()
    out = run_cli(
        machine["infra"],
        "new",
        "gotcha",
        "Port 8080 is taken by the proxy",
        "--applies-to",
        "app",
        "--applies-to",
        " app ",
        "--json",
        env=env,
    ).stdout
    path = machine["infra"] / json.loads(out)["path"]
    assert "applies_to: [app]" in path.read_text()
    assert "Port 8080 is taken by the proxy" in run_cli(machine["app"], "context", env=env).stdout
    assert "Port 8080" not in run_cli(machine["blog"], "context", env=env).stdout
    bad = run_cli(machine["app"], "new", "decision", "Use Postgres", "--global", env=env, check=False)
    assert bad.returncode == 2 and "the personal vault holds correction, preference, fact" in bad.stderr
    assert not personal.exists()


def test_cross_project_search_includes_the_personal_vault(machine: dict[str, Any], home: Path) -> None:
    rec = personal.record_global(
        make_memory("preference", "Use uv for Python packages", author=ALICE), service=Service
    )
    with Service(Vault(machine["blog"])) as svc:  # no related projects: the personal vault still counts
        assert svc.search("uv python packages", mode="text").hits == []
        resp = cross_search(svc, "uv python packages", mode="text")
    hits = [c for c in resp.hits if c.project == "personal"]
    assert len(hits) == 1 and hits[0].source is not None
    d = hits[0].to_dict()
    assert d["relation"] == "personal vault" and d["source"] == str(home)
    assert d["citation"]["file"] == str(home / rec.path)
