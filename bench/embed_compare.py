"""Throughput and peak memory of the embedders of bench/embedders.py, each in a fresh process.

    .venv/bin/python bench/embed_compare.py [--n 400] [--embedder minilm --embedder e5-small-q4]

Workload: ``first_build_bench.memories("60w", n)`` (a 6-10 word title and a ~52-word body, the
text the index embeds), embedded as documents in batches of 32 after one warm-up batch, plus
40 single-query embeddings (the search path). Peak RSS is the child's ``ru_maxrss`` (model
load included). The machine is shared: the 1-minute load is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]


def child(name: str, n: int) -> dict[str, float]:
    import embedders
    from first_build_bench import memories

    t0 = time.perf_counter()
    emb = embedders.get(name)
    emb.embed(["warm up"], kind="query")
    load_s = time.perf_counter() - t0
    texts = [f"{t}\n\n{b}" for t, b in memories("60w", n + 32)]
    emb.embed(texts[:32], kind="document")
    t0 = time.perf_counter()
    for i in range(32, len(texts), 32):
        emb.embed(texts[i : i + 32], kind="document")
    docs_s = time.perf_counter() - t0
    qs = []
    for t in texts[:40]:
        q0 = time.perf_counter()
        emb.embed([t.split("\n")[0]], kind="query")
        qs.append(time.perf_counter() - q0)
    return {
        "load_s": load_s,
        "docs_per_s": n / docs_s,
        "query_p50_ms": statistics.median(qs) * 1000,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "dim": float(emb.dim),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--embedder", action="append")
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.n)))
        return
    print(f"load before: {os.getloadavg()[0]:.2f}")
    print("| embedder | dim | load + first query | 60-word memories /s | query p50 | peak RSS |")
    print("|---|---|---|---|---|---|")
    for name in args.embedder or ["minilm", "e5-small-q4"]:
        out = subprocess.run(
            [sys.executable, __file__, "--child", name, "--n", str(args.n)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        r = json.loads(out.strip().splitlines()[-1])
        print(
            f"| {name} | {r['dim']:.0f} | {r['load_s']:.2f} s | {r['docs_per_s']:.0f} |"
            f" {r['query_p50_ms']:.1f} ms | {r['peak_rss_mb']:.0f} MB |",
            flush=True,
        )
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
