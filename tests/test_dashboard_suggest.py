"""The dashboard's Suggestions panel (issue 31) over a real git repository and the real server:
the suggestions with their evidence, Accept (a memory written through the builder, a new file in
`git status`) and Dismiss as guarded POST actions, and both clicked in Chromium."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccmemory.surfaces.dashboard.app import csrf_for
from tests.capture_helpers import read_memory
from tests.conftest import git, init_git
from tests.dashboard_util import Running
from tests.lifecycle_util import add_memory, cli, commit_all

try:
    from tests import site_cdp
except ImportError:  # pragma: no cover
    import site_cdp  # type: ignore[no-redef]

RULE = "Every change is reviewed"


def build(root: Path) -> dict[str, list[str]]:
    """Three gotchas on one file (a `file` suggestion) and two exceptions to one rule (an
    `exceptions` suggestion), committed on main."""
    from ccmemory.app.vaultinit import init_vault

    init_git(root)
    init_vault(root)
    ids: dict[str, list[str]] = {"file": [], "rule": []}
    for n in range(3):
        ids["file"].append(add_memory(root, f"Firing gotcha {n}", "gotcha", files=["src/firing.py"])[0])
    for n in range(2):
        mid, _ = add_memory(
            root,
            f"Hotfix {n} skipped review",
            "exception",
            fields={"rule_broken": RULE, "justification": f"outage {n}"},
        )
        ids["rule"].append(mid)
    commit_all(root, "memories")
    return ids


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Running, dict[str, list[str]]]]:
    ids = build(tmp_path / "repo")
    r = Running(tmp_path / "repo")
    try:
        yield r, ids
    finally:
        r.close()


def get(r: Running, path: str) -> Any:
    status, _, body = r.request("GET", path)
    assert status == 200, body[:500]
    return json.loads(body)


def by_kind(r: Running) -> dict[str, dict[str, Any]]:
    return {s["kind"]: s for s in get(r, "/api/suggestions")["suggestions"]}


def test_panel_lists_suggestions_with_evidence_and_the_actions_act(
    served: tuple[Running, dict[str, list[str]]],
) -> None:
    r, ids = served
    root = r.dash.root
    found = by_kind(r)
    assert set(found) == {"file", "exceptions"}
    assert set(found["file"]["evidence"]) == set(ids["file"])
    assert [m["id"] for m in found["exceptions"]["evidence_memories"]] == found["exceptions"]["evidence"]
    assert found["exceptions"]["proposes"]["type"] == "question"
    # the CLI lists the same suggestions
    cli_keys = {s["key"] for s in json.loads(cli(root, "suggest", "--json").stdout)}
    assert cli_keys == {s["key"] for s in found.values()}
    # the page: kind, what it proposes, the evidence linked to its memories' pages, the buttons
    status, _, page = r.request("GET", "/suggestions")
    html = page.decode()
    assert status == 200 and "src/firing.py needs care: 3 warnings about it" in html
    for mid in ids["file"] + ids["rule"]:
        assert f'href="/memory/{mid}"' in html
    key = found["exceptions"]["key"]
    assert f'class="accept-suggestion" data-key="{key}"' in html

    # the guard of every POST: no CSRF token, another origin, another site, a GET
    csrf = csrf_for(r.server.token)
    url = f"/api/suggestions/accept?key={key}"
    assert r.request("POST", url)[0] == 403
    assert r.request("POST", url, headers={"X-CSRF-Token": csrf, "Origin": "http://evil.example"})[0] == 403
    assert r.request("POST", url, headers={"X-CSRF-Token": csrf, "Sec-Fetch-Site": "cross-site"})[0] == 403
    assert r.request("GET", url)[0] == 405
    assert r.request("POST", "/api/suggestions/dismiss?key=" + found["file"]["key"])[0] == 403
    assert set(by_kind(r)) == {"file", "exceptions"}  # nothing happened
    assert git(root, "status", "--porcelain").strip() == ""

    # accept: the proposed memory, written through the builder, a new file for the user to commit
    status, _, body = r.request("POST", url, headers={"X-CSRF-Token": csrf})
    assert status == 200, body
    done = json.loads(body)
    assert git(root, "status", "--porcelain", "--untracked-files=all").strip() == f"?? {done['path']}"
    memory = read_memory(root / done["path"])
    assert memory.type == "question" and memory.source == "rules" and memory.id == done["id"]
    assert RULE.lower() in str(memory.fields["question"]).lower()
    assert {x.target for x in memory.relations if x.type == "RELATES_TO"} == set(ids["rule"])
    assert set(by_kind(r)) == {"file"}
    again = r.request("POST", url, headers={"X-CSRF-Token": csrf})  # a second click writes nothing
    assert again[0] == 404 and b"no current suggestion" in again[2]
    assert git(root, "status", "--porcelain", "--untracked-files=all").strip() == f"?? {done['path']}"
    assert get(r, f"/api/memory/{done['id']}")["memory"]["title"] == memory.title

    # dismiss: remembered (the CLI does not list it either), writes no memory
    fkey = found["file"]["key"]
    status, _, body = r.request(
        "POST", f"/api/suggestions/dismiss?key={fkey}", headers={"X-CSRF-Token": csrf}
    )
    assert status == 200 and json.loads(body) == {"dismissed": fkey}
    assert by_kind(r) == {}
    assert json.loads(cli(root, "suggest", "--json").stdout) == []
    assert git(root, "status", "--porcelain", "--untracked-files=all").strip() == f"?? {done['path']}"
    # an unknown or missing key
    for action in ("accept", "dismiss"):
        assert (
            r.request("POST", f"/api/suggestions/{action}?key=nope", headers={"X-CSRF-Token": csrf})[0] == 404
        )
        assert r.request("POST", f"/api/suggestions/{action}", headers={"X-CSRF-Token": csrf})[0] == 400


@pytest.mark.browser
def test_browser_accept_and_dismiss_clicks(served: tuple[Running, dict[str, list[str]]]) -> None:
    r, ids = served
    found = by_kind(r)
    with site_cdp.open_browser(1300, 1000) as b:
        b.goto(r.server.url)
        b.goto(f"{r.base}/suggestions")
        b.wait_for("document.readyState === 'complete'")
        assert b.eval("document.querySelectorAll('li.suggestion').length") == 2
        sel = f"li.suggestion[data-key='{found['exceptions']['key']}'] button.accept-suggestion"
        b.eval(f'document.querySelector("{sel}").click()')
        path = b.wait_for("document.body.getAttribute('data-suggestion')", timeout=60)
        assert path not in ("error", "dismissed") and (r.dash.root / path).is_file()
        assert b.eval("document.querySelectorAll('li.suggestion').length") == 1
        sel = f"li.suggestion[data-key='{found['file']['key']}'] button.dismiss-suggestion"
        b.eval("document.body.removeAttribute('data-suggestion')")
        b.eval(f'document.querySelector("{sel}").click()')
        assert b.wait_for("document.body.getAttribute('data-suggestion')", timeout=60) == "dismissed"
        b.goto(f"{r.base}/suggestions")  # a fresh load: both gone
        b.wait_for("document.readyState === 'complete'")
        assert b.eval("document.querySelectorAll('li.suggestion').length") == 0
    assert read_memory(r.dash.root / path).type == "question"
    assert ids["rule"]
