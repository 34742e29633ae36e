"""`ccmemory export` and the JSON / rule-file side of `ccmemory import` (docs/import-export.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ccmemory.surfaces.cli.common import emit_json, notice, service


def kind_of(path: Path, source: str) -> str:
    """What PATH holds (transcript, json, rules, adr, mcp-memory, basic-memory, mem0): --from, or
    guessed from its name and first bytes."""
    if source != "auto":
        return source
    from ccmemory.features.interop import others
    from ccmemory.features.interop.rulesin import is_rule_file

    if path.is_dir():
        from ccmemory.features.interop.adr import is_adr_folder

        if is_adr_folder(path):
            return "adr"
        return "basic-memory" if others.is_basic_memory_folder(path) else "transcript"
    if is_rule_file(path):
        return "rules"
    if path.suffix in (".json", ".jsonl") and others.sniff_json_lines(path):
        return "mcp-memory"
    if path.suffix == ".json":
        return "mem0" if _mem0(path) else "json"
    return "transcript"


def _mem0(path: Path) -> bool:
    from ccmemory.features.interop.others import is_mem0

    try:
        return is_mem0(json.loads(path.read_text(encoding="utf-8", errors="replace")))
    except (ValueError, RecursionError):
        return False


def import_other(items: list[tuple[Path, str]], *, dry_run: bool, as_json: bool) -> None:
    from ccmemory.features.interop import jsonfile, rulesin

    results: list[dict[str, Any]] = []
    with service() as svc:
        for path, kind in items:
            rel = _display(svc.vault.root, path)
            if kind == "json":
                try:
                    data = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                    raise click.ClickException(f"{rel}: not a readable JSON file ({exc})") from None
                except RecursionError:
                    raise click.ClickException(f"{rel}: JSON nested too deeply to read") from None
                out = jsonfile.import_document(svc.vault, data, dry_run=dry_run).as_dict()
            elif kind in ("mcp-memory", "basic-memory", "mem0"):
                from ccmemory.features.interop.others import import_other as import_store

                out = import_store(svc, path, rel, kind, dry_run=dry_run).as_dict()
            elif kind == "adr":
                from ccmemory.features.interop.adr import import_folder

                if not path.is_dir():
                    raise click.ClickException(f"{rel}: an ADR import takes the folder of records")
                out = import_folder(svc, path, rel, dry_run=dry_run).as_dict()
            elif path.is_file():
                out = rulesin.import_file(svc, path, rel, dry_run=dry_run).as_dict()
            else:
                raise click.ClickException(f"{rel}: a rule file must be a file")
            results.append({"path": rel, "kind": kind, **out})
        if not dry_run and any(r["written"] for r in results):
            svc.reindex()
    if as_json:
        emit_json(results if len(results) > 1 else results[0])
        return
    for r in results:
        verb = "would write" if dry_run else "wrote"
        planned = r.get("would_write") or r["written"]
        kept = r.get("already_there", r.get("unchanged", 0))
        click.echo(f"{r['path']} ({r['kind']}): {verb} {len(planned)}, already there {kept}")
        for item in planned:
            click.echo(
                f"  {item['type']}: {item['title']}  ({item['from']})"
                if isinstance(item, dict)
                else f"  {item}"
            )
        for err in r.get("errors", []):
            notice(f"  entry {err['entry']}: {err['reason']}")


def _display(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


@click.command("export")
@click.option(
    "--to",
    "target",
    type=click.Choice(["json", "claude-md", "agents-md", "cursor", "adr"]),
    required=True,
    help="json: every memory, lossless (stdout or -o). claude-md / agents-md / cursor: the curated "
    "rules in force, as a regenerated block of ./CLAUDE.md, ./AGENTS.md or .cursor/rules/ccmemory.mdc. "
    "adr: every decision as a MADR file in docs/adr/ (or -o FOLDER).",
)
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write to this file (adr: folder).")
@click.option(
    "--budget",
    type=click.IntRange(500, 200_000),
    default=6000,
    show_default=True,
    help="Rule files: the block's size in characters (rules that do not fit are counted, not cut).",
)
def export_cmd(target: str, output: Path | None, budget: int) -> None:
    """Export memories for other tools.

    `--to json` writes every memory (every frontmatter field and the body, link targets given as
    paths as the ids they name; the schema is in docs/import-export.md) sorted by id; `ccmemory
    import --from json FILE` reads it back, so export → import into an empty repository → export
    gives the same bytes (a memory without id yet gets a ULID on import). `--to claude-md`
    (agents-md, cursor) writes the curated preferences, corrections, gotchas, exceptions and
    decisions in force between `<!-- ccmemory:begin -->` and `<!-- ccmemory:end -->`, leaving the
    rest of the file as it is, so agents that do not run the plugin follow the same rules.
    `--to adr` writes each decision as a MADR record (superseded ones say by which), replacing
    only records it wrote before.
    """
    from ccmemory.core.atomic import UMASK, atomic_write
    from ccmemory.features.interop import jsonfile, rulesout

    with service() as svc:
        if target == "json":
            text = json.dumps(jsonfile.export(svc.vault, svc.project), indent=1, ensure_ascii=False) + "\n"
            if output is None:
                click.echo(text, nl=False)
            else:
                atomic_write(output, text.encode("utf-8"), overwrite=True, mode=UMASK)
                notice(f"wrote {output}")
            return
        if target == "adr":
            folder = output or svc.vault.root / "docs" / "adr"
            written, kept = rulesout.write_adrs(svc, folder)
            click.echo(f"{_display(svc.vault.root, folder)}: {written} decision record(s) written")
            for name in kept:
                notice(f"{name}: exists and was not written by ccmemory; left alone")
            return
        path, count = rulesout.write(svc, target, output, budget)
        click.echo(f"{_display(svc.vault.root, path)}: {count} rule(s) in the ccmemory block")
