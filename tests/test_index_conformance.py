"""One index contract, two backends: the same vault indexed into SQLite and into a real Neo4j must
give the same answers for every query and filter the product uses.

`index` is parametrized over both backends (the Neo4j case is marked `neo4j`); each test asserts
concrete behaviour. `test_backends_agree` indexes one rich vault into both and compares every
read method over a grid of filters.
"""

from __future__ import annotations

import itertools
import random
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ccmemory.app.sync import reindex
from ccmemory.core.model import Relation
from ccmemory.core.vault import Vault
from ccmemory.index.base import Filters, Index
from ccmemory.index.sqlite import SQLiteIndex
from tests.conftest import git, init_git, make_memory
from tests.neo4j_server import Neo4jServer

ALICE = "alice@example.com"
BOB = "bob@example.com"
DANGLING = "01JZZZZZZZZZZZZZZZZZZZZZZZ"


def neo4j_index(server: Neo4jServer) -> Index:
    from ccmemory.index.neo4j import Neo4jIndex

    return Neo4jIndex(server.uri, server.user, server.password)


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Index, str]]:
    """(index, project): a fresh project on a fresh SQLite file or on the shared Neo4j server."""
    project = "p-" + uuid.uuid4().hex[:10]
    if request.param == "sqlite":
        idx: Index = SQLiteIndex(tmp_path / "index.db")
    else:
        idx = neo4j_index(request.getfixturevalue("neo4j_server"))
    try:
        yield idx, project
    finally:
        idx.clear(project)
        idx.close()


@dataclass
class Scenario:
    root: Path
    vault: Vault
    ids: dict[str, str]  # name -> memory id


def ts(day: int, hour: int = 12) -> datetime:
    return datetime(2026, 11, day, hour, 0, 0, tzinfo=UTC)


def build_scenario(root: Path) -> Scenario:
    """A git repo: curated memories on main, a developmental branch, invalid and duplicate files."""
    init_git(root, ALICE)
    (root / ".ccmemory").mkdir()
    vault = Vault(root)
    ids: dict[str, str] = {}

    def add(name: str, mtype: str, title: str, **kw: Any) -> Path:
        m = make_memory(mtype, title, **kw)
        ids[name] = m.id
        return vault.write_new(m)

    add(
        "cookies",
        "decision",
        "Store auth tokens in httpOnly cookies",
        created=ts(1),
        topics=["auth", "Security"],
        files=["src/auth/token.ts"],
        confidence=0.95,
        author=ALICE,
        session="s-1",
        fields={"rationale": "XSS can read localStorage", "options_considered": ["localStorage", "cookie"]},
    )
    add(
        "local",
        "decision",
        "Keep auth tokens in localStorage",
        created=ts(2),
        topics=["auth"],
        files=["src/auth/store.ts"],
        confidence=0.5,
        body="Simple to implement; tokens in localStorage.",
    )
    add(
        "redis",
        "fact",
        "Sessions are cached in Redis",
        created=ts(3),
        topics=["cache"],
        files=["src/cache/redis.py"],
        fields={"category": "architecture"},
    )
    add(
        "correction",
        "correction",
        "Tokens expire after one hour, not a day",
        created=ts(4),
        topics=["auth", "tokens"],
        files=["src/auth/token.ts"],
        fields={"wrong_belief": "a day", "right_belief": "one hour", "severity": "significant"},
    )
    add(
        "failed",
        "failed_approach",
        "Retry the migration in a loop",
        created=ts(5),
        topics=["deploy"],
        files=["migrations/"],
        fields={"approach": "loop", "outcome": "locks", "lesson": "run migrations once at deploy"},
        confidence=1,
    )
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "curated memories")
    # the newer decision supersedes the localStorage one and depends on the cookie one
    add(
        "rotate",
        "decision",
        "Rotate refresh tokens on every use",
        created=ts(6),
        topics=["auth", "tokens"],
        files=["src/auth/refresh.ts"],
        supersedes=[ids["local"]],
        relations=[
            Relation("DEPENDS_ON", ids["cookies"], "needs the same-site cookie"),
            Relation("CITES", DANGLING),
        ],
        author=ALICE,
    )
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "rotate")
    # developmental: on a feature branch, authored by bob, never merged
    git(root, "checkout", "-q", "-b", "feature/x")
    add(
        "bob_dev",
        "insight",
        "Cookies break the mobile client",
        created=ts(7),
        topics=["auth", "mobile"],
        files=["src/mobile/api.ts"],
        author=BOB,
        supersedes=[ids["cookies"]],
        fields={"category": "analysis", "implications": "mobile needs bearer tokens"},
    )
    add(
        "alice_dev",
        "question",
        "Should refresh tokens be bound to the device?",
        created=ts(8),
        topics=["tokens"],
        fields={"question": "bind to device?", "answer": ""},
        relations=[Relation("RELATES_TO", ids["rotate"], None)],
        author=ALICE,
    )
    # an invalid file and a duplicate id (the later path loses)
    (vault.dir / "facts" / "2026-11-09-broken.md").write_text("---\nid: [broken\n---\n", encoding="utf-8")
    src = next(p for p in vault.iter_paths() if "sessions-are-cached" in p.name)
    shutil.copy(src, src.with_name("zz-" + src.name))
    return Scenario(root, vault, ids)


