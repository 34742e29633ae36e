"""`ccmemory demo`: a sample repository showing the main job end to end on the embedded index."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from ccmemory.features.context import context_for

SAMPLES: list[tuple[str, str, list[str], list[str], str, dict[str, Any]]] = [
    (
        "decision",
        "Store auth tokens in httpOnly cookies, not localStorage",
        ["auth", "security"],
        ["src/auth/token.ts"],
        "Session tokens are set by the API as httpOnly, SameSite=Lax cookies. Page scripts never see them.",
        {
            "rationale": "XSS can read localStorage; cookies are out of reach of page scripts.",
            "options_considered": ["localStorage", "sessionStorage", "httpOnly cookie"],
        },
    ),
    (
        "correction",
        "The staging database is Postgres 15, not MySQL",
        ["database"],
        [],
        "Migrations must use Postgres syntax.",
        {
            "wrong_belief": "staging runs MySQL",
            "right_belief": "staging runs Postgres 15",
            "severity": "significant",
        },
    ),
    (
        "failed_approach",
        "Caching user sessions in process memory",
        ["auth", "performance"],
        ["src/auth/session.ts"],
        "Sessions vanished on every deploy and differed between the two app servers.",
        {
            "approach": "an in-process LRU for sessions",
            "outcome": "lost sessions on deploy; inconsistent across instances",
            "lesson": "keep sessions in Redis",
        },
    ),
    (
        "fact",
        "Run the test suite with `make test`, never plain pytest",
        ["testing"],
        ["Makefile"],
        "make test starts the fake S3 server first.",
        {"category": "command"},
    ),
    (
        "preference",
        "Prefer small pull requests with one concern each",
        ["review"],
        [],
        "Reviewers asked for PRs under ~300 lines.",
        {"scope": "project"},
    ),
]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@click.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
def demo(folder: Path | None) -> None:
    """Create a sample git repository with a few memories, index and search them.

    Uses the embedded SQLite index; needs no Docker, no API key and no network. FOLDER defaults
    to a new temporary folder, which is left in place so you can look around.
    """
    from ccmemory.app.service import Service
    from ccmemory.app.vaultinit import init_vault
    from ccmemory.core.model import Memory, new_id
    from ccmemory.core.vault import Vault

    root = (folder or Path(tempfile.mkdtemp(prefix="ccmemory-demo-"))).resolve()
    root.mkdir(parents=True, exist_ok=True)
    if not (root / ".git").exists():
        _git(root, "init", "-q", "-b", "main")
        _git(root, "config", "user.email", "demo@example.com")
        _git(root, "config", "user.name", "Demo")
    init_vault(root)
    click.secho(f"sample repository: {root}", bold=True)
    base = datetime.now(UTC).replace(microsecond=0) - timedelta(days=len(SAMPLES))
    with Service(Vault(root)) as svc:
        for i, (mtype, title, topics, files, body, fields) in enumerate(SAMPLES):
            rec = svc.record(
                Memory(
                    id=new_id(),
                    type=mtype,
                    title=title,
                    created=base + timedelta(days=i),
                    body=body,
                    author="demo@example.com",
                    topics=topics,
                    files=files,
                    source="manual",
                    confidence=0.9,
                    fields=fields,
                )
            )
            click.echo(f"  wrote {rec.path}")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "Add sample memories")
        report = svc.reindex()
        click.echo(
            f"reindex: {report.added} added, {report.updated} updated, "
            f"{report.status_changed} now curated ({report.seconds:.2f}s)"
        )
        for query in ("where do login tokens live", "what did we try for sessions that failed"):
            click.secho(f"\n$ ccmemory search {query!r}", bold=True)
            resp = svc.search(query, limit=3)
            for n in resp.notices:
                click.secho(n, fg="yellow", err=True)
            for h in resp.hits:
                click.echo(f"  {h.score:.4f}  [{h.memory.type}] {h.memory.title}  ({h.memory.status})")
                click.echo(f"          {h.memory.path}")
        click.secho("\n$ ccmemory context", bold=True)
        click.echo(context_for(svc, 600).text)
    click.echo(f"Try it yourself: cd {root} && {_command()} search 'database' --json")


def _command() -> str:
    """`ccmemory` when a new shell finds it on PATH, else this install's full path (a clone's
    .venv is usually not on PATH: a bare `ccmemory` would be `command not found`)."""
    import shlex
    import shutil

    here = Path(sys.executable).parent / "ccmemory"
    on_path = shutil.which("ccmemory")
    if on_path and (not here.is_file() or Path(on_path).resolve() == here.resolve()):
        return "ccmemory"
    return shlex.quote(str(here)) if here.is_file() else "ccmemory"
