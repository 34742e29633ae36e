"""Shared by the dev-set tests (test_retrieval_devset, test_ranking_parity): the bench modules of
bench/memories, rankings with their scores, and the edit / delete / add + fresh copy that an
"incremental reindex == rebuild" check needs."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent.parent / "bench" / "memories"
sys.path.insert(0, str(BENCH))

import devset  # noqa: E402
import run as devbench  # noqa: E402

MODES = ("text", "semantic", "hybrid")
NEW_ID = "01JEZZZZZZZZZZZZZZZZZZZZZZ"


def scored(svc: Any, emb: Any, query: str, mode: str, digits: int) -> list[tuple[str, float]]:
    """Top-5 ids with their final scores rounded to ``digits``, ranked by the product's search
    (semantic and hybrid must not have fallen back to full text)."""
    from ccmemory.index.base import Filters
    from ccmemory.retrieval.search import search

    f = Filters(project=svc.project, viewer=svc.viewer)
    resp = search(svc.index, query, f, limit=5, mode=mode, embedder=emb, now=devbench.NOW)
    assert resp.mode == mode, resp.notices
    return [(h.memory.id, round(h.score, digits)) for h in resp.hits]


def rankings(
    svc: Any, queries: Sequence[Any], digits: int = 6
) -> dict[tuple[str, str], list[tuple[str, float]]]:
    """{(mode, query): scored top-5} for every query in every mode."""
    emb = devbench.CachedQueries(svc.embedder())
    return {(m, q.text): scored(svc, emb, q.text, m, digits) for m in MODES for q in queries}


def edit_delete_add(root: Path, *, add: bool) -> None:
    """In the copy of the Ledgerly set at ``root``: edit one gotcha by hand, delete one decision,
    and (``add``) write a copy of a fact under a new name and id."""
    vault = root / ".ccmemory"
    edited = next(devset.FILES.glob("gotchas/*thundering*"))
    path = vault / edited.relative_to(devset.FILES)
    path.write_text(path.read_text().replace("200 workers", "two hundred workers"))
    (vault / next(devset.FILES.glob("decisions/*graphql*")).relative_to(devset.FILES)).unlink()
    if add:
        text = next(devset.FILES.glob("facts/*")).read_text()
        old_id = text.split("id: ", 1)[1].split("\n", 1)[0]
        (vault / "facts" / "2024-12-01-a-copy-under-a-new-name.md").write_text(text.replace(old_id, NEW_ID))


def fresh_copy(root: Path, dest: Path) -> Path:
    """The repository at ``root`` without its local index: what a rebuild starts from."""
    shutil.copytree(root, dest, ignore=shutil.ignore_patterns("local"))
    (dest / ".ccmemory" / "local").mkdir()
    return dest
