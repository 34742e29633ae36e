"""Embedding throughput and model load time of the local MiniLM embedder.

    .venv/bin/python bench/embed_bench.py [--n 1000] [--batch-sizes 16,32,64] [--repeat 3]
                                          [--graphs integer,float]

Two workloads, generated deterministically: "sentences" (a memory title alone, 6-9 words) and
"memories" (title plus one or two sentences, 25-45 words, like the files ccmemory writes).
Load time is measured in a fresh interpreter (import ccmemory.retrieval.embed + load model and
tokenizer), so the page cache is warm but nothing is imported yet.

Graphs: "integer" is the default embedder (the int8-kernel rewrite of ccmemory/int8graph.py),
"float" runs the published file as onnxruntime loads it (``LocalMiniLM(integer=False)``). Their
runs are interleaved, so both see the same machine state.

The machine may be shared: the script prints the load average and a numpy float32 matmul
rate next to the figures, so runs on a busy machine can be told apart.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import subprocess
import sys
import time

SUBJECTS = [
    "auth tokens",
    "the build cache",
    "database migrations",
    "the CI pipeline",
    "feature flags",
    "the search index",
    "API rate limits",
    "the release branch",
    "error logging",
    "session state",
    "the payment webhook",
    "image uploads",
    "the test fixtures",
    "dependency pins",
    "the CLI",
]
VERBS = [
    "must live in",
    "were moved to",
    "should never touch",
    "depend on",
    "are validated by",
    "broke because of",
    "are cached in",
    "are generated from",
    "replace",
    "are checked against",
]
OBJECTS = [
    "httpOnly cookies",
    "the Redis cluster",
    "a nightly job",
    "the staging environment",
    "the monorepo root",
    "a Postgres advisory lock",
    "the vendor SDK",
    "the pre-commit hook",
    "a retry queue with backoff",
    "the shared S3 bucket",
    "the ORM session",
    "GitHub Actions",
]
REASONS = [
    "because scripts on the page could read localStorage",
    "since the old approach leaked connections under load",
    "after the outage in March showed the race clearly",
    "so reviewers can see the change next to the code",
    "which keeps cold starts under a second",
    "as agreed in the architecture review",
]


def short_memories(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        title = f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
        body = f"We decided that {rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
        body += f" {rng.choice(REASONS)}."
        if rng.random() < 0.5:
            body += f" Revisit if {rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}."
        out.append(f"{title}\n\n{body}")
    return out


LOAD_SNIPPET = """
import time
t0 = time.perf_counter()
from ccmemory.retrieval.embed import LocalMiniLM
e = LocalMiniLM(integer={integer})
e.load()
t1 = time.perf_counter()
e.embed(["warm up"], "query")
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def load_times(repeat: int, integer: bool) -> tuple[list[float], list[float]]:
    loads, firsts = [], []
    snippet = LOAD_SNIPPET.replace("{integer}", str(integer))
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", snippet], capture_output=True, text=True, check=True
        ).stdout.split()
        loads.append(float(out[0]))
        firsts.append(float(out[1]))
    return loads, firsts


def machine_state() -> str:
    import numpy as np

    a = np.random.rand(384, 384).astype(np.float32)
    b = np.random.rand(384, 1536).astype(np.float32)
    a @ b
    t0 = time.perf_counter()
    for _ in range(30):
        a @ b
    gflops = 2 * 384 * 384 * 1536 * 30 / (time.perf_counter() - t0) / 1e9
    load = os.getloadavg()
    return f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; numpy matmul {gflops:.1f} GFLOP/s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="memories per throughput run")
    ap.add_argument("--batch-sizes", default="16,32,64")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--graphs", default="integer,float", help="integer, float or both")
    args = ap.parse_args()

    from ccmemory.retrieval.embed import LocalMiniLM

    memories = short_memories(args.n)
    sentences = [m.split("\n")[0] for m in memories]
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}")
    print(f"before: {machine_state()}")

    graphs = [g.strip() for g in args.graphs.split(",") if g.strip()]
    for graph in graphs:
        loads, firsts = load_times(args.repeat, graph == "integer")
        print(
            f"[{graph}] cold load (import + model + tokenizer, fresh process): "
            f"median {statistics.median(loads):.3f} s "
            f"(runs: {', '.join(f'{x:.3f}' for x in loads)}); first query after load: "
            f"{statistics.median(firsts) * 1000:.1f} ms"
        )

    for label, texts in (("sentences", sentences), ("memories", memories)):
        words = statistics.mean(len(t.split()) for t in texts)
        for bs in [int(x) for x in args.batch_sizes.split(",")]:
            embs = {g: LocalMiniLM(batch_size=bs, integer=g == "integer") for g in graphs}
            rates: dict[str, list[float]] = {g: [] for g in graphs}
            for emb in embs.values():
                emb.load()
                emb.embed(texts[: max(bs, 8)])
            for _ in range(args.repeat):
                for g, emb in embs.items():
                    t0 = time.perf_counter()
                    emb.embed(texts)
                    rates[g].append(len(texts) / (time.perf_counter() - t0))
            for g in graphs:
                print(
                    f"[{g}] {label} (mean {words:.1f} words) batch {bs:3d}: median "
                    f"{statistics.median(rates[g]):6.1f} texts/s "
                    f"(runs: {', '.join(f'{r:.1f}' for r in rates[g])})",
                    flush=True,
                )

    emb = LocalMiniLM()
    emb.load()
    lat = []
    for q in sentences[:200]:
        t0 = time.perf_counter()
        emb.embed([q], "query")
        lat.append(time.perf_counter() - t0)
    lat.sort()
    print(
        f"single query embed: p50 {lat[len(lat) // 2] * 1000:.1f} ms, "
        f"p95 {lat[int(len(lat) * 0.95)] * 1000:.1f} ms"
    )
    search_path(emb, sentences)
    print(f"after: {machine_state()}")


def search_path(emb: object, queries: list[str], n: int = 10_000) -> None:
    """The vector half of a hybrid query at 10k memories, once warm: embed the query, score
    10k stored vectors (rebuilt from BLOBs once, as the SQLite index would), fuse 100 + 100."""
    import numpy as np

    from ccmemory.retrieval.embed import top_k, vector_to_bytes, vectors_from_bytes
    from ccmemory.text import fusion

    rng = np.random.default_rng(1)
    stored = rng.normal(size=(n, 384)).astype(np.float32)
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    blobs = [vector_to_bytes(v) for v in stored]
    t0 = time.perf_counter()
    matrix = vectors_from_bytes(blobs, 384)
    load_ms = (time.perf_counter() - t0) * 1000
    text_scores = {i: float(s) for i, s in enumerate(rng.random(100) * 20)}
    total, scoring, fusing = [], [], []
    for q in queries[:100]:
        t0 = time.perf_counter()
        qv = emb.embed([q], "query")[0]  # type: ignore[attr-defined]
        t1 = time.perf_counter()
        hits = top_k(qv, matrix, 100)
        t2 = time.perf_counter()
        fusion.DEFAULT.fuse(text_scores, dict(hits))
        t3 = time.perf_counter()
        total.append(t3 - t0)
        scoring.append(t2 - t1)
        fusing.append(t3 - t2)

    def p50(xs: list[float]) -> str:
        return f"{sorted(xs)[len(xs) // 2] * 1000:.2f} ms"

    print(
        f"vector search at {n} memories: stack BLOBs {load_ms:.1f} ms once; per query p50: "
        f"embed+score+fuse {p50(total)}, score {p50(scoring)}, fuse {p50(fusing)}"
    )


if __name__ == "__main__":
    main()
