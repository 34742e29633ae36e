"""`ccmemory import PATH`: backfill memories from Claude Code transcripts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ccmemory.surfaces.cli.errors import cli_error


@click.command("import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--provider",
    type=click.Choice(["auto", "anthropic", "claude-cli", "rules", "test"]),
    default=None,
    help="Extraction provider (default: capture.provider from config, else auto).",
)
@click.option(
    "--force", is_flag=True, help="Extract again even where this provider already imported a segment."
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def command(path: Path, provider: str | None, force: bool, as_json: bool) -> None:
    """Import a Claude Code transcript file, or every transcript in a projects folder
    (e.g. ~/.claude/projects/<project>/). Re-runnable: a segment is skipped once imported by the
    same kind of provider and extractor version, so a rules import followed by an LLM import runs
    the LLM; --force extracts again. No run creates duplicates."""
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
    store = Store(vault)
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
        root, transcript_files(path), memories=store, max_bytes=settings.sessions_max_kb * 1024
    )
