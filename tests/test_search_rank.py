"""Ranking rules of ccmemory.retrieval.search on a small SQLite index with hand-made vectors (issue 27)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from ccmemory.core.model import Memory, parse_timestamp
from ccmemory.index.base import FileRecord, Filters
from ccmemory.index.sqlite import SQLiteIndex
from ccmemory.retrieval.search import MIN_SIMILARITY, search

DIM = 8
#: cosine of each memory with the query: only m1 is above the floor, m2 is the second nearest
COSINES = {"m1": 0.6, "m2": 0.22, "m3": 0.1, "m4": 0.05, "m5": 0.03, "m6": 0.0}


class Embedder:
    """Memory i gets the basis vector e_i; the query leans on them by COSINES."""

    name = "hand-made"
    dim = DIM

    def __init__(self, titles: dict[str, str]) -> None:
        self.basis = {title: i for i, title in enumerate(titles.values())}

    def embed(self, texts: list[str], kind: str = "document") -> list[list[float]]:
        out = []
        for text in texts:
            if kind == "query":
                v = [*COSINES.values()] + [0.0] * (DIM - len(COSINES))
                v[-1] = math.sqrt(1.0 - sum(c * c for c in v))
            else:
                v = [0.0] * DIM
                v[next(i for title, i in self.basis.items() if text.startswith(title))] = 1.0
            out.append(v)
        return out


@pytest.fixture
def setup(tmp_path: Path) -> tuple[SQLiteIndex, Embedder]:
    when = parse_timestamp("2025-01-01T00:00:00Z")
    assert when is not None
    titles = {f"m{i}": f"Memory number {i} about topic {chr(96 + i)}" for i in range(1, 7)}
    recs = []
    for mid, title in titles.items():
        topics = [] if mid == "m2" else ["billing"]  # m1's neighbours: m3..m6, not m2
        m = Memory(id=mid, type="fact", title=title, body=f"Body of {mid}.", created=when, topics=topics)
        recs.append(FileRecord(f"{mid}.md", 1, 1, f"h{mid}", m))
    idx = SQLiteIndex(tmp_path / "i.db")
    idx.apply("p", recs, [], lambda _p: "curated")
    emb = Embedder(titles)
    missing = idx.missing_vectors("p", emb.name)
    idx.store_vectors(emb.name, DIM, [(h, emb.embed([t])[0]) for h, t in missing])
    return idx, emb


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_second_nearest_below_the_floor_is_kept_and_marked(setup: tuple[SQLiteIndex, Any], mode: str) -> None:
    """One memory above the similarity floor: the second nearest (below it) still ranks second,
    above the first one's topic neighbours, and is marked weak; the list is `limit` long."""
    idx, emb = setup
    assert COSINES["m2"] < MIN_SIMILARITY < COSINES["m1"]
    resp = search(idx, "zzz qqq", Filters("p"), limit=3, mode=mode, embedder=emb)
    assert resp.mode == mode
    assert [h.memory.id for h in resp.hits][:2] == ["m1", "m2"]
    assert len(resp.hits) == 3
    assert [h.weak for h in resp.hits][:2] == [False, True]
    assert resp.hits[1].to_dict()["weak"] is True and "weak" not in resp.hits[0].to_dict()


def test_semantic_returns_limit_results_when_nothing_is_near(setup: tuple[SQLiteIndex, Any]) -> None:
    idx, _ = setup
    far = type("Far", (Embedder,), {})(dict.fromkeys(COSINES, "x"))
    far.embed = lambda texts, kind="document": [[0.0] * (DIM - 1) + [1.0]]  # orthogonal to all
    resp = search(idx, "anything", Filters("p"), limit=5, mode="semantic", embedder=far)
    assert len(resp.hits) == 5 and all(h.weak for h in resp.hits)


def test_a_task_prompt_puts_what_to_check_first(tmp_path: Path) -> None:
    """Equal text scores and priors (decision and gotcha weigh the same): a question leaves the
    tie to the ids, a task prompt puts the gotcha first (intent.CHECK_FIRST)."""
    when = parse_timestamp("2025-01-01T00:00:00Z")
    assert when is not None
    recs = [
        FileRecord(
            f"{mid}.md", 1, 1, f"h{mid}", Memory(id=mid, type=mtype, title=title, body="", created=when)
        )
        for mid, mtype, title in [
            ("d", "decision", "Exporter retries failed uploads with backoff"),
            ("g", "gotcha", "Exporter retries failed uploads on timeout"),
            ("x", "fact", "Invoices are numbered per tenant"),
        ]
    ]
    idx = SQLiteIndex(tmp_path / "i.db")
    idx.apply("p", recs, [], lambda _p: "curated")
    question = search(idx, "how does the exporter retry failed uploads", Filters("p"), mode="text")
    task = search(idx, "make the exporter retry failed uploads", Filters("p"), mode="text")
    assert [h.memory.id for h in question.hits][:2] == ["d", "g"]
    assert [h.memory.id for h in task.hits][:2] == ["g", "d"]
