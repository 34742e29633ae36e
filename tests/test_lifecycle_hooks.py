"""Git hooks: installation (core.hooksPath, chaining, idempotence) and the background reindex after
a pull or a merge, with no manual reindex."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from ccmemory.features.lifecycle import githooks
from tests.conftest import git, init_git
from tests.lifecycle_util import add_memory, cli, commit_all, search, wait_for

REPO = Path(__file__).resolve().parent.parent


def test_shipped_hooks_match_the_installer() -> None:
    for name in githooks.HOOK_NAMES:
        shipped = REPO / "hooks" / name
        assert shipped.read_text() == githooks.render(name, None)
        assert os.access(shipped, os.X_OK)


def test_init_installs_hooks_idempotently_and_can_skip(tmp_path: Path) -> None:
    root = init_git(tmp_path / "r")
    out = cli(root, "init").stdout
    assert out.count("installed git hook") == len(githooks.HOOK_NAMES) == 5
    for name in githooks.HOOK_NAMES:
        text = (root / ".git" / "hooks" / name).read_text()
        assert githooks.MARKER in text
    again = cli(root, "init").stdout
    assert "git hook" not in again  # nothing to do the second time
    other = init_git(tmp_path / "o")
    cli(other, "init", "--no-git-hooks")
    assert not (other / ".git" / "hooks" / "post-merge").exists()


def test_honours_core_hookspath_and_chains_an_existing_hook(tmp_path: Path) -> None:
    root = init_git(tmp_path / "r")
    git(root, "config", "core.hooksPath", "githooks")
    hooks = root / "githooks"
    hooks.mkdir()
    marker = tmp_path / "old-hook-ran"
    old = hooks / "post-checkout"
    old.write_text(f'#!/bin/sh\necho "$@" >> {marker}\nexit 0\n')
    old.chmod(0o755)
    cli(root, "init")
    assert githooks.MARKER in (hooks / "post-checkout").read_text()
    assert "echo" in (hooks / "post-checkout.pre-ccmemory").read_text()
    assert not (root / ".git" / "hooks" / "post-checkout").exists()
    cli(root, "init")  # idempotent: the chained hook is not wrapped twice
    assert githooks.MARKER not in (hooks / "post-checkout.pre-ccmemory").read_text()
    commit_all(root, "init")
    git(root, "checkout", "-q", "-b", "other")
    assert wait_for(lambda: marker.exists(), timeout=10)
    args = marker.read_text().split()
    assert args[-1] == "1"  # the old hook got git's arguments


def test_chained_hook_exit_status_is_passed_on_but_ours_never_fails(tmp_path: Path) -> None:
    root = init_git(tmp_path / "r")
    (root / "f").write_text("x")
    commit_all(root, "one")
    hooks = root / ".git" / "hooks"
    old = hooks / "post-checkout"
    old.write_text("#!/bin/sh\nexit 3\n")
    old.chmod(0o755)
    before = subprocess.run(["git", "checkout", "-q", "-b", "w"], cwd=root, capture_output=True)
    assert before.returncode != 0
    cli(root, "init")
    commit_all(root, "init")
    proc = subprocess.run(["git", "checkout", "-q", "-b", "x"], cwd=root, capture_output=True)
    assert proc.returncode == before.returncode  # exactly what git did before ccmemory was installed
    (hooks / "post-checkout.pre-ccmemory").unlink()
    # a hook pinned to a Python that no longer exists, with no ccmemory on PATH: a silent no-op
    ours = hooks / "post-checkout"
    ours.write_text(githooks.render("post-checkout", "/nonexistent/python"))
    ours.chmod(0o755)
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    started = time.monotonic()
    proc = subprocess.run(["git", "checkout", "-q", "main"], cwd=root, capture_output=True, env=env)
    assert proc.returncode == 0 and proc.stderr == b""
    assert time.monotonic() - started < 5


def _clone_with_hooks(tmp_path: Path) -> tuple[Path, Path, Path]:
    alice = init_git(tmp_path / "alice")
    cli(alice, "init", "--no-git-hooks")
    add_memory(alice, "First memory about the pademelon")
    commit_all(alice, "base")
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(alice), str(remote))
    git(alice, "remote", "add", "origin", str(remote))
    git(alice, "fetch", "-q", "origin")
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(remote), str(bob))
    git(bob, "config", "user.email", "bob@example.com")
    git(bob, "config", "user.name", "Bob")
    out = cli(bob, "init").stdout
    assert "installed git hook" in out
    return alice, remote, bob


def test_pull_updates_content_and_status_without_manual_reindex(tmp_path: Path) -> None:
    alice, _remote, bob = _clone_with_hooks(tmp_path)
    mid, _ = add_memory(alice, "Pulled memory about the potoroo")
    commit_all(alice, "potoroo")
    git(alice, "push", "-q", "origin", "main")
    started = time.monotonic()
    git(bob, "pull", "-q", "--no-rebase", "origin", "main")
    assert time.monotonic() - started < 10  # git is not held up by the reindex
    # the hook's background reindex runs after the pull; wait for it before searching (a search
    # that came first would catch up itself: ccmemory.app.freshness). What is promised is the end
    # state, not which process did the indexing: the log once held "reindex: added 0" (the
    # pulled file already indexed, by nothing the test ran), so no count is asserted here
    log = bob / ".ccmemory" / "local" / "githooks.log"
    assert wait_for(lambda: log.exists() and "reindex:" in log.read_text(), timeout=30)
    proc = cli(bob, "search", "potoroo", "--json", "--mode", "text")
    found = {h["id"]: h["status"] for h in json.loads(proc.stdout)}
    assert found.get(mid) == "curated", (found, proc.stderr, log.read_text())
    assert "reindex failed" not in log.read_text()


def test_merge_and_branch_switch_refresh_status_in_the_background(tmp_path: Path) -> None:
    root = init_git(tmp_path / "r")
    cli(root, "init")
    commit_all(root, "init")
    git(root, "checkout", "-q", "-b", "feat")
    mid, _ = add_memory(root, "Hooked memory about the bettong")
    commit_all(root, "bettong")
    cli(root, "reindex", "--no-embed")
    assert search(root, "bettong")[mid]["status"] == "developmental"
    git(root, "checkout", "-q", "main")  # post-checkout: the memory leaves the working tree
    assert wait_for(lambda: mid not in search(root, "bettong"), timeout=30)
    git(root, "merge", "-q", "--no-ff", "-m", "merge feat", "feat")  # post-merge
    assert wait_for(lambda: search(root, "bettong").get(mid, {}).get("status") == "curated", timeout=30)


def test_rebase_and_amend_run_the_post_rewrite_reindex(tmp_path: Path) -> None:
    root = init_git(tmp_path / "r")
    cli(root, "init")
    commit_all(root, "init")
    git(root, "checkout", "-q", "-b", "feat")
    mid, _ = add_memory(root, "Rebased memory about the quokka")
    commit_all(root, "feat")
    git(root, "checkout", "-q", "main")
    main_mid, _ = add_memory(root, "Main memory about the quokka")
    commit_all(root, "main")
    git(root, "checkout", "-q", "feat")
    log = root / ".ccmemory" / "local" / "githooks.log"
    assert wait_for(lambda: log.exists() and "reindex:" in log.read_text(), timeout=30)
    git(root, "rebase", "-q", "main")
    assert wait_for(
        lambda: (
            {mid, main_mid} <= set(search(root, "quokka"))
            and search(root, "quokka")[main_mid]["status"] == "curated"
            and search(root, "quokka")[mid]["status"] == "developmental"
        ),
        timeout=30,
    )
    runs = log.read_text().count("reindex:")
    git(root, "commit", "-q", "--amend", "-m", "feat, reworded")  # post-rewrite (amend)
    assert wait_for(lambda: log.read_text().count("reindex:") > runs, timeout=30)


def test_a_plain_commit_on_main_makes_the_memory_curated_without_reindex(tmp_path: Path) -> None:
    """`ccmemory new … && git commit` on main: post-commit refreshes the index, so search shows
    the memory curated and a hand-written file gets its id (issue 33); a commit that does not touch
    .ccmemory/ starts nothing."""
    root = init_git(tmp_path / "r")
    cli(root, "init")
    commit_all(root, "init")
    log = root / ".ccmemory" / "local" / "githooks.log"
    runs = lambda: log.read_text().count("reindex:") if log.exists() else 0  # noqa: E731
    assert wait_for(lambda: runs() >= 1, timeout=30)  # the init commit added .ccmemory/ files
    time.sleep(1.0)
    before = runs()
    (root / "notes.txt").write_text("not a memory")
    commit_all(root, "no memory here")
    time.sleep(1.5)
    assert runs() == before  # the hook's condition: .ccmemory/ untouched, no reindex started
    out = cli(root, "new", "fact", "The wallaby service listens on port 7300", "--json").stdout
    mid = json.loads(out)["id"]
    assert search(root, "wallaby")[mid]["status"] == "developmental"  # written, not committed yet
    commit_all(root, "wallaby")
    assert wait_for(lambda: search(root, "wallaby").get(mid, {}).get("status") == "curated", timeout=30)


def test_a_read_catches_up_when_git_moved_without_a_hook(tmp_path: Path) -> None:
    """No hooks (a fresh clone, init --no-git-hooks): a commit on main, then a `git reset`, move
    HEAD behind the index's back; the next CLI read brings the index level first (issue 33)."""
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "a@example.com")
    git(root, "config", "user.name", "A")
    cli(root, "init", "--no-git-hooks")
    made = json.loads(cli(root, "new", "fact", "The heron count is weekly", "--json").stdout)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")
    proc = cli(root, "search", "heron count", "--json")
    assert json.loads(proc.stdout)[0]["status"] == "curated"  # not the stale "developmental"
    assert "index brought up to date first (HEAD moved" in proc.stderr
    assert "brought up to date" not in cli(root, "search", "heron count").stderr  # once
    (root / made["path"]).unlink()
    git(root, "commit", "-qam", "drop it")
    assert json.loads(cli(root, "search", "heron count", "--json").stdout) == []
    git(root, "reset", "-q", "--hard", "HEAD~1")  # runs no hook: the memory is back
    hits = json.loads(cli(root, "search", "heron count", "--json").stdout)
    assert [h["id"] for h in hits] == [made["id"]] and hits[0]["status"] == "curated"