@pytest.fixture
def scenario(tmp_path: Path) -> Scenario:
    return build_scenario(tmp_path / "repo")


def ids_of(mems: Any) -> list[str]:
    return [m.id for m in mems]


# --- behaviour, on each backend --------------------------------------------------------------


def test_reindex_and_filters(backend: tuple[Index, str], scenario: Scenario) -> None:
    idx, p = backend
    rep = reindex(scenario.vault, idx, p)
    i = scenario.ids
    names = sorted(e.path.rsplit("/", 1)[-1] for e in rep.errors)
    assert len(names) == 2 and names[0] == "2026-11-09-broken.md" and names[1].startswith("zz-")
    # what a search's notice names: the invalid file only (the duplicate is valid, and loses)
    assert idx.invalid_files(p, 3) == (1, [".ccmemory/facts/2026-11-09-broken.md"])
    assert idx.invalid_files(p, 0) == (1, [])
    everything = idx.query(Filters(p, include_superseded=True))
    assert len(everything) == 8
    # newest first
    assert ids_of(everything)[:2] == [i["alice_dev"], i["bob_dev"]]
    # superseded memories are dropped unless asked for
    default = ids_of(idx.query(Filters(p)))
    assert i["local"] not in default and i["cookies"] not in default
    assert idx.superseded_ids(Filters(p)) == {i["local"], i["cookies"]}
    # team rule: alice does not see bob's developmental memory, nor its superseding effect
    alice = ids_of(idx.query(Filters(p, viewer=ALICE)))
    assert i["bob_dev"] not in alice and i["cookies"] in alice and i["alice_dev"] in alice
    bob = ids_of(idx.query(Filters(p, viewer=BOB)))
    assert i["bob_dev"] in bob and i["alice_dev"] not in bob and i["cookies"] not in bob
    # status, types, topics (normalised), files (exact and folder prefix), time range
    assert set(ids_of(idx.query(Filters(p, status="developmental")))) == {i["bob_dev"], i["alice_dev"]}
    assert ids_of(idx.query(Filters(p, types=["correction", "fact"]))) == [i["correction"], i["redis"]]
    assert ids_of(idx.query(Filters(p, topics=["SECURITY"], include_superseded=True))) == [i["cookies"]]
    assert ids_of(idx.query(Filters(p, files=["src/auth/token.ts"], include_superseded=True))) == [
        i["correction"],
        i["cookies"],
    ]
    assert set(ids_of(idx.query(Filters(p, files=["src/auth/"], include_superseded=True)))) == {
        i["cookies"],
        i["local"],
        i["correction"],
        i["rotate"],
    }
    assert ids_of(idx.query(Filters(p, since=ts(3), until=ts(5)))) == [
        i["failed"],
        i["correction"],
        i["redis"],
    ]
    assert idx.count(Filters(p, include_superseded=True)) == 8
    assert ids_of(idx.query(Filters(p, include_superseded=True), limit=2, offset=1)) == [
        i["bob_dev"],
        i["rotate"],
    ]


