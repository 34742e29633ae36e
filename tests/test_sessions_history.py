"""Session history, the rest of issue 28: commits at start and end, published summaries under
`.ccmemory/sessions/` (and the site's Sessions page), `sessions archive`, `ccmemory://session/<id>`
links. Everything through the real CLI, hooks, MCP server and a real browser."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.capture_helpers import (
    assert_no_secrets,
    hook_env,
    make_repo,
    run_hook,
    secret_text,
    wait_for_worker,
)
from tests.conftest import REPO_ROOT, RunCli
from tests.lifecycle_util import add_memory
from tests.session_transcripts import write_transcript

try:
    from tests import site_cdp
except ImportError:  # pragma: no cover
    import site_cdp  # type: ignore[no-redef]

SESSIONS = Path(".ccmemory/local/sessions")
PUBLISHED = Path(".ccmemory/sessions")
HOSTILE_PROMPT = (
    "fix the <script>window.__pwned=1</script> banner, see [docs](javascript:window.__pwned=2) "
    '<img src=x onerror="window.__pwned=3"> # not a heading'
)


def _commit(repo: Path, message: str, when: str) -> str:
    env = {**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
    subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", message], check=True, env=env
    )
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def _import(run_cli: RunCli, repo: Path, path: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(repo, "import", "--provider", "rules", str(path))


def _config(repo: Path, text: str) -> None:
    (repo / ".ccmemory" / "config.yaml").write_text(text, encoding="utf-8")


# --- commits at start and end ----------------------------------------------------------------------


def test_a_record_holds_the_commits_at_start_and_end(tmp_path: Path, run_cli: RunCli) -> None:
    repo = make_repo(tmp_path)
    before = _commit(repo, "before", "2026-01-09T09:00:00Z")
    during = _commit(repo, "during", "2026-01-10T10:00:03Z")  # between the first and last event
    _commit(repo, "after", "2026-01-11T09:00:00Z")
    turns = [{"prompt": "tidy the parser", "bash": ("make lint", 0)}, {"prompt": "now the lexer"}]
    write_transcript(tmp_path / "t" / "c.jsonl", "commit-1", turns, day="2026-01-10")
    _import(run_cli, repo, tmp_path / "t")
    rec = json.loads(run_cli(repo, "sessions", "show", "commit-1", "--json").stdout)
    assert (rec["commit_start"], rec["commit_end"]) == (before, during)
    shown = run_cli(repo, "sessions", "show", "commit-1").stdout
    assert f"commits: {before[:12]} → {during[:12]}" in shown
    # a session older than every commit has no start commit; outside git, none at all, no error
    write_transcript(tmp_path / "t2" / "o.jsonl", "old-1", [{"prompt": "x"}], day="2025-06-01")
    _import(run_cli, repo, tmp_path / "t2")
    old = json.loads(run_cli(repo, "sessions", "show", "old-1", "--json").stdout)
    assert old["commit_start"] is None and old["commit_end"] is None
    plain = tmp_path / "plain"
    (plain / ".ccmemory").mkdir(parents=True)
    _import(run_cli, plain, tmp_path / "t")
    rec = json.loads(run_cli(plain, "sessions", "show", "commit-1", "--json").stdout)
    assert rec["commit_start"] is None and rec["commit_end"] is None
    assert "commits: - → -" in run_cli(plain, "sessions", "show", "commit-1").stdout


def test_a_live_session_ends_on_head_and_publishes_at_stop(tmp_path: Path) -> None:
    """The capture worker (after the Stop hook) writes the end commit from HEAD and, with
    `sessions.publish: true`, the summary under .ccmemory/sessions/."""
    repo = make_repo(tmp_path)
    _config(repo, "sessions:\n  publish: true\n")
    now = int(time.time())
    start = _commit(repo, "start", f"@{now - 3600} +0000")
    t = write_transcript(
        tmp_path / "t" / "live.jsonl", "live-pub-1", [{"prompt": "rename the retry helper"}], cwd=str(repo)
    )
    env = hook_env()
    base = {"session_id": "live-pub-1", "transcript_path": str(t), "cwd": str(repo)}
    prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": "rename the retry helper"}
    run_hook("UserPromptSubmit", prompt, repo, env)
    head = _commit(repo, "work done in the session", f"@{now + 5} +0000")  # after the first event
    run_hook("Stop", {**base, "hook_event_name": "Stop"}, repo, env)
    wait_for_worker(repo)
    rec = json.loads((repo / SESSIONS / "live-pub-1.json").read_text())
    assert (rec["commit_start"], rec["commit_end"]) == (start, head)
    published = repo / PUBLISHED / f"{rec['start'][:10]}-live-pub.md"
    text = published.read_text(encoding="utf-8")
    assert "session: live-pub-1" in text and f"commit_end: {head}" in text
    assert "prompts:" not in text  # prompts are published only when asked for


# --- publishing ------------------------------------------------------------------------------------


def test_published_summaries_are_redacted_escaped_and_never_overwrite_edits(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo = make_repo(tmp_path)
    run_cli(repo, "init")
    _config(repo, "sessions:\n  publish: true\n  publish_prompts: 2\n")
    turns = [
        {"prompt": HOSTILE_PROMPT + " " + secret_text(), "edit": "src/banner.py"},
        {"prompt": "second prompt " + "y" * 900},
        {"prompt": "third prompt, not published"},
    ]
    write_transcript(tmp_path / "t" / "p.jsonl", "pub-aaaa-1", turns, day="2026-02-03")
    _import(run_cli, repo, tmp_path / "t")
    path = repo / PUBLISHED / "2026-02-03-pub-aaaa.md"
    text = path.read_text(encoding="utf-8")
    assert_no_secrets(text, "a published session")
    fm, body = text.split("\n---\n", 1)
    meta = __import__("yaml").safe_load(fm[4:])
    assert meta["session"] == "pub-aaaa-1" and meta["files_changed"] == ["src/banner.py"]
    assert len(meta["prompts"]) == 2 and all(len(p) <= 300 for p in meta["prompts"])
    assert "third prompt" not in text
    # the body is one escaped line: no tag, link or heading survives markdown
    import mistune

    html = mistune.html(body)
    assert "<script" not in html and "<img" not in html and "<a " not in html and "<h1>not" not in html
    assert "&lt;script&gt;" in html
    # memory-folder tools ignore the folder
    assert run_cli(repo, "check").returncode == 0
    # a rewrite refreshes an untouched file; an edited one is left alone, with a note
    path.write_text(text + "\nReviewed by Ana.\n", encoding="utf-8")
    proc = _import(run_cli, repo, tmp_path / "t")
    assert "was edited since ccmemory wrote it; left alone" in proc.stderr
    assert path.read_text(encoding="utf-8").endswith("Reviewed by Ana.\n")
    path.unlink()
    proc = _import(run_cli, repo, tmp_path / "t")
    assert "was deleted since ccmemory wrote it" in proc.stderr and not path.exists()
    # a file at that path that ccmemory did not write for this record is not touched
    (repo / SESSIONS / "pub-aaaa-1.json").unlink()
    path.write_text("mine\n", encoding="utf-8")
    assert "exists and was not written for this record" in _import(run_cli, repo, tmp_path / "t").stderr
    out = json.loads(run_cli(repo, "sessions", "publish", "--json").stdout)
    assert out[0]["status"] == "taken" and path.read_text() == "mine\n"
    path.unlink()
    out = json.loads(run_cli(repo, "sessions", "publish", "pub-aaaa", "--prompts", "0", "--json").stdout)
    assert out[0]["status"] == "written" and "prompts:" not in path.read_text()


def test_publishing_is_off_by_default_and_refuses_a_symlinked_folder(tmp_path: Path, run_cli: RunCli) -> None:
    repo = make_repo(tmp_path)
    write_transcript(tmp_path / "t" / "a.jsonl", "quiet-1", [{"prompt": "hello"}])
    _import(run_cli, repo, tmp_path / "t")
    assert not (repo / PUBLISHED).exists()
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / PUBLISHED).symlink_to(outside, target_is_directory=True)
    out = json.loads(run_cli(repo, "sessions", "publish", "--json").stdout)
    assert out[0]["status"] == "refused" and list(outside.iterdir()) == []


def _site_repo(tmp_path: Path, run_cli: RunCli) -> tuple[Path, str]:
    repo = make_repo(tmp_path)
    run_cli(repo, "init")
    mid, _ = add_memory(repo, "Banner text comes from the CMS", "decision", session="site-sess-1")
    turns = [{"prompt": HOSTILE_PROMPT, "edit": "src/banner.py"}]
    write_transcript(tmp_path / "t" / "s.jsonl", "site-sess-1", turns, day="2026-03-04")
    _import(run_cli, repo, tmp_path / "t")
    out = json.loads(run_cli(repo, "sessions", "publish", "--prompts", "1", "--json").stdout)
    assert out[0]["status"] == "written"
    return repo, mid


def test_the_site_shows_a_session_log(tmp_path: Path, run_cli: RunCli) -> None:
    repo, mid = _site_repo(tmp_path, run_cli)
    run_cli(repo, "site", "build")
    site = repo / ".ccmemory" / "local" / "site-build" / "site"
    page = (site / "sessions.html").read_text(encoding="utf-8")
    assert "site-sess-1" in page and "src/banner.py" in page
    assert f'href="memories/{mid}.html"' in page  # the memory it captured, linked
    assert "<script>window.__pwned" not in page and "&lt;script&gt;window.__pwned" in page
    assert 'href="javascript' not in page.lower() and "<img src=x" not in page
    assert "Sessions" in (site / "index.html").read_text(encoding="utf-8")  # in the navigation


@pytest.fixture(scope="module")
def browser() -> Iterator[site_cdp.Browser]:
    with site_cdp.open_browser() as b:
        yield b


@pytest.mark.browser
def test_browser_a_hostile_published_prompt_is_inert_on_the_site(
    tmp_path: Path, run_cli: RunCli, browser: site_cdp.Browser
) -> None:
    from tests._webserver import serve_folder

    repo, _ = _site_repo(tmp_path, run_cli)
    run_cli(repo, "site", "build")
    with serve_folder(repo / ".ccmemory" / "local" / "site-build" / "site") as base:
        browser.goto(f"{base}/sessions.html")
        browser.wait_for("document.readyState === 'complete'")
        assert browser.eval("typeof window.__pwned") == "undefined"
        assert browser.eval("document.querySelectorAll('a[href^=\"javascript\" i]').length") == 0
        text = browser.eval("document.querySelector('.ccm-session').textContent")
        assert "<script>window.__pwned=1</script>" in text  # shown as text
        browser.screenshot(REPO_ROOT / "test-artifacts" / "site" / "site-sessions.png")


# --- archive ---------------------------------------------------------------------------------------


def test_archive_moves_old_records_into_monthly_gzip_and_show_still_reads_them(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo = make_repo(tmp_path)
    for sid, day in (("arc-jan-1", "2026-01-05"), ("arc-jan-2", "2026-01-20"), ("arc-feb-1", "2026-02-02")):
        write_transcript(tmp_path / "t" / f"{sid}.jsonl", sid, [{"prompt": f"task of {sid}"}], day=day)
    write_transcript(tmp_path / "t" / "new.jsonl", "arc-new", [{"prompt": "fresh work"}], day="2099-01-01")
    _import(run_cli, repo, tmp_path / "t")
    local = repo / ".ccmemory" / "local"
    keep = [local / "spool" / "x.jsonl", repo / ".ccmemory" / "keep.md"]
    for p in keep:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("{}")
    dry = json.loads(run_cli(repo, "sessions", "archive", "--older-than", "30", "--dry-run", "--json").stdout)
    assert sorted(dry["archived"]) == ["arc-feb-1", "arc-jan-1", "arc-jan-2"] and dry["kept"] == 1
    assert len(list((repo / SESSIONS).glob("*.json"))) == 4
    out = json.loads(run_cli(repo, "sessions", "archive", "--older-than", "30", "--json").stdout)
    assert out["files"] == [
        ".ccmemory/local/sessions/archive/2026-01.jsonl.gz",
        ".ccmemory/local/sessions/archive/2026-02.jsonl.gz",
    ]
    assert [p.name for p in (repo / SESSIONS).glob("*.json")] == ["arc-new.json"]
    with gzip.open(repo / out["files"][0], "rt") as fh:
        assert [json.loads(line)["id"] for line in fh] == ["arc-jan-1", "arc-jan-2"]
    listed = json.loads(run_cli(repo, "sessions", "list", "--json").stdout)
    assert [r["id"] for r in listed] == ["arc-new"]
    found = json.loads(run_cli(repo, "sessions", "search", "task", "--text-only", "--json").stdout)
    assert found == []
    rec = json.loads(run_cli(repo, "sessions", "show", "arc-jan-2", "--json").stdout)
    assert rec["archived"] is True and rec["prompts"] == ["task of arc-jan-2"]
    assert "(archived" in run_cli(repo, "sessions", "show", "arc-feb").stdout  # a prefix works too
    # re-importing and archiving again keeps one copy; nothing outside local/sessions is touched
    _import(run_cli, repo, tmp_path / "t")
    run_cli(repo, "sessions", "archive", "--older-than", "30")
    with gzip.open(repo / out["files"][0], "rt") as fh:
        assert len(fh.readlines()) == 2
    assert all(p.exists() for p in keep)
    # prune never deletes the archive
    run_cli(repo, "sessions", "prune", "--max-mb", "0")
    assert (repo / out["files"][0]).exists()


# --- ccmemory://session/<id> links -----------------------------------------------------------------


def test_a_memory_links_to_its_session_in_show_and_mcp(tmp_path: Path, run_cli: RunCli) -> None:
    from tests._mcp_client import SyncClient
    from tests._mcp_client import make_repo as mcp_repo

    repo = mcp_repo(tmp_path / "repo")
    mid, _ = add_memory(repo, "Retry the upload three times", "decision", session="link-sess-1")
    write_transcript(tmp_path / "t" / "l.jsonl", "link-sess-1", [{"prompt": "make uploads retry"}])
    _import(run_cli, repo, tmp_path / "t")
    run_cli(repo, "reindex", "--no-embed")
    uri = "ccmemory://session/link-sess-1"
    assert f"captured in {uri}" in run_cli(repo, "show", mid).stdout
    assert json.loads(run_cli(repo, "show", mid, "--json").stdout)["session_uri"] == uri
    rec = json.loads(run_cli(repo, "sessions", "show", uri, "--json").stdout)
    assert rec["id"] == "link-sess-1" and rec["memories"] == [mid] and rec["uri"] == uri
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_TOOLS": "full"}) as client:
        got: dict[str, Any] = client.call("get_memory", {"id": mid})
        assert got["session_uri"] == uri
        one = client.call("sessions", {"action": "get", "id": got["session_uri"]})
        assert one["session"]["id"] == "link-sess-1" and one["session"]["memories"] == [mid]


# --- timeline --------------------------------------------------------------------------------------


def test_a_timeline_around_a_query_a_session_or_a_memory(tmp_path: Path, run_cli: RunCli) -> None:
    from tests._mcp_client import SyncClient
    from tests._mcp_client import make_repo as mcp_repo

    repo = mcp_repo(tmp_path / "repo")
    topics = ["set up the billing export", "fix the flaky login test", "add dark mode to the console",
              "rotate the staging database password", "write the release notes"]  # fmt: skip
    for i, prompt in enumerate(topics):
        write_transcript(
            tmp_path / "t" / f"s{i}.jsonl", f"tl-sess-{i}", [{"prompt": prompt}], day=f"2026-03-0{i + 1}"
        )
    mid, _ = add_memory(repo, "Dark mode follows the system setting", "decision", session="tl-sess-2")
    _import(run_cli, repo, tmp_path / "t")
    run_cli(repo, "reindex", "--no-embed")

    def ids(*args: str) -> list[tuple[str, bool]]:
        out = json.loads(run_cli(repo, "sessions", "timeline", *args, "--json").stdout)["sessions"]
        return [(r["id"], bool(r.get("anchor"))) for r in out]

    want = [("tl-sess-1", False), ("tl-sess-2", True), ("tl-sess-3", False)]
    assert ids("dark mode console", "--around", "1", "--text-only") == want  # oldest first
    assert ids("--session", "ccmemory://session/tl-sess-2", "--around", "1") == want
    assert ids("--memory", mid, "--around", "1") == want
    assert [i for i, _ in ids("--session", "tl-sess-0")] == [
        "tl-sess-0",
        "tl-sess-1",
        "tl-sess-2",
    ]  # the edge
    text = run_cli(repo, "sessions", "timeline", "--session", "tl-sess-2", "--around", "1").stdout
    assert "> tl-sess-2" in text and "  tl-sess-1" in text
    bad = run_cli(repo, "sessions", "timeline", "--session", "nope", check=False)
    assert bad.returncode == 1 and "no session record 'nope'" in bad.stderr and "Traceback" not in bad.stderr
    assert run_cli(repo, "sessions", "timeline", check=False).returncode == 2  # nothing to anchor on
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_TOOLS": "full"}) as client:
        got = client.call("sessions", {"action": "timeline", "id": "tl-sess-4", "limit": 1})
        assert [(r["id"], bool(r.get("anchor"))) for r in got["sessions"]] == [
            ("tl-sess-3", False),
            ("tl-sess-4", True),
        ]
        assert client.error("sessions", {"action": "timeline", "id": "nope"})["code"] == "not_found"
