"""Hybrid search latency at 10k memories in a warm process, without waiting for 10k embeddings.

    .venv/bin/python bench/bench_hybrid.py --n 10000 [--cold 10]

With ``--cold N`` it also runs ``ccmemory search <query> --json`` N times as fresh processes
(Python start, imports, model load, first query) against the same index.

The vault is the synthetic one of bench_index.py. Stored memory vectors are random unit vectors
(embedding 10k memories with the local model takes minutes on 2 cores: bench_index.py --hybrid
measures that); every query is embedded for real by the local MiniLM model, scored against all
stored vectors, fused with the full-text list and ranked exactly as `ccmemory search` does.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_index import QUERIES, cli, make_vault, pct, warm_search_ms

from ccmemory.app.service import Service


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--cold", type=int, default=0, help="cold CLI searches to time")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_vault(root, args.n)
        svc = Service.open(root)
        svc.reindex()
        emb = svc.embedder()
        todo = svc.index.missing_vectors(svc.project, emb.name)
        rng = np.random.default_rng(0)
        vecs = rng.normal(size=(len(todo), emb.dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        svc.index.store_vectors(emb.name, emb.dim, list(zip([h for h, _ in todo], vecs, strict=True)))
        lat = warm_search_ms(svc)
        resp = svc.search(QUERIES[0], limit=10)
        assert resp.mode == "hybrid", resp.notices
        print(
            f"hybrid search, {args.n} memories, warm process: p50 {pct(lat, 50):.1f} ms, p95 {pct(lat, 95):.1f} ms"
        )
        svc.close()
        if args.cold:
            walls = []
            for i in range(args.cold):
                wall, _ = cli(root, "search", QUERIES[i % len(QUERIES)], "--json")
                walls.append(wall * 1000)
            print(
                f"cold `ccmemory search --json`, {args.n} memories, {args.cold} runs: "
                f"p50 {pct(walls, 50):.0f} ms, max {max(walls):.0f} ms "
                f"(runs: {', '.join(f'{w:.0f}' for w in walls)})"
            )


if __name__ == "__main__":
    main()
