"""`ccmemory suggest`: memories proposed from patterns in the memories, with their evidence."""

from __future__ import annotations

import click

from ccmemory.surfaces.cli.common import display_path, emit_json, service


@click.command("suggest")
@click.option("--accept", "accept_key", metavar="KEY", help="Write the memory suggestion KEY proposes.")
@click.option("--dismiss", "dismiss_key", metavar="KEY", help="Never show suggestion KEY again.")
@click.option("--all", "show_all", is_flag=True, help="Also list dismissed and accepted suggestions.")
@click.option("--json", "as_json", is_flag=True)
def suggest_cmd(accept_key: str | None, dismiss_key: str | None, show_all: bool, as_json: bool) -> None:
    """List what the memories suggest, each with the memories that are its evidence.

    Patterns: corrections about one subject (proposes a fact stating what is right), a rule
    broken again and again (an open question: should it change?), a decision revised three times
    or more (an insight naming the churn), a file named by three or more warnings (an insight),
    corrections about one subject on two or more occasions (a hypothesis with a testable
    prediction, citing the corrections).
    Nothing is written until you --accept a suggestion: its memory is written like any other
    (redacted, validated, related to its evidence) and shows up in `git status` for review.
    --dismiss remembers your choice on this machine (.ccmemory/local/).
    The capture worker computes the suggestions after its jobs and keeps them in
    .ccmemory/local/suggestions.json; they are read from there while the index is unchanged and
    recomputed otherwise.
    """
    from ccmemory.features import suggest

    with service() as svc:
        key = accept_key or dismiss_key
        if key:
            found = suggest.find(svc, key)
            if found is None:
                raise click.ClickException(f"no suggestion {key!r} (list them with `ccmemory suggest --all`)")
            if dismiss_key:
                suggest.dismiss(svc, found.key)
                out = {"key": found.key, "dismissed": True}
                click.echo(f"dismissed {found.key}") if not as_json else emit_json(out)
                return
            rec = suggest.accept(svc, found)
            if as_json:
                emit_json({"key": found.key, "accepted": True, "path": rec.path, "status": rec.status})
            else:
                click.echo(display_path(svc.vault.root, rec.path))
            return
        items = suggest.suggestions(svc, include_dismissed=show_all)
        if as_json:
            emit_json([s.as_dict() for s in items])
            return
        if not items:
            click.echo("no suggestions: no pattern in the memories calls for one")
            return
        for s in items:
            click.echo(f"{s.key}  {s.why}")
            click.echo(f"    proposes a {s.type}: {s.title}")
            click.echo(f"    evidence: {', '.join(i[:10] for i in s.evidence)}")
        click.echo("\n`ccmemory suggest --accept KEY` writes one; `--dismiss KEY` hides it.")
