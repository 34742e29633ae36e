"""Dev-set retrieval bench: hit@1/3/5 of text, semantic and hybrid search on both halves.

    .venv/bin/python bench/memories/run.py [--backend sqlite|neo4j ...] [--sweep] [--set blind]

Ranks through the product: the dev set's memory files are committed to a temporary git
repository, indexed by ``ccmemory.app.sync.reindex`` into the chosen backend, embedded by
``Service.embed_missing`` with the configured default embedder, and every query runs
``ccmemory.retrieval.search.search`` (the function behind ``Service.search`` / ``ccmemory search``) with
expansion on, as users get it. Only the clock is fixed (``NOW``) so recency weights do not
drift between runs. Neo4j: the server of ``scripts/neo4j-dev start`` (or ``--neo4j-uri``), a
fresh project name per run, cleared afterwards.

``--sweep`` ranks the tuning half (T) under candidate fusion recipes; held-out numbers (H) are
only printed for the recipe the product ships (``ccmemory.text.fusion.DEFAULT``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import devset  # noqa: E402

sys.path.insert(0, str(HERE.parent))
import embedders  # noqa: E402

from ccmemory.app.service import Service  # noqa: E402
from ccmemory.app.sync import reindex  # noqa: E402
from ccmemory.core.config import load_config  # noqa: E402
from ccmemory.core.vault import Vault  # noqa: E402
from ccmemory.index.base import Filters, Index  # noqa: E402
from ccmemory.retrieval.search import MODES, search  # noqa: E402
from ccmemory.text import fusion  # noqa: E402

NOW = datetime(2025, 1, 15, tzinfo=UTC)
KS = (1, 3, 5)


class CachedQueries:
    """The product's embedder, with query vectors remembered (the sweep repeats queries)."""

    def __init__(self, emb: Any) -> None:
        self.inner = emb
        self.name = emb.name
        self.dim = emb.dim
        self.min_similarity = getattr(emb, "min_similarity", None)
        if self.min_similarity is None:
            del self.min_similarity
        self._cache: dict[str, Any] = {}

    def embed(self, texts: list[str], kind: str = "document") -> Any:
        if kind != "query" or len(texts) != 1:
            return self.inner.embed(texts, kind=kind)
        if texts[0] not in self._cache:
            self._cache[texts[0]] = self.inner.embed(texts, kind="query")[0]
        return [self._cache[texts[0]]]


def neo4j_server(uri: str | None) -> tuple[str, str, str]:
    if uri:
        return uri, os.environ.get("CCMEMORY_NEO4J_USER", "neo4j"), os.environ["CCMEMORY_NEO4J_PASSWORD"]
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "neo4j-dev"), "start", "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    info = json.loads(out.strip().splitlines()[-1])
    return info["uri"], info["user"], info["password"]


@contextmanager
def indexed(
    root: Path,
    backend: str,
    neo4j_uri: str | None = None,
    neo4j_auth: tuple[str, str] | None = None,
    embedder: Any = None,
) -> Iterator[tuple[Service, Index]]:
    """The dev set indexed into ``backend`` (vectors included), as a Service over that index."""
    project = "devset-" + uuid.uuid4().hex[:8]
    idx: Index
    if backend == "sqlite":
        from ccmemory.index.sqlite import SQLiteIndex

        idx = SQLiteIndex(root / ".ccmemory" / "local" / f"{project}.db")
    else:
        from ccmemory.index.neo4j import Neo4jIndex

        if neo4j_uri and neo4j_auth:
            uri, (user, password) = neo4j_uri, neo4j_auth
        else:
            uri, user, password = neo4j_server(neo4j_uri)
        idx = Neo4jIndex(uri, user, password)
    vault = Vault(root)
    cfg = load_config(root)
    cfg.project = project
    svc = Service(vault, cfg, idx)
    if embedder is not None:  # a candidate of bench/embedders.py instead of the configured one
        svc._embedder = embedder
    try:
        reindex(vault, idx, project, main_branch="main")
        _, problem = svc.embed_missing()
        if problem:
            raise SystemExit(f"embedding failed: {problem}")
        yield svc, idx
    finally:
        idx.clear(project)
        idx.close()


def rank(
    svc: Service,
    emb: Any,
    query: str,
    mode: str,
    recipe: fusion.FusionRecipe | None = None,
    limit: int = 5,
) -> list[str]:
    f = Filters(project=svc.project, viewer=svc.viewer)
    resp = search(svc.index, query, f, limit=limit, mode=mode, embedder=emb, now=NOW, recipe=recipe)
    return [h.memory.id for h in resp.hits]


