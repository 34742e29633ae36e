"""The Neo4j schema: constraints and indexes created on connect, node labels per memory type."""

from __future__ import annotations

from typing import Any

from ccmemory.core.errors import IndexUnavailable
from ccmemory.core.model import RELATION_TYPES, TYPES
from ccmemory.index.neo4j_retry import run_schema

# 2: full text over the analysed terms of ccmemory.text.analyzer (whitespace analyzer), issue #13
SCHEMA_VERSION = 2
FULLTEXT_INDEX = "memory_terms"
LEGACY_FULLTEXT_INDEX = "memory_fulltext"  # schema 1: Lucene's english analyzer over the raw text
VECTOR_INDEX = "embedding_vectors"
SYNC_STATE_KEY = "sync_state_key"

TYPE_LABELS: dict[str, str] = {name: "".join(p.title() for p in name.split("_")) for name in TYPES}
ALL_TYPE_LABELS = ":".join(sorted(TYPE_LABELS.values()))
REL_PATTERN = "|".join(RELATION_TYPES)

SCHEMA = (
    "CREATE CONSTRAINT ident_key IF NOT EXISTS FOR (n:Ident) REQUIRE (n.project, n.id) IS UNIQUE",
    "CREATE CONSTRAINT memory_file_scope_key IF NOT EXISTS FOR (f:MemoryFile) "
    "REQUIRE (f.project, f.scope, f.path) IS UNIQUE",
    "CREATE CONSTRAINT topic_key IF NOT EXISTS FOR (t:Topic) REQUIRE (t.project, t.name) IS UNIQUE",
    "CREATE CONSTRAINT file_key IF NOT EXISTS FOR (f:File) REQUIRE (f.project, f.path) IS UNIQUE",
    "CREATE CONSTRAINT session_key IF NOT EXISTS FOR (s:Session) REQUIRE (s.project, s.id) IS UNIQUE",
    "CREATE CONSTRAINT author_key IF NOT EXISTS FOR (a:Author) REQUIRE a.id IS UNIQUE",
    "CREATE CONSTRAINT project_key IF NOT EXISTS FOR (p:Project) REQUIRE p.name IS UNIQUE",
    # one sync state per project and indexing user: without it two processes of one user could
    # each MERGE one at the same moment (ensure_schema removes such duplicates before adding it)
    f"CREATE CONSTRAINT {SYNC_STATE_KEY} IF NOT EXISTS FOR (x:SyncState) "
    "REQUIRE (x.project, x.scope) IS UNIQUE",
    "CREATE CONSTRAINT embedding_key IF NOT EXISTS FOR (e:Embedding) "
    "REQUIRE (e.embedder, e.text_hash) IS UNIQUE",
    "CREATE INDEX memory_id IF NOT EXISTS FOR (m:Memory) ON (m.project, m.id)",
    "CREATE INDEX memory_created IF NOT EXISTS FOR (m:Memory) ON (m.project, m.created)",
    "CREATE INDEX memory_path IF NOT EXISTS FOR (m:Memory) ON (m.project, m.path)",
    "CREATE INDEX memory_text_hash IF NOT EXISTS FOR (m:Memory) ON (m.project, m.text_hash)",
    "CREATE INDEX memory_file_mem IF NOT EXISTS FOR (f:MemoryFile) ON (f.project, f.mem_id)",
    # only invalid files have an error: every search asks for them (Service.search's notice)
    "CREATE INDEX memory_file_error IF NOT EXISTS FOR (f:MemoryFile) ON (f.error)",
    # the terms are analysed in Python (ccmemory.text.analyzer, the same as SQLite's); Lucene only splits
    f"CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS FOR (m:Memory) "
    "ON EACH [m.ft_title, m.ft_body, m.ft_fields] "
    "OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}}",
)
_SCHEMA = SCHEMA  # the name `ccmemory doctor` reads


def label(mtype: str) -> str:
    found = TYPE_LABELS.get(mtype)
    if found is None:  # never reached with validated memories; labels are never user text
        raise IndexUnavailable(f"unknown memory type {mtype!r}")
    return found


def ensure_schema(s: Any) -> None:
    """Create the constraints and indexes (idempotent) in session `s`; migrate older layouts."""
    legacy = s.run("SHOW CONSTRAINTS YIELD name WHERE name = 'memory_file_key' RETURN name")
    if list(legacy):
        # before file records were scoped per indexing user: they become the "" scope
        s.run("DROP CONSTRAINT memory_file_key IF EXISTS").consume()
        s.run(
            "MATCH (f:MemoryFile) WHERE f.scope IS NULL "
            "CALL (f) { SET f.scope = '' } IN TRANSACTIONS OF 5000 ROWS"
        ).consume()
    s.run(f"DROP INDEX {LEGACY_FULLTEXT_INDEX} IF EXISTS").consume()
    if not list(s.run("SHOW CONSTRAINTS YIELD name WHERE name = $n RETURN name", n=SYNC_STATE_KEY)):
        # a server from before the constraint may hold two states of one (project, scope): both
        # go (which is current cannot be told), and the next reindex of that clone walks its vault
        s.run(
            "MATCH (x:SyncState) WITH x.project AS p, x.scope AS s, collect(x) AS xs "
            "WHERE size(xs) > 1 UNWIND xs AS x DELETE x"
        ).consume()
    for stmt in SCHEMA:
        run_schema(s, stmt)
    s.run("CALL db.awaitIndexes(300)").consume()
