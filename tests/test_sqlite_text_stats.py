"""The SQLite index keeps its full-text statistics (totals and document frequencies) per
connection between searches (issue 29): a write through this connection or another one must
make the next search use fresh counts, exactly what a new connection computes."""

from __future__ import annotations

from pathlib import Path

from ccmemory.core.model import Memory, parse_timestamp
from ccmemory.index.base import FileRecord, Filters
from ccmemory.index.sqlite import SQLiteIndex


def _records(start: int, n: int, words: str) -> list[FileRecord]:
    when = parse_timestamp("2025-01-01T00:00:00Z")
    assert when is not None
    return [
        FileRecord(
            f"m{i}.md", 1, 1, f"h{i}", Memory(id=f"M{i:03d}", type="fact", title=f"{words} {i}", created=when)
        )
        for i in range(start, start + n)
    ]


def test_cached_statistics_follow_every_write(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    idx = SQLiteIndex(path)
    idx.apply("p", _records(0, 5, "redis cache") + _records(5, 20, "postgres pool"), [], lambda _p: "curated")
    f = Filters("p")
    first = idx.text_search("redis postgres", f)
    assert first == SQLiteIndex(path).text_search("redis postgres", f)
    idx.apply("p", _records(25, 30, "redis queue"), [], lambda _p: "curated")  # this connection
    second = idx.text_search("redis postgres", f)
    assert second != first and second == SQLiteIndex(path).text_search("redis postgres", f)
    other = SQLiteIndex(path)  # another connection writes
    other.apply("p", _records(55, 40, "postgres replica"), ["m0.md"], lambda _p: "curated")
    third = idx.text_search("redis postgres", f)
    assert third != second and third == SQLiteIndex(path).text_search("redis postgres", f)
