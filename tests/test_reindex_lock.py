"""One reindex at a time per repository (ccmemory.app.reindexlock): a reindex waits for another
process's; a CLI read that would catch up with git does not wait long for one, and says so; the
MCP server's refresh does not wait either; a thread holding the lock takes it again freely."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from ccmemory.app.reindexlock import exclusive
from ccmemory.app.service import Service
from tests.conftest import init_git
from tests.lifecycle_util import add_memory, cli, commit_all, search

_HOLD = r"""
import sys, time
from pathlib import Path
from ccmemory.app.reindexlock import exclusive
local, seconds, marker = Path(sys.argv[1]), float(sys.argv[2]), Path(sys.argv[3])
with exclusive(local):
    print("held", flush=True)
    time.sleep(seconds)
    marker.write_text("released")
"""


def _repo(tmp_path: Path) -> Path:
    root = init_git(tmp_path / "r")
    cli(root, "init", "--no-git-hooks")
    add_memory(root, "The wombat export runs nightly")
    commit_all(root, "wombat")
    cli(root, "reindex", "--no-embed")
    return root


def _hold(root: Path, seconds: float, marker: Path) -> subprocess.Popen[str]:
    """Another process holding the repository's reindex lock for ``seconds``."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(root / ".ccmemory" / "local"), str(seconds), str(marker)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_reindex_waits_for_the_reindex_another_process_runs(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    marker = tmp_path / "released"
    holder = _hold(root, 1.5, marker)
    with Service.open(root) as svc:
        assert svc.reindex_unless_busy(wait=0.2) is None  # still held: nothing done
        assert not marker.exists()
        report = svc.reindex()  # waits for the other one
        assert marker.exists()  # it returned only after the holder let go
        assert report.errors == []
        assert svc.reindex_unless_busy(wait=0.2) is not None  # free now
    assert holder.wait(timeout=30) == 0


def test_a_cli_read_does_not_race_a_running_reindex_and_says_so(tmp_path: Path) -> None:
    """git moved (a commit without hooks): a read would reindex first; while another reindex
    holds the lock it answers from the index as it is, with a notice, and the next read catches
    up."""
    root = _repo(tmp_path)
    mid, _ = add_memory(root, "The quoll importer retries three times")
    commit_all(root, "quoll")
    holder = _hold(root, 30, tmp_path / "released")
    try:
        started = time.monotonic()
        proc = cli(root, "search", "quoll", "--json", "--mode", "text")
        assert "another reindex of this repository is running (HEAD moved" in proc.stderr
        assert mid not in proc.stdout  # not caught up: the other reindex owns the index now
        assert time.monotonic() - started < 25  # waited ~10 s, not for the holder's 30
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert mid in search(root, "quoll")  # the next read catches up


def test_a_thread_that_holds_the_lock_takes_it_again(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    done: list[bool] = []

    def nested() -> None:
        with exclusive(root / ".ccmemory" / "local"), Service.open(root) as svc:
            svc.reindex()
            done.append(True)

    t = threading.Thread(target=nested, daemon=True)
    t.start()
    t.join(timeout=60)
    assert done == [True]  # no deadlock on its own lock
    # another thread of the same process is another holder: it waits like another process
    local = root / ".ccmemory" / "local"
    got: list[bool] = []

    def try_lock() -> None:
        with exclusive(local, timeout=0.2) as held:
            got.append(held)

    with exclusive(local):
        other = threading.Thread(target=try_lock, daemon=True)
        other.start()
        other.join(timeout=10)
    assert got == [False]
    try_lock()
    assert got == [False, True]