def test_edges_trace_and_dangling(backend: tuple[Index, str], scenario: Scenario) -> None:
    idx, p = backend
    reindex(scenario.vault, idx, p)
    i = scenario.ids
    edges = {(e.src, e.type, e.dst, e.reason) for e in idx.edges(p, [i["rotate"]])}
    assert edges == {
        (i["rotate"], "SUPERSEDES", i["local"], None),
        (i["rotate"], "DEPENDS_ON", i["cookies"], "needs the same-site cookie"),
        (i["alice_dev"], "RELATES_TO", i["rotate"], None),
    }
    assert [(e.src, e.dst) for e in idx.dangling(p)] == [(i["rotate"], DANGLING)]
    # the dangling target arrives later: the edge becomes a real one, no longer dangling
    target = make_memory("reference", "The cookie RFC", id=DANGLING, created=ts(9), fields={"uri": "rfc6265"})
    scenario.vault.write_new(target)
    reindex(scenario.vault, idx, p)
    assert idx.dangling(p) == []
    assert any(e.dst == DANGLING for e in idx.edges(p, [i["rotate"]]))
    # and when it goes away again, the edge is dangling again
    next(pth for pth in scenario.vault.iter_paths() if "cookie-rfc" in pth.name).unlink()
    reindex(scenario.vault, idx, p)
    assert [(e.src, e.dst) for e in idx.dangling(p)] == [(i["rotate"], DANGLING)]


def test_text_search_and_resolve(backend: tuple[Index, str], scenario: Scenario) -> None:
    idx, p = backend
    reindex(scenario.vault, idx, p)
    i = scenario.ids
    hits = idx.text_search("redis sessions", Filters(p))
    assert hits[0][0] == i["redis"]
    # syntax is never interpreted: quotes, operators, wildcards, Lucene/FTS5 keywords
    for nasty in ('"redis', "redis AND (", "*:*", "title:redis", "NOT redis", "re~dis^2 \\", "-redis", "a/b"):
        idx.text_search(nasty, Filters(p))
    assert idx.text_search("*", Filters(p)) == []
    # filters apply to text search too
    assert idx.text_search("mobile cookies", Filters(p, viewer=ALICE, include_superseded=True)) and all(
        mid != i["bob_dev"] for mid, _ in idx.text_search("mobile", Filters(p, viewer=ALICE))
    )
    assert idx.resolve(p, i["redis"].lower()) == [i["redis"]]
    assert idx.resolve(p, i["redis"][:8]) == sorted(x for x in i.values() if x.startswith(i["redis"][:8]))
    path = idx.get(p, [i["redis"]])[0].path
    assert idx.resolve(p, path) == [i["redis"]]
    assert idx.resolve(p, "zz") == []
    # which of a prompt's analysed words the vault holds (prompt recall's gate), after a search
    # (the Neo4j index keeps the frequencies it read) and on a fresh connection alike
    from ccmemory.text.analyzer import query_terms

    words = query_terms("redis sessions for the kubernetes autoscaler")
    df = idx.doc_freqs(p, words)
    assert set(df) == set(words) and {t for t, n in df.items() if n > 0} == set(query_terms("redis sessions"))
    assert idx.doc_freqs(p, []) == {} and not any(idx.doc_freqs("p-nothing-here", words).values())


def test_related_by_topic_or_file(backend: tuple[Index, str], scenario: Scenario) -> None:
    idx, p = backend
    reindex(scenario.vault, idx, p)
    i = scenario.ids
    rel = idx.related_by_topic_or_file(Filters(p, include_superseded=True), [i["cookies"]])
    # correction shares topic auth and file token.ts: two links
    assert rel[0] == (i["correction"], i["cookies"], 2)
    assert (i["redis"], i["cookies"], 1) not in rel


def test_vectors(backend: tuple[Index, str], scenario: Scenario) -> None:
    idx, p = backend
    reindex(scenario.vault, idx, p)
    emb = "fake-" + p  # vectors are shared by content hash across projects: our own embedder name
    missing = idx.missing_vectors(p, emb)
    assert len(missing) == 8
    vecs = {h: _fake_vector(text) for h, text in missing}
    idx.store_vectors(emb, 8, list(vecs.items()))
    assert idx.missing_vectors(p, emb) == []
    cookie_text = next(t for _, t in missing if t.startswith("Store auth tokens in httpOnly cookies"))
    q = _fake_vector(cookie_text)
    hits = idx.vector_search(emb, q, Filters(p, include_superseded=True), limit=3)
    assert hits[0][0] == scenario.ids["cookies"]
    assert len(hits) == 3 and hits[0][1] >= hits[1][1] >= hits[2][1]
    alice = idx.vector_search(emb, q, Filters(p, viewer=ALICE), limit=10)
    assert scenario.ids["bob_dev"] not in [m for m, _ in alice]
    # the default filter drops superseded memories; dropping the superseding file brings
    # its target back (no stale cached mask)
    plain = [m for m, _ in idx.vector_search(emb, q, Filters(p), limit=10)]
    assert len(plain) == 6 and scenario.ids["cookies"] not in plain and scenario.ids["local"] not in plain
    bob = next(x for x in scenario.vault.iter_paths() if "mobile-client" in x.name)
    bob.unlink()
    reindex(scenario.vault, idx, p)
    plain = [m for m, _ in idx.vector_search(emb, q, Filters(p), limit=10)]
    assert scenario.ids["cookies"] in plain and scenario.ids["local"] not in plain


