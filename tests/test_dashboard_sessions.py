"""The dashboard's Sessions pages (issue 28) through HTTP against the real server (uvicorn on
127.0.0.1, token cookie), and in Chromium: a hostile prompt is shown as text and runs nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT, init_git
from tests.dashboard_util import Running
from tests.lifecycle_util import add_memory, cli, commit_all
from tests.session_transcripts import write_transcript

try:
    from tests import site_cdp
except ImportError:  # pragma: no cover
    import site_cdp  # type: ignore[no-redef]

HOSTILE = (
    '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> fix [x](javascript:alert(1))'
)


class Proj:
    def __init__(self, root: Path, mid: str):
        self.root, self.mid = root, mid


@pytest.fixture(scope="module")
def proj(tmp_path_factory: pytest.TempPathFactory) -> Proj:
    from ccmemory.app.vaultinit import init_vault

    base = tmp_path_factory.mktemp("dash-sessions")
    root = init_git(base / "repo")
    init_vault(root)
    mid, _ = add_memory(root, "Thumbnails are cached for a day", "decision", session="dash-thumbs-1")
    commit_all(root, "a memory")
    t = base / "t"
    write_transcript(
        t / "a.jsonl",
        "dash-thumbs-1",
        [{"prompt": "speed up the image thumbnail cache", "edit": "src/thumbs.py", "bash": ("pytest -q", 1)}],
        day="2026-03-01",
    )
    write_transcript(
        t / "b.jsonl", "dash-german-2", [{"prompt": "translate the errors to German"}], day="2026-03-02"
    )
    write_transcript(t / "c.jsonl", "dash-hostile-3", [{"prompt": HOSTILE}], day="2026-03-03")
    cli(root, "import", "--provider", "rules", str(t))
    return Proj(root, mid)


@pytest.fixture(scope="module")
def running(proj: Proj) -> Iterator[Running]:
    r = Running(proj.root)
    try:
        yield r
    finally:
        r.close()


def get(r: Running, path: str) -> tuple[int, str]:
    status, _, body = r.request("GET", path)
    return status, body.decode("utf-8")


def test_sessions_list_newest_first_and_search(running: Running) -> None:
    status, html = get(running, "/sessions")
    assert status == 200
    order = [html.index(f"/session/{sid}") for sid in ("dash-hostile-3", "dash-german-2", "dash-thumbs-1")]
    assert order == sorted(order)  # newest first
    assert 'href="/sessions" class="here"' in html  # in the navigation
    status, html = get(running, "/sessions?q=German+error+messages&text=1")
    assert status == 200 and "/session/dash-german-2" in html and "/session/dash-thumbs-1" not in html
    data: Any = json.loads(get(running, "/api/sessions?q=thumbnail&text=1")[1])
    assert data["rows"][0]["id"] == "dash-thumbs-1"
    # the guard covers the new pages too
    status, _, _ = running.request("GET", "/sessions", token=False)
    assert status == 403


def test_one_session_shows_summary_prompts_files_and_memories(running: Running, proj: Proj) -> None:
    status, html = get(running, "/session/dash-thumbs-1")
    assert status == 200
    assert "speed up the image thumbnail cache" in html and "src/thumbs.py" in html
    assert f'href="/memory/{proj.mid}"' in html and "Thumbnails are cached for a day" in html
    assert "$ pytest -q" in html and "OPEN last command failed" in html
    assert "ccmemory://session/dash-thumbs-1" in html
    data: Any = json.loads(get(running, "/api/session/dash-thumbs")[1])  # a prefix works
    assert data["session"]["id"] == "dash-thumbs-1" and data["memories"][0]["id"] == proj.mid
    assert get(running, "/session/no-such-session")[0] == 404
    assert running.request("GET", "/api/session/no-such-session")[0] == 404


def test_every_session_field_is_escaped(running: Running) -> None:
    for path in ("/session/dash-hostile-3", "/sessions", "/sessions?q=pwned&text=1"):
        status, html = get(running, path)
        assert status == 200
        assert "<script>window.__pwned" not in html and "<img src=x" not in html, path
        assert 'href="javascript' not in html.lower()
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in get(running, "/session/dash-hostile-3")[1]


@pytest.fixture(scope="module")
def browser() -> Iterator[site_cdp.Browser]:
    with site_cdp.open_browser(1300, 1000) as b:
        yield b


@pytest.mark.browser
def test_browser_a_hostile_prompt_is_inert(running: Running, browser: site_cdp.Browser) -> None:
    browser.goto(running.server.url)
    for path in ("/sessions", "/session/dash-hostile-3"):
        browser.goto(running.base + path)
        browser.wait_for("document.readyState === 'complete'")
        assert browser.eval("typeof window.__pwned") == "undefined", path
        assert browser.eval("document.querySelectorAll('main img, main script').length") == 0, path
    text = browser.eval("document.getElementById('session-prompts').textContent")
    assert "<script>window.__pwned=1</script>" in text  # shown as text
    shot = browser.screenshot(REPO_ROOT / "test-artifacts" / "dashboard" / "session.png")
    assert shot.stat().st_size > 5000
