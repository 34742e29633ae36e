"""gitstate's main-branch choice and repository check, on real repositories (SessionStart asks
both; their git calls were cut from 6 to 3, the answers must not change)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ccmemory.core import gitstate


@pytest.fixture(autouse=True)
def _isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the machine's own init.defaultBranch must not decide these tests
    cfg = tmp_path / "gitconfig"
    cfg.write_text("[user]\n\temail = t@example.com\n\tname = T\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _repo(root: Path, *branches: str, first: str = "main") -> Path:
    root.mkdir()
    _git(root, "init", "-q", "-b", first)
    (root / "a.txt").write_text("a\n")
    _git(root, "add", "a.txt")
    _git(root, "commit", "-qm", "a")
    for name in branches:
        _git(root, "branch", name)
    return root


def test_configured_branch_that_exists_wins(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r", "trunk")
    assert gitstate.main_branch(root, "trunk") == "trunk"
    assert gitstate.main_branch(root) == "main"


def test_configured_branch_missing_falls_back_in_order(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r", "master")
    assert gitstate.main_branch(root, "nosuch") == "main"
    _git(root, "config", "init.defaultBranch", "master")
    assert gitstate.main_branch(root, "nosuch") == "master"
    assert gitstate.main_branch(root) == "master"


def test_origin_head_names_the_main_branch_of_a_clone(tmp_path: Path) -> None:
    upstream = _repo(tmp_path / "up", "main", first="develop")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(upstream), str(clone))
    _git(clone, "checkout", "-q", "-b", "feature")
    _git(clone, "branch", "-D", "develop")  # only origin/develop and origin/main are left
    assert _git(clone, "symbolic-ref", "refs/remotes/origin/HEAD").strip() == "refs/remotes/origin/develop"
    assert gitstate.main_branch(clone) == "develop"


def test_without_commits_the_first_candidate_is_named(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    assert gitstate.main_branch(root, "trunk") == "trunk"
    assert gitstate.main_branch(root) == "main"


def test_is_repo_sees_a_folder_become_a_repository(tmp_path: Path) -> None:
    folder = tmp_path / "later"
    folder.mkdir()
    assert gitstate.is_repo(folder) is False
    _git(folder, "init", "-q")
    assert gitstate.is_repo(folder) is True
    assert gitstate.is_repo(folder) is True  # remembered: no second git process needed
