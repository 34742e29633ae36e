"""Missing vectors on Neo4j (issue 29): a scan that found none missing is not repeated while the
database commits nothing (the read bookmark names the last commit, of any client); after any
write, by this client or another, the answer is a fresh connection's."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from ccmemory.app.sync import record_from_bytes
from ccmemory.core.vault import render
from tests.conftest import make_memory

pytestmark = pytest.mark.neo4j

EMB, DIM = "missing-test", 4


def _index(server: Any) -> Any:
    from ccmemory.index.neo4j import Neo4jIndex

    return Neo4jIndex(server.uri, server.user, server.password)


def _recs(titles: list[str], start: int) -> list[Any]:
    return [
        record_from_bytes(render(make_memory("fact", t)).encode(), f".ccmemory/facts/f{start + i}.md", 1)
        for i, t in enumerate(titles)
    ]


def _vectors(missing: list[tuple[str, str]]) -> list[tuple[str, list[float]]]:
    return [(h, [1.0, 0.0, 0.0, 0.0]) for h, _ in missing]


def test_no_rescan_while_nothing_is_committed(neo4j_server: Any) -> None:
    project = "missing-" + uuid.uuid4().hex[:8]
    a, b = _index(neo4j_server), _index(neo4j_server)
    scans: list[str] = []
    read = a._read

    def counting(query: str, **params: Any) -> list[Any]:
        if "NOT EXISTS" in query and "Embedding" in query:
            scans.append(query)
        return read(query, **params)

    a._read = counting

    def same_as_fresh() -> list[tuple[str, str]]:
        got = a.missing_vectors(project, EMB)
        fresh = _index(neo4j_server)
        try:
            assert got == fresh.missing_vectors(project, EMB)
        finally:
            fresh.close()
        return got

    try:
        a.apply(project, _recs(["redis cache", "login token", "deploy"], 0), [], lambda p: "curated")
        assert len(same_as_fresh()) == 3
        assert len(same_as_fresh()) == 3 and len(scans) == 2  # something missing: scanned each time
        a.store_vectors(EMB, DIM, _vectors(a.missing_vectors(project, EMB)))
        n = len(scans)
        assert same_as_fresh() == [] and len(scans) == n + 1
        assert same_as_fresh() == [] and same_as_fresh() == []
        assert len(scans) == n + 1  # nothing committed since: not scanned again
        # another client adds a memory: it is missing here at once
        b.apply(project, _recs(["webhook retry"], 10), [], lambda p: "curated")
        added = same_as_fresh()
        assert len(added) == 1 and len(scans) == n + 2
        # the other client embeds it; this one sees none missing, then keeps that
        b.store_vectors(EMB, DIM, _vectors(added))
        assert same_as_fresh() == [] and len(scans) == n + 3
        assert same_as_fresh() == [] and len(scans) == n + 3
        # a commit that changes nothing of this project still means a new scan (another project)
        other = project + "-other"
        b.apply(other, _recs(["unrelated"], 20), [], lambda p: "curated")
        assert same_as_fresh() == [] and len(scans) == n + 4
        b.drop_project(other)
        # this client edits a memory's text: its new text hash has no vector
        a.apply(project, _recs(["redis cache, edited"], 0), [], lambda p: "curated")
        assert len(same_as_fresh()) == 1 and len(scans) == n + 5
    finally:
        a.drop_project(project)
        a.close()
        b.close()
