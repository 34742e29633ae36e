"""Team mode and faults on a real Neo4j server.

- Two users and two projects on one server: curated memories are visible to everyone in the
  project, developmental ones only to their author (search, context, trace), and projects never
  see each other's memories.
- Faults: wrong password, nothing listening, the connection lost in the middle of a reindex
  (through a TCP proxy we cut): clear errors naming the URI, memory files untouched, and the
  next reindex converges to exactly what a full rebuild gives.
"""

from __future__ import annotations

import contextlib
import hashlib
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccmemory.app.service import Service
from ccmemory.app.sync import reindex
from ccmemory.core.config import Config
from ccmemory.core.model import Relation
from ccmemory.core.vault import Vault
from ccmemory.features.context import context_for
from ccmemory.index.base import Filters, IndexUnavailable
from ccmemory.index.sqlite import SQLiteIndex
from tests.conftest import RunCli, git, init_git, make_memory
from tests.neo4j_server import Neo4jServer
from tests.test_index_conformance import comparable_dump, ts

pytestmark = pytest.mark.neo4j

ALICE = "alice@example.com"
BOB = "bob@example.com"


def neo(server: Neo4jServer, uri: str | None = None, password: str | None = None) -> Any:
    from ccmemory.index.neo4j import Neo4jIndex

    return Neo4jIndex(uri or server.uri, server.user, password or server.password, connection_timeout=5)


def service(vault: Vault, project: str, user: str, server: Neo4jServer) -> Service:
    cfg = Config(
        project=project,
        backend="neo4j",
        neo4j_uri=server.uri,
        neo4j_user=server.user,
        neo4j_password=server.password,
        user_id=user,
    )
    return Service(vault, cfg, neo(server))


# --- team mode -------------------------------------------------------------------------------


@pytest.fixture
def team(tmp_path: Path, neo4j_server: Neo4jServer) -> Iterator[dict[str, Any]]:
    uid = uuid.uuid4().hex[:8]
    alpha, beta = f"alpha-{uid}", f"beta-{uid}"
    # project alpha: alice's curated decision on main; bob's developmental one on a branch
    ra = init_git(tmp_path / "alpha", ALICE)
    (ra / ".ccmemory").mkdir()
    va = Vault(ra)
    pg = make_memory(
        "decision", "Store sessions in Postgres", author=ALICE, created=ts(1), topics=["sessions"]
    )
    va.write_new(pg)
    git(ra, "add", ".")
    git(ra, "commit", "-q", "-m", "curated")
    git(ra, "checkout", "-q", "-b", "bob/redis")
    redis = make_memory(
        "decision",
        "Store sessions in Redis instead of Postgres",
        author=BOB,
        created=ts(2),
        topics=["sessions"],
        supersedes=[pg.id],
        relations=[Relation("DEPENDS_ON", pg.id, "migrates its data")],
        body="Bob's secret plan: move sessions to Redis.",
    )
    va.write_new(redis)
    note = make_memory(
        "preference",
        "Alice prefers short session lifetimes",
        author=ALICE,
        created=ts(3),
        topics=["sessions"],
    )
    va.write_new(note)
    # project beta: one curated memory that must never show up in alpha
    rb = init_git(tmp_path / "beta", ALICE)
    (rb / ".ccmemory").mkdir()
    vb = Vault(rb)
    other = make_memory("fact", "Beta keeps sessions in memcached", author=ALICE, created=ts(4))
    vb.write_new(other)
    git(rb, "add", ".")
    git(rb, "commit", "-q", "-m", "beta")

    svcs = {
        ("alpha", ALICE): service(va, alpha, ALICE, neo4j_server),
        ("alpha", BOB): service(va, alpha, BOB, neo4j_server),
        ("beta", ALICE): service(vb, beta, ALICE, neo4j_server),
        ("beta", BOB): service(vb, beta, BOB, neo4j_server),
    }
    svcs[("alpha", ALICE)].reindex()
    svcs[("beta", BOB)].reindex()
    try:
        yield {"svc": svcs, "pg": pg.id, "redis": redis.id, "note": note.id, "other": other.id}
    finally:
        for (_proj, user), svc in svcs.items():
            if user == ALICE:
                svc.index.clear(svc.project)
            svc.close()


def search_ids(svc: Service, q: str) -> list[str]:
    return [h.memory.id for h in svc.search(q, mode="text").hits]


def test_developmental_memory_does_not_leak(team: dict[str, Any]) -> None:
    s = team["svc"]
    alice, bob = s[("alpha", ALICE)], s[("alpha", BOB)]
    pg, redis, note = team["pg"], team["redis"], team["note"]

    # search: alice never sees bob's developmental memory, and so Postgres is not superseded
    a = search_ids(alice, "sessions redis postgres")
    assert redis not in a and pg in a and note in a
    b = search_ids(bob, "sessions redis postgres")
    assert redis in b and note not in b
    assert pg not in b  # superseded by bob's own (visible to him) memory
    assert pg in [m.id for m in bob.index.query(bob.filters(include_superseded=True))]

    # context: the same rule
    ctx_a, ctx_b = context_for(alice, 4000), context_for(bob, 4000)
    assert redis not in ctx_a.ids and redis not in ctx_a.text and "secret plan" not in ctx_a.text
    assert redis in ctx_b.ids and note not in ctx_b.ids

    # trace: alice's trace of the Postgres decision shows no edge from bob's memory
    tr_a = alice.trace(pg)
    assert tr_a is not None
    assert all(redis not in (st.edge.src, st.edge.dst) for st in tr_a.steps)
    assert redis not in tr_a.nodes and [m.id for m in tr_a.chain] == [pg]
    tr_b = bob.trace(pg)
    assert tr_b is not None
    assert {st.label for st in tr_b.steps} >= {"SUPERSEDED_BY", "DEPENDED_ON_BY"}
    assert [m.id for m in tr_b.chain] == [pg, redis]

    # direct lookups by id respect the rule too
    assert alice.get(redis) is None and bob.get(redis) is not None


