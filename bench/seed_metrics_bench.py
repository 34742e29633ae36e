"""What the seed's metrics (issue 31, surfaces/dashboard/seed.py) cost at N memories.

    flock /tmp/ccm-bench.lock .venv/bin/python bench/seed_metrics_bench.py --n 10000 \
        [--sessions 300] [--out bench/RESULTS-seed-metrics.md]

Set-up as bench/dashboard_bench.py (N memories, random stored vectors, 20k telemetry events, 200
spools) plus `--sessions` session records of 6 prompts each, half of them explaining (the seed's
context events), some repeated across sessions. Timed in process: the seed's prompt flags cold
(reads the records, embeds up to 1000 prompts with the real local model) and warm (vectors cached
by content hash), our metrics and the seed's over the same inputs; then `ccmemory stats --json`
with and without `--counts-only` as subprocesses, interleaved.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

SUBJECTS = ["the API", "our database", "the deploy", "the cache", "the queue", "our auth service"]
FACTS = ["uses JWT tokens", "runs on Fridays", "is PostgreSQL 16", "expires after an hour", "is Redis 7"]


def write_sessions(root: Path, count: int) -> int:
    """Session records; returns the number of explaining prompts written."""
    from ccmemory.features.sessions.store import write

    rng = random.Random(5)
    t0 = time.time() - 50 * 86400
    explaining = 0
    for s in range(count):
        start = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0 + s * 9000))
        prompts = []
        for i in range(6):
            if i % 2 == 0:
                subject, fact = rng.choice(SUBJECTS), rng.choice(FACTS)
                prompts.append(f"For context, {subject} {fact} since release {rng.randint(1, 40)}.")
                explaining += 1
            else:
                prompts.append(f"fix the failing test number {rng.randint(1, 10_000)} in module {s}")
        write(root, {"schema": 1, "id": f"s{s}", "start": start, "end": start, "prompts": prompts})
    return explaining


def timed(fn: object) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()  # type: ignore[operator]
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--sessions", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from bench_index import make_vault
    from dashboard_bench import seed_telemetry, store_random_vectors

    from ccmemory.app.service import Service
    from ccmemory.core import telemetry
    from ccmemory.core.vault import Vault
    from ccmemory.surfaces.dashboard import gather, seed
    from ccmemory.surfaces.dashboard import metrics as mx

    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    with tempfile.TemporaryDirectory(prefix="ccm-seed-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        make_vault(root, args.n)
        svc = Service(Vault(root))
        svc.reindex()
        store_random_vectors(svc)
        ids = [m.id for m in svc.index.query(svc.filters(include_superseded=True), limit=args.n)]
        seed_telemetry(root, ids)
        explaining = write_sessions(root, args.sessions)
        say(f"N={args.n} memories, {args.sessions} session records ({explaining} explaining prompts)")
        say(f"load average before: {os.getloadavg()[0]:.2f}")
        store = telemetry.open_store(svc.vault.dir, svc.config.raw)
        store.ingest()
        snap = mx.load_snapshot(svc)
        svc.embedder()  # the model load is not the metric's cost
        cold, _ = timed(lambda: gather.prompt_flags(svc))
        warm, prompts = timed(lambda: gather.prompt_flags(svc))
        say(
            f"seed prompt flags (read records, classify, embed ≤{seed.PROMPT_CAP}, compare): cold {cold:.2f} s, warm {warm:.3f} s"
        )
        inp = gather.inputs(svc, store, snap, prompts=prompts)  # type: ignore[arg-type]
        ours = [timed(lambda: mx.compute(inp))[0] for _ in range(args.repeats)]
        theirs = [timed(lambda: seed.compute(inp))[0] for _ in range(args.repeats)]
        say(
            f"metrics over the same inputs, median of {args.repeats}: ours {statistics.median(ours) * 1000:.0f} ms, "
            f"seed's {statistics.median(theirs) * 1000:.0f} ms"
        )
        rer = seed.compute(inp)["re_explanation_rate"]
        say(f"seed RER on this set: {rer['display']} ({rer.get('duplicates')} of {rer.get('events')})")
        store.close()
        svc.close()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        runs: dict[str, list[float]] = {"--counts-only": [], "": []}
        for _ in range(args.repeats):
            for flag in runs:  # interleaved
                cmd = [sys.executable, "-m", "ccmemory", "stats", "--json", *([flag] if flag else [])]
                t = time.perf_counter()
                out = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=True)
                runs[flag].append(time.perf_counter() - t)
                json.loads(out.stdout)
        say(
            f"`ccmemory stats --json`, median of {args.repeats} (warm caches): counts only "
            f"{statistics.median(runs['--counts-only']):.2f} s, with every metric {statistics.median(runs['']):.2f} s"
        )
        say(f"load average after: {os.getloadavg()[0]:.2f}")
    if args.out:
        args.out.write_text(
            "# The seed's metrics: cost\n\n```\n" + "\n".join(lines) + "\n```\n", encoding="utf-8"
        )


if __name__ == "__main__":
    main()
