"""The Neo4j write-path warm-up (issue #20): it changes what the server has planned and compiled,
never what it stores. Speed is measured in bench/neo4j_cold.py, not here."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from ccmemory.index.sqlite import SQLiteIndex
from ccmemory.model import RELATION_TYPES, TYPES, Relation
from ccmemory.sync import reindex
from ccmemory.vault import Vault
from tests.conftest import init_git, make_memory
from tests.neo4j_server import Neo4jServer
from tests.test_index_conformance import comparable_dump


def test_synthetic_records_cover_every_type_and_relation() -> None:
    from ccmemory.index.neo4j.warmup import synthetic_records

    recs = synthetic_records(60, "t")
    mems = [r.memory for r in recs if r.memory]
    assert {m.type for m in mems} == set(TYPES)
    rel_types = {r.type for m in mems for r in m.relations} | {"SUPERSEDES" for m in mems if m.supersedes}
    assert rel_types == set(RELATION_TYPES)
    assert any(m.applies_to for m in mems) and any(m.session for m in mems) and any(m.author for m in mems)
    assert any(r.error for r in recs)  # an invalid file record too


@pytest.mark.neo4j
def test_warmup_stores_nothing_and_the_reindex_is_unchanged(
    neo4j_server: Neo4jServer, tmp_path: Path
) -> None:
    from ccmemory.index.neo4j import Neo4jIndex
    from ccmemory.index.neo4j.warmup import MIN_FILES

    root = init_git(tmp_path / "r")
    (root / ".ccmemory").mkdir()
    vault = Vault(root)
    first = make_memory("decision", "Keep tokens in cookies", topics=["auth"], files=["src/auth.py"])
    vault.write_new(first)
    vault.write_new(
        make_memory("fact", "Cookies are httpOnly", relations=[Relation("DEPENDS_ON", first.id, "why")])
    )

    idx = Neo4jIndex(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    project = "warm-" + uuid.uuid4().hex[:8]
    try:
        idx.prepare_write(MIN_FILES - 1)
        assert idx._warmup is None  # a small write is not worth warming for
        idx.prepare_write(MIN_FILES)
        wu = idx._warmup
        assert wu is not None
        deadline = time.monotonic() + 120
        while wu.rounds < 1 and wu.error is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert wu.rounds >= 1 and wu.error is None  # it really ran the write path
        rep = reindex(vault, idx, project)  # apply() stops the warm-up first
        assert rep.added == 2 and not rep.errors
        assert not wu._thread.is_alive()
        left = idx._read(
            "MATCH (n) WHERE n.project STARTS WITH 'ccmemory-warmup' OR n.name STARTS WITH 'ccmemory-warmup' "
            "OR n.id ENDS WITH '.invalid' RETURN count(n) AS n"
        )[0]["n"]
        assert left == 0  # every warm-up transaction was rolled back
        lite = SQLiteIndex(tmp_path / "index.db")
        try:
            reindex(vault, lite, project)
            # the same index as without any warm-up (fts_total counts every project on the server)
            assert comparable_dump(idx.dump(project)) == comparable_dump(lite.dump(project))
        finally:
            lite.close()
    finally:
        idx.clear(project)
        idx.close()
