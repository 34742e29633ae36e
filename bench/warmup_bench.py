"""Text search ready, and search latency while semantic search is still warming up.

    .venv/bin/python bench/warmup_bench.py [--n 10000] [--kind 60w]

Writes ``--n`` memories (texts as in bench/first_build_bench.py) into a fresh git repository,
times the text phase of a first ``Service.reindex()`` (full-text search works after it), the
scan for missing vectors, and hybrid searches made before any vector exists (each embeds at most
one batch; only the first scans for missing vectors; the background worker is not started here so
the figure is the search alone), then searches while a worker holds the lock (they embed nothing
and read the worker's count).
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


class Counted:
    """The real embedder, counting the document texts each search made it embed."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim  # type: ignore[attr-defined]
        self.documents = 0

    def embed(self, texts: list[str], kind: str = "document") -> object:
        if kind == "document":
            self.documents += len(texts)
        return self.inner.embed(texts, kind)  # type: ignore[attr-defined]


def search_once(svc: object, q: str, label: str, counted: Counted, scans: list[int]) -> None:
    before, scans_before = counted.documents, scans[0]
    t0 = time.perf_counter()
    resp = svc.search(q, limit=5)  # type: ignore[attr-defined]
    print(
        f"{label}: {time.perf_counter() - t0:.2f} s ({len(resp.hits)} hits, embedded "
        f"{counted.documents - before}, scans {scans[0] - scans_before}, "
        f"{resp.vectors_pending} vectors pending)",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--kind", default="60w")
    args = ap.parse_args()
    from ccmemory.app.service import Service
    from ccmemory.core.vault import Vault
    from ccmemory.retrieval import warming

    warming.start_background_embedding = lambda root: True  # measure the search alone
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
            counted = Counted(emb)
            svc._embedder = counted
            scans = [0]
            inner_scan = svc.index.missing_vectors

            def scan(*a: object) -> object:
                scans[0] += 1
                return inner_scan(*a)  # type: ignore[arg-type]

            svc.index.missing_vectors = scan  # type: ignore[method-assign]
            queries = ("tenant invoice export", "retry queue backoff", "cookie session cache", "schema index")
            for q in queries:
                search_once(svc, q, "hybrid search while warming up", counted, scans)
            # a background worker holds the lock and keeps its count: the search embeds nothing
            from ccmemory.retrieval import warming

            local = root / ".ccmemory" / "local"
            fd = os.open(local / warming.LOCK, os.O_RDWR | os.O_CREAT, 0o644)
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            warming.write_status(local, emb.name, svc.vectors_pending)
            for q in queries[:2]:
                search_once(svc, q, "hybrid search while a worker embeds", counted, scans)
            os.close(fd)
        print(f"load {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
