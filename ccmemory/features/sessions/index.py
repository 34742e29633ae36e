"""The session records' local index (ccmemory.index.sessions_sqlite) for this repository: where it
lives (the memory index file with SQLite, `.ccmemory/local/sessions.db` otherwise: session records
never go to a shared server), kept level when a record is written, pruned or archived, refreshed
before a search. The records stay the source of truth; when the index cannot be used, callers
fall back to reading them (ccmemory.features.sessions.service)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ccmemory.core.layout import VAULT_DIR

log = logging.getLogger("ccmemory.features.sessions")


def backend(root: Path) -> str:
    """The configured backend, read lightly (no git call): CCMEMORY_BACKEND, else config.yaml."""
    from ccmemory.core import settings
    from ccmemory.core.config import read_config_file

    value = settings.BACKEND.get(dict(os.environ))
    if not value:
        try:
            value = read_config_file(root / VAULT_DIR).get("backend")
        except Exception:  # a broken config: the private choice (a file of its own)
            return "unknown"
    return str(value or "sqlite").lower()


def open_index(root: Path) -> Any:
    """The SessionIndex of this repository (the caller closes it): `sessions_sqlite.open_local`
    with the backend read lightly (IndexUnavailable, naming the file, when it cannot be used)."""
    from ccmemory.index.sessions_sqlite import open_local

    return open_local(root / VAULT_DIR, backend(root))


def ready(root: Path) -> Any:
    """The index, refreshed from the record files (built on first use)."""
    import sqlite3

    from ccmemory.index.base import IndexUnavailable
    from ccmemory.index.sessions_sqlite import UNUSABLE_HINT

    idx = open_index(root)
    try:
        report = idx.refresh()
    except sqlite3.Error as exc:
        idx.close()
        raise IndexUnavailable(f"session index {idx.location} cannot be used: {exc}", UNUSABLE_HINT) from None
    except BaseException:
        idx.close()
        raise
    if report is not None:
        for name, why in report.skipped:
            log.warning("session record %s skipped: %s", name, why)
    return idx


def sync(root: Path, *, full: bool = False) -> Any:
    """`ccmemory reindex`: the SyncReport of bringing the index level with the records."""
    with open_index(root) as idx:
        return idx.sync(full=full)


def note_written(root: Path, path: Path) -> None:
    """A record was written: index it now (a failure is logged; the next search catches up)."""
    try:
        with open_index(root) as idx:
            why = idx.upsert_file(path)
        if why:
            log.warning("session record %s skipped: %s", path.name, why)
    except Exception as exc:
        log.info("session index not updated for %s: %s", path.name, exc)


def note_removed(root: Path, names: Iterable[str]) -> None:
    """Record files were deleted or archived (their file names): drop them from the index."""
    names = list(names)
    if not names:
        return
    try:
        with open_index(root) as idx:
            idx.remove_files(names)
    except Exception as exc:
        log.info("session index not updated after removing %d record(s): %s", len(names), exc)
