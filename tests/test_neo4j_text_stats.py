"""BM25 statistics on Neo4j (issue 29): kept per connection while the database commits nothing
(the read bookmark names the last commit), read again after any client's write, so a search
scores exactly as a fresh connection does."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from ccmemory.app.sync import record_from_bytes
from ccmemory.core.vault import render
from ccmemory.index.base import Filters
from tests.conftest import make_memory

pytestmark = pytest.mark.neo4j


def _index(server: Any) -> Any:
    from ccmemory.index.neo4j import Neo4jIndex

    return Neo4jIndex(server.uri, server.user, server.password)


def _recs(titles: list[str], start: int) -> list[Any]:
    return [
        record_from_bytes(render(make_memory("fact", t)).encode(), f".ccmemory/facts/f{start + i}.md", 1)
        for i, t in enumerate(titles)
    ]


def test_statistics_follow_every_write(neo4j_server: Any) -> None:
    project = "stats-" + uuid.uuid4().hex[:8]
    a, b = _index(neo4j_server), _index(neo4j_server)
    stats_reads: list[str] = []
    read = a._read

    def counting(query: str, **params: Any) -> list[Any]:
        if "sum(m.len_title)" in query or "count(node) AS df" in query:
            stats_reads.append(query)
        return read(query, **params)

    a._read = counting
    f = Filters(project)
    try:
        a.apply(
            project, _recs(["redis cache timeout", "redis login", "deploy token"], 0), [], lambda p: "curated"
        )

        def same_as_fresh() -> list[tuple[str, float]]:
            got = a.text_search("redis timeout", f)
            fresh = _index(neo4j_server)
            try:
                assert got == fresh.text_search("redis timeout", f)
            finally:
                fresh.close()
            return got

        first = same_as_fresh()
        n = len(stats_reads)
        assert n == 2  # the totals and the document frequencies
        assert same_as_fresh() == first
        assert len(stats_reads) == n  # nothing committed: kept
        # another client adds memories holding the terms: frequencies and totals change
        b.apply(
            project,
            _recs(["redis timeout again", "timeout only", "other words"], 10),
            [],
            lambda p: "curated",
        )
        after = same_as_fresh()
        assert after != first and len(stats_reads) > n
        # this client deletes one
        n = len(stats_reads)
        a.apply(project, [], [".ccmemory/facts/f10.md"], lambda p: "curated")
        assert same_as_fresh() != after and len(stats_reads) > n
    finally:
        a.drop_project(project)
        a.close()
        b.close()
