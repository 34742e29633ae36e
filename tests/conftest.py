"""Shared fixtures: real git repositories in temp dirs, the CLI as a subprocess, memory factories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ccmemory.core.model import Memory, new_id

pytest_plugins = ["tests.neo4j_server"]

REPO_ROOT = Path(__file__).resolve().parent.parent


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def init_git(root: Path, email: str = "alice@example.com") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", email)
    git(root, "config", "user.name", email.split("@")[0].title())
    git(root, "config", "commit.gpgsign", "false")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository with `ccmemory init` done (no git hooks are needed here)."""
    from ccmemory.app.vaultinit import init_vault

    root = init_git(tmp_path / "repo")
    init_vault(root)
    return root


@pytest.fixture(scope="session", autouse=True)
def _personal_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Tests never read or write the real personal vault (~/.config/ccmemory): the session gets
    its own (session scope, so module-scoped servers inherit it; tests that write to a personal
    vault set their own CCMEMORY_HOME)."""
    home = tmp_path_factory.mktemp("personal-home")
    before = os.environ.get("CCMEMORY_HOME")
    os.environ["CCMEMORY_HOME"] = str(home)
    # the per-user vector cache would carry vectors from one test (and one run) to the next, and
    # tests count embedding calls: off, except where a test names its own (test_vector_cache.py)
    cache_before = os.environ.get("CCMEMORY_VECTOR_CACHE")
    os.environ["CCMEMORY_VECTOR_CACHE"] = "off"
    yield home
    for name, value in (("CCMEMORY_HOME", before), ("CCMEMORY_VECTOR_CACHE", cache_before)):
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    kept = ("CCMEMORY_HOME", "CCMEMORY_VECTOR_CACHE")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCMEMORY_") or k in kept}
    env["PYTHONPATH"] = str(REPO_ROOT)
    env.update(extra or {})
    return env


RunCli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_cli() -> RunCli:
    """Run `ccmemory ARGS` as a real subprocess in `cwd`."""

    def run(
        cwd: Path, *args: str, input: str | None = None, env: dict[str, str] | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "ccmemory", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            input=input,
            env=cli_env(env),
            timeout=120,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"ccmemory {' '.join(args)} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
            )
        return proc

    return run


def make_memory(mtype: str = "decision", title: str = "Use httpOnly cookies for tokens", **kw: Any) -> Memory:
    kw.setdefault("id", new_id())
    kw.setdefault("created", datetime(2026, 11, 20, 14, 3, 11, tzinfo=UTC))
    kw.setdefault("body", "Tokens live in httpOnly cookies so page scripts cannot read them.")
    return Memory(type=mtype, title=title, **kw)


def load_json(text: str) -> Any:
    return json.loads(text)
