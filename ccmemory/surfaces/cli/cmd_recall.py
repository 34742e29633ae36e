"""`ccmemory recall`: what recall would inject for a prompt or a file, and what it has cost."""

from __future__ import annotations

from typing import Any

import click

from ccmemory.surfaces.cli.common import emit_json, service


@click.command("recall")
@click.argument("prompt", required=False)
@click.option("--file", "files", multiple=True, help="A file Claude is about to edit or read (repeatable).")
@click.option(
    "--usage", is_flag=True, help="Tokens injected by recall per day and session (local telemetry)."
)
@click.option("--explain", is_flag=True, help="Show each memory's scores.")
@click.option("--json", "as_json", is_flag=True)
def recall_cmd(prompt: str | None, files: tuple[str, ...], usage: bool, explain: bool, as_json: bool) -> None:
    """Preview what the hooks would inject for PROMPT (UserPromptSubmit) or before a tool
    touches --file PATH (PreToolUse), as a new session would see it, ranked as a running MCP
    server ranks it; or, with --usage, what recall has injected so far."""
    if usage:
        return _usage(as_json)
    if not prompt and not files:
        raise click.UsageError("give a PROMPT, --file PATH, or --usage")
    from ccmemory.features.recall import engine
    from ccmemory.features.recall.config import recall_settings
    from ccmemory.features.recall.paths import normalise
    from ccmemory.features.recall.run import FILE_HEADER, PROMPT_HEADER
    from ccmemory.features.recall.warm import answer, from_wire

    with service() as svc:
        s = recall_settings(svc.config.raw)
        if prompt:
            request: dict[str, Any] = {"op": "prompt", "text": prompt, "limit": s.pick_limit}
            header = PROMPT_HEADER
        else:
            request = {"op": "files", "paths": [normalise(f) for f in files], "limit": s.pick_limit}
            header = FILE_HEADER.format(what=", ".join(request["paths"]))
        asked = not prompt or engine.speaks_to_project(prompt)
        picks = [from_wire(d) for d in answer(svc, request).get("picks", [])] if asked else []
        out = engine.show(picks, s, header, check_first=bool(prompt))
        if as_json:
            shown = [
                {
                    "id": p.memory.id,
                    "type": p.memory.type,
                    "title": p.memory.title,
                    "score": round(p.score, 4),
                    "title_only": p.memory.id in out.titled,
                    **({"explain": p.parts} if explain else {}),
                }
                for p in picks
                if p.memory.id in out.ids
            ]
            emit_json(
                {
                    "text": out.text,
                    "ids": out.ids,
                    "tokens": out.tokens,
                    "memories": shown,
                    "enabled": s.enabled,
                    "asked": asked,
                }
            )
            return
        if not asked:
            click.echo(
                "nothing would be injected (the prompt reads as chatter: too few content words"
                " for an instruction, or about things in general)"
            )
        elif not out.ids:
            click.echo("nothing would be injected (no memory is relevant enough)")
        else:
            click.echo(out.text.rstrip("\n"))
            click.echo(f"({out.tokens} tokens of the {s.budget_tokens}-token budget)")
        if explain:
            for p in picks:
                parts = ", ".join(f"{k}={v:.3f}" for k, v in sorted(p.parts.items()))
                kept = "over the limit or budget"
                if p.memory.id in out.ids:
                    kept = "injected, title only" if p.memory.id in out.titled else "injected"
                click.echo(f"  {p.memory.id} relevance={p.score:.3f} {parts} ({kept})")
        if not s.enabled:
            click.echo("recall is off in this repository (recall.enabled / CCMEMORY_RECALL)")


def _usage(as_json: bool) -> None:
    from ccmemory.core import telemetry
    from ccmemory.features.recall.usage import USAGE_KINDS, summarise

    with service() as svc:
        store = telemetry.open_store(svc.vault.dir, svc.config.raw)
        try:
            store.ingest()
            u = summarise(store.events(list(USAGE_KINDS)))
            enabled = store.config.enabled
        finally:
            store.close()
    if as_json:
        emit_json({**u.as_dict(), "telemetry_enabled": enabled})
        return
    if not enabled:
        click.echo("telemetry is off: recall's cost is not recorded (telemetry.enabled / CCMEMORY_TELEMETRY)")
        return
    per = f"{u.tokens / u.injections:.1f}" if u.injections else "0"
    click.echo(
        f"recall injected {u.tokens} tokens in {u.injections} injections ({per} per injection); "
        f"{u.recalled} memory lines: {u.fetched} fetched in full within 30 minutes, "
        f"{u.followed} had their files edited in the session, {u.cited} were cited by id in a reply"
    )
    for day, d in sorted(u.by_day.items())[-14:]:
        click.echo(f"  {day}  {d['tokens']:6} tokens  {d['injections']:4} injections")
    recent = sorted(u.by_session.items(), key=lambda kv: kv[1]["last"], reverse=True)[:10]
    for session, d in recent:
        click.echo(f"  session {session}  {d['tokens']} tokens, {d['injections']} injections")
