"""A reindex whose window overlaps a git operation that rewrites the working tree (a rebase's
checkout under a hook's background reindex) must not record git's state as if the files it read
matched it: the next incremental reindex trusts that record (ccmemory.app.gitdelta)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ccmemory.app import gitdelta
from ccmemory.app.service import Service
from tests.conftest import git, init_git
from tests.lifecycle_util import add_memory, cli, commit_all, search


def test_a_checkout_during_a_reindex_does_not_hide_a_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = init_git(tmp_path / "r")
    cli(root, "init", "--no-git-hooks")
    commit_all(root, "init")
    git(root, "checkout", "-q", "-b", "feat")
    mid, _ = add_memory(root, "Branch memory about the numbat")
    commit_all(root, "feat")
    git(root, "checkout", "-q", "main")
    cli(root, "reindex", "--no-embed")  # level with main: the memory is not there
    git(root, "checkout", "-q", "feat")
    real = gitdelta.capture

    def capture_then_switch(*args: Any, **kw: Any) -> gitdelta.State | None:
        state = real(*args, **kw)  # git's view: feat, with the memory
        git(root, "checkout", "-q", "main")  # meanwhile git rewrites the working tree
        return state

    monkeypatch.setattr(gitdelta, "capture", capture_then_switch)
    with Service.open(root) as svc:
        svc.reindex()  # reads the files of main while its record says feat
    monkeypatch.setattr(gitdelta, "capture", real)
    git(root, "checkout", "-q", "feat")  # back where the record says: no hook, HEAD as recorded
    assert mid in search(root, "numbat")
    cli(root, "reindex", "--no-embed")
    assert mid in search(root, "numbat")


def test_a_quiet_reindex_is_trusted_and_an_overlapped_one_is_walked_once(tmp_path: Path) -> None:
    """No false alarm: a reindex git did not interrupt records a settled state (the next one
    takes the shortcut, a read does not catch up); an overlapped one makes the next read walk
    once and say so."""
    root = init_git(tmp_path / "r")
    cli(root, "init", "--no-git-hooks")
    add_memory(root, "Settled memory about the bilby")
    commit_all(root, "bilby")
    cli(root, "reindex", "--no-embed")
    with Service.open(root) as svc:
        stored = svc.index.sync_state(svc.project)
        assert stored is not None and stored["settled"] is True and "stamp" not in stored
        svc.index.set_sync_state(svc.project, {**stored, "settled": False})
    proc = cli(root, "search", "bilby", "--json")
    assert "index brought up to date first (the working tree changed" not in proc.stderr  # nothing to do
    with Service.open(root) as svc:
        stored = svc.index.sync_state(svc.project)
        assert stored is not None and stored["settled"] is True  # the read's walk settled it
    assert "brought up to date" not in cli(root, "search", "bilby").stderr
