"""The dashboard over a real git repository: security, every API page, actions, and real Chromium."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT, git
from tests.dashboard_util import HOSTILE_TITLE, Project, Running, build_project
from tests.lifecycle_util import cli

try:
    from tests import site_cdp
except ImportError:  # pragma: no cover
    import site_cdp  # type: ignore[no-redef]

ARTIFACTS = REPO_ROOT / "test-artifacts" / "dashboard"
API = ["overview", "review", "memories", "retrievals", "patterns", "suggestions", "graph", "team", "stats"]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return build_project(tmp_path_factory.mktemp("dash") / "repo")


@pytest.fixture(scope="module")
def running(project: Project) -> Iterator[Running]:
    r = Running(project.root)
    try:
        yield r
    finally:
        r.close()


def api(r: Running, path: str) -> Any:
    status, _, body = r.request("GET", path)
    assert status == 200, body[:500]
    return json.loads(body)


# --- security ------------------------------------------------------------------------------------


def test_no_token_is_refused(running: Running) -> None:
    for path in ["/", "/api/overview", "/static/dash.js", "/memory/x"]:
        status, _, body = running.request("GET", path, token=False)
        assert status == 403 and b"token" in body


def test_wrong_token_is_refused(running: Running) -> None:
    status, _, _ = running.request("GET", "/api/stats?token=not-the-token", token=False)
    assert status == 403


def test_wrong_host_is_refused_even_with_the_token(running: Running) -> None:
    for host in ["evil.example", f"evil.example:{running.server.port}", "127.0.0.1:1"]:
        status, _, body = running.request("GET", "/api/stats", host=host)
        assert status == 403 and b"Host" in body
    assert running.request("GET", "/api/stats", host=f"localhost:{running.server.port}")[0] == 200


def test_token_in_url_sets_a_strict_cookie_and_leaves_the_address_bar(running: Running) -> None:
    status, headers, _ = running.request("GET", f"/review?token={running.server.token}&x=1", token=False)
    assert status == 303 and headers["location"] == "/review?x=1"
    cookie = headers["set-cookie"]
    assert running.server.token in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie


def test_pages_carry_a_csp_without_inline_script(running: Running) -> None:
    _, headers, _ = running.request("GET", "/")
    assert "script-src 'self'" in headers["content-security-policy"]
    assert "unsafe-inline" not in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"


def test_post_needs_csrf_and_same_origin(running: Running, project: Project) -> None:
    from ccmemory.surfaces.dashboard.app import csrf_for

    csrf = csrf_for(running.server.token)
    key = "question:" + project.ids["q"]
    # no CSRF token
    assert running.request("POST", f"/api/dismiss?key={key}")[0] == 403
    # cross-origin, even with the right CSRF token and cookie
    status, _, body = running.request(
        "POST", f"/api/dismiss?key={key}", headers={"X-CSRF-Token": csrf, "Origin": "http://evil.example"}
    )
    assert status == 403 and b"cross-origin" in body
    status, _, _ = running.request(
        "POST", f"/api/dismiss?key={key}", headers={"X-CSRF-Token": csrf, "Sec-Fetch-Site": "cross-site"}
    )
    assert status == 403
    # GET cannot act
    assert running.request("GET", f"/api/dismiss?key={key}")[0] == 405
    assert key not in running.dash.store.dismissed()


def test_the_server_listens_on_loopback_only(running: Running) -> None:
    assert running.server.sock.getsockname()[0] == "127.0.0.1"


# --- API -------------------------------------------------------------------------------------------


def test_every_api_page_answers_json(running: Running, project: Project) -> None:
    for name in API:
        data = api(running, f"/api/{name}?project={running.dash.project}&limit=3")
        assert isinstance(data, dict) and data
    status, _, body = running.request("GET", "/api/overview?project=someone-else")
    assert status == 404 and b"serves project" in body
    assert running.request("GET", "/api/memories?limit=abc")[0] == 400
    status, _, body = running.request("GET", "/api/memories?since=yesterdayish")
    assert status == 400 and b"since" in body
    assert running.request("GET", "/memories?since=yesterdayish")[0] == 400
    assert len(api(running, "/api/memories?limit=3")["results"]) == 3
    # time words in the search box narrow by date (issue 30): PostgreSQL 17 is 10 days old, 16 is 20
    recent = api(running, "/api/memories?q=postgresql+decisions+from+the+last+2+weeks&include_superseded=1")
    titles = [r["title"] for r in recent["results"]]
    assert titles[0] == "Use PostgreSQL 17 managed by the platform team"
    assert "Use PostgreSQL 16 with logical replication" not in titles  # 20 days old: out of range
    assert "Tokens live in httpOnly cookies" not in titles
    assert any("last 2 weeks" in n for n in recent["notices"])
    one = api(running, f"/api/memory/{project.ids['db2']}")
    assert [c["id"] for c in one["chain"]] == [project.ids[k] for k in ("db", "db2", "db3")]
    assert running.request("GET", "/api/memory/nope")[0] == 404


def test_overview_stats_match_the_stats_command(running: Running, project: Project) -> None:
    data = api(running, "/api/overview")
    stats = json.loads(cli(project.root, "stats", "--json").stdout)
    for key in ("memories", "by_type", "by_status", "relations", "invalid_files"):
        assert data["stats"][key] == stats[key], key


def test_metrics_show_formula_or_not_enough_data(running: Running) -> None:
    metrics = api(running, "/api/overview")["metrics"]
    for name, m in metrics.items():
        assert m["formula"], name
        assert (m["value"] is None) == (m["display"] == "not enough data"), name
    # 5 corrections/preferences in the fixture: defined; p3 re-explains c2 (cosine 0.80 locally)
    assert metrics["re_explanation_rate"]["value"] == pytest.approx(1 / 5)
    # 6 decisions; db3 and auth were surfaced/retrieved in sessions other than their own
    assert metrics["decision_reuse_rate"]["reused"] == 2
    cc = metrics["cognitive_coefficient"]
    re_, drr = metrics["re_explanation_rate"]["value"], metrics["decision_reuse_rate"]["value"]
    assert cc["value"] == pytest.approx(
        min(4, 1 + 0.02 * cc["curated_decisions"] + 0.5 * (1 - re_) + drr), abs=1e-3
    )
    assert metrics["evolution_rate"]["value"] == pytest.approx(2 / 6, abs=1e-3)  # db, db2 superseded
    assert metrics["capture_per_session_hour"]["hours"] == pytest.approx(2.0)
    # each correction/preference is embedded once: the answers are kept by content hash
    assert len(running.dash.store.derived("reexplained")) == 5


def test_review_lists_the_check_base_findings(running: Running, project: Project) -> None:
    data = api(running, "/api/review")
    assert data["current_branch"] == "feature" and data["main_branch"] == "main"
    dev = {m["id"] for items in data["developmental"]["by_branch"].values() for m in items}
    assert dev == {project.ids["feat"], project.ids["dup"]}
    dups = [f for f in data["findings"] if f["kind"] == "duplicate"]
    assert [f["id"] for f in dups] == [project.ids["dup"]]
    assert [m["id"] for m in data["low_confidence"]] == [project.ids["lowconf"]]
    assert project.ids["q"] in [m["id"] for m in data["open_questions"]]


def test_retrievals_and_patterns(running: Running, project: Project) -> None:
    r = api(running, "/api/retrievals")
    most = {m["id"]: m["uses"] for m in r["most_retrieved"]}
    assert most[project.ids["auth"]] == 2  # surfaced once, retrieved once (searches are not uses)
    assert project.ids["p1"] in {m["id"] for m in r["never_retrieved"]["items"]}
    rec = r["recall"]  # tokens injected by recall, and what Claude fetched after it
    assert (rec["tokens"], rec["injections"], rec["recalled"], rec["fetched_after"]) == (42, 1, 1, 1)
    assert rec["sessions"] == [{"session": "s-recall", "tokens": 42, "injections": 1}]
    assert list(rec["by_day"].values()) == [{"tokens": 42, "injections": 1}]
    p = api(running, "/api/patterns")
    assert [m["id"] for m in p["supersession_chains"][0]] == [project.ids[k] for k in ("db", "db2", "db3")]
    assert any(
        c["by"] == "rule_broken" and c["size"] == len(c["members"]) == 2 for c in p["exception_clusters"]
    )


def test_graph_neighbourhood(running: Running, project: Project) -> None:
    g = api(running, "/api/graph?topic=auth")
    ids = {n["id"] for n in g["nodes"]}
    assert project.ids["auth"] in ids and project.ids["db"] in ids  # db: one hop out (DEPENDS_ON)
    assert project.ids["p1"] not in ids
    assert all(0 <= n["x"] <= 1000 and 0 <= n["y"] <= 1000 for n in g["nodes"])


# --- in the browser -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[site_cdp.Browser]:
    with site_cdp.open_browser(1300, 1000) as b:
        yield b


def shot(b: site_cdp.Browser, name: str) -> Path:
    path = b.screenshot(ARTIFACTS / f"{name}.png")
    assert path.stat().st_size > 5000
    return path


@pytest.mark.browser
def test_browser_pages_and_screenshots(running: Running, project: Project, browser: site_cdp.Browser) -> None:
    browser.goto(running.server.url)  # the URL the command opens: token, then cookie
    browser.wait_for("document.readyState === 'complete'")
    assert "token" not in browser.eval("location.href")
    stats = json.loads(cli(project.root, "stats", "--json").stdout)
    assert int(browser.eval("document.getElementById('stat-memories').textContent")) == stats["memories"]
    for status, n in stats["by_status"].items():
        assert int(browser.eval(f"document.getElementById('stat-{status}').textContent")) == n
    for t, n in stats["by_type"].items():
        assert int(browser.eval(f"document.querySelector('#by-type td[data-type={t}]').textContent")) == n
    assert "heuristic" in browser.eval("document.getElementById('metric-cognitive_coefficient').textContent")
    shot(browser, "overview")
    for page in ["review", "memories", "retrievals", "patterns", "suggestions", "team"]:
        browser.goto(f"{running.base}/{page}")
        browser.wait_for("document.readyState === 'complete'")
        assert browser.eval("document.querySelector('h1').textContent")
        shot(browser, page)
    browser.goto(f"{running.base}/memories?q=logical+replication&include_superseded=1")
    browser.wait_for("document.readyState === 'complete'")
    assert project.ids["db2"] in browser.eval("document.querySelector('#results a').getAttribute('href')")
    shot(browser, "memories-search")
    browser.goto(f"{running.base}/memory/{project.ids['db2']}")
    assert browser.eval("document.querySelectorAll('ol.chain li').length") == 3
    shot(browser, "memory")
    browser.goto(f"{running.base}/graph")
    browser.wait_for("document.getElementById('graph').getAttribute('data-nodes') !== null")
    assert int(browser.eval("document.getElementById('graph').getAttribute('data-nodes')")) == len(
        project.ids
    )
    shot(browser, "graph")


@pytest.mark.browser
def test_browser_hostile_memory_runs_no_script(
    running: Running, project: Project, browser: site_cdp.Browser
) -> None:
    browser.goto(running.server.url)
    for path in [f"/memory/{project.ids['hostile']}", "/memories", "/"]:
        browser.goto(running.base + path)
        browser.wait_for("document.readyState === 'complete'")
        assert browser.eval("typeof window.__pwned") == "undefined", path
        assert browser.eval("document.querySelectorAll('a[href^=\"javascript\" i]').length") == 0
    browser.goto(f"{running.base}/memory/{project.ids['hostile']}")
    assert HOSTILE_TITLE in browser.eval("document.getElementById('memory-title').textContent")


@pytest.mark.browser
def test_browser_dismissed_finding_stays_dismissed(
    running: Running, project: Project, browser: site_cdp.Browser
) -> None:
    browser.goto(running.server.url)
    browser.goto(f"{running.base}/review")
    sel = f"li.finding[data-key='question:{project.ids['q']}'] button.dismiss"
    assert browser.eval(f'document.querySelector("{sel}") !== null')
    browser.eval(f'document.querySelector("{sel}").click()')
    browser.wait_for(f'document.querySelector("{sel}") === null')
    browser.goto(f"{running.base}/review")  # a fresh load: still gone
    browser.wait_for("document.readyState === 'complete'")
    assert browser.eval(f'document.querySelector("{sel}") === null')
    assert f"question:{project.ids['q']}" not in json.dumps(api(running, "/api/review")["open_questions"])
    # the copy-citation button hands over the ccmemory:// URI
    browser.eval("document.querySelector('button.copy').click()")
    cited = browser.wait_for("document.querySelector('button.copy').getAttribute('data-copied')")
    assert cited.startswith("ccmemory://memory/")


@pytest.mark.browser
def test_browser_promote_click_puts_the_memory_on_main(
    running: Running, project: Project, browser: site_cdp.Browser
) -> None:
    rel = project.paths["feat"]
    assert git(project.root, "ls-tree", "--name-only", "main", rel).strip() == ""
    browser.goto(running.server.url)
    browser.goto(f"{running.base}/review")
    browser.eval("document.querySelector('button.promote[data-branch=feature]').click()")
    new_main = browser.wait_for("document.body.getAttribute('data-promoted')", timeout=60)
    assert new_main not in ("error", "none")
    shot(browser, "review-promoted")
    assert git(project.root, "rev-parse", "main").strip() == new_main
    assert git(project.root, "ls-tree", "--name-only", "main", rel).strip() == rel
    assert git(project.root, "symbolic-ref", "--short", "HEAD").strip() == "feature"  # not switched
    one = api(running, f"/api/memory/{project.ids['feat']}")
    assert one["memory"]["status"] == "curated"
    promoted = running.dash.store.events(["promoted"])
    assert {e[3] for e in promoted} >= {project.ids["feat"]}


def test_the_command_serves_on_loopback_and_prints_the_token_url(project: Project) -> None:
    import re
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    from tests.conftest import cli_env

    proc = subprocess.Popen(
        [sys.executable, "-m", "ccmemory", "dashboard", "--no-browser"],
        cwd=project.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([\w-]+)", line)
        assert m, line
        port, token = m.groups()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/stats?token={token}", timeout=60) as r:
            assert json.loads(r.read())["project"] == running_project_name(project)
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/stats", timeout=60)
        assert err.value.code == 403
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def running_project_name(project: Project) -> str:
    return json.loads(cli(project.root, "stats", "--json").stdout)["project"]