def _fake_vector(text: str) -> list[float]:
    """A deterministic bag-of-letters embedding, L2-normalised (8 wide)."""
    v = [0.0] * 8
    for n, ch in enumerate(text.lower()):
        v[(ord(ch) + n % 3) % 8] += 1.0
    norm = sum(x * x for x in v) ** 0.5 or 1.0
    return [x / norm for x in v]


def test_incremental_edits_converge(backend: tuple[Index, str], scenario: Scenario, tmp_path: Path) -> None:
    idx, p = backend
    reindex(scenario.vault, idx, p)
    # edit, rename, delete, fix the broken file; then compare with a full rebuild in SQLite
    paths = sorted(scenario.vault.iter_paths())
    paths[0].rename(paths[0].with_name("renamed-" + paths[0].name))
    paths[1].unlink()
    broken = next(x for x in paths if x.name == "2026-11-09-broken.md")
    broken.unlink()
    scenario.vault.write_new(
        make_memory("gotcha", "Redis keys expire silently", created=ts(10), topics=["cache"])
    )
    reindex(scenario.vault, idx, p)
    assert idx.invalid_files(p, 3) == (0, [])
    ref = SQLiteIndex(tmp_path / "ref.db")
    reindex(scenario.vault, ref, p, full=True)
    assert comparable_dump(idx.dump(p)) == comparable_dump(ref.dump(p))
    ref.close()


def comparable_dump(d: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in d.items() if k != "fts_total"}  # global count: other projects share Neo4j
    out["file_rows"] = sorted(out["file_rows"])
    return out


# --- the two backends agree ------------------------------------------------------------------


@pytest.mark.neo4j
def test_backends_agree(neo4j_server: Neo4jServer, scenario: Scenario, tmp_path: Path) -> None:
    p = "agree-" + uuid.uuid4().hex[:8]
    emb = "fake-" + p
    lite = SQLiteIndex(tmp_path / "lite.db")
    neo = neo4j_index(neo4j_server)
    try:
        for idx in (lite, neo):
            reindex(scenario.vault, idx, p)
        assert comparable_dump(neo.dump(p)) == comparable_dump(lite.dump(p))
        i = scenario.ids
        grid = itertools.product(
            (None, ["decision"], ["decision", "insight", "question"]),
            (None, "curated", "developmental"),
            (None, ALICE, BOB, "carol@example.com"),
            (None, ["auth"], ["tokens", "cache"]),
            (None, ["src/auth/"], ["src/auth/token.ts", "migrations/"]),
            (False, True),
            ((None, None), (ts(2), ts(7))),
        )
        combos = list(grid)
        random.Random(1234).shuffle(combos)
        checked = 0
        for types, status, viewer, topics, files, sup, (since, until) in combos[:60]:
            f = Filters(
                p,
                types=types,
                status=status,
                viewer=viewer,
                topics=topics,
                files=files,
                include_superseded=sup,
                since=since,
                until=until,
            )
            assert ids_of(neo.query(f)) == ids_of(lite.query(f)), f
            assert neo.count(f) == lite.count(f), f
            assert neo.superseded_ids(f) == lite.superseded_ids(f), f
            some = [i["cookies"], i["rotate"]]
            assert neo.related_by_topic_or_file(f, some) == lite.related_by_topic_or_file(f, some), f
            checked += 1
        assert checked == 60
        full = [neo.query(Filters(p, include_superseded=True))]
        assert [vars(m) for m in full[0]] == [
            vars(m) for m in lite.query(Filters(p, include_superseded=True))
        ]
        all_ids = sorted(i.values())
        assert neo.edges(p, all_ids) == lite.edges(p, all_ids)
        assert neo.dangling(p) == lite.dangling(p)
        assert neo.file_problems(p) == lite.file_problems(p)
        # (stemming and stopwords differ slightly between FTS5/porter and Lucene/english, e.g.
        # porter stems "one" to "on", which Lucene drops as a stopword: queries avoid those)
        for q in ("auth tokens", "redis", "mobile cookies", "migration loop", "expire hour"):
            for f in (Filters(p), Filters(p, viewer=ALICE), Filters(p, include_superseded=True)):
                assert {m for m, _ in neo.text_search(q, f)} == {m for m, _ in lite.text_search(q, f)}, q
        for idx in (lite, neo):
            todo = idx.missing_vectors(p, emb)
            idx.store_vectors(emb, 8, [(h, _fake_vector(t)) for h, t in todo])
        q = _fake_vector("rotate refresh tokens")
        for f in (Filters(p), Filters(p, viewer=BOB, include_superseded=True)):
            a = neo.vector_search(emb, q, f, limit=5)
            b = lite.vector_search(emb, q, f, limit=5)
            assert [m for m, _ in a] == [m for m, _ in b]
            assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)
        s1, s2 = neo.stats(p), lite.stats(p)
        for key in ("memories", "by_type", "by_status", "relations", "invalid_files"):
            assert s1[key] == s2[key], key
    finally:
        neo.clear(p)
        neo.close()
        lite.close()


