"""Memory-only promotion: plumbing on main, nothing else touched; conflicts refused."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git
from tests.lifecycle_util import add_memory, cli, commit_all, search


def _feature(repo: Path) -> tuple[str, str]:
    add_memory(repo, "Base memory about the lyrebird")
    (repo / "app.py").write_text("print('v1')\n")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    mid, rel = add_memory(repo, "Cache invalidation uses the cassowary pattern")
    (repo / "app.py").write_text("print('v2')\n")
    commit_all(repo, "feature work")
    return mid, rel


def test_promote_commits_only_memories_onto_main(repo: Path) -> None:
    mid, rel = _feature(repo)
    head_before = git(repo, "rev-parse", "HEAD").strip()
    main_before = git(repo, "rev-parse", "main").strip()
    (repo / "app.py").write_text("print('uncommitted edit')\n")  # a dirty working tree stays as is
    add_memory(repo, "Uncommitted memory about the emu")  # not committed: not promoted
    status_before = git(repo, "status", "--porcelain")

    dry = json.loads(cli(repo, "promote", "--dry-run", "--json").stdout)
    assert dry["new"] is None and [c["path"] for c in dry["changes"]] == [rel]
    assert git(repo, "rev-parse", "main").strip() == main_before

    out = cli(repo, "promote")
    assert "promoted 1 memory file(s) from feature into main" in out.stdout
    assert "1 uncommitted memory file change(s) are not included" in out.stderr
    # nothing of the user's state moved
    assert git(repo, "rev-parse", "HEAD").strip() == head_before
    assert git(repo, "symbolic-ref", "--short", "HEAD").strip() == "feature"
    assert git(repo, "status", "--porcelain") == status_before
    assert (repo / "app.py").read_text() == "print('uncommitted edit')\n"
    # main got exactly the memory file, as one commit on top of the old main
    new_main = git(repo, "rev-parse", "main").strip()
    assert git(repo, "rev-parse", "main^").strip() == main_before
    assert git(repo, "rev-list", "--parents", "-n", "1", "main").split()[1:] == [main_before]
    changed = git(repo, "diff", "--name-only", main_before, new_main).split()
    assert changed == [rel]
    assert git(repo, "show", "main:app.py") == "print('v1')\n"
    assert "Ccmemory-Promoted-From: feature" in git(repo, "log", "-1", "--format=%B", "main")
    # and it is curated now (promote reindexed)
    assert search(repo, "cassowary")[mid]["status"] == "curated"
    # running it again has nothing left to do
    assert "nothing to promote" in cli(repo, "promote").stdout


def test_full_merge_after_promotion_is_clean_and_keeps_the_code(repo: Path) -> None:
    _feature(repo)
    cli(repo, "promote")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    assert (repo / "app.py").read_text() == "print('v2')\n"  # code was not lost


def test_promote_refuses_on_conflicts_and_changes_nothing(repo: Path) -> None:
    _mid, rel = add_memory(repo, "Shared memory about the brolga")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    p = repo / rel
    p.write_text(p.read_text().replace("about the brolga", "about the brolga (feature edit)"))
    commit_all(repo, "feature edit")
    git(repo, "checkout", "-q", "main")
    p.write_text(p.read_text().replace("about the brolga", "about the brolga (main edit)"))
    commit_all(repo, "main edit")
    git(repo, "checkout", "-q", "-b", "elsewhere")  # main must not be checked out
    main_before = git(repo, "rev-parse", "main").strip()
    proc = cli(repo, "promote", "--branch", "feature", check=False)
    assert proc.returncode == 1
    assert "cannot promote feature" in proc.stderr and rel in proc.stderr
    assert git(repo, "rev-parse", "main").strip() == main_before


def test_promote_refuses_when_main_is_checked_out(repo: Path) -> None:
    _feature(repo)
    git(repo, "checkout", "-q", "main")
    proc = cli(repo, "promote", "--branch", "feature", check=False)
    assert proc.returncode == 1 and "checked out" in proc.stderr


def test_promote_propagates_deletions_and_edits(repo: Path) -> None:
    _a, rel_a = add_memory(repo, "Memory to delete about the galah")
    _b, rel_b = add_memory(repo, "Memory to edit about the cockatoo")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / rel_a).unlink()
    pb = repo / rel_b
    pb.write_text(pb.read_text().replace("about the cockatoo", "about the cockatoo, revised"))
    commit_all(repo, "cleanup")
    cli(repo, "promote")
    assert git(repo, "ls-tree", "--name-only", "main", rel_a).strip() == ""
    assert "revised" in git(repo, "show", f"main:{rel_b}")
