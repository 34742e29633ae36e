"""Team mode with several clones: alice and bob each reindex their own clone into one Neo4j project.

File records are kept per indexing user (the index's scope = `Config.user_id`), so one user's
reindex never removes the files another user's clone reported. Each sees the curated memories
(pulled from a shared bare remote, indexed once) plus their own developmental ones, never the
other's, in search, context and trace.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ccmemory.app.service import Service
from ccmemory.core.config import Config
from ccmemory.core.model import Memory, Relation
from ccmemory.core.vault import Vault
from ccmemory.features.context import context_for
from ccmemory.index.base import Filters
from tests.conftest import git, init_git, make_memory
from tests.neo4j_server import Neo4jServer
from tests.test_index_conformance import ts

pytestmark = pytest.mark.neo4j

ALICE = "alice@example.com"
BOB = "bob@example.com"


@dataclass
class Team:
    project: str
    alice_root: Path
    bob_root: Path
    ids: dict[str, str]
    server: Neo4jServer

    def service(self, who: str) -> Service:
        from ccmemory.index.neo4j import Neo4jIndex

        root, user = (self.alice_root, ALICE) if who == "alice" else (self.bob_root, BOB)
        cfg = Config(
            project=self.project,
            backend="neo4j",
            neo4j_uri=self.server.uri,
            neo4j_user=self.server.user,
            neo4j_password=self.server.password,
            user_id=user,
        )
        return Service(Vault(root), cfg, Neo4jIndex.connect(cfg))


def commit_memory(root: Path, m: Memory, msg: str) -> Path:
    path = Vault(root).write_new(m)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", msg)
    return path


@pytest.fixture
def team(tmp_path: Path, neo4j_server: Neo4jServer) -> Iterator[Team]:
    remote = tmp_path / "remote.git"
    remote.mkdir()
    git(remote, "init", "-q", "--bare", "-b", "main")
    ids: dict[str, str] = {}
    # alice seeds the shared history: two curated memories on main
    a = init_git(tmp_path / "alice", ALICE)
    (a / ".ccmemory").mkdir()
    pg = make_memory(
        "decision", "Store sessions in Postgres", author=ALICE, created=ts(1), topics=["sessions"]
    )
    lint = make_memory("fact", "Run ruff before committing", created=ts(2), fields={"category": "convention"})
    ids |= {"pg": pg.id, "lint": lint.id}
    Vault(a).write_new(pg)
    commit_memory(a, lint, "curated memories")
    git(a, "remote", "add", "origin", str(remote))
    git(a, "push", "-q", "origin", "main")
    # bob clones it
    b = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(remote), str(b))
    git(b, "config", "user.email", BOB)
    git(b, "config", "user.name", "Bob")
    git(b, "config", "commit.gpgsign", "false")
    # each works on a feature branch with a developmental memory of their own
    git(a, "checkout", "-q", "-b", "alice/ttl")
    a_dev = make_memory(  # no frontmatter author: alice's clone's git says who added it
        "decision", "Expire sessions after one hour of idleness", created=ts(3), topics=["sessions"]
    )
    commit_memory(a, a_dev, "alice's question")
    git(b, "checkout", "-q", "-b", "bob/redis")
    b_dev = make_memory(
        "decision",
        "Move sessions to Redis instead of Postgres",
        author=BOB,
        created=ts(4),
        topics=["sessions"],
        supersedes=[pg.id],
        relations=[Relation("DEPENDS_ON", lint.id, "needs the lint gate")],
        body="Bob's secret plan: sessions in Redis.",
    )
    commit_memory(b, b_dev, "bob's decision")
    ids |= {"a_dev": a_dev.id, "b_dev": b_dev.id}
    t = Team("clones-" + uuid.uuid4().hex[:8], a, b, ids, neo4j_server)
    yield t
    with t.service("alice") as svc:
        svc.index.drop_project(t.project)  # type: ignore[attr-defined]


def search_ids(svc: Service, q: str) -> list[str]:
    return [h.memory.id for h in svc.search(q, mode="text").hits]


def assert_sees_own_only(svc: Service, ids: dict[str, str], own: str, other: str) -> None:
    every = {m.id for m in svc.index.query(svc.filters(include_superseded=True))}
    assert {ids["pg"], ids["lint"], ids[own]} <= every and ids[other] not in every
    hits = search_ids(svc, "sessions postgres redis idleness")
    assert ids[own] in hits and ids[other] not in hits
    ctx = context_for(svc, 4000)
    assert ids[own] in ctx.ids and ids[other] not in ctx.ids and ids[other] not in ctx.text
    assert svc.get(ids[other]) is None and svc.get(ids[own]) is not None


def memory_count(svc: Service) -> int:
    return int(svc.index.stats(svc.project)["memories"])


def test_two_clones_share_one_project(team: Team) -> None:
    ids = team.ids
    alice, bob = team.service("alice"), team.service("bob")
    try:
        assert alice.index.scope == ALICE and bob.index.scope == BOB  # type: ignore[attr-defined]
        r = alice.reindex()
        assert r.added == 3 and r.removed == 0
        r = bob.reindex()
        assert r.added == 3 and r.removed == 0  # bob's own records: alice's are not his to remove
        # curated memories indexed from both clones are one memory each
        assert memory_count(alice) == 4
        all_ids = [m.id for m in alice.index.query(Filters(team.project, include_superseded=True))]
        assert sorted(all_ids) == sorted(ids.values())
        assert alice.get(ids["pg"]).status == "curated"  # type: ignore[union-attr]
        assert alice.get(ids["a_dev"]).author == ALICE  # type: ignore[union-attr]  # git adder, alice's clone
        assert_sees_own_only(alice, ids, "a_dev", "b_dev")
        assert_sees_own_only(bob, ids, "b_dev", "a_dev")
        # bob's decision supersedes Postgres for bob only
        assert ids["pg"] in search_ids(alice, "sessions postgres")
        assert ids["pg"] not in search_ids(bob, "sessions postgres")
        # trace: alice sees no edge of bob's; bob sees his supersession
        tr = alice.trace(ids["pg"])
        assert tr is not None and all(ids["b_dev"] not in (s.edge.src, s.edge.dst) for s in tr.steps)
        tr = bob.trace(ids["pg"])
        assert tr is not None and "SUPERSEDED_BY" in {s.label for s in tr.steps}
        # alternating reindexes, with and without changes, never delete the other's memories
        for _ in range(2):
            alice.reindex()
            bob.reindex()
        assert memory_count(alice) == 4
        extra = make_memory("gotcha", "Idle timers drift on laptops", created=ts(5), author=ALICE)
        commit_memory(team.alice_root, extra, "another one")
        assert alice.reindex().added == 1
        assert bob.get(ids["b_dev"]) is not None and memory_count(bob) == 5
        # a full reindex forgets only alice's records, then brings them back
        r = alice.reindex(full=True)
        assert r.added == 4 and memory_count(alice) == 5
        assert bob.get(ids["b_dev"]) is not None and bob.get(ids["b_dev"]).path  # type: ignore[union-attr]
        # bob deletes his memory: gone for bob; alice's untouched
        next(p for p in Vault(team.bob_root).iter_paths() if "redis" in p.name).unlink()
        assert bob.reindex().removed == 1
        assert bob.get(ids["b_dev"]) is None and memory_count(bob) == 4
        assert ids["pg"] in search_ids(bob, "sessions postgres")  # no longer superseded
        assert alice.get(ids["a_dev"]) is not None and alice.get(extra.id) is not None
        assert alice.index.file_problems(team.project) == [] and bob.index.file_problems(team.project) == []
    finally:
        alice.close()
        bob.close()


def test_curated_memory_pulled_into_both_clones_appears_once(team: Team) -> None:
    ids = team.ids
    alice, bob = team.service("alice"), team.service("bob")
    try:
        alice.reindex()
        bob.reindex()
        # bob adds a curated memory on main and pushes; alice pulls it into her branch
        git(team.bob_root, "checkout", "-q", "main")
        shared = make_memory("fact", "Sessions table is partitioned by month", created=ts(6), author=BOB)
        commit_memory(team.bob_root, shared, "shared fact")
        git(team.bob_root, "push", "-q", "origin", "main")
        git(team.bob_root, "checkout", "-q", "bob/redis")
        git(team.bob_root, "merge", "-q", "--no-edit", "main")
        bob.reindex()
        git(team.alice_root, "fetch", "-q", "origin", "main:main")
        git(team.alice_root, "merge", "-q", "--no-edit", "main")
        r = alice.reindex()
        assert r.added == 1
        for svc in (alice, bob):
            hits = search_ids(svc, "sessions partitioned month")
            assert hits.count(shared.id) == 1
            got = svc.get(shared.id)
            assert got is not None and got.status == "curated"
        assert memory_count(alice) == 5
        # bob drops his clone's records entirely: the shared memory stays, served from alice's file
        bob.index.clear(team.project)
        assert alice.get(shared.id) is not None and alice.get(shared.id).status == "curated"  # type: ignore[union-attr]
        assert alice.get(ids["b_dev"]) is None and bob.get(ids["b_dev"]) is None
        assert memory_count(alice) == 4
        bob.reindex()
        assert bob.get(ids["b_dev"]) is not None and memory_count(alice) == 5
    finally:
        alice.close()
        bob.close()


def test_curated_wins_over_another_clones_developmental_copy(team: Team) -> None:
    """Bob's main has a memory that alice still has on her branch only: the curated copy is served."""
    alice, bob = team.service("alice"), team.service("bob")
    try:
        a_path = next(p for p in Vault(team.alice_root).iter_paths() if "idleness" in p.name)
        # alice pushes her branch; bob merges it into his main (not pushed, alice's main lags)
        git(team.alice_root, "push", "-q", "origin", "alice/ttl")
        git(team.bob_root, "checkout", "-q", "main")
        git(team.bob_root, "fetch", "-q", "origin")
        git(team.bob_root, "merge", "-q", "--no-edit", "origin/alice/ttl")
        alice.reindex()
        assert alice.get(team.ids["a_dev"]).status == "developmental"  # type: ignore[union-attr]
        assert bob.get(team.ids["a_dev"]) is None
        bob.reindex()
        got = bob.get(team.ids["a_dev"])
        assert got is not None and got.status == "curated"
        # and alice's next reindex of her (developmental) copy does not flip it back
        st = a_path.stat()
        os.utime(a_path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        assert alice.reindex().unchanged >= 1
        got = alice.get(team.ids["a_dev"])
        assert got is not None and got.status == "curated" and got.author == ALICE
        assert memory_count(alice) == 3  # pg, lint, a_dev: bob's main has no redis memory
    finally:
        alice.close()
        bob.close()
