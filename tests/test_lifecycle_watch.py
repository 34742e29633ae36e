"""`ccmemory watch`: live index through edits, save-by-rename, deletes, moves, bulk checkouts,
removal and recreation of .ccmemory/, ref changes, periodic reconcile, and one watcher per repo."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ccmemory.core.model import Memory, new_id
from ccmemory.core.vault import Vault
from tests.conftest import cli_env, git
from tests.lifecycle_util import add_memory, cli, commit_all, search, wait_for


class WatchProc:
    def __init__(self, root: Path, *args: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ccmemory", "watch", "--json", "--no-embed", *args],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
        )
        self.passes: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.passes.put(json.loads(line))

    def wait_pass(self, pred: Callable[[dict[str, Any]], bool], timeout: float = 20) -> dict[str, Any]:
        for p in self.seen:
            if pred(p):
                self.seen.remove(p)
                return p
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                p = self.passes.get(timeout=0.2)
            except queue.Empty:
                continue
            if pred(p):
                return p
            self.seen.append(p)
        raise AssertionError(f"no matching watcher pass in {timeout}s; seen {self.seen}")

    def drain(self, quiet: float = 1.0) -> list[dict[str, Any]]:
        """Every pass until none came for `quiet` seconds."""
        out = list(self.seen)
        self.seen.clear()
        while True:
            try:
                out.append(self.passes.get(timeout=quiet))
            except queue.Empty:
                return out

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def watched(repo: Path) -> Iterator[tuple[Path, WatchProc]]:
    add_memory(repo, "Initial memory about the kookaburra")
    commit_all(repo, "base")
    w = WatchProc(repo, "--reconcile", "0", "--debounce", "0.3")
    w.wait_pass(lambda p: p["reason"] == "start")
    yield repo, w
    w.stop()


def test_edits_save_by_rename_deletes_and_moves(watched: tuple[Path, WatchProc]) -> None:
    repo, w = watched
    mid, rel = add_memory(repo, "Watched memory about the lorikeet")
    w.wait_pass(lambda p: p.get("added") == 1)
    assert mid in search(repo, "lorikeet")
    # an editor's save: write a temp file next to it, then rename over the original
    path = repo / rel
    tmp = path.with_name(".lorikeet.md.swp")
    tmp.write_text(path.read_text().replace("about the lorikeet", "about the rainbow lorikeet"))
    os.replace(tmp, path)
    w.wait_pass(lambda p: p.get("updated") == 1)
    assert search(repo, "rainbow")[mid]["title"] == "Watched memory about the rainbow lorikeet"
    # a move into a sub-folder keeps the memory, at its new path
    sub = path.parent / "archive"
    sub.mkdir()
    shutil.move(str(path), sub / path.name)
    w.wait_pass(lambda p: p.get("added") == 1 and p.get("removed") == 1)
    assert search(repo, "lorikeet")[mid]["path"].endswith(f"archive/{path.name}")
    (sub / path.name).unlink()
    w.wait_pass(lambda p: p.get("removed") == 1)
    assert mid not in search(repo, "lorikeet")


def test_second_watcher_refuses(watched: tuple[Path, WatchProc]) -> None:
    repo, _w = watched
    proc = cli(repo, "watch", "--for", "2", check=False)
    assert proc.returncode == 1 and "already watching" in proc.stderr


def _bulk_branch(repo: Path, n: int) -> list[str]:
    git(repo, "checkout", "-q", "-b", "bulk")
    vault = Vault(repo)
    ids = []
    for i in range(n):
        m = Memory(
            id=new_id(),
            type="decision",
            title=f"Bulk decision {i}",
            created=datetime(2026, 11, 1, tzinfo=UTC),
            body=f"galah {i}",
        )
        vault.write_new(m)
        ids.append(m.id)
    commit_all(repo, "bulk")
    git(repo, "checkout", "-q", "main")
    return ids


def test_bulk_checkout_is_coalesced_into_one_reindex(repo: Path) -> None:
    add_memory(repo, "Initial memory about the kookaburra")
    commit_all(repo, "base")
    ids = _bulk_branch(repo, 300)
    # a generous quiet period so a loaded CI machine pausing mid-checkout does not split the burst
    w = WatchProc(repo, "--reconcile", "0", "--debounce", "1.0", "--max-delay", "10")
    try:
        w.wait_pass(lambda p: p["reason"] == "start")
        git(repo, "checkout", "-q", "bulk")
        passes = w.drain(quiet=3)
        assert len(passes) == 1, passes  # hundreds of events, one incremental reindex
        assert passes[0]["added"] == 300 and passes[0]["events"] >= 300
        assert len(search(repo, "galah")) == 50  # limit 50 of the 300
        git(repo, "checkout", "-q", "main")
        passes = w.drain(quiet=3)
        assert len(passes) == 1 and passes[0]["removed"] == 300, passes
        assert not search(repo, "galah")
        assert ids
    finally:
        w.stop()


def test_survives_ccmemory_removed_and_recreated(watched: tuple[Path, WatchProc]) -> None:
    repo, w = watched
    shutil.rmtree(repo / ".ccmemory")
    w.drain(quiet=1.0)
    git(repo, "checkout", "-q", "--", ".ccmemory")  # restored from git
    w.wait_pass(lambda p: p.get("added", 0) >= 1)
    assert search(repo, "kookaburra")
    mid, _ = add_memory(repo, "After recreation memory about the currawong")
    w.wait_pass(lambda p: p.get("added") == 1)
    assert mid in search(repo, "currawong")
    # the lock was re-taken on the new folder: a second watcher still refuses
    assert cli(repo, "watch", "--for", "1", check=False).returncode == 1


def test_ref_change_refreshes_status(watched: tuple[Path, WatchProc]) -> None:
    repo, w = watched
    git(repo, "checkout", "-q", "-b", "feat")
    mid, _ = add_memory(repo, "Feature memory about the brolga")
    commit_all(repo, "feat")
    w.wait_pass(lambda p: p.get("added") == 1)
    w.drain(quiet=0.8)
    assert search(repo, "brolga")[mid]["status"] == "developmental"
    # main moves without any file in the working tree changing: only refs/heads/main changes
    git(repo, "branch", "-f", "main", "feat")
    w.wait_pass(lambda p: "git" in p["reason"] and p.get("status_changed", 0) >= 1)
    assert search(repo, "brolga")[mid]["status"] == "curated"


def test_periodic_reconcile(repo: Path) -> None:
    add_memory(repo, "Initial memory about the kookaburra")
    commit_all(repo, "base")
    w = WatchProc(repo, "--reconcile", "1")
    try:
        w.wait_pass(lambda p: p["reason"] == "start")
        w.wait_pass(lambda p: p["reason"] == "reconcile", timeout=10)
    finally:
        w.stop()
    assert wait_for(lambda: w.proc.poll() is not None, timeout=5)


def test_waits_while_a_git_command_holds_the_index_lock(repo: Path) -> None:
    add_memory(repo, "Initial memory about the kookaburra")
    commit_all(repo, "base")
    w = WatchProc(repo, "--reconcile", "0", "--debounce", "0.2", "--max-delay", "0.5")
    try:
        w.wait_pass(lambda p: p["reason"] == "start")
        lock = repo / ".git" / "index.lock"
        lock.write_text("")  # as if a long checkout were running
        for i in range(3):
            add_memory(repo, f"Written during a slow checkout {i} cassowary")
            time.sleep(0.4)
        assert w.drain(quiet=1.0) == []  # nothing indexed while git is busy
        lock.unlink()
        p = w.wait_pass(lambda p: True, timeout=10)
        assert p["added"] == 3  # one pass, the final state
        assert len(search(repo, "cassowary")) == 3
    finally:
        w.stop()
