"""`ccmemory sessions list|show|search|timeline|autonomy|prune|archive|publish`: the session history
(docs/sessions.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ccmemory.core.errors import CcmemoryError
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
    files, commands, errors, memories, commits at start and end, a summary), under
    .ccmemory/local/sessions/. Records are written by the capture worker at
    Stop/SessionEnd/PreCompact and by `ccmemory import`; `publish` (or sessions.publish: true)
    writes their summaries under .ccmemory/sessions/ for review."""


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
@click.option("--prompts", "prompts", is_flag=True, help="Search single prompts, not whole sessions (BM25).")
@click.option("--text-only", is_flag=True, help="BM25 only, no embedding (no model is loaded).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search_cmd(
    query: str, since: str | None, limit: int, prompts: bool, text_only: bool, as_json: bool
) -> None:
    """Sessions whose prompts and summary match QUERY, best first: BM25 over the local session
    index fused with embedding similarity (the project's embedder; text only when it is
    unavailable). With --prompts: the single prompts that match, best first, each with its
    session, time and branch (text truncated; `sessions show ID` has the whole record)."""
    from ccmemory.features.sessions.service import search_prompts, search_sessions

    if prompts:
        try:
            hits = search_prompts(_root(), query, since=since, limit=limit)
        except CcmemoryError as exc:
            raise cli_error(exc) from None
        if as_json:
            click.echo(json.dumps(hits, indent=2, ensure_ascii=False))
        elif not hits:
            click.echo("No prompt matches.")
        for h in [] if as_json else hits:
            when = str(h.get("end") or h.get("start") or "?")[:16].replace("T", " ")
            click.echo(
                f"{h['session']}  #{h['prompt']}  {when}  {h.get('branch') or '-'}  ({h['score']:.4f})"
            )
            click.echo(f"    {h['text']}")
        return
    rows, notice = search_sessions(_root(), query, since=since, limit=limit, semantic=not text_only)
    if notice and not text_only:
        click.echo(f"note: {notice}", err=True)
    _echo_briefs(rows, as_json, "No session matches.")


@sessions_cmd.command("timeline")
@click.argument("query", required=False)
@click.option("--memory", "memory_id", metavar="ID", help="Around the session that captured this memory.")
@click.option("--session", "session_id", metavar="ID", help="Around this session (an id, prefix or link).")
@click.option(
    "--around", type=click.IntRange(0, 50), default=2, show_default=True, help="Sessions on each side."
)
@click.option("--text-only", is_flag=True, help="Find QUERY's session by BM25 only (no model is loaded).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def timeline_cmd(
    query: str | None,
    memory_id: str | None,
    session_id: str | None,
    around: int,
    text_only: bool,
    as_json: bool,
) -> None:
    """The sessions before and after one, oldest first: the best match of QUERY, the session
    that captured --memory ID, or --session ID. The anchor is marked with `>`."""
    from ccmemory.features.sessions.service import timeline

    if sum(x is not None for x in (query, memory_id, session_id)) != 1:
        raise click.UsageError("give one of QUERY, --memory ID or --session ID")
    root = _root()
    if memory_id is not None:
        session_id = _memory_session(memory_id)
    rows, why = timeline(root, query=query, session=session_id, around=around, semantic=not text_only)
    if as_json:
        click.echo(
            json.dumps({"sessions": rows, **({"note": why} if why else {})}, indent=2, ensure_ascii=False)
        )
        return
    if not rows:
        raise click.ClickException(why or "no session found")
    for r in rows:
        when = str(r.get("end") or r.get("start") or "?")[:16].replace("T", " ")
        mark = ">" if r.get("anchor") else " "
        click.echo(f"{mark} {r['id']}  {when}  {r.get('branch') or '-'}")
        click.echo(f"    {r['summary']}")


def _memory_session(memory_id: str) -> str:
    """The session a memory was captured in (its `session` field)."""
    from ccmemory.surfaces.cli.common import service

    with service() as svc:
        mem = svc.get(memory_id)
    if mem is None:
        raise click.ClickException(f"no memory {memory_id!r}, or the prefix names several (ccmemory search)")
    session = mem.session
    if not session:
        raise click.ClickException(f"memory {memory_id} names no session (it was not captured in one)")
    return str(session)


