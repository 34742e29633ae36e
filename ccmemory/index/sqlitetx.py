"""One write transaction on a SQLite connection opened with `isolation_level=None`, shared by the
memory index (ccmemory.index.sqlite) and the session index (ccmemory.index.sessions_sqlite)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def immediate(db: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """`fn(db)` inside BEGIN IMMEDIATE ... COMMIT: the write lock is taken first (no upgrade
    deadlock between two writers), and any exception rolls back and propagates."""
    db.execute("BEGIN IMMEDIATE")
    try:
        result = fn(db)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return result
