"""ccmemory watch."""

from __future__ import annotations

import json
import signal
import time
from typing import Any

import click

from ccmemory.surfaces.cli.common import FiniteRange
from ccmemory.surfaces.cli.errors import cli_error


@click.command("watch")
@click.option(
    "--debounce",
    default=0.3,
    show_default=True,
    type=FiniteRange(0.05, 30),
    help="Seconds of quiet before a burst of changes is indexed.",
)
@click.option(
    "--max-delay",
    default=2.0,
    show_default=True,
    type=FiniteRange(0.1, 300),
    help="Index a long burst at the latest this many seconds after its first change.",
)
@click.option(
    "--reconcile",
    default=60.0,
    show_default=True,
    type=FiniteRange(0, 86400),
    help="Also reindex every N seconds whatever happened (0: never).",
)
@click.option(
    "--no-embed",
    is_flag=True,
    help="Do not start background embedding after a reindex (full-text only).",
)
@click.option(
    "--for",
    "duration",
    type=FiniteRange(0.1, 30 * 86400),
    default=None,
    help="Stop after this many seconds (for scripts and tests).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per reindex on stdout.")
def watch_cmd(
    debounce: float, max_delay: float, reconcile: float, no_embed: bool, duration: float | None, as_json: bool
) -> None:
    """Keep the index live while memory files and git change (until Ctrl-C).

    Debounced: a burst of changes (an editor's save, a checkout or pull touching hundreds of
    files) becomes one incremental reindex. Branch switches, merges and pulls refresh
    curated/developmental status. Only one watcher runs per repository. New memories are
    searchable as full text at once; their vectors are computed by the background worker.
    """
    from ccmemory.core.vault import Vault, VaultNotFound
    from ccmemory.features.lifecycle.watcher import AlreadyWatching, Pass, Watcher

    try:
        vault = Vault.open()
    except VaultNotFound as exc:
        raise cli_error(exc) from None

    def on_pass(p: Pass) -> None:
        if as_json:
            click.echo(json.dumps(p.as_dict()), nl=True)
            return
        r = p.report
        stamp = time.strftime("%H:%M:%S")
        if r is None:
            click.echo(f"{stamp} {p.reason}: nothing to index")
            return
        click.echo(
            f"{stamp} {p.reason} ({p.events} events): added {r.added}, updated {r.updated}, "
            f"removed {r.removed}, status changed {r.status_changed}, errors {len(r.errors)} "
            f"({p.seconds:.2f}s)"
        )
        for e in r.errors:
            click.echo(f"  {e.path}:{e.line or 1}: {e.reason}", err=True)

    def on_notice(msg: str) -> None:
        click.secho(msg, err=True, fg="yellow")

    w = Watcher(
        vault.root,
        debounce=debounce,
        max_delay=max_delay,
        reconcile=reconcile,
        embed=not no_embed,
        on_pass=on_pass,
        on_notice=on_notice,
    )

    def _stop(*_: Any) -> None:
        w.stop()

    signal.signal(signal.SIGTERM, _stop)
    if not as_json:
        click.echo(f"watching {vault.dir} (Ctrl-C to stop)", err=True)
    try:
        w.run(max_seconds=duration)
    except AlreadyWatching as exc:
        raise cli_error(exc) from None
    except KeyboardInterrupt:
        pass
