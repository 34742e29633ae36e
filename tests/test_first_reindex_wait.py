"""A read that comes while a new clone's or worktree's first reindex runs (a git hook's, in the
background) waits for it instead of answering from the half-built index."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import git
from tests.lifecycle_util import add_memory, commit_all, conflicted_memory, search

_HALF_BUILT = """
import sqlite3, sys, time
import subprocess
from pathlib import Path
from ccmemory.app.reindexlock import exclusive
from ccmemory.app.service import Service

root = Path(sys.argv[1])
with Service.open(root) as svc:
    local = svc.vault.dir / "local"
    with exclusive(local):
        # what a first reindex has written half-way: its file records, no memory yet, no state
        svc.reindex()
        svc.index.set_sync_state(svc.project, None)
        svc.index.db.execute("DELETE FROM memories")
        (local / "half-built").write_text("1")
        time.sleep(1.5)
        svc.reindex(full=True)
"""


def test_a_read_during_a_new_worktrees_first_reindex_waits_for_it(repo: Path, tmp_path: Path) -> None:
    """`git worktree add` starts the first reindex of the new worktree in the background; a
    search (or SessionStart) that came while it ran answered from the half-built index: nothing,
    exit 0, no notice. It waits for that reindex now (up to CATCH_UP_WAIT / SESSION_START_WAIT)."""
    import sys
    import time

    from tests.capture_helpers import hook_env, run_hook

    wanted, _ = add_memory(repo, "Decision about the wombat burrow")
    commit_all(repo, "one")
    for reader in ("search", "session-start"):
        wt = tmp_path / f"wt-{reader}"
        git(repo, "worktree", "add", "-q", "-b", f"b-{reader}", str(wt))
        (wt / ".ccmemory" / "local").mkdir(parents=True, exist_ok=True)
        holder = subprocess.Popen([sys.executable, "-c", _HALF_BUILT, str(wt)], env=hook_env())
        try:
            for _ in range(300):
                if (wt / ".ccmemory" / "local" / "half-built").exists():
                    break
                time.sleep(0.05)
            if reader == "search":
                assert set(search(wt, "wombat")) == {wanted}
            else:
                payload = {
                    "session_id": "s",
                    "cwd": str(wt),
                    "hook_event_name": "SessionStart",
                    "source": "startup",
                }
                proc = run_hook("SessionStart", payload, wt, hook_env(CCMEMORY_NO_WORKER="1"))
                assert "wombat" in proc.stdout.decode(), proc.stdout
        finally:
            assert holder.wait(timeout=60) == 0


def test_a_linked_worktree_is_the_same_project_as_its_main_checkout(repo: Path, tmp_path: Path) -> None:
    """Without `project:` in config.yaml the project is the repository's folder name; a linked
    worktree's folder (`../wt-feature`) named another project, split off the repository's on a
    shared server. A submodule (its `.git` a file too) keeps its own name."""
    from ccmemory.core.config import load_config
    from ccmemory.core.projectname import default_project
    from ccmemory.features.recall.run import Context

    add_memory(repo, "Decision about the numbat")
    commit_all(repo, "one")
    wt = tmp_path / "wt-feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    assert default_project(wt) == default_project(repo) == repo.name == "repo"
    assert load_config(wt).project == "repo"
    assert Context(str(wt), "s").project == "repo"  # the recall hooks' own lookup
    sub = tmp_path / "super" / "lib"
    sub.mkdir(parents=True)
    (sub / ".git").write_text("gitdir: ../.git/modules/lib\n")
    assert default_project(sub) == "lib"
    (sub / ".git").write_text("not a gitdir line\n")
    assert default_project(sub) == "lib"


def test_a_merge_abort_after_a_conflicted_memory_file_needs_no_manual_reindex(repo: Path) -> None:
    """A merge conflict in a memory file leaves it invalid (conflict markers) and out of the index;
    `git merge --abort` puts the file back but runs no hook and moves no commit, so every read
    said the file was invalid until a hand-run `reindex`. A read now sees the invalid file changed."""
    mid, _ = conflicted_memory(
        repo,
        "Decision about the echidna diet",
        ours="Decision about the echidna diet, termites",
        theirs="Decision about the echidna diet, ants",
    )
    assert mid not in search(repo, "echidna")  # the conflicted file is left out
    git(repo, "merge", "--abort")
    found = search(repo, "echidna")
    assert mid in found and "termites" in found[mid]["title"]


def test_an_invalid_file_that_did_not_change_never_sends_a_read_to_reindex(repo: Path) -> None:
    """The check looks at the content: a committed invalid file whose stat alone changed (a
    checkout rewrote it, `touch`) must not make every command reindex first."""
    import os

    from ccmemory.app.freshness import moved
    from ccmemory.app.service import Service

    bad = repo / ".ccmemory" / "facts" / "bad.md"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text("---\ntype: fact\ntitle: [unclosed\n---\nx\n")
    add_memory(repo, "Fact about the bandicoot", "fact")
    commit_all(repo, "with an invalid file")
    search(repo, "bandicoot")  # the catch-up reindex records the invalid file
    os.utime(bad, (1_000_000_000, 1_000_000_000))
    with Service.open(repo) as svc:
        assert moved(svc) is None
    bad.write_text("---\ntype: fact\ntitle: Fixed by hand\n---\nx\n")
    with Service.open(repo) as svc:
        assert moved(svc) == "an invalid memory file changed"
