"""Neo4j's full text after schema 2 (issue #13): the analysed terms, the migration from the
english-analyzer index, and the same text ranking as SQLite on a small vault."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from ccmemory.core.model import Memory, parse_timestamp
from ccmemory.index.base import FileRecord, Filters
from ccmemory.index.sqlite import SQLiteIndex
from tests.neo4j_server import Neo4jServer

pytestmark = pytest.mark.neo4j

TEXTS = [
    ("Session store", "User sessions live in Redis with a two week TTL; the cookie is HttpOnly."),
    ("Invoice numbering", "Invoices are numbered per tenant, gapless, inside one transaction."),
    ("Celery broker", "CELERY_BROKER_URL points at Redis db 2; results are not stored."),
    ("PDF rendering", "We render invoice PDFs with WeasyPrint; wkhtmltopdf was dropped."),
    ("Caching", "Per-tenant caching of the pricing table in Redis, invalidated on save."),
]
QUERIES = ["where are sessions kept", "redis", "invoice pdf renderer", "caching prices", "the of"]


def records() -> list[FileRecord]:
    when = parse_timestamp("2025-01-01T00:00:00Z")
    out = []
    for i, (title, body) in enumerate(TEXTS):
        m = Memory(id=f"m{i}", type="fact", title=title, body=body, created=when)
        out.append(FileRecord(f"m{i}.md", 1, 1, f"h{i}", m))
    return out


def test_same_text_ranking_as_sqlite_and_legacy_nodes_are_migrated(
    neo4j_server: Neo4jServer, tmp_path: Path
) -> None:
    from ccmemory.index.neo4j import FULLTEXT_INDEX, Neo4jIndex
    from ccmemory.index.neo4j.schema import LEGACY_FULLTEXT_INDEX

    project = "t-" + uuid.uuid4().hex[:8]
    lite = SQLiteIndex(tmp_path / "i.db")
    lite.apply(project, records(), [], lambda _p: "curated")
    neo = Neo4jIndex(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    try:
        neo.apply(project, records(), [], lambda _p: "curated")
        f = Filters(project=project)
        want = {q: lite.text_search(q, f) for q in QUERIES}
        assert want["where are sessions kept"][0][0] == "m0"
        assert want["the of"] == []
        assert {q: neo.text_search(q, f) for q in QUERIES} == want  # same ids, same scores
        # candidates found by groups of terms (the site's related lists), scored on the query
        for groups in ([("redi", "cach")], [("invoic",), ("redi", "session")], [("absent",)]):
            got = lite.text_search("redis caching invoices sessions", f, groups=groups)
            assert neo.text_search("redis caching invoices sessions", f, groups=groups) == got
        assert [m for m, _ in lite.text_search("redis caching", f, groups=[("redi", "cach")])] == ["m4"]
        assert neo.doc_freqs(project, ["redi", "absent"]) == lite.doc_freqs(project, ["redi", "absent"])
        assert lite.doc_freqs(project, ["redi", "absent"]) == {"redi": 3, "absent": 0}
        # a server indexed by schema 1: english-analyzer index, nodes without analysed terms
        with neo._session() as s:
            s.run(f"DROP INDEX {FULLTEXT_INDEX} IF EXISTS").consume()
            s.run(
                f"CREATE FULLTEXT INDEX {LEGACY_FULLTEXT_INDEX} IF NOT EXISTS FOR (m:Memory) "
                "ON EACH [m.title, m.body, m.fields_text] "
                "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}"
            ).consume()
            s.run(
                "MATCH (m:Memory {project: $p}) REMOVE m.ft_title, m.ft_body, m.ft_fields,"
                " m.len_title, m.len_body, m.len_fields",
                p=project,
            ).consume()
    finally:
        neo.close()
    neo = Neo4jIndex(neo4j_server.uri, neo4j_server.user, neo4j_server.password)  # connect migrates
    try:
        names = {r["name"] for r in neo._read("SHOW INDEXES YIELD name RETURN name")}
        assert FULLTEXT_INDEX in names and LEGACY_FULLTEXT_INDEX not in names
        assert {q: neo.text_search(q, Filters(project=project)) for q in QUERIES} == want
    finally:
        neo.clear(project)
        neo.close()
        lite.close()
