"""Team mode on one Neo4j server: the reference-chunk writes of several users at once are retried
on deadlock (managed transactions), and a (project, user) has one sync state whatever the number
of processes writing it; a server from before the uniqueness rule is cleaned up on connect."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest

from ccmemory.app.sync import record_from_bytes
from ccmemory.core.model import Relation
from ccmemory.core.reftree import REF_ROOT
from ccmemory.core.reftree.record import parse
from ccmemory.core.vault import render
from tests.conftest import make_memory

pytestmark = pytest.mark.neo4j


def _index(server: Any, scope: str) -> Any:
    from ccmemory.index.neo4j import Neo4jIndex

    return Neo4jIndex(server.uri, server.user, server.password, scope=scope)


def _run_all(work: list[Any]) -> None:
    threads = [threading.Thread(target=w) for w in work]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_reference_writes_of_eight_users_at_once_are_retried_not_lost(neo4j_server: Any) -> None:
    """Each user's reference files link to the same memories and those memories cite each file:
    relinking locks the shared memory nodes in each user's own order, so the transactions of
    different users deadlock; each is tried again, none fails, every user's links are there.
    (Before: explicit transactions, and a deadlock was an IndexUnavailable for that user.)"""
    project = "refdead-" + uuid.uuid4().hex[:8]
    users = [f"dev{n}@example.com" for n in range(8)]
    mems = [
        make_memory(
            "fact",
            f"Shared rule {i}",
            relations=[
                Relation("CITES", f"ccmemory://reference/guide-{(i + j) % 4}.md", "see") for j in range(2)
            ],
        )
        for i in range(12)
    ]
    paths = [f".ccmemory/facts/rule-{i}.md" for i in range(12)]
    owner = _index(neo4j_server, "")
    # the reference schema first: created by 8 first connections at once on a fresh server, one
    # of them waited out `db.awaitIndexes(300)` (not what this test is about; see the report)
    owner._ref()
    owner.apply(
        project,
        [record_from_bytes(render(m).encode(), p, 1) for m, p in zip(mems, paths, strict=True)],
        [],
        lambda p: "curated",
    )

    def ref_records(n: int) -> list[Any]:
        out = []
        for g in range(4):
            # each user links the shared memories in a different order
            order = sorted(range(12), key=lambda i: (i * (n + 1) + g) % 12)
            links = "\n".join(f"- [rule {i}](../facts/rule-{i}.md)" for i in order)
            text = f"# Guide {g}\n\nIntro.\n\n## Part {g}\n\n{links}\n"
            rec = parse(text, f"{REF_ROOT}/guide-{g}.md")
            rec.mtime_ns, rec.size, rec.hash = 1, len(text), f"h{g}"
            out.append(rec)
        return out

    errors: list[str] = []

    def client(n: int) -> None:
        idx = _index(neo4j_server, users[n])
        try:
            for _ in range(4):
                idx.ref_apply(project, ref_records(n), [], lambda p: "curated")
        except Exception as exc:
            errors.append(f"{users[n]}: {exc}")
        finally:
            idx.close()

    try:
        _run_all([lambda n=n: client(n) for n in range(8)])
        assert errors == [], "\n".join(errors[:3])
        rows = owner._read(
            "MATCH (f:RefFile {project: $p}) RETURN f.scope AS s, count(f) AS n ORDER BY s", p=project
        )
        assert [(r["s"], r["n"]) for r in rows] == [(u, 4) for u in sorted(users)]
        refs = owner._read(
            "MATCH (c:Chunk {project: $p})-[r:REFERENCES]->(m:Memory {project: $p}) "
            "RETURN c.scope AS s, count(r) AS n ORDER BY s",
            p=project,
        )
        assert [(r["s"], r["n"]) for r in refs] == [(u, 4 * 12) for u in sorted(users)]
        cites = owner._read(
            "MATCH (m:Memory {project: $p})-[r:CITES_CHUNK]->(c:Chunk {project: $p}) "
            "RETURN c.scope AS s, count(DISTINCT [m.id, c.path]) AS n ORDER BY s",
            p=project,
        )
        # every memory cites two guides (each guide's every chunk: the citation names no section)
        assert [(r["s"], r["n"]) for r in cites] == [(u, 12 * 2) for u in sorted(users)]
    finally:
        for u in users:
            idx = _index(neo4j_server, u)
            idx.ref_clear(project)
            idx.close()
        owner.drop_project(project)
        owner.close()


def test_one_sync_state_per_project_and_user_with_many_processes(neo4j_server: Any) -> None:
    project = "sync-" + uuid.uuid4().hex[:8]
    idxs = [_index(neo4j_server, "dev@example.com") for _ in range(8)]
    errors: list[str] = []

    def writer(n: int) -> None:
        try:
            for k in range(5):
                idxs[n].set_sync_state(project, {"writer": n, "k": k})
        except Exception as exc:
            errors.append(str(exc))

    try:
        assert "sync_state_key" in idxs[0].server_info()["constraints"]
        _run_all([lambda n=n: writer(n) for n in range(8)])
        assert errors == []
        rows = idxs[0]._read("MATCH (x:SyncState {project: $p}) RETURN x.scope AS s", p=project)
        assert [r["s"] for r in rows] == ["dev@example.com"]
        state = idxs[0].sync_state(project)
        assert state is not None and state["k"] == 4
    finally:
        idxs[0].drop_project(project)
        for idx in idxs:
            idx.close()


def test_connecting_removes_duplicated_sync_states_of_an_older_server(neo4j_server: Any) -> None:
    """A server written before the uniqueness rule may hold two states of one (project, user):
    which one is current cannot be told, so both go (that clone's next reindex walks its vault);
    the states of other users and projects stay; the rule is in place afterwards."""
    project = "syncdup-" + uuid.uuid4().hex[:8]
    idx = _index(neo4j_server, "a@example.com")
    try:
        idx._read("DROP CONSTRAINT sync_state_key IF EXISTS")
        idx._read(
            "UNWIND $rows AS row CREATE (:SyncState {project: $p, scope: row.s, value: row.v})",
            p=project,
            rows=[
                {"s": "a@example.com", "v": '{"n": 1}'},
                {"s": "a@example.com", "v": '{"n": 2}'},
                {"s": "b@example.com", "v": '{"n": 3}'},
            ],
        )
        again = _index(neo4j_server, "a@example.com")
        try:
            assert again.sync_state(project) is None
            assert _index_state(neo4j_server, "b@example.com", project) == {"n": 3}
            assert "sync_state_key" in again.server_info()["constraints"]
        finally:
            again.close()
    finally:
        idx.drop_project(project)
        idx.close()


def _index_state(server: Any, scope: str, project: str) -> Any:
    idx = _index(server, scope)
    try:
        return idx.sync_state(project)
    finally:
        idx.close()
