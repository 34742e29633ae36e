"""Fill a large vault's vectors table for *latency* measurement (issue 29; on demand, not in CI).

    .venv/bin/python bench/scale/fill_vectors.py /tmp/vault-100k --real 2000

Embedding 100k memories with the local model takes about half an hour on 2 cores. For search
latency only the shape and storage format of the vectors matter, so: the first ``--real``
missing texts (in the index's own order, by text hash) are embedded for real with the product
embedder (``Service.embedder()``); every other memory gets one of those real vectors (by
position, round robin) plus Gaussian noise of standard deviation ``--noise`` per component,
re-normalised to unit length. Everything is stored through the product's own path
(``index.store_vectors``: float32 bytes, one row per text hash and embedder), so the format and
the embedder name are exactly those of an embedded vault. Deterministic for a given ``--seed``.
Quality is meaningless on such vectors: they measure speed only.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from ccmemory.app.service import Service


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--real", type=int, default=2000, help="texts embedded for real")
    ap.add_argument("--noise", type=float, default=0.02, help="per-component noise of the copies")
    ap.add_argument("--seed", type=int, default=29)
    args = ap.parse_args()
    with Service.open(args.root) as svc:
        emb = svc.embedder()
        if emb is None:
            raise SystemExit("no embedder")
        todo = svc.index.missing_vectors(svc.project, emb.name)
        real = todo[: args.real]
        t = time.perf_counter()
        base = np.asarray(emb.embed([text for _, text in real], kind="document"), dtype=np.float32)
        took = time.perf_counter() - t
        svc.index.store_vectors(emb.name, int(emb.dim), list(zip([h for h, _ in real], base, strict=True)))
        print(f"embedded {len(real)} real texts in {took:.1f} s", flush=True)
        rng = np.random.default_rng(args.seed)
        rest = todo[len(real) :]
        for start in range(0, len(rest), 10_000):
            chunk = rest[start : start + 10_000]
            idx = (np.arange(start, start + len(chunk)) % len(base)).astype(np.int64)
            vecs = base[idx] + rng.normal(scale=args.noise, size=(len(chunk), base.shape[1])).astype(
                np.float32
            )
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            svc.index.store_vectors(
                emb.name, int(emb.dim), list(zip([h for h, _ in chunk], vecs, strict=True))
            )
        left = len(svc.index.missing_vectors(svc.project, emb.name))
        print(f"stored {len(real)} real and {len(rest)} perturbed vectors ({emb.name}); missing now: {left}")


if __name__ == "__main__":
    main()
