"""Index benchmarks on synthetic vaults (run on demand, not in the test suite).

    .venv/bin/python bench/bench_index.py --sizes 1000 10000 --hybrid --out bench/RESULTS-index.md

Measures: full text-only rebuild, no-change reindex and one-file-changed reindex as whole CLI
processes, search p50/p95 in process and through the CLI, and peak RSS of each CLI run.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ccmemory.core.model import TYPES, Memory, Relation, new_id  # noqa: E402
from ccmemory.core.vault import Vault  # noqa: E402
from ccmemory.features.cothinker import COTHINKER_TYPES  # noqa: E402

WORDS = (
    "auth token cookie session cache redis postgres migration schema index query retry backoff deploy "
    "release branch merge review test fixture mock docker compose kubernetes helm secret vault config "
    "logging metrics tracing latency throughput queue worker cron webhook api client server grpc rest "
    "graphql pagination cursor timeout deadlock transaction isolation replica shard partition backup "
    "restore encryption tls certificate oauth jwt refresh expiry rotation feature flag rollout canary"
).split()
# Realistic text: the technical words above plus 4,000 pseudo-words, drawn with Zipf frequencies
# (a vault's vocabulary is large and skewed; 80 words in every memory would make every query
# match every memory, which no real vault does).
_SYL = "ka lo mi nu pe ra si to vu xe za bo ce di fu ga he ji".split()
_PSEUDO = sorted({a + b + c for a in _SYL for b in _SYL for c in _SYL})[:4000]
VOCAB = _PSEUDO[:200] + WORDS + _PSEUDO[200:]  # technical words at mid-frequency ranks
ZIPF = [1.0 / (rank + 1) for rank in range(len(VOCAB))]
QUERIES = [
    "where do login tokens live",
    "redis cache timeout",
    "postgres migration failed",
    "retry backoff for webhooks",
    "how do we deploy a release",
    "jwt refresh token rotation",
    "database transaction isolation level",
    "feature flag rollout plan",
    "tls certificate expiry",
    "graphql pagination cursor",
]


def make_vault(root: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", "config", "user.email", "bench@example.com"], cwd=root, check=True)
    subprocess.run(["git", "config", "user.name", "Bench"], cwd=root, check=True)
    (root / ".ccmemory" / "local").mkdir(parents=True)
    vault = Vault(root)
    # the eleven types of the original layout: the co-thinker types (issue 31) need fields these
    # memories do not have, and leaving them out keeps a given seed's vault as it was
    types = [t for t in TYPES if t not in COTHINKER_TYPES]
    ids: list[str] = []
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for i in range(n):
        words = rng.sample(WORDS, 8)
        text = rng.choices(VOCAB, weights=ZIPF, k=60)
        mtype = types[i % len(types)]
        rels = [Relation("RELATES_TO", rng.choice(ids))] if ids and rng.random() < 0.3 else []
        sup = [rng.choice(ids)] if ids and rng.random() < 0.05 else []
        m = Memory(
            id=new_id(),
            type=mtype,
            title=" ".join(words[:5]).capitalize() + f" #{i}",
            created=start + timedelta(minutes=37 * i),
            body=" ".join(text) + ".",
            author="bench@example.com",
            topics=words[5:7],
            files=[f"src/{words[7]}.py"],
            confidence=0.8,
            source="manual",
            supersedes=sup,
            relations=rels,
        )
        ids.append(m.id)
        vault.write_new(m)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "vault"], cwd=root, check=True)
    # files older than the racy window, as in a real checkout
    old = time.time() - 60
    for p in vault.iter_paths():
        os.utime(p, (old, old))


def cli(root: Path, *args: str) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one `ccmemory ...` process."""
    cmd = [str(ROOT / ".venv" / "bin" / "ccmemory"), *args]
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr}")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return wall, rss