def test_related_ignores_crowded_topics_and_files(backend: tuple[Index, str], tmp_path: Path) -> None:
    """A topic or file shared by more than MAX_SHARED memories of the project links nothing."""
    from ccmemory.index.base import MAX_SHARED

    idx, p = backend
    root = tmp_path / "crowd"
    (root / ".ccmemory").mkdir(parents=True)
    vault = Vault(root)
    a = make_memory("decision", "Anchor", created=ts(1), topics=["crowd", "fifty", "pair"], files=["big.py"])
    b = make_memory("fact", "Pair partner", created=ts(2), topics=["crowd", "pair"])
    vault.write_new(a)
    vault.write_new(b)
    fillers = []
    for n in range(MAX_SHARED):  # with a and b: crowd 52, big.py 51, fifty exactly 50
        m = make_memory(
            "fact",
            f"Filler {n}",
            created=ts(3, n % 24),
            topics=["crowd", "fifty"] if n < MAX_SHARED - 1 else ["crowd"],
            files=["big.py"],
        )
        vault.write_new(m)
        fillers.append(m.id)
    other = p + "-other"
    try:
        reindex(vault, idx, p)
        reindex(vault, idx, other)  # the same topics in another project do not add up
        rel = idx.related_by_topic_or_file(Filters(p), [a.id], limit=100)
        expected = sorted([(b.id, a.id, 1)] + [(f, a.id, 1) for f in fillers[:-1]])
        assert rel == expected
        assert fillers[-1] not in {o for o, _, _ in rel}
        # from the pair partner: only the anchor, via `pair` (crowd is ignored)
        assert idx.related_by_topic_or_file(Filters(p), [b.id]) == [(a.id, b.id, 1)]
        # the limit still applies after ranking
        assert idx.related_by_topic_or_file(Filters(p), [a.id], limit=3) == expected[:3]
    finally:
        idx.clear(other)


