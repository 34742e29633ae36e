"""Warm hybrid search on an index that already holds every vector (issue 29; on demand, not in
CI): written for Neo4j at 100k, works on any backend (`CCMEMORY_BACKEND` and the server's
`CCMEMORY_NEO4J_*` from the environment, as the CLI reads them).

    flock /tmp/ccm-bench.lock env PYTHONPATH=. .venv/bin/python bench/scale/neo4j_hybrid.py \\
        /tmp/h38/vault-100000 --rounds 5 --json /tmp/h38/hybrid.json

In one process (`Service.open(root)`, as `run.py`'s warm search): one untimed pass of the 10
`bench_index.QUERIES` in hybrid mode, asserting every answer was hybrid; then `--rounds` x 10
timed `Service.search(q, mode="hybrid", limit=10)` (p50/p95); then the halves alone with the
arguments a hybrid search gives them (the query embedded once beforehand, `fusion.DEFAULT`'s
candidate count, the default filters): `index.vector_search` and `index.text_search`, the same
number of times; then one more pass of hybrid searches with every index call and the query
embedding wrapped in timers (where a search's time goes, per call). The 1-minute load is taken
before each part.

`--dump FILE` instead writes the result lists of `retrieval.search.search` (hybrid, clock
fixed) for the 10 queries and 5 more, under three filters (default, a viewer, a viewer with two
types), top-10 and top-30 (ids, scores and every score part to 12 places, `via`, `weak`), and
the raw `vector_search` lists (ids and scores): run it once per checkout on the same server and
compare the files.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench_index import QUERIES, pct  # noqa: E402

MORE = [
    "zzqx nothing matches this",
    "cache",
    "token rotation schedule",
    "deploy",
    "lock timeout in migrations",
]


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def summary(lat: list[float], before: float) -> dict[str, Any]:
    return {
        "p50_ms": round(pct(lat, 50), 1),
        "p95_ms": round(pct(lat, 95), 1),
        "mean_ms": round(statistics.fmean(lat), 1),
        "n": len(lat),
        "load": before,
    }


def timings(svc: Any, rounds: int) -> dict[str, Any]:
    from ccmemory.text import fusion

    out: dict[str, Any] = {}
    for q in QUERIES:
        assert svc.search(q, mode="hybrid").mode == "hybrid", q
    before = load()
    lat = []
    for _ in range(rounds):
        for q in QUERIES:
            t = time.perf_counter()
            r = svc.search(q, mode="hybrid", limit=10)
            lat.append((time.perf_counter() - t) * 1000)
            assert r.mode == "hybrid"
    out["hybrid"] = summary(lat, before)
    print(json.dumps({"hybrid": out["hybrid"]}), flush=True)

    emb, f, k = svc.embedder(), svc.filters(), fusion.DEFAULT.candidates
    qvs = {q: emb.embed([q], kind="query")[0] for q in QUERIES}
    for name, call in (
        ("vector half", lambda q: svc.index.vector_search(emb.name, qvs[q], f, k)),
        ("text half", lambda q: svc.index.text_search(q, f, k)),
        ("query embedding", lambda q: emb.embed([q], kind="query")),
    ):
        for q in QUERIES:
            call(q)
        before = load()
        lat = []
        for _ in range(rounds):
            for q in QUERIES:
                t = time.perf_counter()
                call(q)
                lat.append((time.perf_counter() - t) * 1000)
        out[name] = summary(lat, before)
        print(json.dumps({name: out[name]}), flush=True)
    out["stages"] = stages(svc, emb)
    print(json.dumps({"stages (ms per search)": out["stages"]}), flush=True)
    return out


def stages(svc: Any, emb: Any) -> dict[str, Any]:
    """One more pass of hybrid searches with the index's public calls and the query embedding
    timed (ms per search, summed over calls; `calls` per search)."""
    spent: dict[str, float] = defaultdict(float)
    calls: dict[str, int] = defaultdict(int)

    def wrap(obj: Any, name: str, label: str) -> Callable[[], None]:
        orig = getattr(obj, name)

        @functools.wraps(orig)
        def timed(*a: Any, **kw: Any) -> Any:
            t = time.perf_counter()
            try:
                return orig(*a, **kw)
            finally:
                spent[label] += (time.perf_counter() - t) * 1000
                calls[label] += 1

        setattr(obj, name, timed)
        return lambda: delattr(obj, name)

    undo = [
        wrap(svc.index, n, n)
        for n in ("text_search", "vector_search", "get", "edges", "query", "related_by_topic_or_file")
    ]
    undo.append(wrap(emb, "embed", "query embedding"))
    before = load()
    t = time.perf_counter()
    for q in QUERIES:
        svc.search(q, mode="hybrid", limit=10)
    whole = (time.perf_counter() - t) * 1000
    for u in undo:
        u()
    n = len(QUERIES)
    res: dict[str, Any] = {k: round(v / n, 2) for k, v in sorted(spent.items())}
    res["calls"] = {k: round(v / n, 1) for k, v in sorted(calls.items())}
    res["whole"] = round(whole / n, 2)
    res["load"] = before
    return res


def dump(svc: Any, path: Path) -> None:
    from ccmemory.retrieval.search import search
    from ccmemory.text import fusion

    emb = svc.embedder()
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    filters = {
        "default": svc.filters(),
        "viewer": svc.filters(viewer="bench-user"),
        "viewer+types": svc.filters(viewer="bench-user", types=["decision", "gotcha"]),
    }
    out: dict[str, Any] = {}
    for fname, f in filters.items():
        for q in QUERIES + MORE:
            qv = emb.embed([q], kind="query")[0]
            near = svc.index.vector_search(emb.name, qv, f, fusion.DEFAULT.candidates)
            out[f"{fname} | {q} | vector_search"] = [[mid, f"{s:.12f}"] for mid, s in near]
            for limit in (10, 30):
                r = search(svc.index, q, f, limit=limit, mode="hybrid", embedder=emb, now=now)
                assert r.mode == "hybrid", (q, r.notices)
                out[f"{fname} | {q} | top{limit}"] = [
                    {
                        "id": h.memory.id,
                        "score": f"{h.score:.12f}",
                        "parts": {k: f"{v:.12f}" for k, v in sorted(h.parts.items())},
                        "via": h.via,
                        "weak": h.weak,
                    }
                    for h in r.hits
                ]
    path.write_text(json.dumps(out, indent=1, sort_keys=True))
    print(f"{len(out)} lists, {sum(len(v) for v in out.values())} entries -> {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--dump", type=Path, help="write the result lists instead of timing")
    args = ap.parse_args()
    from ccmemory.app.service import Service

    with Service.open(args.root) as svc:
        if args.dump:
            dump(svc, args.dump)
            return
        res = {
            "backend": svc.index.backend,
            "memories": svc.index.count(svc.filters()),
            **timings(svc, args.rounds),
        }
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
