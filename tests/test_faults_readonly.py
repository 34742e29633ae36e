"""A read-only `.ccmemory` (issue 32): `new`, `check --fix`, `reindex`, `search` and MCP `record_*`
give one clear line (no traceback), exit non-zero, and lose nothing.

Two ways to make it read-only:
- a read-only bind mount of the folder in a private mount namespace (`unshare -m`, as root, or
  `unshare -rm` otherwise): writes fail with EROFS for every user, root included. This is the case
  that runs in CI, where the tests run as root;
- `chmod a-w` on the folder or a file: root ignores it, so as root the commands run in a user
  namespace of their own (same files, no CAP_DAC_OVERRIDE).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._mcp_client import FULL, SyncClient
from tests.conftest import RunCli, cli_env, git

MOUNT = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"'


def _unshare() -> list[str]:
    return ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]


def _read_only(folder: Path, *cmd: str) -> list[str]:
    """`cmd` run with `folder` bind-mounted read-only in a private mount namespace."""
    return [*_unshare(), "sh", "-c", MOUNT, "sh", str(folder), *cmd]


@pytest.fixture(scope="module")
def mounts() -> None:
    """Skip (with the reason) where a private read-only bind mount cannot be made."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is missing: no read-only bind mount")
    probe = Path(os.environ.get("TMPDIR", "/tmp"))
    proc = subprocess.run(_read_only(probe, "true"), capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        pytest.skip(f"no private read-only bind mount here: {proc.stderr.strip()[:200]}")


def _ccm(repo: Path, ro: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _read_only(ro, sys.executable, "-m", "ccmemory", *args),
        cwd=repo, capture_output=True, text=True, env=cli_env(), timeout=120,
    )  # fmt: skip


def _files(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in (repo / ".ccmemory").rglob("*")
        if p.is_file() and "local" not in p.relative_to(repo).parts
    }


def _one_line(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr


@pytest.fixture
def seeded(repo: Path, run_cli: RunCli) -> Iterator[Path]:
    run_cli(repo, "new", "fact", "Otters hold hands while they sleep", "--body", "so they do not drift")
    (repo / ".ccmemory" / "facts" / "hand.md").write_text(
        "---\ntype: fact\ntitle: A hand-written otter fact\n---\nno id yet\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "seed")
    yield repo


@pytest.mark.usefixtures("mounts")
def test_a_read_only_memory_folder_is_one_line_for_new_check_fix_and_mcp(
    seeded: Path, run_cli: RunCli
) -> None:
    repo, facts = seeded, seeded / ".ccmemory" / "facts"
    before = _files(repo)
    _one_line(_ccm(repo, facts, "new", "fact", "Written to a read-only folder"), "Read-only file system")
    _one_line(_ccm(repo, facts, "check", "--fix"), "Read-only file system", "hand.md")
    # reading is not writing: reindex and search work on a read-only memory folder
    ok = _ccm(repo, facts, "reindex", "--full")
    assert ok.returncode == 0, ok.stderr
    # MCP over stdio, the server started inside the read-only mount
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=_unshare()[0],
        args=[*_unshare()[1:], "sh", "-c", MOUNT, "sh", str(facts), sys.executable, "-m", "ccmemory", "mcp"],
        cwd=str(repo),
        env={**cli_env(), **FULL},
    )
    client = SyncClient._connect(lambda: stdio_client(params))
    try:
        err = client.error("record_fact", {"title": "Via MCP", "body": "x"})
        assert err["code"] == "unavailable"
        assert "Read-only file system" in err["message"] and "half-written" in err["hint"]
        found = client.call("search", {"query": "otters hold hands"})
        assert found["results"][0]["title"] == "Otters hold hands while they sleep"
    finally:
        client.close()
    assert _files(repo) == before  # nothing half-written, no temporary file, the hand file as it was
    made = run_cli(repo, "new", "fact", "Written once the folder is writable again")
    assert (repo / made.stdout.strip()).is_file()


@pytest.mark.usefixtures("mounts")
def test_a_read_only_vault_names_the_read_only_index_folder(seeded: Path, run_cli: RunCli) -> None:
    """The whole `.ccmemory` (the index in `local/` too): the message says the folder is
    read-only; it used to say "delete it and run reindex", which cannot help."""
    repo, vault = seeded, seeded / ".ccmemory"
    run_cli(repo, "reindex")
    before = _files(repo)
    for args in (["new", "fact", "Not written"], ["reindex"], ["reindex", "--full"], ["search", "otters"]):
        proc = _ccm(repo, vault, *args)
        _one_line(proc, "Read-only file system" if args[0] == "new" else "read-only file system")
        assert "delete it" not in proc.stderr, args
    assert _files(repo) == before
    hits = json.loads(run_cli(repo, "search", "otters hold hands", "--json").stdout)
    assert hits and hits[0]["title"] == "Otters hold hands while they sleep"


def _no_override() -> list[str]:
    """A command prefix under which `chmod a-w` holds. Root ignores file modes (CAP_DAC_OVERRIDE);
    in a user namespace of its own, mapped to the same outside user, it keeps owning the files but
    loses that capability. Not root: nothing is needed."""
    if os.geteuid() != 0:
        return []
    prefix = ["unshare", "-U", "--map-user=65534", "--map-group=65534"]
    if shutil.which("unshare") is None:
        pytest.skip("root ignores chmod a-w and unshare(1) is missing")
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"root ignores chmod a-w and no user namespace here: {probe.stderr.strip()[:200]}")
    return prefix


def test_chmod_read_only_folder_and_file(seeded: Path) -> None:
    repo, facts = seeded, seeded / ".ccmemory" / "facts"
    prefix = _no_override()

    def ccm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, sys.executable, "-m", "ccmemory", *args],
            cwd=repo, capture_output=True, text=True, env=cli_env(), timeout=120,
        )  # fmt: skip

    hand = facts / "hand.md"
    before = _files(repo)
    hand.chmod(0o444)
    facts.chmod(0o555)
    try:
        _one_line(ccm("new", "fact", "Not written"), "Permission denied")
        _one_line(ccm("check", "--fix"), "Permission denied", "hand.md")
        ok = ccm("reindex", "--full")
        assert ok.returncode == 0, ok.stderr
    finally:
        facts.chmod(0o755)
        hand.chmod(0o644)
    assert _files(repo) == before