def test_projects_are_isolated(team: dict[str, Any]) -> None:
    s = team["svc"]
    for user in (ALICE, BOB):
        alpha, beta = s[("alpha", user)], s[("beta", user)]
        assert team["other"] not in search_ids(alpha, "sessions memcached")
        assert search_ids(beta, "sessions memcached") == [team["other"]]
        assert {m.id for m in beta.index.query(Filters(beta.project, include_superseded=True))} == {
            team["other"]
        }
        assert alpha.get(team["other"]) is None and beta.get(team["pg"]) is None
        assert team["other"] not in context_for(alpha, 4000).ids
    assert s[("alpha", ALICE)].index.stats(s[("alpha", ALICE)].project)["memories"] == 3
    assert s[("beta", ALICE)].index.stats(s[("beta", ALICE)].project)["memories"] == 1


# --- faults ----------------------------------------------------------------------------------


def test_wrong_password_names_uri_and_cause(neo4j_server: Neo4jServer) -> None:
    with pytest.raises(IndexUnavailable) as err:
        neo(neo4j_server, password="definitely-wrong")
    msg = str(err.value)
    assert neo4j_server.uri in msg and "authentication failed" in msg


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_server_down_names_uri(neo4j_server: Neo4jServer) -> None:
    uri = f"bolt://127.0.0.1:{free_port()}"
    with pytest.raises(IndexUnavailable) as err:
        neo(neo4j_server, uri=uri)
    assert uri in str(err.value) and "unreachable" in str(err.value)


def test_new_writes_the_file_when_neo4j_is_unreachable(tmp_path: Path, run_cli: RunCli) -> None:
    root = init_git(tmp_path / "r")
    run_cli(root, "init")
    env = {
        "CCMEMORY_BACKEND": "neo4j",
        "CCMEMORY_NEO4J_URI": f"bolt://127.0.0.1:{free_port()}",
        "CCMEMORY_NEO4J_PASSWORD": "x" * 12,
    }
    proc = run_cli(root, "new", "decision", "Written while Neo4j is down", env=env, check=False)
    written = list((root / ".ccmemory").rglob("*written-while-neo4j-is-down*.md"))
    assert len(written) == 1, proc.stdout + proc.stderr
    assert "Written while Neo4j is down" in written[0].read_text(encoding="utf-8")


class CuttableProxy:
    """A TCP forwarder to the real server whose connections we can cut at will."""

    def __init__(self, port: int) -> None:
        self.target = ("127.0.0.1", port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.up = True
        self.socks: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.up:
                client.close()
                continue
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.socks += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.up = False
        with self.lock:
            for s in self.socks:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
            self.socks.clear()

    def restore(self) -> None:
        self.up = True

    def close(self) -> None:
        self.cut()
        self.listener.close()


def file_hashes(vault: Vault) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in vault.iter_paths()}


def test_connection_lost_mid_reindex_then_converges(
    neo4j_server: Neo4jServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ccmemory.app.sync import reindex as sync_reindex
    from ccmemory.index import neo4j as neo4j_mod

    root = init_git(tmp_path / "r")
    (root / ".ccmemory").mkdir()
    vault = Vault(root)
    mems = [
        make_memory("fact", f"Fact number {n} about caching", created=ts(1 + n % 20), topics=[f"t{n % 7}"])
        for n in range(2500)
    ]
    for n, m in enumerate(mems[1:], 1):
        if n % 10 == 0:
            m.supersedes = [mems[n - 1].id]
    for m in mems:
        vault.write_new(m)
    before = file_hashes(vault)

    port = int(neo4j_server.uri.rsplit(":", 1)[1])
    proxy = CuttableProxy(port)
    project = "fault-" + uuid.uuid4().hex[:8]
    idx = neo4j_mod.Neo4jIndex(f"bolt://127.0.0.1:{proxy.port}", neo4j_server.user, neo4j_server.password)
    try:
        # cut the connection inside the second batch's transaction (sync applies 2000 files a batch)
        real_derive = neo4j_mod.Neo4jIndex._derive
        calls = {"n": 0}

        def derive_then_cut(self: Any, *args: Any, **kwargs: Any) -> None:
            calls["n"] += 1
            real_derive(self, *args, **kwargs)
            if calls["n"] == 2:
                proxy.cut()

        monkeypatch.setattr(neo4j_mod.Neo4jIndex, "_derive", derive_then_cut)
        with pytest.raises(IndexUnavailable) as err:
            sync_reindex(vault, idx, project)
        assert f"127.0.0.1:{proxy.port}" in str(err.value)
        assert file_hashes(vault) == before  # files untouched

        # the first batch committed, the second rolled back: nothing half-written
        direct = neo(neo4j_server)
        assert direct.count(Filters(project, include_superseded=True)) == 2000
        assert len(direct.file_states(project)) == 2000

        monkeypatch.setattr(neo4j_mod.Neo4jIndex, "_derive", real_derive)
        proxy.restore()
        rep = sync_reindex(vault, idx, project)
        assert rep.added == 500 and not rep.errors
        ref = SQLiteIndex(tmp_path / "ref.db")
        reindex(vault, ref, project, full=True)
        assert comparable_dump(direct.dump(project)) == comparable_dump(ref.dump(project))
        assert direct.count(Filters(project, include_superseded=True)) == 2500
        ref.close()
        direct.clear(project)
        direct.close()
    finally:
        idx.close()
        proxy.close()
