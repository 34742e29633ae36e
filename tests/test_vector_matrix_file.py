"""The vector matrix kept in a file beside the SQLite index (issue 29: a cold `ccmemory search`
read 100k vector rows from SQLite, ~1.1 s): a new connection maps the file the last one wrote for
the same index state, and every answer is the one SQLite gives. A write by any writer (this code,
another connection, a raw sqlite3 client that knows nothing of the file) makes the file stale; a
stale, corrupt or foreign file is ignored, never trusted. `missing_vectors` answers "none" from
the matrix when it can, else from the anti-join, and is always the anti-join's answer."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ccmemory.index import matrixfile
from ccmemory.index.base import Filters, embed_text
from ccmemory.index.sqlite import SQLiteIndex
from tests.capture_helpers import hook_env
from tests.test_search_warm import _backdate
from tests.test_vector_filter_mask import DIM, EMB, _fill, _records


def _anti_join(idx: SQLiteIndex) -> list[tuple[str, str]]:
    """The anti-join missing_vectors ran before (every memory without a vector, by text)."""
    rows = idx.db.execute(
        f"SELECT m.text_hash, {idx._COLS} FROM memories m WHERE m.project = 'p' AND NOT EXISTS"
        " (SELECT 1 FROM vectors v WHERE v.embedder = ? AND v.text_hash = m.text_hash) ORDER BY m.id",
        (EMB,),
    ).fetchall()
    seen: dict[str, str] = {}
    for r in rows:
        seen.setdefault(r[0], embed_text(idx._row(r[1:])))
    return sorted(seen.items())


def _from_sqlite(idx: SQLiteIndex) -> tuple[list[str], np.ndarray]:
    rows = idx.db.execute(
        "SELECT m.id, v.vec FROM memories m JOIN vectors v ON v.embedder = ? AND v.text_hash = m.text_hash"
        " WHERE m.project = 'p' ORDER BY m.id",
        (EMB,),
    ).fetchall()
    return [r[0] for r in rows], np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
        -1, DIM
    )


def _filled(path: Path, *, seed: int, n: int) -> tuple[SQLiteIndex, np.random.Generator]:
    """An index at `path` with `n` records of project p, every one with a vector; and the random
    generator that made them (for queries)."""
    nrng = np.random.default_rng(seed)
    idx = SQLiteIndex(path)
    recs, status = _records(random.Random(seed), n, 1)
    idx.apply("p", recs, [], lambda p: status[p])
    _fill(idx, nrng)
    return idx, nrng


def _check(path: Path, queries: np.ndarray, *, from_file: bool | None) -> SQLiteIndex:
    """A new connection (a cold process): its matrix, vector search and missing vectors are
    SQLite's; ``from_file`` says whether it must (or must not) have used the file."""
    idx = SQLiteIndex(path)
    used = []
    real_read = matrixfile.read

    def spy(*a: object, **kw: object) -> object:
        got = real_read(*a, **kw)  # type: ignore[arg-type]
        used.append(got is not None)
        return got

    matrixfile.read = spy  # type: ignore[assignment]
    try:
        assert idx.missing_vectors("p", EMB) == _anti_join(idx)
        entry = idx._vector_matrix("p", EMB)
    finally:
        matrixfile.read = real_read  # type: ignore[assignment]
    ids, matrix = _from_sqlite(idx)
    assert entry[1] == ids
    assert entry[2].tobytes() == matrix.tobytes()
    if from_file is not None:
        assert any(used) == from_file
    fresh = SQLiteIndex(path)

    def rows_read_now(project: str, emb: str, cheap: bool = False) -> list[object]:
        return [0, ids, matrix, None, {}, None]  # the matrix SQLite gives, no cache, no file

    fresh._vector_matrix = rows_read_now  # type: ignore[method-assign]
    for q in queries:
        for f in (Filters("p"), Filters("p", include_superseded=True), Filters("p", viewer="alice")):
            assert idx.vector_search(EMB, q, f, 7) == fresh.vector_search(EMB, q, f, 7)
    fresh.close()
    return idx


