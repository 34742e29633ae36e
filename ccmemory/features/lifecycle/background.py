"""The background reindex the git hooks start: coalescing, one at a time per repository.

`python -m ccmemory.features.lifecycle.background ROOT` marks a reindex as pending, then takes a
non-blocking lock on `.ccmemory/local/reindex.lock`. The lock holder keeps reindexing while the
pending mark reappears (a rebase fires many hooks in a row: they coalesce into one or two runs);
a process that cannot get the lock just leaves the mark for the holder and exits. Everything is
logged to `.ccmemory/local/githooks.log`; nothing ever raises to the caller. It is also the
background embedding worker of searches and `ccmemory watch` (see ccmemory/warming.py): after
each reindex it embeds what has no vector yet, keeping its count in `.ccmemory/local/embed.status`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from pathlib import Path

from ccmemory.retrieval.warming import LOCK, PENDING, clear_status, write_status

LOG = "githooks.log"


LOG_MAX_BYTES = 512 * 1024


def _log(local: Path, msg: str) -> None:
    path = local / LOG
    with contextlib.suppress(OSError):
        if path.stat().st_size > LOG_MAX_BYTES:  # keep one previous generation, bounded
            os.replace(path, path.with_name(LOG + ".1"))
    with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as fh:
        fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{os.getpid()}] {msg}\n")


def run(root: Path, *, embed: bool = True) -> int:
    """Reindex until no hook asked for another one. Returns the number of reindex runs."""
    local = root / ".ccmemory" / "local"
    if not (root / ".ccmemory").is_dir():
        return 0
    local.mkdir(parents=True, exist_ok=True)
    (local / PENDING).touch()
    runs = 0
    while True:
        fd = os.open(local / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return runs  # the holder will see our pending mark
            clear_status(local)  # a count left by an earlier worker is not ours
            while (local / PENDING).exists():
                with contextlib.suppress(FileNotFoundError):
                    (local / PENDING).unlink()
                runs += 1
                _reindex_once(root, local, embed)
        finally:
            os.close(fd)  # releases the lock
        if not (local / PENDING).exists():  # a mark set between our last check and the release
            return runs


def _reindex_once(root: Path, local: Path, embed: bool) -> None:
    try:
        from ccmemory.app.service import Service
        from ccmemory.core.vault import Vault

        with Service(Vault(root)) as svc:
            report = svc.reindex()
            msg = (
                f"reindex: added {report.added}, updated {report.updated}, removed {report.removed}, "
                f"status changed {report.status_changed}, errors {len(report.errors)} "
                f"({report.seconds:.3f}s)"
            )
            for e in report.errors:
                msg += f"\n    {e.path}:{e.line or 1}: {e.reason}"
            _log(local, msg)
            if embed:  # the model loads only when a vector is missing
                emb = svc.embedder()
                name = emb.name if emb is not None else ""

                def counted(done: int, total: int) -> None:  # searches elsewhere read this
                    write_status(local, name, svc.vectors_pending)

                done, problem = svc.embed_missing(progress=counted)
                if done or problem:
                    _log(local, f"embedded {done}" + (f" ({problem})" if problem else ""))
    except Exception as exc:  # never let a hook-started process crash noisily
        _log(local, f"reindex failed: {type(exc).__name__}: {exc}")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0] if args else ".").resolve()
    with contextlib.suppress(Exception):
        run(root, embed="--no-embed" not in args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
