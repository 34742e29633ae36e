"""Opening the SQLite index writes nothing when its schema is current: every hook opens it,
and a write on open cost a WAL append and a checkpoint at close."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ccmemory.index.sqlite import SCHEMA_VERSION, SQLiteIndex


def test_open_of_a_current_index_does_not_write(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    SQLiteIndex(path).close()
    before = path.read_bytes()
    index = SQLiteIndex(path)
    wal = Path(f"{path}-wal")
    assert not wal.exists() or os.path.getsize(wal) == 0
    index.close()
    assert path.read_bytes() == before


def test_an_index_of_another_version_is_still_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    SQLiteIndex(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value='1' WHERE key='schema'")
    db.execute("CREATE TABLE stale_table(x)")
    db.commit()
    db.close()
    SQLiteIndex(path).close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == (str(SCHEMA_VERSION),)
    assert db.execute("SELECT name FROM sqlite_master WHERE name='stale_table'").fetchone() is None
    db.close()
