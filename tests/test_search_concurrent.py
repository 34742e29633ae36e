"""Hybrid search on an index that reads from a server (`Index.concurrent_reads`, Neo4j): the text
half runs in a thread of its own while the query is embedded and the vector half runs (issue 29:
at 100k memories the two halves waited on the server one after the other). The answers must be
the ones of the halves run one after the other, and a failure of the text half must reach the
caller as before."""

from __future__ import annotations

import random
import threading
import uuid
from datetime import timedelta
from typing import Any

import pytest

from ccmemory.core.model import Memory, parse_timestamp
from ccmemory.index.base import FileRecord, Filters, IndexUnavailable
from ccmemory.retrieval.search import TYPE_WEIGHT, search

pytestmark = pytest.mark.neo4j

WORDS = "redis cache timeout token login deploy rollout webhook retry".split()
DIM = 16


class Embedder:
    """A deterministic bag-of-words embedder: one dimension per word, the rest noise by hash."""

    name = "concurrent-test"
    dim = DIM

    def embed(self, texts: list[str], kind: str = "document") -> list[list[float]]:
        out = []
        for text in texts:
            rng = random.Random(text)
            v = [rng.random() * 0.2 for _ in range(DIM)]
            for w in text.lower().split():
                if w in WORDS:
                    v[WORDS.index(w)] += 1.0
            norm = sum(x * x for x in v) ** 0.5
            out.append([x / norm for x in v])
        return out


def _records(rng: random.Random, n: int) -> tuple[list[FileRecord], dict[str, str]]:
    start = parse_timestamp("2025-01-01T00:00:00Z")
    assert start is not None
    recs, status, ids = [], {}, []
    for i in range(n):
        mid = f"C{i:04d}"
        m = Memory(
            id=mid,
            type=rng.choice(sorted(TYPE_WEIGHT)),
            title=" ".join(rng.choices(WORDS, k=2)),
            body=" ".join(rng.choices(WORDS, k=rng.randint(1, 10))),
            created=start + timedelta(days=i),
            author=rng.choice(["a@x", "b@x"]),
            topics=[rng.choice(WORDS)],
            supersedes=[rng.choice(ids)] if ids and rng.random() < 0.1 else [],
        )
        ids.append(mid)
        recs.append(FileRecord(f"m{i}.md", 1, 1, f"h{i}", m))
        status[f"m{i}.md"] = "curated" if rng.random() < 0.7 else "developmental"
    return recs, status


def _answers(idx: Any, emb: Embedder, f: Filters) -> list[Any]:
    out = []
    for q in ("redis cache timeout", "login token", "deploy rollout retry", "webhook", "nothing here"):
        r = search(
            idx, q, f, limit=10, mode="hybrid", embedder=emb, now=parse_timestamp("2026-01-01T00:00:00Z")
        )
        assert r.mode == "hybrid", r.notices
        out.append([(h.memory.id, h.score, sorted(h.parts.items()), h.via, h.weak) for h in r.hits])
    return out


def test_text_half_runs_aside_with_the_same_answers(neo4j_server: Any) -> None:
    from ccmemory.index.neo4j import Neo4jIndex

    project = "conc-" + uuid.uuid4().hex[:8]
    idx = Neo4jIndex(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    emb = Embedder()
    try:
        recs, status = _records(random.Random(29), 300)
        idx.apply(project, recs, [], lambda path: status[path])
        missing = idx.missing_vectors(project, emb.name)
        idx.store_vectors(emb.name, DIM, [(h, emb.embed([t])[0]) for h, t in missing])
        assert idx.concurrent_reads is True

        threads: list[int] = []
        inner = idx.text_search

        def text_search(*a: Any, **kw: Any) -> Any:
            threads.append(threading.get_ident())
            return inner(*a, **kw)

        idx.text_search = text_search  # type: ignore[method-assign]
        for f in (
            Filters(project),
            Filters(project, viewer="a@x"),
            Filters(project, types=["fact", "gotcha"]),
        ):
            aside = _answers(idx, emb, f)
            assert threads and threading.get_ident() not in threads  # the text half ran aside
            threads.clear()
            idx.concurrent_reads = False  # type: ignore[misc]
            try:
                in_turn = _answers(idx, emb, f)
            finally:
                del idx.concurrent_reads
            assert threads and set(threads) == {threading.get_ident()}  # in this thread
            threads.clear()
            assert aside == in_turn
            assert any(aside)  # not equal by being empty

        def failing(*a: Any, **kw: Any) -> Any:
            raise IndexUnavailable("server gone")

        idx.text_search = failing  # type: ignore[method-assign]
        with pytest.raises(IndexUnavailable, match="server gone"):
            search(idx, "redis cache", Filters(project), mode="hybrid", embedder=emb)
    finally:
        idx.clear(project)
        idx.close()
