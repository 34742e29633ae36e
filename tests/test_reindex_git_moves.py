"""A reindex during which git moves (a checkout or rebase writing the working tree while the files
are read) must not record the git state it captured before: the files it read may be from the later
tree, and once HEAD is back at the recorded commit (a rebase onto it, a checkout back) no
incremental reindex would look at them again (the intermittent failure after `git rebase`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ccmemory.app import gitdelta
from ccmemory.app.service import Service
from tests.conftest import git, init_git
from tests.lifecycle_util import add_memory, cli, commit_all


def _ids(root: Path) -> set[str]:
    with Service.open(root) as svc:
        return {m.id for m in svc.index.query(svc.filters(include_superseded=True), limit=100)}


def test_files_read_from_a_later_tree_are_not_hidden_by_the_state_captured_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = init_git(tmp_path / "r")
    cli(root, "init", "--no-git-hooks")
    kept, _ = add_memory(root, "The dingo service keeps its queue in Redis")
    commit_all(root, "main")
    git(root, "checkout", "-q", "-b", "feat")
    branch_only, _ = add_memory(root, "The dingo service drops messages over 1 MB")
    commit_all(root, "feat")
    cli(root, "reindex", "--no-embed")  # the index and its record: feat
    assert _ids(root) == {kept, branch_only}
    git(root, "checkout", "-q", "main")  # no hooks: the next reindex catches up

    real = gitdelta.capture
    switched: list[bool] = []

    def capture_then_git_moves(*a: Any, **kw: Any) -> gitdelta.State | None:
        state = real(*a, **kw)  # git's view on main (the branch's memory to remove)...
        if not switched:
            switched.append(True)
            git(root, "checkout", "-q", "feat")  # ...then a checkout writes feat's tree back
        return state

    monkeypatch.setattr(gitdelta, "capture", capture_then_git_moves)
    with Service.open(root) as svc:
        svc.reindex()  # reads feat's files (the branch's memory is there): the index says feat
    monkeypatch.undo()
    assert switched and _ids(root) == {kept, branch_only}

    git(root, "checkout", "-q", "main")  # back at the commit captured first (no hooks here)
    with Service.open(root) as svc:
        svc.reindex()  # incremental, as every hook's and every catching-up read's is
    assert _ids(root) == {kept}  # the branch's memory left the working tree: not indexed
