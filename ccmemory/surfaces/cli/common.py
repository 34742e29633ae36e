"""Helpers shared by the CLI commands: opening the service, errors, output."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from ccmemory.core.vault import VaultNotFound
from ccmemory.index.base import IndexUnavailable
from ccmemory.surfaces.cli.errors import cli_error


@contextmanager
def service(*, fresh: bool = True) -> Iterator[Any]:
    """Open the Service for the current folder; turn expected failures into clear CLI errors.

    With `fresh`, an index that git has moved past since the last reindex (a clone without hooks,
    a `git reset`) is brought level first (`ccmemory.app.freshness`)."""
    from ccmemory.app.service import Service

    try:
        svc = Service.open()
    except VaultNotFound as exc:
        raise cli_error(exc) from None
    except ValueError as exc:  # bad config.yaml
        raise cli_error(exc) from None
    _warn_config(svc.vault.root)
    try:
        if fresh:
            _catch_up(svc)
        yield svc
    except IndexUnavailable as exc:
        raise cli_error(exc, "index unavailable: ") from None
    finally:
        with contextlib.suppress(Exception):
            svc.close()


#: seconds a CLI read waits for a reindex another process runs (a git hook's, usually well under a
#: second) before it answers from the index as it is
CATCH_UP_WAIT = 10.0


def _catch_up(svc: Any) -> None:
    from ccmemory.app.freshness import NOT_BUILT, moved

    why = moved(svc)
    if why is None:
        return
    report = svc.reindex_unless_busy(wait=CATCH_UP_WAIT)
    if report is None:
        notice(
            f"another reindex of this repository is running ({why} since the last one); "
            "this answer may not show the latest changes yet"
        )
        return
    changed = report.added + report.updated + report.removed + report.status_changed
    if why == NOT_BUILT:  # nothing added: the reindex it waited for built it
        if report.added:
            notice(f"the index held none of this project's memories: built it from {report.added} files")
    elif changed:
        notice(f"index brought up to date first ({why} since the last reindex: {changed} change(s))")


def _warn_config(root: Any) -> None:
    """One stderr line when config.yaml breaks the schema (a typo must not pass in silence)."""
    from ccmemory.core.config import config_problems

    try:
        problems = config_problems(root)
    except ValueError:  # unreadable: load_config has already said so
        return
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        notice(f"warning: {problems[0].render()}{more}; `ccmemory check` lists every config problem")


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def notice(msg: str) -> None:
    click.secho(msg, err=True, fg="yellow")


class FiniteRange(click.FloatRange):
    """A float range that also refuses nan and ±inf (click's own lets nan through every bound)."""

    name = "finite float range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import math

        number = super().convert(value, param, ctx)
        if isinstance(number, float) and not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def parse_when(value: str | None) -> datetime | None:
    """Accept 2026-11-20, 2026-11-20T14:03:11Z, or relative '7d' / '3w' / '12h'."""
    if not value:
        return None
    from ccmemory.core.model import parse_when as parse

    parsed = parse(value)
    if parsed is None:
        raise click.BadParameter(f"{value!r}: use a date (2026-11-20), a timestamp or 7d/3w/12h")
    return parsed


def display_path(root: Path, rel: str) -> str:
    """A path the user can paste: relative to the current folder when inside the repository."""
    absolute = root / rel
    try:
        return os.path.relpath(absolute, Path.cwd())
    except ValueError:
        return str(absolute)


class Progress:
    """A click progress bar on stderr, created on the first update when the work is long and
    stderr is a terminal (scripts and CI logs get no bar)."""

    def __init__(self, label: str, minimum: int = 200):
        self.label = label
        self.minimum = minimum
        self.bar: Any = None
        self.done = 0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if total < self.minimum or not sys.stderr.isatty():
                return
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def resolve_or_exit(svc: Any, ref: str) -> Any:
    """The memory REF names (ccmemory.app.resolve), or a ClickException with the resolver's message:
    every command that takes a memory reference goes through here."""
    from ccmemory.app.resolve import RefError, resolve_one

    try:
        return resolve_one(svc, ref)
    except RefError as exc:
        extra = "" if exc.code == "ambiguous" else f" ({exc.hint})"
        raise click.ClickException(exc.message + extra) from None