def test_the_matrix_file_gives_sqlites_answers_and_goes_stale_with_any_write(tmp_path: Path) -> None:
    rng, nrng = random.Random(7), np.random.default_rng(7)
    path = tmp_path / "index.db"
    queries = nrng.normal(size=(3, DIM)).astype(np.float32)
    idx = SQLiteIndex(path)
    recs, status = _records(rng, 60, 1)
    idx.apply("p", recs, [], lambda p: status[p])
    assert len(idx.missing_vectors("p", EMB)) == 60
    _fill(idx, nrng)
    idx.close()
    # the first cold connection reads SQLite and writes the file; the next maps it
    _check(path, queries, from_file=False).close()
    files = list(tmp_path.glob("index.db.vectors-*"))
    assert len(files) == 1 and files[0].stat().st_mode & 0o777 == 0o600
    _check(path, queries, from_file=True).close()

    # writes through the index: a new memory (no vector yet), then its vector, then a removal
    idx = SQLiteIndex(path)
    more, more_status = _records(random.Random(8), 70, 2)
    idx.apply("p", more[60:], [], lambda p: more_status[p])
    idx.close()
    c = _check(path, queries, from_file=False)  # stale: SQLite again, and the missing ones listed
    assert len(c.missing_vectors("p", EMB)) == 10
    _fill(c, nrng)
    c.close()
    _check(path, queries, from_file=False).close()
    _check(path, queries, from_file=True).close()
    # a writer that knows nothing of the file (an older ccmemory, the sqlite3 shell): the
    # triggers drop the token with its change, so the file is not trusted
    for sql in (
        "DELETE FROM vectors WHERE rowid = (SELECT min(rowid) FROM vectors)",
        "UPDATE vectors SET vec = zeroblob(length(vec)) WHERE rowid = (SELECT max(rowid) FROM vectors)",
        "UPDATE memories SET text_hash = 'other' WHERE id = 'M0003'",
        "UPDATE memories SET id = 'M9999' WHERE id = 'M0004'",
    ):
        raw = sqlite3.connect(path)
        raw.execute(sql)
        raw.commit()
        raw.close()
        _check(path, queries, from_file=False).close()
        _check(path, queries, from_file=True).close()
    # a change the matrix does not depend on (a status refresh) keeps the file
    raw = sqlite3.connect(path)
    raw.execute("UPDATE memories SET status = 'developmental' WHERE id = 'M0005'")
    raw.commit()
    raw.close()
    _check(path, queries, from_file=True).close()


