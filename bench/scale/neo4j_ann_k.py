"""What the HNSW `k` of Neo4j's vector half changes (issue 29; on demand, not in CI): answers, not
speed. Written for the 100k Neo4j index of `neo4j_hybrid.py`; works on any Neo4j index.

    env PYTHONPATH=. CCMEMORY_BACKEND=neo4j CCMEMORY_NEO4J_URI=... .venv/bin/python \\
        bench/scale/neo4j_ann_k.py /tmp/h44/vault-100000 --json /tmp/h44/ann-k.json

Queries: the 10 `bench_index.QUERIES` and `neo4j_hybrid.MORE`, then memory titles and
paraphrases of them (title words without the number, shuffled, inside a question), drawn with a
fixed seed from the project's memories (half from the memories whose vectors are the real
embeddings of `fill_vectors.py --real`, which sort first by text hash, half from the others).
Filters (`--filters`, see `FILTERS`): the default ones (the viewer is the git user, superseded
hidden), a viewer who authored nothing, the types a prompt's recall asks for, and six or three
of the eleven types (55 % and 27 % of the bench vault's memories). On the bench vault every
memory is curated and of one of the prompt types, so the viewer and prompt filters leave all.

For every query and filter the vector half (`Neo4jIndex.vector_search`, 100 candidates) is run
with each `vectors.ANN_K_FACTORS` setting of `--settings` (for example "5" is the single k = 500
query used before, "2,5" a k = 200 query then the k = 500 one when the filters leave fewer than
100) and with no HNSW query at all (the exact Cypher scan). Each vector list is then fed to the
real `retrieval.search.search` (hybrid, limit 10, clock fixed; the text half runs as usual) to
give the final top-10. Compared with the reference setting (`--reference`, default "5") and with
the exact scan: top-100 and top-10 overlap of the vector lists, identical final top-10s, final
top-10 overlap, and how often the top-1 differs.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_index import QUERIES  # noqa: E402
from neo4j_hybrid import MORE  # noqa: E402

FRAMES = [
    "how do we handle {}",
    "what went wrong with {}",
    "{} notes",
    "anything about {}?",
    "why did we choose {}",
]


#: Filters to compare under: the default ones; a viewer who authored nothing (on a vault whose
#: memories are all curated this leaves every memory, like the default); the types a prompt's
#: recall asks for (all eleven); six and three of the eleven types (55 % and 27 %).
FILTERS: dict[str, Callable[[Any], Any]] = {
    "default": lambda svc: svc.filters(),
    "viewer": lambda svc: svc.filters(viewer="bench-user"),
    "prompt types": lambda svc: svc.filters(types=sorted(_prompt_types())),
    "six types": lambda svc: svc.filters(
        types=["correction", "decision", "fact", "failed_approach", "gotcha", "pattern"]
    ),
    "three types": lambda svc: svc.filters(types=["decision", "gotcha", "pattern"]),
}


def _prompt_types() -> tuple[str, ...]:
    from ccmemory.features.recall.engine import PROMPT_TYPES

    return PROMPT_TYPES


def queries(svc: Any, n_titles: int, seed: int) -> list[str]:
    """The bench's queries, then `n_titles` titles and as many paraphrases (deterministic)."""
    rows = svc.index._read(
        "MATCH (m:Memory {project: $p}) RETURN m.title AS title ORDER BY m.text_hash", p=svc.project
    )
    titles = [r["title"] for r in rows if r["title"]]
    rng = random.Random(seed)
    real, rest = titles[:2000], titles[2000:]
    picked = rng.sample(real, n_titles // 2) + rng.sample(rest, n_titles - n_titles // 2)
    paraphrases = []
    for t in picked:
        words = [w for w in t.split() if not w.isdigit()]
        rng.shuffle(words)
        keep = words[: max(2, len(words) - 1)]
        paraphrases.append(rng.choice(FRAMES).format(" ".join(keep).lower()))
    return QUERIES + MORE + picked + paraphrases


def overlap(a: list[str], b: list[str], n: int) -> float:
    if not a[:n] and not b[:n]:
        return 1.0
    return len(set(a[:n]) & set(b[:n])) / max(len(a[:n]), len(b[:n]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--settings", default="5;2,5;2.5,5;3,5", help="ANN_K_FACTORS settings, ; between")
    ap.add_argument("--reference", default="5")
    ap.add_argument("--titles", type=int, default=45, help="titles (and as many paraphrases)")
    ap.add_argument("--seed", type=int, default=44)
    ap.add_argument("--filters", default="default,viewer", help=", ".join(FILTERS))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from ccmemory.app.service import Service
    from ccmemory.index.neo4j import vectors
    from ccmemory.retrieval.search import search
    from ccmemory.text import fusion

    settings: dict[str, tuple[float, ...]] = {
        s: tuple(float(x) for x in s.split(",")) for s in args.settings.split(";")
    }
    settings["exact"] = ()
    limit = fusion.DEFAULT.candidates
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    with Service.open(args.root) as svc:
        emb = svc.embedder()
        index = svc.index
        qs = queries(svc, args.titles, args.seed)
        filters = {name: FILTERS[name](svc) for name in args.filters.split(",")}
        original = index.vector_search
        vec: dict[tuple[str, str, str], list[tuple[str, float]]] = {}
        top: dict[tuple[str, str, str], list[str]] = {}
        ms: dict[tuple[str, str], list[float]] = {(fn, name): [] for fn in filters for name in settings}
        for fname, f in filters.items():
            for q in qs:
                qv = emb.embed([q], kind="query")[0]
                for name, factors in settings.items():
                    vectors.ANN_K_FACTORS = factors
                    t = time.perf_counter()
                    vec[fname, q, name] = original(emb.name, qv, f, limit)
                    ms[fname, name].append((time.perf_counter() - t) * 1000)
                    got = vec[fname, q, name]
                    index.vector_search = lambda *a, _got=got, **kw: list(_got)  # type: ignore[method-assign]
                    r = search(index, q, f, limit=10, mode="hybrid", embedder=emb, now=now)
                    del index.vector_search
                    assert r.mode == "hybrid", (q, r.notices)
                    top[fname, q, name] = [h.memory.id for h in r.hits]
        res: dict[str, Any] = {"queries": len(qs), "filters": list(filters), "per_filter": {}}
        for fname in filters:
            rows: dict[str, Any] = {}
            for name in settings:
                row: dict[str, Any] = {"vector_ms_median": round(statistics.median(ms[fname, name]), 1)}
                for against in (args.reference, "exact"):
                    v100, v10, v1, h_same, h10, h1 = [], [], 0, 0, [], 0
                    for q in qs:
                        a = [m for m, _ in vec[fname, q, name]]
                        b = [m for m, _ in vec[fname, q, against]]
                        v100.append(overlap(a, b, limit))
                        v10.append(overlap(a, b, 10))
                        v1 += a[:1] != b[:1]
                        ta, tb = top[fname, q, name], top[fname, q, against]
                        h_same += ta == tb
                        h10.append(overlap(ta, tb, 10))
                        h1 += ta[:1] != tb[:1]
                    row[f"vs {against}"] = {
                        "vector overlap@100": round(statistics.fmean(v100), 4),
                        "vector overlap@10": round(statistics.fmean(v10), 4),
                        "vector top-1 differs": v1,
                        "hybrid top-10 identical": h_same,
                        "hybrid overlap@10": round(statistics.fmean(h10), 4),
                        "hybrid top-1 differs": h1,
                    }
                rows[name] = row
            res["per_filter"][fname] = rows
    print(json.dumps(res, indent=1))
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
