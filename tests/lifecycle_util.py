"""Helpers for the lifecycle tests: real git repositories, memories written as files, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ccmemory.core.vault import Vault
from tests.conftest import cli_env, git, make_memory


def cli(
    cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "ccmemory", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=cli_env(env),
        timeout=120,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"ccmemory {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def add_memory(root: Path, title: str, mtype: str = "decision", **kw: Any) -> tuple[str, str]:
    """Write a memory file (as capture would) and return (id, repo-relative path)."""
    m = make_memory(mtype, title, **kw)
    path = Vault(root).write_new(m)
    return m.id, path.relative_to(root).as_posix()


def commit_all(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def conflicted_memory(root: Path, title: str, ours: str, theirs: str) -> tuple[str, str]:
    """A memory committed on main, its title edited one way on a branch `other` and another way
    on main (`title` replaced by `theirs` / `ours`), then `git merge other` left in conflict:
    (id, path). The file holds the conflict markers."""
    mid, rel = add_memory(root, title)
    commit_all(root, "base")
    path = root / rel
    git(root, "checkout", "-q", "-b", "other")
    path.write_text(path.read_text().replace(title, theirs))
    commit_all(root, "other edit")
    git(root, "checkout", "-q", "main")
    path.write_text(path.read_text().replace(title, ours))
    commit_all(root, "main edit")
    proc = subprocess.run(["git", "merge", "-q", "other"], cwd=root, capture_output=True, text=True)
    assert proc.returncode != 0 and "<<<<<<<" in path.read_text()
    return mid, rel


def search(root: Path, query: str, *extra: str) -> dict[str, dict[str, Any]]:
    """id -> result for `ccmemory search QUERY --json --mode text` (full-text: deterministic)."""
    out = cli(root, "search", query, "--json", "--mode", "text", "--limit", "50", *extra).stdout
    return {item["id"]: item for item in json.loads(out)}


def reindex(root: Path) -> dict[str, Any]:
    proc = cli(root, "reindex", "--no-embed", "--json", check=False)
    data: dict[str, Any] = json.loads(proc.stdout)
    # exit 1 exactly when invalid files were left out (the rest is indexed all the same)
    assert proc.returncode == (1 if data["errors"] else 0), proc.stderr
    return data


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0, interval: float = 0.3) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
