"""Hybrid search latency at 10k memories in a warm process, without waiting for 10k embeddings.

    .venv/bin/python bench/bench_hybrid.py --n 10000

The vault is the synthetic one of bench_index.py. Stored memory vectors are random unit vectors
(embedding 10k memories with the local model takes minutes on 2 cores: bench_index.py --hybrid
measures that); every query is embedded for real by the local MiniLM model, scored against all
stored vectors, fused with the full-text list and ranked exactly as `ccmemory search` does.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_index import QUERIES, make_vault, pct

from ccmemory.service import Service


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
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
        for q in QUERIES:
            svc.search(q)
        lat = []
        for _ in range(5):
            for q in QUERIES:
                t = time.perf_counter()
                resp = svc.search(q, limit=10)
                lat.append((time.perf_counter() - t) * 1000)
        assert resp.mode == "hybrid", resp.notices
        print(f"hybrid search, {args.n} memories, warm process: p50 {pct(lat, 50):.1f} ms, p95 {pct(lat, 95):.1f} ms")


if __name__ == "__main__":
    main()
