"""The team index on Neo4j 5 (official `neo4j` driver), answering exactly like the SQLite index.

Graph model (every node carries `project`, so one server holds many projects):

- `(:Ident {project, id})` for every memory id that exists or is pointed at. A memory that
  exists also has the labels `:Memory` and its type's label (`:Decision`, `:FailedApproach`...).
  An id that is only a relation target (dangling) keeps the bare `:Ident` node, so relations are
  always real relationships and reappear by themselves when the target file arrives.
- `(:Memory)-[:SUPERSEDES|DEPENDS_ON|... {reason}]->(:Ident)`: the typed relations, stored in the
  direction written in the newer file; reverse names are derived at query time.
- `(:Memory)-[:ABOUT]->(:Topic)`, `-[:TOUCHES]->(:File)`, `-[:CAPTURED_IN]->(:Session)`,
  `-[:AUTHORED_BY]->(:Author)`, `-[:IN_PROJECT]->(:Project)`, `-[:APPLIES_TO]->(:Project)` (its
  `applies_to`); `(:Project)-[:RELATED_TO {relation}]->(:Project)` from `related_to` in config.
- `(:MemoryFile {project, scope, path, mtime_ns, size, hash, mem_id, error, status, author_git,
  ...})`: what sync saw in one clone. `scope` is the indexing user's id (`Config.user_id`, "" when
  unknown), so each team member's reindex owns its own file records: `file_states`, `apply`,
  `refresh_status`, `clear` and `file_problems` see only the index's scope, and alice's reindex
  never removes the files bob's clone reported (his developmental memories stay, visible to him
  only). `status` and `author_git` are what that clone's git says about the path.
- `(:Embedding {embedder, text_hash, dim, embedding})`: vectors per content hash, with a vector
  index whose dimension follows the embedder that stored them.

Derivation across scopes: a memory is served from one valid file with its id, chosen among all
scopes of the project. Within each scope the smallest path wins (exactly the SQLite rule, so one
scope answers like SQLite); among those per-scope winners a curated one is preferred, then the
smallest (path, scope). The memory's status and git author are those of the winning file. So a
curated memory pulled into two clones is one memory node, and it stays curated while any clone
has it on its main branch. Duplicate-id problems are reported per scope (a file losing to another
file of the same clone), never because another clone's copy won.

Rules kept here: labels and relationship types come only from `model.TYPES` and
`model.RELATION_TYPES` (checked before use); every value is a query parameter; full-text input
goes through `query.lucene_query`. Each `apply` runs in one transaction, so a server lost mid-way
leaves the index at the previous batch and the next reindex converges.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import neo4j
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, DriverError, Neo4jError, ServiceUnavailable, SessionExpired

from ccmemory.index.base import (
    MAX_SHARED,
    Edge,
    FileProblem,
    FileRecord,
    FileState,
    Filters,
    IndexedMemory,
    IndexError_,
    embed_text,
    json_columns,
    text_hash,
)
from ccmemory.index.neo4j_ref import ReferenceGraph
from ccmemory.index.query import lucene_query
from ccmemory.model import (
    APPLIES_TO,
    RELATION_TYPES,
    TYPES,
    Memory,
    fields_text,
    format_timestamp,
    normalise_topic,
)

if TYPE_CHECKING:
    from ccmemory.config import Config

SCHEMA_VERSION = 1
FULLTEXT_INDEX = "memory_fulltext"
VECTOR_INDEX = "embedding_vectors"

TYPE_LABELS: dict[str, str] = {name: "".join(p.title() for p in name.split("_")) for name in TYPES}
_ALL_TYPE_LABELS = ":".join(sorted(TYPE_LABELS.values()))
_REL_PATTERN = "|".join(RELATION_TYPES)

_SCHEMA = (
    "CREATE CONSTRAINT ident_key IF NOT EXISTS FOR (n:Ident) REQUIRE (n.project, n.id) IS UNIQUE",
    "CREATE CONSTRAINT memory_file_scope_key IF NOT EXISTS FOR (f:MemoryFile) "
    "REQUIRE (f.project, f.scope, f.path) IS UNIQUE",
    "CREATE CONSTRAINT topic_key IF NOT EXISTS FOR (t:Topic) REQUIRE (t.project, t.name) IS UNIQUE",
    "CREATE CONSTRAINT file_key IF NOT EXISTS FOR (f:File) REQUIRE (f.project, f.path) IS UNIQUE",
    "CREATE CONSTRAINT session_key IF NOT EXISTS FOR (s:Session) REQUIRE (s.project, s.id) IS UNIQUE",
    "CREATE CONSTRAINT author_key IF NOT EXISTS FOR (a:Author) REQUIRE a.id IS UNIQUE",
    "CREATE CONSTRAINT project_key IF NOT EXISTS FOR (p:Project) REQUIRE p.name IS UNIQUE",
    "CREATE CONSTRAINT embedding_key IF NOT EXISTS FOR (e:Embedding) "
    "REQUIRE (e.embedder, e.text_hash) IS UNIQUE",
    "CREATE INDEX memory_id IF NOT EXISTS FOR (m:Memory) ON (m.project, m.id)",
    "CREATE INDEX memory_created IF NOT EXISTS FOR (m:Memory) ON (m.project, m.created)",
    "CREATE INDEX memory_path IF NOT EXISTS FOR (m:Memory) ON (m.project, m.path)",
    "CREATE INDEX memory_text_hash IF NOT EXISTS FOR (m:Memory) ON (m.project, m.text_hash)",
    "CREATE INDEX memory_file_mem IF NOT EXISTS FOR (f:MemoryFile) ON (f.project, f.mem_id)",
    f"CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS FOR (m:Memory) "
    "ON EACH [m.title, m.body, m.fields_text] "
    "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}",
)

# Index hints on the lookups by key: without them the planner, going by the statistics of the
# moment, has picked a scan of all the project's file records per row (16 s of one 10k reindex).
_HINT_IDENT = "USING INDEX n:Ident(project, id)"
_HINT_FILE_PATH = "USING INDEX f:MemoryFile(project, scope, path)"
_HINT_FILE_MEM = "USING INDEX f:MemoryFile(project, mem_id)"

T = TypeVar("T")


def _wrap_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """Driver and server errors become IndexError_ naming the URI and the cause."""

    @functools.wraps(fn)
    def inner(self: Neo4jIndex, *args: Any, **kwargs: Any) -> T:
        try:
            return fn(self, *args, **kwargs)
        except IndexError_:
            raise
        except (DriverError, Neo4jError, OSError) as exc:
            raise self._error(exc) from None

    return inner


def _label(mtype: str) -> str:
    label = TYPE_LABELS.get(mtype)
    if label is None:  # never reached with validated memories; labels are never user text
        raise IndexError_(f"unknown memory type {mtype!r}")
    return label


def _payload(memory: Memory) -> str:
    from ccmemory.index.sqlite import memory_payload

    return memory_payload(memory)


_RETURN_MEMORY = (
    "m.id AS id, m.type AS type, m.title AS title, m.body AS body, m.created AS created, "
    "m.path AS path, m.status AS status, m.project AS project, m.author AS author, "
    "m.session AS session, m.branch AS branch, m.topics AS topics, m.files AS files, "
    "m.confidence AS confidence, m.source AS source, m.supersedes AS supersedes, "
    "m.relations AS relations, m.fields AS fields, m.hash AS hash"
)


def _row(r: Any) -> IndexedMemory:
    return IndexedMemory.from_columns(r.data())


class Neo4jIndex(ReferenceGraph):
    backend = "neo4j"

    def __init__(
        self,
        uri: str,
        user: str,
        password: str,
        *,
        database: str | None = None,
        connection_timeout: float = 10.0,
        scope: str = "",
    ) -> None:
        self.location = uri
        self.uri = uri
        self.database = database
        self.scope = scope  # the indexing user's id: file records are kept per scope
        try:
            self.driver = GraphDatabase.driver(
                uri,
                auth=(user, password),
                connection_timeout=connection_timeout,
                max_transaction_retry_time=5.0,
                connection_acquisition_timeout=connection_timeout * 2,
                notifications_min_severity="OFF",  # "property does not exist" on a fresh database
            )
        except (DriverError, Neo4jError, ValueError, OSError) as exc:
            raise self._error(exc) from None
        try:
            self.driver.verify_connectivity()
            self._ensure_schema()
        except (DriverError, Neo4jError, OSError) as exc:
            self.driver.close()
            raise self._error(exc) from None
        self._vector_dim: int | None = None

    @classmethod
    def connect(cls, config: Config) -> Neo4jIndex:
        if not config.neo4j_password:
            raise IndexError_(f"Neo4j index at {config.neo4j_uri}: no password; set CCMEMORY_NEO4J_PASSWORD")
        return cls(config.neo4j_uri, config.neo4j_user, config.neo4j_password, scope=config.user_id or "")

    # --- plumbing -----------------------------------------------------------------------------
    def _error(self, exc: BaseException) -> IndexError_:
        if isinstance(exc, AuthError):
            cause = "authentication failed (check CCMEMORY_NEO4J_USER / CCMEMORY_NEO4J_PASSWORD)"
        elif isinstance(exc, ServiceUnavailable | SessionExpired):
            cause = f"server unreachable or connection lost ({exc})"
        else:
            cause = f"{type(exc).__name__}: {exc}"
        then = "the credentials are fixed" if isinstance(exc, AuthError) else "the server is back"
        return IndexError_(
            f"Neo4j index at {self.location}: {cause}. Memory files are untouched; "
            f"run `ccmemory reindex` once {then}."
        )

    @contextlib.contextmanager
    def _session(self) -> Iterator[neo4j.Session]:
        with self.driver.session(database=self.database) as s:
            yield s

    def _read(self, query: str, **params: Any) -> list[Any]:
        with self._session() as s:
            return list(s.run(query, params))

    def _ensure_schema(self) -> None:
        with self._session() as s:
            legacy = s.run("SHOW CONSTRAINTS YIELD name WHERE name = 'memory_file_key' RETURN name")
            if list(legacy):
                # before file records were scoped per indexing user: they become the "" scope
                s.run("DROP CONSTRAINT memory_file_key IF EXISTS").consume()
                s.run(
                    "MATCH (f:MemoryFile) WHERE f.scope IS NULL "
                    "CALL (f) { SET f.scope = '' } IN TRANSACTIONS OF 5000 ROWS"
                ).consume()
            for stmt in _SCHEMA:
                s.run(stmt).consume()
            s.run("CALL db.awaitIndexes(300)").consume()

    @_wrap_errors
    def close(self) -> None:
        self.driver.close()

    # --- writing ------------------------------------------------------------------------------
    @_wrap_errors
    def file_states(self, project: str) -> dict[str, FileState]:
        rows = self._read(
            "MATCH (f:MemoryFile {project: $p, scope: $s}) RETURN f.path AS path, "
            "f.mtime_ns AS mtime_ns, f.size AS size, f.hash AS hash",
            p=project,
            s=self.scope,
        )
        return {r["path"]: FileState(r["path"], r["mtime_ns"], r["size"], r["hash"]) for r in rows}

    @_wrap_errors
    def apply(
        self,
        project: str,
        upserts: Sequence[FileRecord],
        removed: Iterable[str],
        status_of: Callable[[str], str],
        adders: dict[str, str] | None = None,
    ) -> None:
        removed = list(removed)
        adders = adders or {}
        with self._session() as s, s.begin_transaction() as tx:
            # the memories the files fed before this change are re-derived too
            affected = {r.memory.id for r in upserts if r.memory}
            if removed:
                for r in tx.run(
                    "UNWIND $paths AS path MATCH (f:MemoryFile {project: $p, scope: $s, path: path}) "
                    f"{_HINT_FILE_PATH} WITH f, f.mem_id AS old DELETE f RETURN old",
                    p=project,
                    s=self.scope,
                    paths=removed,
                ):
                    if r["old"] is not None:
                        affected.add(r["old"])
            payloads = {r.path: _payload(r.memory) for r in upserts if r.memory}
            rows = [
                {
                    "path": r.path,
                    "props": {
                        "mtime_ns": r.mtime_ns,
                        "size": r.size,
                        "hash": r.hash,
                        "mem_id": r.memory.id if r.memory else None,
                        "error": r.error,
                        "error_line": r.error_line,
                        "payload": payloads.get(r.path),
                        "status": status_of(r.path) if r.memory else None,
                        "author_git": adders.get(r.path) if r.memory else None,
                    },
                }
                for r in upserts
            ]
            for r in tx.run(
                "UNWIND $rows AS row MERGE (f:MemoryFile {project: $p, scope: $s, path: row.path}) "
                "WITH f, row, f.mem_id AS old SET f += row.props "
                "WITH old WHERE old IS NOT NULL RETURN DISTINCT old",
                p=project,
                s=self.scope,
                rows=rows,
            ):
                affected.add(r["old"])
            self._derive(
                tx,
                project,
                sorted(affected),
                lambda path: (status_of(path), adders.get(path)),
                local=payloads,
            )
            tx.commit()

    def _derive(
        self,
        tx: neo4j.Transaction,
        project: str,
        ids: list[str],
        live: Callable[[str], tuple[str, str | None]] | None,
        local: dict[str, str] | None = None,
    ) -> dict[str, tuple[str, str | None]]:
        """Rebuild the memory nodes of `ids` from their winning files (see the module docstring).

        `live(path)` gives (status, git adder) of this scope's paths as git says now (stored on
        the file records when they differ); other scopes' files keep what their clone stored.
        `local` maps this scope's paths written in this transaction to their payloads, so the
        winners' payloads need not travel back from the server.
        Returns id -> (status, git author) of the memories rebuilt.
        """
        if not ids:
            return {}
        files = tx.run(
            "UNWIND $ids AS id MATCH (f:MemoryFile {project: $p, mem_id: id}) "
            f"{_HINT_FILE_MEM} WHERE f.error IS NULL "
            "RETURN id, f.scope AS scope, f.path AS path, f.hash AS hash, "
            "f.status AS status, f.author_git AS author_git",
            p=project,
            ids=ids,
        )
        per_scope: dict[tuple[str, str], tuple[str, str, str, str, str | None]] = {}
        stale: list[dict[str, Any]] = []
        for r in files:
            status, adder = r["status"], r["author_git"]
            if r["scope"] == self.scope and live is not None:
                now = live(r["path"])
                if now != (status, adder):
                    stale.append({"path": r["path"], "status": now[0], "author_git": now[1]})
                status, adder = now
            key = (r["id"], r["scope"])
            cur = per_scope.get(key)
            if cur is None or r["path"] < cur[0]:
                per_scope[key] = (r["path"], r["hash"], r["scope"], status or "developmental", adder)
        if stale:
            tx.run(
                "UNWIND $rows AS row MATCH (f:MemoryFile {project: $p, scope: $s, path: row.path}) "
                f"{_HINT_FILE_PATH} SET f.status = row.status, f.author_git = row.author_git",
                p=project,
                s=self.scope,
                rows=stale,
            ).consume()
        winners: dict[str, tuple[str, str, str, str, str | None]] = {}
        best: dict[str, tuple[bool, str, str]] = {}
        for (mem_id, scope), cand in per_scope.items():
            rank = (cand[3] != "curated", cand[0], scope)
            if mem_id not in best or rank < best[mem_id]:
                best[mem_id] = rank
                winners[mem_id] = cand
        # the winners' payloads: from this transaction's writes when we have them, else stored
        local = local or {}
        payload_of: dict[tuple[str, str], str] = {}
        fetch: list[dict[str, str]] = []
        for cand in winners.values():
            if cand[2] == self.scope and cand[0] in local:
                payload_of[(cand[2], cand[0])] = local[cand[0]]
            else:
                fetch.append({"scope": cand[2], "path": cand[0]})
        if fetch:
            for r in tx.run(
                "UNWIND $rows AS row MATCH (f:MemoryFile {project: $p, scope: row.scope, path: row.path}) "
                f"{_HINT_FILE_PATH} RETURN row.scope AS scope, row.path AS path, f.payload AS payload",
                p=project,
                rows=fetch,
            ):
                payload_of[(r["scope"], r["path"])] = r["payload"]
        # 1. strip every affected node back to a bare Ident, remembering whom it pointed at
        old_targets = tx.run(
            f"UNWIND $ids AS id MATCH (n:Ident {{project: $p, id: id}}) {_HINT_IDENT} "
            f"OPTIONAL MATCH (n)-[r:{_REL_PATTERN}]->(d:Ident) "
            "WITH n, collect(d.id) AS targets "
            # a subquery per node: the planner cannot start the deletion from the relationships
            "CALL (n) { MATCH (n)-[r]->() DELETE r } "
            f"REMOVE n:Memory:{_ALL_TYPE_LABELS} "
            "SET n = {project: n.project, id: n.id} "
            "RETURN targets",
            p=project,
            ids=ids,
        )
        stub_candidates: set[str] = set(ids)
        for r in old_targets:
            stub_candidates.update(r["targets"])
        # 2. build the rows of the winners
        mems: list[dict[str, Any]] = []
        edges: list[dict[str, Any]] = []
        applies: list[dict[str, Any]] = []  # APPLIES_TO (:Project) targets of each memory
        derived: dict[str, tuple[str, str | None]] = {}
        for mem_id in ids:
            win = winners.get(mem_id)
            if win is None:
                continue
            path, fhash, win_scope, status, adder = win
            d = json.loads(payload_of[(win_scope, path)])
            im = IndexedMemory.from_payload(d, path=path, status=status, project=project, hash=fhash)
            git_author = None if im.author else adder
            derived[im.id] = (im.status, git_author)
            targets = sorted({str(t) for t in im.fields.get(APPLIES_TO) or [] if str(t) != project})
            if targets:
                applies.append({"id": im.id, "targets": targets})
            conf = None if im.confidence is None else float(im.confidence)
            author = im.author or git_author
            mems.append(
                {
                    "id": im.id,
                    "label": _label(im.type),
                    "topics": list(dict.fromkeys(normalise_topic(t) for t in im.topics if t.strip())),
                    "files": list(dict.fromkeys(f.strip() for f in im.files if f.strip())),
                    "sessions": [] if im.session is None else [im.session],
                    "authors": [] if author is None else [author],
                    "props": {
                        "path": path,
                        "type": im.type,
                        "title": im.title,
                        "body": im.body,
                        "created": im.created,
                        "author_fm": im.author,
                        "author_git": git_author,
                        "author": author,
                        "session": im.session,
                        "branch": im.branch,
                        "confidence": conf,
                        "source": im.source,
                        "status": im.status,
                        **json_columns(im),
                        "hash": fhash,
                        "text_hash": text_hash(im),
                        "fields_text": fields_text(im.type, im.fields),
                    },
                }
            )
            e: dict[tuple[str, str], str | None] = {}
            for target in im.supersedes:
                e.setdefault(("SUPERSEDES", target), None)
            for rel in im.relations:
                if (rel.type, rel.target) not in e or rel.reason:
                    e[(rel.type, rel.target)] = rel.reason
            for (rtype, dst), reason in sorted(e.items()):
                if rtype not in RELATION_TYPES:  # whitelist: never a type from user text
                    raise IndexError_(f"unknown relation type {rtype!r} in {path}")
                edges.append({"src": im.id, "type": rtype, "dst": dst, "reason": reason})
        # 3. write them, batched. Every outgoing relationship of `ids` was deleted above and each
        # id is written once, so relationships are CREATEd; the nodes they point at are MERGEd
        # first, once per distinct key (one statement), and then only matched. Each memory node
        # is written together with its IN_PROJECT, ABOUT, TOUCHES, CAPTURED_IN and AUTHORED_BY
        # relationships (one statement per type label, not one per relationship type).
        if mems:
            tx.run(
                "MERGE (:Project {name: $p}) "
                "WITH 1 AS one "
                "CALL () { UNWIND $topics AS name MERGE (:Topic {project: $p, name: name}) } "
                "CALL () { UNWIND $files AS path MERGE (:File {project: $p, path: path}) } "
                "CALL () { UNWIND $sessions AS key MERGE (:Session {project: $p, id: key}) } "
                "CALL () { UNWIND $authors AS key MERGE (:Author {id: key}) } "
                "RETURN count(*)",
                p=project,
                topics=sorted({t for row in mems for t in row["topics"]}),
                files=sorted({f for row in mems for f in row["files"]}),
                sessions=sorted({k for row in mems for k in row["sessions"]}),
                authors=sorted({k for row in mems for k in row["authors"]}),
            ).consume()
            by_label: dict[str, list[dict[str, Any]]] = {}
            for row in mems:
                by_label.setdefault(row["label"], []).append(row)
            for label, rows in sorted(by_label.items()):
                # `label` comes from TYPE_LABELS (checked by _label), never from user text
                tx.run(
                    "MATCH (pr:Project {name: $p}) "
                    "UNWIND $rows AS row MERGE (n:Ident {project: $p, id: row.id}) "
                    f"SET n:Memory:{label}, n += row.props "
                    "CREATE (n)-[:IN_PROJECT]->(pr) "
                    "WITH n, row "
                    "CALL (n, row) { UNWIND row.topics AS name "
                    "  MATCH (t:Topic {project: $p, name: name}) USING INDEX t:Topic(project, name) "
                    "  CREATE (n)-[:ABOUT]->(t) } "
                    "CALL (n, row) { UNWIND row.files AS path "
                    "  MATCH (f:File {project: $p, path: path}) USING INDEX f:File(project, path) "
                    "  CREATE (n)-[:TOUCHES]->(f) } "
                    "CALL (n, row) { UNWIND row.sessions AS key "
                    "  MATCH (x:Session {project: $p, id: key}) USING INDEX x:Session(project, id) "
                    "  CREATE (n)-[:CAPTURED_IN]->(x) } "
                    "CALL (n, row) { UNWIND row.authors AS key "
                    "  MATCH (a:Author {id: key}) USING INDEX a:Author(id) CREATE (n)-[:AUTHORED_BY]->(a) } "
                    "RETURN count(*)",
                    p=project,
                    rows=[
                        {k: row[k] for k in ("id", "props", "topics", "files", "sessions", "authors")}
                        for row in rows
                    ],
                ).consume()
        if edges:
            tx.run(
                "UNWIND $ids AS id MERGE (:Ident {project: $p, id: id})",
                p=project,
                ids=sorted({r["dst"] for r in edges}),
            ).consume()
            by_type: dict[str, list[dict[str, Any]]] = {}
            for row in edges:
                by_type.setdefault(row["type"], []).append(row)
            for rtype, rows in sorted(by_type.items()):
                # `rtype` was checked against RELATION_TYPES above, never user text
                tx.run(
                    "UNWIND $rows AS row MATCH (s:Ident {project: $p, id: row.src}) "
                    "USING INDEX s:Ident(project, id) "
                    "MATCH (d:Ident {project: $p, id: row.dst}) USING INDEX d:Ident(project, id) "
                    f"CREATE (s)-[r:{rtype}]->(d) SET r.reason = row.reason",
                    p=project,
                    rows=rows,
                ).consume()
        if applies:
            tx.run(
                "UNWIND $rows AS row MATCH (n:Ident {project: $p, id: row.id}) "
                "USING INDEX n:Ident(project, id) "
                "UNWIND row.targets AS t MERGE (pr:Project {name: t}) CREATE (n)-[:APPLIES_TO]->(pr)",
                p=project,
                rows=applies,
            ).consume()
        # 4. ids that are neither memories nor relation targets any more disappear
        tx.run(
            f"UNWIND $ids AS id MATCH (n:Ident {{project: $p, id: id}}) {_HINT_IDENT} "
            "WHERE NOT n:Memory AND NOT EXISTS { ()-->(n) } DETACH DELETE n",
            p=project,
            ids=sorted(stub_candidates),
        ).consume()
        for label in ("Topic", "File", "Session"):
            tx.run(
                f"MATCH (x:{label} {{project: $p}}) WHERE NOT EXISTS {{ (x)--() }} DELETE x",
                p=project,
            ).consume()
        tx.run("MATCH (a:Author) WHERE NOT EXISTS { (a)--() } DELETE a").consume()
        return derived

    @_wrap_errors
    def refresh_status(
        self, project: str, status_of: Callable[[str], str], adders: dict[str, str] | None = None
    ) -> int:
        """Recompute status and git author of this scope's files; re-derive the memories they feed."""
        with self._session() as s, s.begin_transaction() as tx:
            rows = list(
                tx.run(
                    "MATCH (f:MemoryFile {project: $p, scope: $s}) "
                    "WHERE f.error IS NULL AND f.mem_id IS NOT NULL "
                    "RETURN f.path AS path, f.mem_id AS id, f.status AS status, f.author_git AS author_git",
                    p=project,
                    s=self.scope,
                )
            )
            stored = {r["path"]: r["author_git"] for r in rows}

            def live(path: str) -> tuple[str, str | None]:
                return status_of(path), (adders.get(path) if adders is not None else stored.get(path))

            ids = sorted({r["id"] for r in rows if live(r["path"]) != (r["status"], r["author_git"])})
            if not ids:
                return 0
            before = {
                r["id"]: (r["status"], r["author_git"])
                for r in tx.run(
                    "UNWIND $ids AS id MATCH (m:Memory {project: $p, id: id}) "
                    "RETURN m.id AS id, m.status AS status, m.author_git AS author_git",
                    p=project,
                    ids=ids,
                )
            }
            after = self._derive(tx, project, ids, live)
            tx.commit()
            return sum(1 for i in set(before) | set(after) if before.get(i) != after.get(i))

    @_wrap_errors
    def clear(self, project: str) -> None:
        """Forget this scope's file records. Memories other scopes still have files for survive
        (re-derived from those); when no other scope indexed the project, everything goes."""
        with self._session() as s:
            others = s.run(
                "RETURN EXISTS { MATCH (f:MemoryFile {project: $p}) WHERE f.scope <> $s } AS other",
                p=project,
                s=self.scope,
            ).single()
        if not (others and others["other"]):
            self.drop_project(project)
            return
        with self._session() as s:
            ids = [
                r["id"]
                for r in s.run(
                    "MATCH (f:MemoryFile {project: $p, scope: $s}) WHERE f.mem_id IS NOT NULL "
                    "RETURN DISTINCT f.mem_id AS id ORDER BY id",
                    p=project,
                    s=self.scope,
                )
            ]
            for start in range(0, len(ids), 2000):
                chunk = ids[start : start + 2000]
                with s.begin_transaction() as tx:
                    tx.run(
                        "UNWIND $ids AS id "
                        "MATCH (f:MemoryFile {project: $p, scope: $s, mem_id: id}) DELETE f",
                        p=project,
                        s=self.scope,
                        ids=chunk,
                    ).consume()
                    self._derive(tx, project, chunk, None)
                    tx.commit()
            s.run(
                "MATCH (f:MemoryFile {project: $p, scope: $s}) "
                "CALL (f) { DELETE f } IN TRANSACTIONS OF 5000 ROWS",
                p=project,
                s=self.scope,
            ).consume()

    @_wrap_errors
    def drop_project(self, project: str) -> None:
        """Delete everything the project has on the server, every scope's records included."""
        with self._session() as s:
            for label in ("MemoryFile", "Ident", "Topic", "File", "Session", "Project"):
                key = "name" if label == "Project" else "project"
                s.run(
                    f"MATCH (x:{label} {{{key}: $p}}) "
                    "CALL (x) { DETACH DELETE x } IN TRANSACTIONS OF 5000 ROWS",
                    p=project,
                ).consume()
            s.run("MATCH (a:Author) WHERE NOT EXISTS { (a)--() } DELETE a").consume()

    # --- reading ------------------------------------------------------------------------------
    @staticmethod
    def _where(f: Filters, var: str = "m") -> tuple[str, dict[str, Any]]:
        """A WHERE clause over the Memory node `var` (already matched by project) and its params.

        The text is the same for every filter combination and every parameter always has the
        same type (unused lists hold one impossible value, unused strings are empty, flags say
        which filters apply): Neo4j caches plans by query text and parameter types, so each
        query is planned once instead of once per filter combination.
        """
        m = var
        none = ["\u0000"]
        files = list(f.files or [])
        exact = [x for x in files if not x.endswith("/")]
        prefixes = [x for x in files if x.endswith("/")]
        params: dict[str, Any] = {
            "f_use_ids": f.ids is not None,
            "f_ids": list(f.ids or []) or none,
            "f_use_types": bool(f.types),
            "f_types": list(f.types or []) or none,
            "f_status": f.status or "",
            "f_use_viewer": f.viewer is not None,
            "f_viewer": f.viewer or "",
            "f_since": format_timestamp(f.since) if f.since else "",
            "f_until": format_timestamp(f.until) if f.until else "",
            "f_use_topics": bool(f.topics),
            "f_topics": [normalise_topic(t) for t in f.topics or []] or none,
            "f_use_files": bool(files),
            "f_exact": exact or none,
            "f_prefixes": prefixes or none,
            "f_sup": bool(f.include_superseded),
        }
        clause = (
            f"(NOT $f_use_ids OR {m}.id IN $f_ids)"
            f" AND (NOT $f_use_types OR {m}.type IN $f_types)"
            f" AND ($f_status = '' OR {m}.status = $f_status)"
            f" AND (NOT $f_use_viewer OR {m}.status = 'curated' OR {m}.author = $f_viewer)"
            f" AND ($f_since = '' OR {m}.created >= $f_since)"
            f" AND ($f_until = '' OR {m}.created <= $f_until)"
            f" AND (NOT $f_use_topics OR EXISTS {{ ({m})-[:ABOUT]->(ft:Topic) WHERE ft.name IN $f_topics }})"
            f" AND (NOT $f_use_files OR EXISTS {{ ({m})-[:TOUCHES]->(fx:File) WHERE fx.path IN $f_exact"
            " OR any(pre IN $f_prefixes WHERE pre <> '\u0000' AND fx.path STARTS WITH pre) })"
            f" AND ($f_sup OR NOT EXISTS {{ (sx:Memory)-[:SUPERSEDES]->({m}) WHERE sx.id <> {m}.id"
            " AND (NOT $f_use_viewer OR sx.status = 'curated' OR sx.author = $f_viewer) })"
        )
        return clause, params

    @_wrap_errors
    def get(self, project: str, ids: Sequence[str]) -> list[IndexedMemory]:
        if not ids:
            return []
        ids = list(ids)
        rows = self._read(
            "UNWIND $ids AS id MATCH (m:Memory {project: $p, id: id}) RETURN " + _RETURN_MEMORY,
            p=project,
            ids=sorted(set(ids)),
        )
        by_id = {r["id"]: _row(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    @_wrap_errors
    def resolve(self, project: str, ref: str) -> list[str]:
        ref = ref.strip()
        if not ref:
            return []
        rows = self._read(
            "MATCH (m:Memory {project: $p}) WHERE m.id = $id OR m.path = $ref RETURN m.id AS id",
            p=project,
            id=ref.upper(),
            ref=ref,
        )
        if rows:
            return sorted(r["id"] for r in rows)
        if len(ref) >= 4:
            rows = self._read(
                "MATCH (m:Memory {project: $p}) WHERE m.id STARTS WITH $pre "
                "RETURN m.id AS id ORDER BY id LIMIT 20",
                p=project,
                pre=ref.upper(),
            )
            return [r["id"] for r in rows]
        return []

    @_wrap_errors
    def query(self, f: Filters, limit: int = 50, offset: int = 0) -> list[IndexedMemory]:
        where, params = self._where(f)
        rows = self._read(
            f"MATCH (m:Memory {{project: $p}}) WHERE {where} RETURN {_RETURN_MEMORY} "
            "ORDER BY m.created DESC, m.id DESC SKIP $offset LIMIT $limit",
            p=f.project,
            offset=offset,
            limit=limit,
            **params,
        )
        return [_row(r) for r in rows]

    @_wrap_errors
    def count(self, f: Filters) -> int:
        where, params = self._where(f)
        rows = self._read(
            f"MATCH (m:Memory {{project: $p}}) WHERE {where} RETURN count(m) AS n", p=f.project, **params
        )
        return int(rows[0]["n"])

    @_wrap_errors
    def text_search(self, text: str, f: Filters, limit: int = 50) -> list[tuple[str, float]]:
        q = lucene_query(text)
        if not q:
            return []
        where, params = self._where(f)
        rows = self._read(
            "CALL db.index.fulltext.queryNodes($index, $q) YIELD node AS m, score "
            f"WHERE m.project = $p AND {where} "
            "RETURN m.id AS id, score ORDER BY score DESC, id ASC LIMIT $limit",
            index=FULLTEXT_INDEX,
            q=q,
            p=f.project,
            limit=limit,
            **params,
        )
        return [(r["id"], round(float(r["score"]), 6)) for r in rows]

    @_wrap_errors
    def edges(self, project: str, ids: Sequence[str]) -> list[Edge]:
        if not ids:
            return []
        rows = self._read(
            f"MATCH (a:Memory {{project: $p}})-[r:{_REL_PATTERN}]->(b:Memory {{project: $p}}) "
            "WHERE a.id IN $ids OR b.id IN $ids "
            "RETURN a.id AS src, type(r) AS type, b.id AS dst, r.reason AS reason",
            p=project,
            ids=list(ids),
        )
        out = {Edge(r["src"], r["type"], r["dst"], r["reason"]) for r in rows}
        return sorted(out, key=lambda e: (e.src, e.type, e.dst))

    @_wrap_errors
    def dangling(self, project: str) -> list[Edge]:
        rows = self._read(
            f"MATCH (a:Memory {{project: $p}})-[r:{_REL_PATTERN}]->(b:Ident) WHERE NOT b:Memory "
            "RETURN a.id AS src, type(r) AS type, b.id AS dst, r.reason AS reason",
            p=project,
        )
        return sorted(
            (Edge(r["src"], r["type"], r["dst"], r["reason"]) for r in rows),
            key=lambda e: (e.src, e.type, e.dst),
        )

    @_wrap_errors
    def superseded_ids(self, f: Filters) -> set[str]:
        g = dataclasses.replace(f, include_superseded=True)
        where, params = self._where(g)
        rows = self._read(
            f"MATCH (m:Memory {{project: $p}}) WHERE {where} AND "
            "EXISTS { (sx:Memory)-[:SUPERSEDES]->(m) WHERE sx.id <> m.id "
            "AND (NOT $f_use_viewer OR sx.status = 'curated' OR sx.author = $f_viewer) } "
            "RETURN m.id AS id",
            p=f.project,
            **params,
        )
        return {r["id"] for r in rows}

    @_wrap_errors
    def related_by_topic_or_file(
        self, f: Filters, ids: Sequence[str], limit: int = 20
    ) -> list[tuple[str, str, int]]:
        if not ids:
            return []
        where, params = self._where(f)
        rows = self._read(
            "MATCH (s:Memory {project: $p}) WHERE s.id IN $ids "
            "MATCH (s)-[:ABOUT|TOUCHES]->(x) "
            # a topic or file shared by very many memories connects nothing in particular
            # (Topic/File nodes are per project, so their degree counts this project's memories)
            "WHERE COUNT { (x)<-[:ABOUT|TOUCHES]-() } <= $max_shared "
            "MATCH (x)<-[:ABOUT|TOUCHES]-(m:Memory {project: $p}) "
            f"WHERE m.id <> s.id AND NOT m.id IN $ids AND {where} "
            "RETURN m.id AS other, s.id AS via, count(*) AS n",
            p=f.project,
            ids=list(ids),
            max_shared=MAX_SHARED,
            **params,
        )
        ranked = sorted(
            ((r["other"], r["via"], int(r["n"])) for r in rows), key=lambda t: (-t[2], t[0], t[1])
        )
        return ranked[:limit]

    @_wrap_errors
    def file_problems(self, project: str) -> list[FileProblem]:
        """This scope's invalid files, and its files losing to a smaller path of the same clone."""
        out = [
            FileProblem(r["path"], r["line"], r["error"])
            for r in self._read(
                "MATCH (f:MemoryFile {project: $p, scope: $s}) WHERE f.error IS NOT NULL "
                "RETURN f.path AS path, f.error_line AS line, f.error AS error",
                p=project,
                s=self.scope,
            )
        ]
        for r in self._read(
            "MATCH (f:MemoryFile {project: $p, scope: $s}) WHERE f.error IS NULL AND f.mem_id IS NOT NULL "
            "WITH f.mem_id AS id, collect(f.path) AS paths WHERE size(paths) > 1 RETURN id, paths",
            p=project,
            s=self.scope,
        ):
            paths = sorted(r["paths"])
            for path in paths[1:]:
                out.append(FileProblem(path, 1, f"duplicate id {r['id']}: also used by {paths[0]}"))
        return sorted(out, key=lambda p: (p.path, p.line or 0))

    @_wrap_errors
    def stats(self, project: str) -> dict[str, Any]:
        by_type = {
            r["k"]: r["n"]
            for r in self._read(
                "MATCH (m:Memory {project: $p}) RETURN m.type AS k, count(*) AS n ORDER BY k", p=project
            )
        }
        by_status = {
            r["k"]: r["n"]
            for r in self._read(
                "MATCH (m:Memory {project: $p}) RETURN m.status AS k, count(*) AS n ORDER BY k", p=project
            )
        }
        nrel = self._read(
            f"MATCH (:Memory {{project: $p}})-[r:{_REL_PATTERN}]->() RETURN count(r) AS n", p=project
        )[0]["n"]
        nerr = self._read(
            "MATCH (f:MemoryFile {project: $p, scope: $s}) WHERE f.error IS NOT NULL RETURN count(f) AS n",
            p=project,
            s=self.scope,
        )[0]["n"]
        nvec = self._read("MATCH (e:Embedding) RETURN count(e) AS n")[0]["n"]
        return {
            "backend": self.backend,
            "location": self.location,
            "memories": sum(by_type.values()),
            "by_type": by_type,
            "by_status": by_status,
            "relations": nrel,
            "invalid_files": nerr,
            "vectors": nvec,
        }

    @_wrap_errors
    def server_info(self) -> dict[str, Any]:
        """Version, edition and schema state, for `ccmemory doctor`."""
        comp = self._read("CALL dbms.components() YIELD name, versions, edition RETURN *")[0]
        idx = self._read("SHOW INDEXES YIELD name, type, state RETURN name, type, state ORDER BY name")
        cons = self._read("SHOW CONSTRAINTS YIELD name RETURN name ORDER BY name")
        return {
            "version": comp["versions"][0],
            "edition": comp["edition"],
            "indexes": {r["name"]: {"type": r["type"], "state": r["state"]} for r in idx},
            "constraints": [r["name"] for r in cons],
        }

    @_wrap_errors
    def dump(self, project: str) -> dict[str, Any]:
        """The same shape and values as SQLiteIndex.dump (compared across backends in tests)."""
        mems = self._read(
            "MATCH (m:Memory {project: $p}) RETURN m.id AS id, m.path AS path, m.type AS type, "
            "m.title AS title, m.body AS body, m.created AS created, m.author_fm AS author_fm, "
            "m.author_git AS author_git, m.session AS session, m.branch AS branch, "
            "m.confidence AS confidence, m.source AS source, m.status AS status, m.fields AS fields, "
            "m.topics AS topics, m.files AS files, m.supersedes AS supersedes, "
            "m.relations AS relations, m.hash AS hash, m.text_hash AS text_hash, "
            "m.fields_text AS fields_text",
            p=project,
        )
        mems.sort(key=lambda r: r["id"])
        total = self._read("MATCH (m:Memory) RETURN count(m) AS n")[0]["n"]
        rels = self._read(
            f"MATCH (a:Memory {{project: $p}})-[r:{_REL_PATTERN}]->(b:Ident) "
            "RETURN a.id AS src, type(r) AS type, b.id AS dst, r.reason AS reason",
            p=project,
        )
        topics = self._read(
            "MATCH (m:Memory {project: $p})-[:ABOUT]->(t:Topic) RETURN m.id AS id, t.name AS v", p=project
        )
        files = self._read(
            "MATCH (m:Memory {project: $p})-[:TOUCHES]->(f:File) RETURN m.id AS id, f.path AS v", p=project
        )
        file_rows = self._read(
            "MATCH (f:MemoryFile {project: $p, scope: $s}) RETURN f.path AS path, f.size AS size, "
            "f.hash AS hash, f.mem_id AS mem_id, f.error AS error, f.error_line AS error_line",
            p=project,
            s=self.scope,
        )
        cols = (
            "id path type title body created author_fm author_git session branch confidence source "
            "status fields topics files supersedes relations hash text_hash"
        ).split()
        return {
            "memories": [tuple(r[c] for c in cols) for r in mems],
            "fts": [(r["id"], r["title"], r["body"], r["fields_text"]) for r in mems],
            "fts_total": total,
            "relations": sorted(tuple(r.values()) for r in rels),
            "topics": sorted(tuple(r.values()) for r in topics),
            "files": sorted(tuple(r.values()) for r in files),
            "file_rows": sorted(tuple(r.values()) for r in file_rows),
        }

    # --- vectors --------------------------------------------------------------------------------
    @_wrap_errors
    def missing_vectors(self, project: str, embedder: str) -> list[tuple[str, str]]:
        rows = self._read(
            "MATCH (m:Memory {project: $p}) WHERE NOT EXISTS { "
            "  MATCH (e:Embedding {embedder: $emb, text_hash: m.text_hash}) } "
            f"RETURN m.text_hash AS text_hash, {_RETURN_MEMORY} ORDER BY m.id",
            p=project,
            emb=embedder,
        )
        seen: dict[str, str] = {}
        for r in rows:
            seen.setdefault(r["text_hash"], embed_text(_row(r)))
        return sorted(seen.items())

    def _ensure_vector_index(self, dim: int) -> None:
        if self._vector_dim == dim:
            return
        rows = self._read(
            "SHOW VECTOR INDEXES YIELD name, options WHERE name = $name RETURN options", name=VECTOR_INDEX
        )
        current = None
        if rows:
            cfg = (rows[0]["options"] or {}).get("indexConfig") or {}
            current = cfg.get("vector.dimensions")
            if cfg.get("vector.quantization.enabled"):
                current = -1  # quantized scores are approximate: rebuild without quantization
        if current is not None and int(current) != dim:
            with self._session() as s:
                s.run(f"DROP INDEX {VECTOR_INDEX} IF EXISTS").consume()
            current = None
        if current is None:
            with self._session() as s:
                # the dimension is an int we checked, not user text
                s.run(
                    f"CREATE VECTOR INDEX {VECTOR_INDEX} IF NOT EXISTS FOR (e:Embedding) ON e.embedding "
                    f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dim)}, "
                    "`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}}"
                ).consume()
                s.run("CALL db.awaitIndexes(300)").consume()
        self._vector_dim = dim

    @_wrap_errors
    def store_vectors(self, embedder: str, dim: int, items: Sequence[tuple[str, Any]]) -> None:
        if not items:
            return
        dim = int(dim)
        if not 0 < dim <= 4096:
            raise IndexError_(f"Neo4j index at {self.location}: bad vector dimension {dim}")
        self._ensure_vector_index(dim)
        rows = [{"h": h, "v": [float(x) for x in v]} for h, v in items]
        with self._session() as s, s.begin_transaction() as tx:
            for start in range(0, len(rows), 1000):
                tx.run(
                    "UNWIND $rows AS row MERGE (e:Embedding {embedder: $emb, text_hash: row.h}) "
                    "SET e.dim = $dim, e.embedding = row.v",
                    emb=embedder,
                    dim=dim,
                    rows=rows[start : start + 1000],
                ).consume()
            tx.commit()

    @_wrap_errors
    def vector_search(
        self, embedder: str, vector: Any, f: Filters, limit: int = 50
    ) -> list[tuple[str, float]]:
        query = [float(x) for x in vector]
        dims = self._read(
            "MATCH (m:Memory {project: $p}) MATCH (e:Embedding {embedder: $emb, text_hash: m.text_hash}) "
            "RETURN e.dim AS dim LIMIT 1",
            p=f.project,
            emb=embedder,
        )
        if not dims:
            return []
        if int(dims[0]["dim"]) != len(query):
            raise IndexError_(
                f"vector dimension mismatch: index has {dims[0]['dim']}, query has {len(query)}"
            )
        where, params = self._where(f)
        # Approximate candidates from the vector index first; when filters leave fewer than
        # `limit` of them, an exact scan over the project's memories gives the full answer.
        k = max(limit * 5, 100)
        try:
            rows = self._read(
                "CALL db.index.vector.queryNodes($index, $k, $v) YIELD node AS e, score AS s "
                "WHERE e.embedder = $emb "
                "MATCH (m:Memory {project: $p, text_hash: e.text_hash}) "
                f"WHERE {where} "
                "WITH m, vector.similarity.cosine(e.embedding, $v) AS s "
                "RETURN m.id AS id, s ORDER BY s DESC, id ASC LIMIT $limit",
                index=VECTOR_INDEX,
                k=k,
                p=f.project,
                emb=embedder,
                v=query,
                limit=limit,
                **params,
            )
        except Neo4jError as exc:
            # One vector index serves the whole server; another project's embedder may have left
            # it at another dimension. The exact scan below still answers.
            if "dimensions" not in str(exc):
                raise
            rows = []
        if len(rows) < limit:
            rows = self._read(
                "MATCH (m:Memory {project: $p}) "
                f"WHERE {where} "
                "MATCH (e:Embedding {embedder: $emb, text_hash: m.text_hash}) "
                "WITH m, vector.similarity.cosine(e.embedding, $v) AS s "
                "RETURN m.id AS id, s ORDER BY s DESC, id ASC LIMIT $limit",
                p=f.project,
                emb=embedder,
                v=query,
                limit=limit,
                **params,
            )
        return [(r["id"], round(2.0 * float(r["s"]) - 1.0, 6)) for r in rows]

    # --- projects -----------------------------------------------------------------------------
    @_wrap_errors
    def projects(self) -> list[str]:
        return [r["name"] for r in self._read("MATCH (p:Project) RETURN p.name AS name ORDER BY name")]

    @_wrap_errors
    def link_projects(self, project: str, links: Sequence[tuple[str, str]]) -> None:
        rows = [{"other": o, "relation": r} for o, r in links if o != project]
        with self._session() as s:
            s.run(
                "MERGE (a:Project {name: $p}) WITH a "
                "CALL (a) { MATCH (a)-[r:RELATED_TO]->() DELETE r } "
                "WITH a UNWIND $rows AS row MERGE (b:Project {name: row.other}) "
                "CREATE (a)-[:RELATED_TO {relation: row.relation}]->(b)",
                p=project,
                rows=rows,
            ).consume()

    @_wrap_errors
    def related_projects(self, project: str) -> list[tuple[str, str]]:
        rows = self._read(
            "MATCH (a:Project {name: $p})-[r:RELATED_TO]-(b:Project) WHERE b.name <> $p "
            "RETURN b.name AS name, r.relation AS relation ORDER BY name, relation",
            p=project,
        )
        out: dict[str, str] = {}
        for r in rows:
            out.setdefault(r["name"], r["relation"])
        return sorted(out.items())

    @_wrap_errors
    def applying_to(self, target: str, f: Filters, limit: int = 50) -> list[IndexedMemory]:
        where, params = self._where(f)
        rows = self._read(
            "MATCH (m:Memory {project: $p})-[:APPLIES_TO]->(:Project {name: $target}) "
            f"WHERE {where} RETURN {_RETURN_MEMORY} ORDER BY m.created DESC, m.id DESC LIMIT $limit",
            p=f.project,
            target=target,
            limit=limit,
            **params,
        )
        return [_row(r) for r in rows]

    @_wrap_errors
    def projects_applying_to(self, target: str) -> list[str]:
        rows = self._read(
            "MATCH (m:Memory)-[:APPLIES_TO]->(:Project {name: $t}) WHERE m.project <> $t "
            "RETURN DISTINCT m.project AS name ORDER BY name",
            t=target,
        )
        return [r["name"] for r in rows]
