"""`ccmemory sessions list|show|search|prune`: the local session history (docs/sessions.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ccmemory.surfaces.cli.errors import cli_error


def _root() -> Path:
    from ccmemory.core.vault import Vault, VaultNotFound

    try:
        return Vault.open(Path.cwd()).root
    except VaultNotFound as exc:
        raise cli_error(exc) from None


def _echo_briefs(rows: list[dict[str, Any]], as_json: bool, empty: str) -> None:
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        click.echo(empty)
        return
    for r in rows:
        when = str(r.get("end") or r.get("start") or "?")[:16].replace("T", " ")
        score = f"  ({r['score']:.4f})" if "score" in r else ""
        click.echo(f"{r['id']}  {when}  {r.get('branch') or '-'}{score}")
        click.echo(f"    {r['summary']}")


@click.group("sessions")
def sessions_cmd() -> None:
    """Session history: one local, private record per Claude Code session (prompts redacted,
    files, commands, errors, memories, a summary), under .ccmemory/local/sessions/. Records are
    written by the capture worker at Stop/SessionEnd/PreCompact and by `ccmemory import`."""


@sessions_cmd.command("list")
@click.option("--since", help="Only sessions that ended on or after this date (YYYY-MM-DD).")
@click.option("--limit", type=click.IntRange(0), default=20, show_default=True)
@click.option("--branch", help="Only sessions of this git branch.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_cmd(since: str | None, limit: int, branch: str | None, as_json: bool) -> None:
    """The latest sessions, newest first, with their summary."""
    from ccmemory.features.sessions.service import list_sessions

    rows = list_sessions(_root(), since=since, limit=limit, branch=branch)
    _echo_briefs(rows, as_json, "No session recorded yet (see docs/sessions.md).")


@sessions_cmd.command("search")
@click.argument("query")
@click.option("--since", help="Only sessions that ended on or after this date (YYYY-MM-DD).")
@click.option("--limit", type=click.IntRange(0), default=10, show_default=True)
@click.option("--text-only", is_flag=True, help="BM25 only, no embedding (no model is loaded).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search_cmd(query: str, since: str | None, limit: int, text_only: bool, as_json: bool) -> None:
    """Sessions whose prompts and summary match QUERY, best first: BM25 over the records fused
    with embedding similarity (the project's embedder; text only when it is unavailable)."""
    from ccmemory.features.sessions.service import search_sessions

    rows, notice = search_sessions(_root(), query, since=since, limit=limit, semantic=not text_only)
    if notice and not text_only:
        click.echo(f"note: {notice}", err=True)
    _echo_briefs(rows, as_json, "No session matches.")


@sessions_cmd.command("show")
@click.argument("session_id")
@click.option("--json", "as_json", is_flag=True, help="Print the whole record as JSON.")
def show_cmd(session_id: str, as_json: bool) -> None:
    """One session's record (SESSION_ID or a unique prefix of it)."""
    from ccmemory.features.sessions.service import get

    rec = get(_root(), session_id)
    if rec is None:
        raise click.ClickException(
            f"no session record matches {session_id!r}, or the prefix names several (ccmemory sessions list)"
        )
    if as_json:
        click.echo(json.dumps(rec, indent=2, ensure_ascii=False))
        return
    click.echo(
        f"session {rec['id']}  branch {rec.get('branch') or '-'}  {rec.get('start')} → {rec.get('end')}"
    )
    click.echo(f"summary: {rec.get('summary')}")
    if rec.get("truncated"):
        click.echo("(record truncated at the per-session cap)")
    sections = (
        ("prompts", "prompts"),
        ("files changed", "files_changed"),
        ("files read", "files_read"),
        ("errors", "errors"),
        ("memories", "memories"),
    )
    for title, key in sections:
        items = rec.get(key) or []
        if items:
            click.echo(f"{title}:")
            for item in items:
                click.echo(f"  - {item}")
    cmds = rec.get("commands") or []
    if cmds:
        click.echo("commands:")
        for c in cmds:
            code = f"  [exit {c['exit']}]" if "exit" in c else ""
            click.echo(f"  $ {c.get('cmd')}{code}")


@sessions_cmd.command("prune")
@click.option("--max-age", "max_age", type=click.FloatRange(0), help="Delete records older than DAYS.")
@click.option("--max-mb", "max_mb", type=click.FloatRange(0), help="Then keep at most N MB, newest first.")
@click.option("--dry-run", is_flag=True, help="Say what would be deleted; delete nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def prune_cmd(max_age: float | None, max_mb: float | None, dry_run: bool, as_json: bool) -> None:
    """Delete old session records. Only files under .ccmemory/local/sessions/ are touched."""
    from ccmemory.features.sessions.prune import prune

    if max_age is None and max_mb is None:
        raise click.UsageError("give --max-age DAYS and/or --max-mb N")
    rep = prune(_root(), max_age_days=max_age, max_mb=max_mb, dry_run=dry_run)
    if as_json:
        out = {"deleted": rep.deleted, "kept": rep.kept, "bytes_kept": rep.bytes_kept, "dry_run": dry_run}
        click.echo(json.dumps(out, indent=2))
        return
    verb = "would delete" if dry_run else "deleted"
    click.echo(f"{verb} {len(rep.deleted)} session record(s); kept {rep.kept} ({rep.bytes_kept} bytes).")
