"""`--at REV` for search and show: a Service over the memories as they stood at a revision."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from ccmemory.surfaces.cli.common import display_path, emit_json, notice
from ccmemory.surfaces.cli.errors import cli_error


def check_rev(rev: str) -> None:
    """Refuse what `--at` cannot mean, with a clear message instead of a raw git error."""
    if not rev.strip():
        raise click.ClickException("--at needs a revision: a tag, commit or branch (it was empty)")
    if ".." in rev:
        raise click.ClickException(
            f"--at {rev}: one revision (a tag, commit or branch), not a range; "
            "to compare two revisions use `ccmemory diff`"
        )
    if rev.startswith("-") or any(c in rev for c in "\x00\n\r"):
        raise click.ClickException(f"--at {rev[:80]!r}: not a revision name")


@contextmanager
def service_at(rev: str, *, quiet: bool = False) -> Iterator[Any]:
    with snapshot_service(rev, quiet=quiet) as (svc, _commit):
        yield svc


@contextmanager
def snapshot_service(rev: str, *, quiet: bool = False) -> Iterator[tuple[Any, str]]:
    from ccmemory.core.gitstate import GitError
    from ccmemory.core.vault import VaultNotFound
    from ccmemory.features.lifecycle.timetravel import open_service_at

    check_rev(rev)
    try:
        svc, snap = open_service_at(None, rev)
    except GitError as exc:
        why = str(exc).splitlines()[-1][:200] if str(exc) else "git error"
        raise click.ClickException(f"--at {rev}: no such revision ({why})") from None
    except (VaultNotFound, ValueError) as exc:
        raise cli_error(exc) from None
    if not quiet:
        base = f"curated = in main at {snap.status_base[:10]}" if snap.status_base else "all curated"
        notice(f"as of {rev} ({snap.commit[:10]}): {snap.count} memory files; {base}")
    try:
        yield svc, snap.commit
    finally:
        with contextlib.suppress(Exception):
            svc.close()


def show_at(ref: str, rev: str, as_json: bool) -> None:
    """`ccmemory show REF --at REV`: the memory's file as it was at REV (read from git)."""
    from dataclasses import asdict

    from ccmemory.features.lifecycle.gitread import text_at

    with snapshot_service(rev, quiet=as_json) as (svc, commit):
        from ccmemory.app.resolve import RefError, resolve_one

        try:
            m = resolve_one(svc, ref)
        except RefError as exc:
            raise click.ClickException(f"at {rev}: {exc.message}") from None
        edges = svc.view.edges([m.id])
        sup = [e.src for e in edges if e.dst == m.id and e.type == "SUPERSEDES"]
        text = text_at(svc.vault.root, commit, m.path)
        if as_json:
            data = asdict(m)
            data.update(uri=m.uri, superseded_by=sup, at=rev, commit=commit, text=text)
            emit_json(data)
            return
        click.secho(m.title, bold=True)
        click.echo(f"{m.type} · {m.status} at {rev} · {m.created} · {m.author or 'unknown author'}")
        click.echo(f"{m.id}  {display_path(svc.vault.root, m.path)}  {m.uri}")
        if sup:
            click.secho(f"superseded by (at {rev}): {', '.join(sup)}", fg="yellow")
        click.echo("")
        click.echo(text if text is not None else m.body)
