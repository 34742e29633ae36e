"""`ccmemory import PATH`: backfill memories from Claude Code transcripts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ccmemory.surfaces.cli.errors import cli_error


@click.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--from",
    "source",
    type=click.Choice(["auto", "transcript", "json", "rules", "adr", "mcp-memory", "basic-memory", "mem0"]),
    default="auto",
    show_default=True,
    help="What PATH is: a Claude Code transcript (or a projects folder of them), a `ccmemory export "
    "--to json` file, an agent rule file (CLAUDE.md, AGENTS.md, .cursorrules, ...), a folder of "
    "architecture decision records (docs/adr/), the MCP memory server's memory.json, a folder of "
    "Basic Memory notes, or a mem0 JSON export. auto: by name and content.",
)
@click.option(
    "--provider",
    type=click.Choice(["auto", "anthropic", "claude-cli", "rules", "test"]),
    default=None,
    help="Transcripts: extraction provider (default: capture.provider from config, else auto).",
)
@click.option(
    "--force", is_flag=True, help="Transcripts: extract again where this provider already imported a segment."
)
@click.option("--dry-run", is_flag=True, help="JSON exports and rule files: list what would be written.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def command(
    paths: tuple[Path, ...], source: str, provider: str | None, force: bool, dry_run: bool, as_json: bool
) -> None:
    """Import memories: Claude Code transcripts (a file, or every transcript in a projects folder
    such as ~/.claude/projects/<project>/), a JSON export of another vault, agent rule files (one
    memory per rule) or a folder of ADRs (one decision each); docs/import-export.md.

    Re-runnable: a transcript segment is skipped once imported by the same kind of provider and
    extractor version (--force extracts again), a JSON entry whose id is in the vault is skipped,
    a rule or ADR already imported unchanged is skipped and a changed one supersedes the memory it
    came from. No run creates duplicates."""
    from ccmemory.surfaces.cli.cmd_interop import import_other, kind_of

    kinds = [(p, kind_of(p, source)) for p in paths]
    others = [(p, k) for p, k in kinds if k != "transcript"]
    if others:
        import_other(others, dry_run=dry_run, as_json=as_json)
    for path, kind in kinds:
        if kind == "transcript":
            _transcripts(path, provider, force, as_json)


def _transcripts(path: Path, provider: str | None, force: bool, as_json: bool) -> None:
    from ccmemory.app.service import Service
    from ccmemory.core.vault import Vault, VaultNotFound
    from ccmemory.features.capture import settings as settings_mod
    from ccmemory.features.capture.backfill import import_path
    from ccmemory.features.capture.providers.choose import choose
    from ccmemory.features.capture.store import Store

    try:
        vault = Vault.open(Path.cwd())
    except VaultNotFound as exc:
        raise cli_error(exc) from None
    settings = settings_mod.load(vault.root)
    if provider:
        settings.provider = provider
    choice = choose(settings)
    store = Store(vault, service=Service)
    if not as_json:
        click.echo(f"provider: {choice.name} ({choice.reason})", err=True)

    def progress(items: Iterator[Any], length: int) -> Any:
        if as_json:
            return items
        return click.progressbar(items, length=length, label="Importing segments", file=None)

    try:
        report = import_path(
            vault.root, path, choice=choice, settings=settings, store=store, progress=progress, force=force
        )
        session_ids, notes = _session_records(vault.root, path, settings, store)
    except FileNotFoundError as exc:
        raise cli_error(exc) from None
    finally:
        store.close()
    summary = {
        "files": report.files,
        "segments": report.segments,
        "already_imported": report.skipped_done,
        "written": [vault.rel(p) for p in report.written],
        "duplicates_skipped": report.duplicates,
        "llm_calls": report.llm_calls,
        "llm_input_tokens": report.input_tokens,
        "sessions": report.sessions,
        "provider": choice.name,
        "session_records": session_ids,
        "notes": notes,
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(
        f"{report.files} transcript(s), {report.segments} segment(s): "
        f"{len(report.written)} memory file(s) written, {report.skipped_done} segment(s) already "
        f"imported, {report.duplicates} duplicate(s) skipped, {report.llm_calls} LLM call(s)."
    )
    for p in report.written:
        click.echo(f"  {vault.rel(p)}")
    click.echo(f"{len(session_ids)} session record(s) written (ccmemory sessions list).")
    for note in notes:
        click.echo(f"note: {note}", err=True)


def _session_records(root: Path, path: Path, settings: Any, store: Any) -> tuple[list[str], list[str]]:
    """Session history records (ccmemory.features.sessions) for the imported transcripts."""
    if not settings.sessions_enabled:
        return [], []
    from ccmemory.features.capture.backfill import transcript_files
    from ccmemory.features.capture.sessionrec import import_files

    return import_files(
        root,
        transcript_files(path),
        memories=store,
        max_bytes=settings.sessions_max_kb * 1024,
        publish=settings.sessions_publish_prompts if settings.sessions_publish else None,
    )