def child_rss(root: Path, *args: str) -> float:
    """Peak RSS of one CLI call, measured in a fresh wrapper process (RUSAGE_CHILDREN is a max)."""
    code = (
        "import resource,subprocess,sys;"
        "subprocess.run(sys.argv[1:],capture_output=True);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / ".venv" / "bin" / "ccmemory"), *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip())


def warm_search_ms(svc: Any, repeats: int = 5) -> list[float]:
    """Milliseconds of each `svc.search(q, limit=10)` over QUERIES, after one untimed pass."""
    for q in QUERIES:
        svc.search(q)
    lat = []
    for _ in range(repeats):
        for q in QUERIES:
            t = time.perf_counter()
            svc.search(q, limit=10)
            lat.append((time.perf_counter() - t) * 1000)
    return lat


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def run(n: int, hybrid: bool) -> dict[str, float]:
    from ccmemory.app.service import Service

    res: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        make_vault(root, n)
        res["generate_s"] = time.perf_counter() - t
        res["full_rebuild_s"], _ = cli(root, "reindex", "--full", "--no-embed")
        res["full_rebuild_rss_mb"] = child_rss(root, "reindex", "--full", "--no-embed")
        walls = [cli(root, "reindex", "--no-embed")[0] for _ in range(5)]
        res["nochange_reindex_s"] = statistics.median(walls)
        res["nochange_rss_mb"] = child_rss(root, "reindex", "--no-embed")
        one = sorted((root / ".ccmemory").rglob("*.md"))[n // 2]
        walls = []
        for k in range(5):
            one.write_text(one.read_text() + f"\nedit {k}\n")
            old = time.time() - 10
            os.utime(one, (old + k, old + k))
            walls.append(cli(root, "reindex", "--no-embed")[0])
        res["one_changed_reindex_s"] = statistics.median(walls)
        # in-process search (warm), text mode: this path
        svc = Service.open(root)
        for q in QUERIES:
            svc.search(q, mode="text")
        lat = []
        for _ in range(5):
            for q in QUERIES:
                t = time.perf_counter()
                svc.search(q, mode="text", limit=10)
                lat.append((time.perf_counter() - t) * 1000)
        res["search_inproc_p50_ms"] = pct(lat, 50)
        res["search_inproc_p95_ms"] = pct(lat, 95)
        svc.close()
        walls = [cli(root, "search", q, "--mode", "text", "--json")[0] * 1000 for q in QUERIES]
        res["search_cli_p50_ms"] = pct(walls, 50)
        res["search_cli_p95_ms"] = pct(walls, 95)
        res["search_cli_rss_mb"] = child_rss(root, "search", QUERIES[0], "--mode", "text")
        if hybrid:
            t = time.perf_counter()
            cli(root, "reindex")  # computes the embeddings (local MiniLM)
            res["embed_all_s"] = time.perf_counter() - t
            res["embed_per_s"] = n / res["embed_all_s"]
            svc = Service.open(root)
            lat = warm_search_ms(svc)
            res["hybrid_inproc_p50_ms"] = pct(lat, 50)
            res["hybrid_inproc_p95_ms"] = pct(lat, 95)
            svc.close()
            walls = [cli(root, "search", q, "--json")[0] * 1000 for q in QUERIES]
            res["hybrid_cli_cold_p50_ms"] = pct(walls, 50)
            res["hybrid_cli_cold_max_ms"] = max(walls)
            res["hybrid_cli_rss_mb"] = child_rss(root, "search", QUERIES[0])
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--hybrid", action="store_true", help="also embed everything and time hybrid search")
    args = ap.parse_args()
    rows = {n: run(n, args.hybrid) for n in args.sizes}
    keys = list(next(iter(rows.values())))
    lines = [
        f"Command: `.venv/bin/python bench/bench_index.py --sizes {' '.join(map(str, args.sizes))}"
        + (" --hybrid" if args.hybrid else "")
        + "`",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{datetime.now(UTC):%Y-%m-%d}",
        "",
        "| metric | " + " | ".join(f"{n} memories" for n in rows) + " |",
        "|---|" + "---|" * len(rows),
    ]
    for k in keys:
        lines.append(f"| {k} | " + " | ".join(f"{rows[n][k]:.3f}" for n in rows) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