@sessions_cmd.command("autonomy")
@click.option("--since", help="Only sessions that ended on or after this date (YYYY-MM-DD).")
@click.option("--by", "period", type=click.Choice(["week", "month"]), default="week", show_default=True)
@click.option("--limit", type=click.IntRange(0), default=20, show_default=True, help="Sessions listed.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def autonomy_cmd(since: str | None, period: str, limit: int, as_json: bool) -> None:
    """The autonomy score: AI actions (tool calls) per human intervention (prompt), the seed's
    Loop Efficiency, per session (newest first), per week or month and overall. Each prompt is
    classed as goal, correction, validation or continuation (by the LLM provider when one is
    configured, by rules otherwise; the `by` column says which). See docs/sessions.md."""
    from ccmemory.features.sessions.service import autonomy_report

    rep = autonomy_report(_root(), since=since, by=period, limit=limit)
    if as_json:
        click.echo(json.dumps(rep, indent=2, ensure_ascii=False))
        return
    overall = rep["overall"]
    if not rep["sessions"] and not (overall and overall["sessions"]):
        click.echo("No session with an autonomy score yet (records written before it have none).")
        return

    def fmt(row: dict[str, Any]) -> str:
        sc = "-" if row["score"] is None else f"{row['score']:.2f}"
        return (
            f"score {sc:>6}  actions {row['actions']:>4}  interventions {row['interventions']:>3}"
            f" (goal {row['goal']}, correction {row['correction']}, validation {row['validation']},"
            f" continuation {row['continuation']})"
        )

    if overall:
        click.echo(f"overall ({overall['sessions']} sessions): {fmt(overall)}")
    click.echo(f"by {period}:")
    for p in rep["periods"]:
        click.echo(f"  {p['period']:<9} {p['sessions']:>3} sessions  {fmt(p)}")
    click.echo("sessions (newest first):")
    for r in rep["sessions"]:
        when = str(r.get("start") or "?")[:16].replace("T", " ")
        click.echo(f"  {r['id'][:12]:<12} {when:<16} {fmt(r)}  [{r['by']}]")
    click.echo(rep["definition"] + ".")


@sessions_cmd.command("show")
@click.argument("session_id")
@click.option("--json", "as_json", is_flag=True, help="Print the whole record as JSON.")
def show_cmd(session_id: str, as_json: bool) -> None:
    """One session's record (SESSION_ID, a unique prefix of it, or ccmemory://session/ID);
    archived records are read from the archive."""
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
    start, end = rec.get("commit_start"), rec.get("commit_end")
    click.echo(f"commits: {str(start)[:12] if start else '-'} → {str(end)[:12] if end else '-'}")
    if rec.get("archived"):
        click.echo("(archived: read from .ccmemory/local/sessions/archive/)")
    click.echo(f"summary: {rec.get('summary')}")
    from ccmemory.features.sessions.autonomy import score

    sc = score(rec)
    if sc is not None:
        value = "-" if sc["score"] is None else f"{sc['score']:.2f}"
        click.echo(
            f"autonomy: {value} ({sc['actions']} AI actions / {sc['interventions']} interventions:"
            f" goal {sc['goal']}, correction {sc['correction']}, validation {sc['validation']},"
            f" continuation {sc['continuation']}; by {sc['by']})"
        )
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


@sessions_cmd.command("archive")
@click.option(
    "--older-than",
    "older_than",
    type=click.FloatRange(0),
    default=90,
    show_default=True,
    help="Archive sessions that ended more than DAYS ago.",
)
@click.option("--dry-run", is_flag=True, help="Say what would be archived; move nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def archive_cmd(older_than: float, dry_run: bool, as_json: bool) -> None:
    """Move old session records into one compressed file per month under
    .ccmemory/local/sessions/archive/. They leave list, search and SessionStart; `sessions show
    ID` still reads them. Nothing outside .ccmemory/local/sessions/ is touched."""
    from ccmemory.features.sessions.archive import archive

    try:
        rep = archive(_root(), older_than_days=older_than, dry_run=dry_run)
    except OSError as exc:
        raise cli_error(exc) from None
    if as_json:
        out = {"archived": rep.archived, "files": rep.files, "kept": rep.kept, "dry_run": dry_run}
        click.echo(json.dumps(out, indent=2))
        return
    verb = "would archive" if dry_run else "archived"
    where = ", ".join(rep.files) or "nothing"
    click.echo(f"{verb} {len(rep.archived)} session record(s) into {where}; kept {rep.kept}.")


@sessions_cmd.command("publish")
@click.argument("session_ids", nargs=-1)
@click.option(
    "--prompts",
    type=click.IntRange(0, 20),
    default=None,
    help="Include the first N prompts (redacted, 300 characters each). Default: sessions.publish_prompts.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def publish_cmd(session_ids: tuple[str, ...], prompts: int | None, as_json: bool) -> None:
    """Write the summary of the given sessions (default: every live record) as markdown under
    .ccmemory/sessions/, for review in a pull request and the site's Sessions page. A file edited
    or deleted by hand since ccmemory wrote it is left alone. `sessions.publish: true` does this
    for every session as its record is written."""
    from ccmemory.features.capture import settings as settings_mod
    from ccmemory.features.sessions import store
    from ccmemory.features.sessions.index import note_written
    from ccmemory.features.sessions.publish import publish

    root = _root()
    count = settings_mod.load(root).sessions_publish_prompts if prompts is None else prompts
    if session_ids:
        recs = [store.read(root, s) for s in session_ids]
        missing = [s for s, r in zip(session_ids, recs, strict=True) if r is None]
        if missing:
            raise click.ClickException(
                f"no live session record matches {missing[0]!r} (ccmemory sessions list)"
            )
    else:
        recs = list(store.all_records(root))
    rows = []
    for rec in recs:
        assert rec is not None
        done = publish(root, rec, prompts=count)
        if done.status in ("written", "updated", "unchanged"):
            note_written(root, store.write(root, rec))
        rows.append({"id": rec["id"], "status": done.status, "path": done.rel, "message": done.message})
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for row in rows:
        click.echo(row["message"])
    if not rows:
        click.echo("No session recorded yet (see docs/sessions.md).")
