"""The adversarial pass of issue 32 on cross-project search and the personal vault, through the
CLI and the MCP server over stdio: an unrelated project on the same machine is never opened, and
nothing personal lands in the repository, its built site or its exports."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests._mcp_client import SyncClient
from tests.conftest import RunCli, git, init_git

ALICE = "alice@example.com"
SECRET_WORDS = "zebra crossing quartermaster"


def make_repo(base: Path, name: str, run_cli: RunCli) -> Path:
    root = init_git(base / name, ALICE)
    run_cli(root, "init")
    return root


def related(root: Path, *entries: dict[str, str]) -> None:
    path = root / ".ccmemory" / "config.yaml"
    data = yaml.safe_load(path.read_text()) or {}
    data["related_to"] = list(entries)
    path.write_text(yaml.safe_dump(data))


def committed_and_untracked(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"CCMEMORY_HOME": str(tmp_path / "personal"), "CCMEMORY_USER_ID": ALICE}


def test_an_unrelated_project_is_never_opened(tmp_path: Path, run_cli: RunCli, env: dict[str, str]) -> None:
    """app relates to infra only. blog, on the same machine, holds a memory with the same words
    that even says it applies to app: it never shows. Its index is then swapped for a FIFO, which
    would hang any process that opened it: search, context and MCP answer at once."""
    app, infra, blog = (make_repo(tmp_path, n, run_cli) for n in ("app", "infra", "blog"))
    run_cli(
        infra, "new", "decision", "Deploy containers with Terraform", "--body", "terraform deploy", env=env
    )
    run_cli(blog, "new", "decision", f"Deploy the blog {SECRET_WORDS}", "--applies-to", "app", env=env)
    related(app, {"name": "infra", "path": "../infra", "relation": "technical"})
    for root in (app, infra, blog):
        run_cli(root, "reindex", env=env)
    hits = json.loads(
        run_cli(app, "search", "deploy " + SECRET_WORDS, "--cross-project", "--json", env=env).stdout
    )
    assert any(h.get("project") == "infra" for h in hits), hits
    assert all(h.get("project") != "blog" for h in hits)
    assert SECRET_WORDS not in json.dumps(hits)
    db = blog / ".ccmemory" / "local" / "index.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    os.mkfifo(db)
    for args in (["search", "deploy " + SECRET_WORDS, "--cross-project", "--json"], ["context"]):
        proc = run_cli(app, *args, env=env)  # 120 s timeout: a hang fails the test
        assert SECRET_WORDS not in proc.stdout and "blog" not in proc.stdout + proc.stderr
    with SyncClient.stdio(app, env=env) as c:
        out = c.call("search", {"query": "deploy " + SECRET_WORDS, "include_cross_project": True})
        found = json.dumps(out["results"]) + json.dumps(out.get("notices", []))
        assert out["results"] and SECRET_WORDS not in found and "blog" not in found


def test_a_personal_vault_inside_the_repository_is_refused(
    tmp_path: Path, run_cli: RunCli, env: dict[str, str]
) -> None:
    """CCMEMORY_HOME pointing at the repository, or a folder in it: `new --global` wrote the
    personal memory into the project's own `.ccmemory/` (committed, published); now refused."""
    app = make_repo(tmp_path, "app", run_cli)
    git(app, "add", "-A")
    git(app, "commit", "-qm", "init")
    for home in (app, app / "notes"):
        inside = {**env, "CCMEMORY_HOME": str(home)}
        proc = run_cli(
            app, "new", "preference", f"I prefer {SECRET_WORDS}", "--global", env=inside, check=False
        )
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert "inside this repository" in proc.stderr and "nothing was written" in proc.stderr
        with SyncClient.stdio(app, env=inside) as c:
            err = c.error("record_preference", {"title": f"I prefer {SECRET_WORDS}", "scope": "global"})
            assert "inside this repository" in err["message"]
        assert committed_and_untracked(app) == ""
    # outside the repository (the default), it works and writes nothing here
    run_cli(app, "new", "preference", f"I prefer {SECRET_WORDS}", "--global", env=env)
    assert list((tmp_path / "personal" / ".ccmemory" / "preferences").glob("*.md"))
    assert committed_and_untracked(app) == ""


def test_personal_memories_stay_out_of_the_repository_site_and_exports(
    tmp_path: Path, run_cli: RunCli, env: dict[str, str]
) -> None:
    app = make_repo(tmp_path, "app", run_cli)
    run_cli(app, "new", "decision", "Deploy with one container", "--body", "the project's own", env=env)
    git(app, "add", "-A")
    git(app, "commit", "-qm", "init")
    run_cli(app, "new", "preference", f"I prefer {SECRET_WORDS}", "--global", env=env)
    with SyncClient.stdio(app, env=env) as c:
        out = c.call("record_preference", {"title": f"Always {SECRET_WORDS} twice", "scope": "global"})
        assert out["vault"] == "personal"
    assert SECRET_WORDS in run_cli(app, "context", env=env).stdout  # it is used here...
    assert committed_and_untracked(app) == ""  # ...and nothing of it is in the repository
    site = tmp_path / "site"
    run_cli(app, "site", "build", "-o", str(site), env=env)
    exported = run_cli(app, "export", "--to", "json", env=env).stdout
    for fmt in ("claude-md", "agents-md", "cursor", "adr"):
        run_cli(app, "export", "--to", fmt, env=env)
    assert "Deploy with one container" in exported
    assert SECRET_WORDS not in exported
    leaks = subprocess.run(
        ["grep", "-rli", "zebra crossing", str(site), str(app), "--exclude-dir=.git"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert leaks.stdout == "", leaks.stdout
