"""`ccmemory worker`: run the capture worker in the foreground, show its queue, retry dead jobs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click


@click.command("worker")
@click.option("--once", is_flag=True, help="Process what is queued now, then exit.")
@click.option("--status", is_flag=True, help="Show pending and dead jobs and whether a worker runs.")
@click.option("--retry-dead", is_flag=True, help="Move dead-lettered jobs back to the queue.")
@click.option("--json", "as_json", is_flag=True, help="JSON output (with --status).")
def command(once: bool, status: bool, retry_dead: bool, as_json: bool) -> None:
    """The capture worker normally starts by itself from the hooks and exits when idle."""
    from ccmemory.features.capture import jobs
    from ccmemory.features.capture.paths import LocalPaths, find_root
    from ccmemory.features.capture.providers.choose import describe

    root = find_root(Path.cwd())
    if root is None:
        raise click.ClickException("no .ccmemory/ folder here: run `ccmemory init` first")
    paths = LocalPaths(root)
    if retry_dead:
        moved = 0
        for dead in sorted(paths.dead.glob("*.json")) if paths.dead.is_dir() else []:
            data = jobs.load(dead)
            data.update(attempts=0, retried_at=time.time())
            for key in ("reason", "dead_at", "last_error", "retry_at", "plan"):
                data.pop(key, None)
            if jobs.write_json(paths.pending / dead.name, data, overwrite=False):
                dead.unlink()
                moved += 1
        click.echo(f"{moved} job(s) queued again")
        if moved:
            jobs.spawn_worker(paths)
        return
    if status:
        dead_jobs = []
        for p in sorted(paths.dead.glob("*.json")) if paths.dead.is_dir() else []:
            try:
                dead_jobs.append({"job": p.name, "reason": jobs.load(p).get("reason")})
            except (OSError, ValueError) as exc:
                dead_jobs.append({"job": p.name, "reason": f"unreadable: {exc}"})
        pending = [p.name for p in jobs.pending(paths)]
        done = len(list(paths.done.glob("*.json"))) if paths.done.is_dir() else 0
        provider = describe(root)
        running = jobs.worker_running(paths)
        info = {
            "worker_running": running,
            "pending": pending,
            "dead": dead_jobs,
            "done": done,
            "provider": provider,
        }
        if as_json:
            click.echo(json.dumps(info, indent=2))
            return
        click.echo(f"worker: {'running' if running else 'not running'}")
        click.echo(f"provider: {provider['provider']} ({provider['reason']})")
        click.echo(f"jobs: {len(pending)} pending, {done} done, {len(dead_jobs)} dead")
        for d in dead_jobs:
            click.echo(f"  dead {d['job']}: {d['reason']}")
        return
    from ccmemory.features.capture.worker import run

    raise SystemExit(run(root, once=once))