@pytest.mark.parametrize("damage", ["flip", "truncate", "extend", "garbage", "empty", "other_token"])
def test_a_damaged_or_foreign_matrix_file_is_ignored(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "index.db"
    idx, nrng = _filled(path, seed=3, n=40)
    idx.close()
    queries = nrng.normal(size=(2, DIM)).astype(np.float32)
    _check(path, queries, from_file=False).close()
    (f,) = tmp_path.glob("index.db.vectors-*")
    data = bytearray(f.read_bytes())
    if damage == "flip":
        data[-5] ^= 0x01  # one bit of one vector: the checksum catches it
    elif damage == "truncate":
        del data[-4:]
    elif damage == "extend":
        data += b"\0" * 4
    elif damage == "garbage":
        data = bytearray(b"not a matrix file at all" * 10)
    elif damage == "empty":
        data = bytearray()
    else:  # a file left from another index state, whole and well-formed
        idx = SQLiteIndex(path)
        token = idx._state_token()
        assert token is not None
        ids, matrix = _from_sqlite(idx)
        idx.close()
        assert matrixfile.write(f, "0" * 32, "p", EMB, ids, matrix * 2)
        data = bytearray(f.read_bytes())
        assert matrixfile.read(f, "0" * 32, "p", EMB) is not None
        assert matrixfile.read(f, token, "p", EMB) is None
        assert matrixfile.read(f, "0" * 32, "q", EMB) is None
    f.write_bytes(bytes(data))
    _check(path, queries, from_file=False).close()  # ignored, rewritten
    _check(path, queries, from_file=True).close()


def test_cli_search_is_the_same_with_and_without_the_matrix_file(tmp_path: Path) -> None:
    """Through the real CLI (the local model): the first search writes the file beside the index,
    the next maps it; the answers are identical, and identical again with the file deleted."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "dev@example.com"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    subprocess.run(["git", "config", "user.name", "Dev"], cwd=repo, check=True)

    def cli(*args: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "ccmemory", *args],
            cwd=repo,
            env=hook_env(CCMEMORY_SEARCH_WARM="0"),
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    cli("init", "--no-git-hooks")
    for i, (title, body) in enumerate(
        [
            ("Postgres advisory locks serialise migrations", "Two deploys raced on the schema."),
            ("The ERP gateway drops batches above 500", "Split the nightly invoice export."),
            ("Staging has three nodes", "Sized for the load tests."),
            ("Feature flags live in LaunchDarkly", "Never in environment variables."),
        ]
    ):
        cli("new", ["decision", "gotcha", "fact", "preference"][i], title, "--body", body)
    _backdate(repo)  # recency then weighs alike in runs seconds apart
    cli("reindex")
    local = repo / ".ccmemory" / "local"
    queries = [
        "stop deploys racing on the database",
        "invoice uploads fail at night",
        "where do toggles live",
    ]
    first = [cli("search", q, "--json", "--explain", "--mode", "semantic") for q in queries]
    assert list(local.glob("index.db.vectors-*"))
    second = [cli("search", q, "--json", "--explain", "--mode", "semantic") for q in queries]
    for f in local.glob("index.db.vectors-*"):
        f.unlink()
    third = [cli("search", q, "--json", "--explain", "--mode", "semantic") for q in queries]
    assert first == second == third
    assert '"Postgres advisory locks serialise migrations"' in first[0]


def test_opening_the_index_writes_nothing_so_a_warm_process_keeps_its_matrix(tmp_path: Path) -> None:
    """Every CLI and hook process opens the index; a write at open (the schema row was rewritten
    each time) told every other connection the database had changed, and the MCP server dropped
    its matrix, masks and statistics before each `ccmemory search` it answered."""
    path = tmp_path / "index.db"
    idx = SQLiteIndex(path)
    recs, status = _records(random.Random(5), 20, 1)
    idx.apply("p", recs, [], lambda p: status[p])
    _fill(idx, np.random.default_rng(5))
    entry = idx._vector_matrix("p", EMB)
    assert idx.missing_vectors("p", EMB) == []
    for _ in range(2):
        SQLiteIndex(path).close()
        assert idx._vector_matrix("p", EMB) is entry
    other = SQLiteIndex(path)
    other.store_vectors(EMB, DIM, [("new-hash", np.ones(DIM, dtype=np.float32))])
    other.close()
    assert idx._vector_matrix("p", EMB) is not entry  # a real write still refreshes it


def test_a_full_rebuild_builds_without_the_triggers_and_swaps_in_with_them_and_a_new_state(
    tmp_path: Path,
) -> None:
    """`reindex --full` fills a file beside the live one without the per-row triggers; what it
    swaps in has them back and names a new state, so no older matrix file is trusted after it."""
    nrng = np.random.default_rng(11)
    path = tmp_path / "index.db"
    queries = nrng.normal(size=(2, DIM)).astype(np.float32)
    idx = SQLiteIndex(path)
    recs, status = _records(random.Random(11), 30, 1)
    idx.apply("p", recs, [], lambda p: status[p])
    _fill(idx, nrng)
    idx._vector_matrix("p", EMB)  # writes the file for this state
    before = idx._state_token()

    def triggers(db: SQLiteIndex) -> int:
        return int(db.db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'").fetchone()[0])

    assert triggers(idx) == 6
    fresh = idx.fresh_beside("p")
    assert fresh is not None and triggers(fresh) == 0
    fresh.apply("p", recs, [], lambda p: status[p])  # the same memories: the old file's content
    idx.swap_in(fresh)
    assert triggers(idx) == 6 and idx._state_token() not in (None, before)
    idx.close()
    _check(path, queries, from_file=False).close()  # the old file names the old state
    _check(path, queries, from_file=True).close()
    raw = sqlite3.connect(path)
    raw.execute("DELETE FROM vectors WHERE rowid = (SELECT min(rowid) FROM vectors)")
    raw.commit()
    raw.close()
    _check(path, queries, from_file=False).close()


def test_a_settled_file_that_passed_its_checksum_is_not_summed_again_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CRC of every read cost ~40 ms of a cold search at 100k: a reader records the stat of a
    file it found whole, and the next reader of the same stat skips the sum. A change made after
    the record (even one that keeps the size) moves the stat, so the sum runs and catches it."""
    import time
    import zlib

    idx, _ = _filled(tmp_path / "index.db", seed=11, n=30)
    token = idx._state_token()
    assert token is not None
    ids, matrix = _from_sqlite(idx)
    idx.close()
    f = tmp_path / "file.vectors"
    assert matrixfile.write(f, token, "p", EMB, ids, matrix)
    sums: list[int] = []
    real_crc = zlib.crc32

    def counting_crc(data: object, value: int = 0) -> int:
        sums.append(1)
        return real_crc(data, value)  # type: ignore[arg-type]

    monkeypatch.setattr(matrixfile.zlib, "crc32", counting_crc)

    def read() -> tuple[list[str], np.ndarray] | None:
        sums.clear()
        return matrixfile.read(f, token, "p", EMB)

    # just written: not settled, so every read sums it and none records it
    for _ in range(2):
        got = read()
        assert got is not None and got[0] == ids and sums
    assert not (tmp_path / "file.vectors.checked").exists()
    monkeypatch.setattr(matrixfile, "SETTLED_NS", 0)  # as if a second had passed
    assert read() is not None and sums  # summed, then recorded
    assert (tmp_path / "file.vectors.checked").exists()
    got = read()
    assert got is not None and not sums  # the same stat: no sum
    assert got[0] == ids and got[1].tobytes() == matrix.tobytes()
    # one bit of one vector flipped in place (same size and inode), a tick later
    time.sleep(0.05)
    data = bytearray(f.read_bytes())
    data[-5] ^= 0x01
    f.write_bytes(bytes(data))
    assert read() is None and sums  # the stat moved: summed, and the damage caught
    assert read() is None  # never recorded as whole
    # a record that is not the file's stat (garbage, another file's) only means "sum it"
    data[-5] ^= 0x01
    f.write_bytes(bytes(data))
    (tmp_path / "file.vectors.checked").write_text("not a stat")
    assert read() is not None and sums
