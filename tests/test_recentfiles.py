"""SessionStart's recent files, prefetched in a thread: the same answer as asked directly,
handed over once, and a failure in the thread reaches the caller."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ccmemory.features import recentfiles


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    (root / "src").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "t@example.com")
    _git(root, "config", "user.name", "T")
    (root / "src" / "a.py").write_text("a\n")
    (root / ".ccmemory").mkdir()
    (root / ".ccmemory" / "m.md").write_text("x\n")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "a")
    (root / "src" / "a.py").write_text("b\n")  # changed in the working tree
    (root / "new.py").write_text("n\n")  # untracked
    return root


def test_prefetched_answer_equals_the_direct_one_and_is_taken_once(repo: Path) -> None:
    direct = recentfiles.recent_files(repo)
    assert direct[:2] == ["src/a.py", "new.py"] and ".ccmemory/m.md" not in direct
    recentfiles.prefetch(repo)
    recentfiles.prefetch(repo)  # already under way: not started twice
    assert len(recentfiles._PENDING) == 1
    assert recentfiles.take(repo / "." / "src" / "..") == direct  # keyed by the real path
    assert recentfiles._PENDING == {}
    (repo / "later.py").write_text("l\n")
    assert "later.py" in recentfiles.take(repo)  # nothing pending: asked now


def test_a_failure_in_the_thread_is_raised_to_the_caller(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(root: Path) -> list[str]:
        raise RuntimeError(f"cannot list {root.name}")

    monkeypatch.setattr(recentfiles, "recent_files", broken)
    recentfiles.prefetch(repo)
    with pytest.raises(RuntimeError, match="cannot list r"):
        recentfiles.take(repo)
