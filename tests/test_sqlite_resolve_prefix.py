"""`SQLiteIndex.resolve` looks id prefixes up as an index range (issue 29): the range must hold
exactly the ids that start with the prefix, in SQLite's BINARY order, whatever the characters."""

from __future__ import annotations

import random
import sqlite3

from ccmemory.index.sqlite import _after_prefix

ALPHABET = [
    "0",
    "9",
    "A",
    "Z",
    "[",
    "z",
    "\x7f",
    "é",
    "\ud7ff",
    "\ue000",
    "\uffff",
    "\U00010000",
    "\U0010ffff",
]


def test_prefix_range_is_exact_in_sqlite_order() -> None:
    rng = random.Random(29)
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t(id TEXT PRIMARY KEY)")
    ids = {"".join(rng.choices(ALPHABET, k=rng.randint(1, 5))) for _ in range(3000)}
    db.executemany("INSERT INTO t VALUES (?)", [(i,) for i in ids])
    prefixes = {i[: rng.randint(1, len(i))] for i in rng.sample(sorted(ids), 300)}
    prefixes |= {"\U0010ffff", "A\U0010ffff", "\U0010ffff\U0010ffff", "\ud7ff"}
    for prefix in prefixes:
        above = _after_prefix(prefix)
        if above is None:
            got = {r[0] for r in db.execute("SELECT id FROM t WHERE id >= ?", (prefix,))}
        else:
            got = {r[0] for r in db.execute("SELECT id FROM t WHERE id >= ? AND id < ?", (prefix, above))}
        assert got == {i for i in ids if i.startswith(prefix)}, prefix
    assert _after_prefix("01HK3FRZ") == "01HK3FR["
    assert _after_prefix("\U0010ffff") is None
