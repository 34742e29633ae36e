"""Text search ready, and search latency while semantic search is still warming up.

    .venv/bin/python bench/warmup_bench.py [--n 10000] [--kind 60w]

Writes ``--n`` memories (texts as in bench/first_build_bench.py) into a fresh git repository,
times the text phase of a first ``Service.reindex()`` (full-text search works after it), the
scan for missing vectors, and a hybrid search made before any vector exists (it embeds at most
one batch; the background worker is not started here so the figure is the search alone).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from first_build_bench import make_vault, memories


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--kind", default="60w")
    args = ap.parse_args()
    from ccmemory import service as service_mod
    from ccmemory.service import Service
    from ccmemory.vault import Vault

    service_mod.start_background_embedding = lambda root: True  # measure the search alone
    tmp = Path(tempfile.mkdtemp(prefix="ccm-warmup-"))
    try:
        root = tmp / "v"
        make_vault(root, memories(args.kind, args.n))
        print(f"{args.n} {args.kind} memories; load {os.getloadavg()[0]:.2f}", flush=True)
        with Service(Vault(root)) as svc:
            t0 = time.perf_counter()
            svc.reindex()
            print(f"text phase (full-text search ready): {time.perf_counter() - t0:.2f} s", flush=True)
            emb = svc.embedder()
            for _ in range(3):
                t0 = time.perf_counter()
                todo = svc.index.missing_vectors(svc.project, emb.name)
                print(f"scan for missing vectors ({len(todo)}): {time.perf_counter() - t0:.3f} s")
            emb.load()
            for q in ("tenant invoice export", "retry queue backoff"):
                t0 = time.perf_counter()
                resp = svc.search(q, limit=5)
                print(
                    f"hybrid search while warming up: {time.perf_counter() - t0:.2f} s "
                    f"({len(resp.hits)} hits, {resp.vectors_pending} vectors pending)"
                )
        print(f"load {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
