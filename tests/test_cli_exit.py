"""The CLI process ends without the interpreter's teardown (`exit_now`, issue 29: ~40 ms of a cold
`ccmemory search` at 100k memories) only when nothing can be lost: its output whole, its atexit
handlers run, its exit code kept, and never while another non-daemon thread still works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.capture_helpers import hook_env

_SCRIPT = r"""
import atexit, sys, threading, time
from pathlib import Path
from ccmemory.surfaces.cli import exit_now
out = Path(sys.argv[1])
atexit.register(lambda: (out / "atexit").write_text("ran"))
if sys.argv[2] == "worker":
    def work():
        time.sleep(0.4)
        (out / "worker").write_text("done")
    threading.Thread(target=work).start()
sys.stdout.write("x" * 200_000)  # more than any pipe buffer holds
sys.stderr.write("note\n")
exit_now(3)
(out / "returned").write_text("yes")
sys.exit(4)
"""


def _python(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=tmp_path, env=hook_env(), timeout=60
    )


def _run(tmp_path: Path, mode: str) -> subprocess.CompletedProcess[str]:
    return _python(tmp_path, "-c", _SCRIPT, str(tmp_path), mode)


def test_exit_now_keeps_the_output_the_code_and_the_atexit_handlers(tmp_path: Path) -> None:
    proc = _run(tmp_path, "alone")
    assert proc.returncode == 3
    assert proc.stdout == "x" * 200_000 and proc.stderr == "note\n"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert not (tmp_path / "returned").exists()  # it did end the process


def test_exit_now_waits_like_python_when_a_non_daemon_thread_still_runs(tmp_path: Path) -> None:
    proc = _run(tmp_path, "worker")
    assert proc.returncode == 4  # returned, and Python's own exit waited for the thread
    assert (tmp_path / "returned").exists() and (tmp_path / "worker").read_text() == "done"
    assert (tmp_path / "atexit").read_text() == "ran" and len(proc.stdout) == 200_000


def test_the_cli_entry_point_exits_with_its_commands_code(tmp_path: Path) -> None:
    """`python -m ccmemory` (and the console script) end through exit_now: the usage error's
    code and message survive it; a command in process (argv given) returns instead."""
    proc = _python(tmp_path, "-m", "ccmemory", "no-such-command")
    assert proc.returncode == 2 and "No such command" in proc.stderr
    proc = _python(tmp_path, "-m", "ccmemory", "--help")
    assert proc.returncode == 0 and "Usage: ccmemory" in proc.stdout
    from ccmemory.surfaces.cli import main

    assert main(["no-such-command"]) == 2  # in process: returned, this test still runs