def evaluate(
    svc: Service, emb: Any, queries: Sequence[devset.Query], recipe: fusion.FusionRecipe | None = None
) -> dict[tuple[str, str], list[float]]:
    """{(mode, split): [hit@1, hit@3, hit@5]}."""
    ids = devset.keys()
    out: dict[tuple[str, str], list[float]] = {}
    counts: dict[tuple[str, str], int] = {}
    for mode in MODES:
        for q in queries:
            got = rank(svc, emb, q.text, mode, recipe)
            want = {ids[t] for t in q.targets}
            row = out.setdefault((mode, q.split), [0.0] * len(KS))
            counts[(mode, q.split)] = counts.get((mode, q.split), 0) + 1
            for i, k in enumerate(KS):
                row[i] += bool(want & set(got[:k]))
    return {key: [v / counts[key] for v in row] for key, row in out.items()}


def table(results: dict[str, dict[tuple[str, str], list[float]]]) -> str:
    lines = [
        "| backend | mode | tuning hit@1 | @3 | @5 | held-out hit@1 | @3 | @5 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for backend, res in results.items():
        for mode in ("text", "semantic", "hybrid"):
            halves = (res.get((mode, "T")), res.get((mode, "H")))  # a set may hold only one half
            cells = " | ".join(
                " | ".join(f"{v:.3f}" for v in h) if h else " | ".join("—" * 3) for h in halves
            )
            lines.append(f"| {backend} | {mode} | {cells} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", action="append", choices=("sqlite", "neo4j"))
    ap.add_argument("--neo4j-uri")
    ap.add_argument("--sweep", action="store_true", help="rank the tuning half under candidate recipes")
    ap.add_argument("--embedder", default="minilm", help="minilm (the product default) or e5-small-q4")
    ap.add_argument("--set", default="main", help="main (Ledgerly) or a sub-folder of bench/memories (blind)")
    args = ap.parse_args()
    devset.select(args.set)
    backends = args.backend or ["sqlite"]
    queries = devset.load_queries()
    results: dict[str, dict[tuple[str, str], list[float]]] = {}
    tops: dict[str, dict[tuple[str, str], list[str]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        devset.make_repo(root)
        for backend in backends:
            emb_choice = None if args.embedder == "minilm" else embedders.get(args.embedder)
            with indexed(root, backend, args.neo4j_uri, embedder=emb_choice) as (svc, _idx):
                emb = CachedQueries(svc.embedder())
                if args.sweep:
                    sweep(svc, emb, [q for q in queries if q.split == "T"])
                results[backend] = evaluate(svc, emb, queries)
                tops[backend] = {(m, q.text): rank(svc, emb, q.text, m) for m in MODES for q in queries}
    print(
        f"set {args.set}: {len(queries)} queries ({sum(q.split == 'T' for q in queries)} tuning), NOW={NOW:%Y-%m-%d}"
    )
    print(f"fusion.DEFAULT = {fusion.DEFAULT}; embedder {args.embedder}")
    print(table(results))
    if len(tops) == 2:
        a, b = tops.values()
        for mode in MODES:
            same = [a[(mode, q.text)] == b[(mode, q.text)] for q in queries]
            sets = [set(a[(mode, q.text)]) == set(b[(mode, q.text)]) for q in queries]
            print(
                f"{mode}: identical top-5 on {sum(same)}/{len(queries)} queries,"
                f" same top-5 set on {sum(sets)}/{len(queries)}"
            )


def sweep(svc: Service, emb: Any, tuning: Sequence[devset.Query]) -> None:
    for recipe in candidate_recipes():
        res = evaluate(svc, emb, tuning, recipe)
        h = res[("hybrid", "T")]
        print(f"T hybrid {h[0]:.3f} {h[1]:.3f} {h[2]:.3f}  {recipe}", flush=True)


def candidate_recipes() -> list[fusion.FusionRecipe]:
    """Score fusion over the calibrated text score (``raw``: ccmemory.text.bm25's share of the query's
    idf) with raw or min-max cosine, then the min-max / max / RRF recipes measured before."""
    out = []
    for w in (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0):
        for vnorm in ("raw", "minmax", "max"):
            out.append(
                fusion.FusionRecipe(
                    method="score", normalisation="raw", vector_normalisation=vnorm, vector_weight=w
                )  # type: ignore[arg-type]
            )
    for w in (0.5, 1.0, 1.5):
        for norm in ("minmax", "max"):
            out.append(fusion.FusionRecipe(method="score", normalisation=norm, vector_weight=w))  # type: ignore[arg-type]
        for k in (5.0, 20.0):
            out.append(fusion.FusionRecipe(method="rrf", rrf_k=k, vector_weight=w))
    return out


if __name__ == "__main__":
    main()