def test_projects_links_and_applies_to(backend: tuple[Index, str], tmp_path: Path) -> None:
    """The cross-project capability (issue 18): projects, RELATED_TO links, APPLIES_TO."""
    idx, p = backend
    other, target = p + "-other", p + "-target"
    root = init_git(tmp_path / "apply", ALICE)
    (root / ".ccmemory").mkdir()
    vault = Vault(root)
    shared = make_memory("fact", "Log JSON lines", author=ALICE, created=ts(1), applies_to=[target, other])
    path = vault.write_new(shared)
    plain = vault.write_new(make_memory("fact", "Plain fact", author=ALICE, created=ts(2)))
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "curated")
    git(root, "checkout", "-q", "-b", "wip")
    draft = make_memory(
        "decision", "Bob's draft for the target", author=BOB, created=ts(3), applies_to=[target]
    )
    vault.write_new(draft)
    try:
        reindex(vault, idx, p)
        assert p in idx.projects()
        assert [m.id for m in idx.applying_to(target, Filters(project=p))] == [draft.id, shared.id]
        assert [m.id for m in idx.applying_to(target, Filters(project=p, viewer=ALICE))] == [shared.id]
        assert [m.id for m in idx.applying_to(target, Filters(project=p, viewer=BOB))] == [
            draft.id,
            shared.id,
        ]
        assert [m.id for m in idx.applying_to(other, Filters(project=p, types=["fact"]))] == [shared.id]
        assert idx.applying_to(p + "-nobody", Filters(project=p)) == []
        assert idx.get(p, [shared.id])[0].fields["applies_to"] == [target, other]
        assert p in idx.projects_applying_to(target) and p in idx.projects_applying_to(other)
        assert p not in idx.projects_applying_to(p) and idx.projects_applying_to(p + "-nobody") == []
        # links: stored once, read from either side, replaced as a whole
        idx.link_projects(p, [(other, "technical"), (target, "business")])
        assert idx.related_projects(p) == [(other, "technical"), (target, "business")]
        assert idx.related_projects(other) == [(p, "technical")]
        assert {other, target} <= set(idx.projects())
        idx.link_projects(p, [(target, "shared_resource")])
        assert idx.related_projects(p) == [(target, "shared_resource")]
        assert idx.related_projects(other) == []
        # an edited file drops its applies_to: the index follows
        path.write_text(path.read_text().replace("applies_to:", "old_applies_to:"))
        plain.touch()
        reindex(vault, idx, p)
        assert [m.id for m in idx.applying_to(target, Filters(project=p))] == [draft.id]
        assert p not in idx.projects_applying_to(other)
    finally:
        idx.link_projects(p, [])


def test_supersession_rings_hide_no_member(backend: tuple[Index, str], tmp_path: Path) -> None:
    """A ring of SUPERSEDES edges written by hand (A supersedes B, B supersedes A; D -> E -> F -> D)
    does not make its members superseded, on either backend: the rule of `derive.superseded`,
    applied by every read that hides superseded memories (query, count, text and vector search).
    An edge into a ring from outside it still counts (C supersedes D), and a self-edge never does."""
    from ccmemory.index.derive import superseded, supersession_cycles

    idx, p = backend
    root = tmp_path / "rings"
    (root / ".ccmemory").mkdir(parents=True)
    vault = Vault(root)
    names = "abcdefgh"
    mems = {
        n: make_memory("decision", f"Ring member {n} zebra", created=ts(1, k)) for k, n in enumerate(names)
    }
    links = {"a": "b", "b": "a", "c": "d", "d": "e", "e": "f", "f": "d", "g": "h"}
    for src, dst in links.items():
        mems[src].supersedes = [mems[dst].id]
    mems["h"].supersedes = [mems["h"].id]  # supersedes itself
    for m in mems.values():
        vault.write_new(m)
    reindex(vault, idx, p)
    ids = {n: m.id for n, m in mems.items()}
    edges = [(ids[s], ids[d]) for s, d in [*links.items(), ("h", "h")]]
    assert supersession_cycles(edges) == sorted([sorted([ids["a"], ids["b"]]), sorted(ids[n] for n in "def")])
    hidden = {ids["d"], ids["h"]}  # d: by c, from outside the ring; h: by g (its own edge does not count)
    assert superseded(edges) == hidden
    assert idx.superseded_ids(Filters(p)) == hidden
    shown = {m.id for m in idx.query(Filters(p))}
    assert shown == set(ids.values()) - hidden
    assert idx.count(Filters(p)) == len(shown)
    assert {m for m, *_ in idx.text_search("zebra", Filters(p), limit=20)} == shown
    emb = "fake-" + p
    idx.store_vectors(emb, 8, [(h, _fake_vector(t)) for h, t in idx.missing_vectors(p, emb)])
    hits = idx.vector_search(emb, _fake_vector("Ring member zebra"), Filters(p), limit=20)
    assert {m for m, _ in hits} == shown
    # breaking the ring (b no longer supersedes a) makes a's edge count again
    mems["b"].supersedes = []
    path = next(x for x in vault.iter_paths() if "member-b" in x.name)
    path.unlink()
    vault.write_new(mems["b"])
    reindex(vault, idx, p)
    assert idx.superseded_ids(Filters(p)) == hidden | {ids["b"]}
