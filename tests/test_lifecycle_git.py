"""Status and search follow real git operations: branch, commit, merge, fast-forward, rebase,
revert, cherry-pick, pull from a second clone; concurrent branches; conflict markers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import git, init_git
from tests.lifecycle_util import add_memory, cli, commit_all, conflicted_memory, reindex, search


def _base(repo: Path) -> str:
    add_memory(repo, "Base memory about kangaroo storage")
    return commit_all(repo, "base")


def test_branch_commit_merge_promotes(repo: Path) -> None:
    _base(repo)
    git(repo, "checkout", "-q", "-b", "feature/auth")
    mid, _ = add_memory(repo, "Tokens live in httpOnly cookies wombat")
    reindex(repo)
    assert search(repo, "wombat")[mid]["status"] == "developmental"  # uncommitted
    commit_all(repo, "auth memory")
    reindex(repo)
    assert search(repo, "wombat")[mid]["status"] == "developmental"  # committed on a branch
    git(repo, "checkout", "-q", "main")
    reindex(repo)
    assert mid not in search(repo, "wombat")  # not on main's working tree
    git(repo, "merge", "-q", "--no-ff", "-m", "merge auth", "feature/auth")
    reindex(repo)
    assert search(repo, "wombat")[mid]["status"] == "curated"


def test_fast_forward_and_status_seen_from_the_feature_branch(repo: Path) -> None:
    _base(repo)
    git(repo, "checkout", "-q", "-b", "feat")
    mid, _ = add_memory(repo, "Fast forward platypus decision")
    commit_all(repo, "feat")
    reindex(repo)
    assert search(repo, "platypus")[mid]["status"] == "developmental"
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "feat")
    git(repo, "checkout", "-q", "feat")
    report = reindex(repo)
    # the file did not change on this branch, but main now has it: status flips without edits
    assert report["status_changed"] >= 1
    assert search(repo, "platypus")[mid]["status"] == "curated"


def test_rebase_keeps_memories_developmental_and_searchable(repo: Path) -> None:
    _base(repo)
    git(repo, "checkout", "-q", "-b", "feat")
    mid, _ = add_memory(repo, "Rebased echidna insight", "insight")
    commit_all(repo, "feat memory")
    git(repo, "checkout", "-q", "main")
    other, _ = add_memory(repo, "Main moved on with a quokka fact", "fact")
    commit_all(repo, "main memory")
    git(repo, "checkout", "-q", "feat")
    git(repo, "rebase", "-q", "main")
    reindex(repo)
    found = search(repo, "echidna")
    assert found[mid]["status"] == "developmental"
    assert search(repo, "quokka")[other]["status"] == "curated"


def test_revert_removes_a_curated_memory(repo: Path) -> None:
    _base(repo)
    mid, _ = add_memory(repo, "Reverted dingo decision")
    commit_all(repo, "dingo")
    reindex(repo)
    assert search(repo, "dingo")[mid]["status"] == "curated"
    git(repo, "revert", "--no-edit", "HEAD")
    report = reindex(repo)
    assert report["removed"] == 1
    assert mid not in search(repo, "dingo")


def test_cherry_pick_to_main_makes_it_curated(repo: Path) -> None:
    _base(repo)
    git(repo, "checkout", "-q", "-b", "feat")
    mid, _ = add_memory(repo, "Cherry picked koala gotcha", "gotcha")
    commit_all(repo, "koala")
    add_memory(repo, "Another feature memory about bilby")
    commit_all(repo, "bilby")
    git(repo, "checkout", "-q", "main")
    git(repo, "cherry-pick", "feat~1")
    reindex(repo)
    assert search(repo, "koala")[mid]["status"] == "curated"
    assert not search(repo, "bilby")
    git(repo, "checkout", "-q", "feat")
    reindex(repo)
    assert search(repo, "koala")[mid]["status"] == "curated"  # same path is in main's tree
    assert all(r["status"] == "developmental" for r in search(repo, "bilby").values())


def test_pull_from_a_second_clone(tmp_path: Path, repo: Path) -> None:
    _base(repo)
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(remote))
    alice = repo
    git(alice, "remote", "add", "origin", str(remote))
    git(alice, "fetch", "-q", "origin")
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(remote), str(bob))
    git(bob, "config", "user.email", "bob@example.com")
    git(bob, "config", "user.name", "Bob")
    reindex(bob)
    mid, _ = add_memory(alice, "Shared wallaby convention", "fact")
    commit_all(alice, "wallaby")
    git(alice, "push", "-q", "origin", "main")
    assert not search(bob, "wallaby")
    git(bob, "pull", "-q", "--no-rebase", "origin", "main")
    reindex(bob)
    hit = search(bob, "wallaby")[mid]
    assert hit["status"] == "curated"
    assert hit["author"] == "alice@example.com" or hit["author"]  # frontmatter or git adder


def _two_branches(repo: Path, same_titles: bool) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    _base(repo)
    ids = []
    for branch, word in (("a", "numbat"), ("b", "quoll")):
        git(repo, "checkout", "-q", "-b", branch, "main")
        for i in range(3):
            title = f"Shared title {i}" if same_titles else f"{word.title()} decision {i}"
            mid, _ = add_memory(repo, title, body=f"{word} {i}")
            ids.append(mid)
        commit_all(repo, f"memories on {branch}")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "a", "a")
    proc = subprocess.run(
        ["git", "merge", "--no-ff", "-m", "b", "b"], cwd=repo, capture_output=True, text=True
    )
    return ids, proc


def test_concurrent_branches_adding_memories_merge_without_conflicts(repo: Path) -> None:
    # same day, same type, the same folder: one file per memory means no shared file to conflict on
    ids, proc = _two_branches(repo, same_titles=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reindex(repo)
    found = {**search(repo, "numbat"), **search(repo, "quoll")}
    assert set(ids) <= set(found)
    assert all(found[i]["status"] == "curated" for i in ids)


def test_concurrent_branches_same_title_same_day(repo: Path) -> None:
    # issue 14, scenario 2 (was a known xfail): file names carry a suffix from the id
    ids, proc = _two_branches(repo, same_titles=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reindex(repo)
    found = {**search(repo, "numbat"), **search(repo, "quoll")}
    assert set(ids) <= set(found) and len(set(ids)) == 6


def test_two_clones_capture_the_same_title_and_merge_cleanly(tmp_path: Path, repo: Path) -> None:
    """Two teammates, two clones of one bare remote, `ccmemory new decision "Adopt ruff"` on the
    same day on two branches: both merge into main without a conflict, and `check --base`
    shows the reviewer the pair as possible duplicates."""
    _base(repo)
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(remote))
    alice = repo
    git(alice, "remote", "add", "origin", str(remote))
    git(alice, "fetch", "-q", "origin")
    git(alice, "branch", "-q", "--set-upstream-to=origin/main", "main")
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(remote), str(bob))
    git(bob, "config", "user.email", "bob@example.com")
    git(bob, "config", "user.name", "Bob")
    git(bob, "config", "commit.gpgsign", "false")
    cli(bob, "init")  # the clone's own index and hooks (the vault came with the clone)

    made = {}
    for clone, body in ((alice, "Lint with ruff, drop flake8."), (bob, "Ruff replaces flake8 and isort.")):
        git(clone, "checkout", "-q", "-b", f"ruff-{clone.name}")
        out = cli(clone, "new", "decision", "Adopt ruff", "--body", body, "--json").stdout
        made[clone.name] = json.loads(out)
        commit_all(clone, "adopt ruff")
        git(clone, "push", "-q", "origin", f"ruff-{clone.name}")
    a, b = made[alice.name], made[bob.name]
    assert a["path"] != b["path"]  # same title, same day, different files
    assert a["path"].rsplit("-", 1)[0] == b["path"].rsplit("-", 1)[0]  # only the id suffix differs

    # Alice's pull request is merged first
    git(alice, "checkout", "-q", "main")
    git(alice, "merge", "-q", "--no-ff", "-m", "merge alice", f"ruff-{alice.name}")
    git(alice, "push", "-q", "origin", "main")

    # Bob's pull request: the reviewer's check against the new main flags the pair
    git(bob, "fetch", "-q", "origin")
    chk = cli(bob, "check", "--base", "origin/main", "--json")
    dups = [f for f in json.loads(chk.stdout) if "duplicates" in f["message"]]
    assert [d["path"] for d in dups] == [b["path"]], chk.stdout
    assert a["id"] in dups[0]["message"] and dups[0]["level"] == "warning"

    # ... and the merge itself never conflicts, whichever way round
    proc = subprocess.run(
        ["git", "merge", "--no-ff", "-m", "sync main", "origin/main"], cwd=bob, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    git(bob, "push", "-q", "origin", f"ruff-{bob.name}")
    git(alice, "fetch", "-q", "origin")
    proc = subprocess.run(
        ["git", "merge", "--no-ff", "-m", "merge bob", f"origin/ruff-{bob.name}"],
        cwd=alice,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CONFLICT" not in proc.stdout
    assert cli(alice, "check").returncode == 0
    reindex(alice)
    found = search(alice, "ruff")
    assert {a["id"], b["id"]} <= set(found)
    assert found[a["id"]]["status"] == found[b["id"]]["status"] == "curated"


def test_conflict_markers_are_reported_and_never_half_parsed(repo: Path) -> None:
    mid, rel = conflicted_memory(
        repo, "Conflicted bandicoot decision", ours="Main side bandicoot", theirs="Other side bandicoot"
    )
    path = repo / rel
    out = cli(repo, "reindex", "--no-embed", "--json", check=False)
    errors = json.loads(out.stdout)["errors"]
    assert out.returncode == 1 and any(e["path"] == rel and "conflict" in e["reason"] for e in errors)
    assert mid not in search(repo, "bandicoot")  # neither side is served half-parsed
    chk = cli(repo, "check", check=False)
    assert chk.returncode == 1
    assert f"{rel}:" in chk.stdout and "conflict" in chk.stdout
    # resolving the conflict brings it back
    text = path.read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith(("<<<<<<<", "=======", ">>>>>>>"))]
    lines = [ln for ln in lines if "Other side" not in ln]
    path.write_text("\n".join(lines) + "\n")
    reindex(repo)
    assert search(repo, "bandicoot")[mid]["title"] == "Main side bandicoot"


def test_outside_main_history_no_main_branch_means_developmental(tmp_path: Path) -> None:
    root = init_git(tmp_path / "r")
    from ccmemory.app.vaultinit import init_vault

    init_vault(root)
    git(root, "checkout", "-q", "-b", "only-feature")
    mid, _ = add_memory(root, "Lonely emu memory")
    commit_all(root, "emu")
    reindex(root)
    assert search(root, "emu")[mid]["status"] == "developmental"
