"""`Neo4jIndex`: the Index contract on Neo4j 5, put together from this package's parts."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import neo4j

from ccmemory.index.base import FileRecord, FileState, Index, IndexUnavailable
from ccmemory.index.derive import payload
from ccmemory.index.neo4j import queries as q
from ccmemory.index.neo4j import write
from ccmemory.index.neo4j.connection import wrap_errors
from ccmemory.index.neo4j.read import MemoryReads
from ccmemory.index.neo4j.vectors import VectorStore
from ccmemory.index.neo4j_ref import ReferenceGraph

if TYPE_CHECKING:
    from ccmemory.core.config import Config


class Neo4jIndex(VectorStore, MemoryReads, ReferenceGraph):
    backend = "neo4j"

    @classmethod
    def connect(cls, config: Config) -> Neo4jIndex:
        if not config.neo4j_password:
            raise IndexUnavailable(
                f"Neo4j index at {config.neo4j_uri}: no password; set CCMEMORY_NEO4J_PASSWORD"
            )
        return cls(config.neo4j_uri, config.neo4j_user, config.neo4j_password, scope=config.user_id or "")

    def _after_schema(self, session: neo4j.Session) -> None:
        write.backfill_terms(session)

    # --- optional capabilities this backend does not have (see Index) ------------------------
    moved_aside: str | None = None  # no local file
    parse_ahead = True  # apply waits on the server: sync parses the next batch meanwhile
    concurrent_reads = True  # each read has its own session from the driver's pool

    def healthy(self) -> bool:
        return True  # the server checks its own store

    def reset_corrupt(self) -> None:
        return None

    def fresh_beside(self, project: str) -> None:
        return None  # one server holds every project: `reindex --full` clears and refills

    def swap_in(self, fresh: Index) -> None:
        raise IndexUnavailable(f"Neo4j index at {self.location}: no rebuild beside the live index")

    def discard(self, fresh: Index) -> None:
        fresh.close()

    # --- writing ------------------------------------------------------------------------------
    @wrap_errors
    def file_states(self, project: str, paths: Collection[str] | None = None) -> dict[str, FileState]:
        if paths is None:
            rows = self._read(q.FILE_STATES, p=project, s=self.scope)
        else:
            rows = self._read(q.FILE_STATES_AT, p=project, s=self.scope, paths=sorted(set(paths)))
        return {r["path"]: FileState(r["path"], r["mtime_ns"], r["size"], r["hash"]) for r in rows}

    @wrap_errors
    def sync_state(self, project: str) -> dict[str, Any] | None:
        """This scope's sync state: one `SyncState` node per project and indexing user, apart
        from the memory graph (its file records are this scope's too)."""
        import json

        rows = self._read(
            "MATCH (x:SyncState {project: $p, scope: $s}) RETURN x.value AS v", p=project, s=self.scope
        )
        try:
            state = json.loads(rows[0]["v"]) if rows else None
        except (TypeError, ValueError):
            return None
        return state if isinstance(state, dict) else None

    @wrap_errors
    def set_sync_state(self, project: str, state: dict[str, Any] | None) -> None:
        import json

        if state is None:
            query = "MATCH (x:SyncState {project: $p, scope: $s}) DELETE x"
        else:
            query = "MERGE (x:SyncState {project: $p, scope: $s}) SET x.value = $v"
        params = {"p": project, "s": self.scope, "v": None if state is None else json.dumps(state)}
        self._write(lambda tx: tx.run(query, params).consume())

    @wrap_errors
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
        self._write(lambda tx: self._apply(tx, project, upserts, removed, status_of, adders))

    def _apply(
        self,
        tx: neo4j.ManagedTransaction,
        project: str,
        upserts: Sequence[FileRecord],
        removed: list[str],
        status_of: Callable[[str], str],
        adders: dict[str, str],
    ) -> None:
        """`apply` in one transaction (run again from the start on a deadlock)."""
        # the memories the files fed before this change are re-derived too
        before: set[str] = set()  # ids of the file records this change replaces or deletes
        if removed:
            for r in tx.run(
                q.DELETE_FILES,
                p=project,
                s=self.scope,
                paths=removed,
            ):
                if r["old"] is not None:
                    before.add(r["old"])
        payloads = {r.path: payload(r.memory) for r in upserts if r.memory}
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
            q.UPSERT_FILES,
            p=project,
            s=self.scope,
            rows=rows,
        ):
            before.add(r["old"])
        self._derive(
            tx,
            project,
            sorted(before | {r.memory.id for r in upserts if r.memory}),
            lambda path: (status_of(path), adders.get(path)),
            local=payloads,
        )

    def _derive(
        self,
        tx: neo4j.ManagedTransaction,
        project: str,
        ids: list[str],
        live: write.Live | None,
        local: dict[str, str] | None = None,
    ) -> dict[str, tuple[str, str | None]]:
        """Rebuild the memory nodes of `ids` from their winning files (`write.derive`)."""
        return write.derive(tx, project, self.scope, ids, live, local)

    @wrap_errors
    def refresh_status(
        self,
        project: str,
        status_of: Callable[[str], str],
        adders: Mapping[str, str] | None = None,
        only: Collection[str] | None = None,
        git_authors: bool = False,
    ) -> int:
        """Recompute status and git author of this scope's files; re-derive the memories they feed.
        `only` (without `git_authors`: a file's git author is stored whether or not it is used)
        limits the check to those paths."""
        return self._write(lambda tx: self._refresh_status(tx, project, status_of, adders, only, git_authors))

    def _refresh_status(
        self,
        tx: neo4j.ManagedTransaction,
        project: str,
        status_of: Callable[[str], str],
        adders: Mapping[str, str] | None,
        only: Collection[str] | None,
        git_authors: bool,
    ) -> int:
        rows = list(
            tx.run(
                "MATCH (f:MemoryFile {project: $p, scope: $s}) "
                "WHERE f.error IS NULL AND f.mem_id IS NOT NULL "
                "RETURN f.path AS path, f.mem_id AS id, f.status AS status, f.author_git AS author_git",
                p=project,
                s=self.scope,
            )
        )
        if only is not None and not git_authors:
            wanted = set(only)
            rows = [r for r in rows if r["path"] in wanted]
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
        return sum(1 for i in set(before) | set(after) if before.get(i) != after.get(i))

    @wrap_errors
    def clear(self, project: str) -> None:
        """Forget this scope's file records. Memories other scopes still have files for survive
        (re-derived from those); when no other scope indexed the project, everything goes."""
        self.set_sync_state(project, None)
        others = self._read(
            "RETURN EXISTS { MATCH (f:MemoryFile {project: $p}) WHERE f.scope <> $s } AS other",
            p=project,
            s=self.scope,
        )
        if not (others and others[0]["other"]):
            self.drop_project(project)
            return
        ids = [
            r["id"]
            for r in self._read(
                "MATCH (f:MemoryFile {project: $p, scope: $s}) WHERE f.mem_id IS NOT NULL "
                "RETURN DISTINCT f.mem_id AS id ORDER BY id",
                p=project,
                s=self.scope,
            )
        ]
        with self._session() as s:
            for start in range(0, len(ids), 2000):
                chunk = ids[start : start + 2000]

                def forget(tx: neo4j.ManagedTransaction, chunk: list[str] = chunk) -> None:
                    tx.run(
                        "UNWIND $ids AS id "
                        "MATCH (f:MemoryFile {project: $p, scope: $s, mem_id: id}) DELETE f",
                        p=project,
                        s=self.scope,
                        ids=chunk,
                    ).consume()
                    self._derive(tx, project, chunk, None)

                s.execute_write(forget)
            s.run(
                "MATCH (f:MemoryFile {project: $p, scope: $s}) "
                "CALL (f) { DELETE f } IN TRANSACTIONS OF 5000 ROWS",
                p=project,
                s=self.scope,
            ).consume()

    @wrap_errors
    def drop_project(self, project: str) -> None:
        """Delete everything the project has on the server, every scope's records included."""
        with self._session() as s:
            for label in ("MemoryFile", "SyncState", "Ident", "Topic", "File", "Session", "Project"):
                key = "name" if label == "Project" else "project"
                s.run(
                    f"MATCH (x:{label} {{{key}: $p}}) "
                    "CALL (x) { DETACH DELETE x } IN TRANSACTIONS OF 5000 ROWS",
                    p=project,
                ).consume()
            s.run(q.DROP_ORPHAN_AUTHORS).consume()

    @wrap_errors
    def link_projects(self, project: str, links: Sequence[tuple[str, str]]) -> None:
        rows = [{"other": o, "relation": r} for o, r in links if o != project]
        self._write(
            lambda tx: tx.run(
                "MERGE (a:Project {name: $p}) WITH a "
                "CALL (a) { MATCH (a)-[r:RELATED_TO]->() DELETE r } "
                "WITH a UNWIND $rows AS row MERGE (b:Project {name: row.other}) "
                "CREATE (a)-[:RELATED_TO {relation: row.relation}]->(b)",
                p=project,
                rows=rows,
            ).consume()
        )
