"""Session search latency at scale (issue 28): N synthetic session records in a temporary
repository, searched the old way (every JSON record read and analysed, `search.hybrid` over them)
and through the local session index (`service.search_sessions`, `service.search_prompts`), text
half only (the semantic half needs the model and embeds every record once; not measured here).

    python bench/sessions_scale_bench.py [--records 2000 20000] [--queries 20] [--json]

Reports per size: the index build (`sync(full=True)`, as `reindex --full`), the median and p90 ms
of a search both ways (a fresh call each time, as one CLI or MCP request: open, refresh, query,
read the result records), the refresh after one record was rewritten (the worker's case), a
prompt search, and how many queries give the same top 10 both ways.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = (
    "login cache thumbnail payment webhook retry invoice discount coupon migration schema index "
    "celery worker queue timeout flaky test fixture docker compose deploy rollback feature flag "
    "search ranking embedding token refresh cookie session csrf cors header gzip upload s3 bucket "
    "email template locale german french translation currency rounding tax report export csv pdf "
    "graph chart dashboard metric alert pager latency memory leak profile slow query n+1 orm "
    "postgres redis kafka consumer offset backfill cron schedule timezone daylight saving bug fix "
    "refactor rename extract module interface typing mypy lint ruff format release changelog tag"
).split()
FILES = [f"src/{a}/{b}.py" for a in ("api", "core", "jobs", "web") for b in WORDS[:30]]


def synth(i: int, rnd: random.Random) -> dict[str, Any]:
    day = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"
    prompts = [" ".join(rnd.choices(WORDS, k=rnd.randint(6, 30))) for _ in range(rnd.randint(1, 8))]
    return {
        "schema": 1,
        "id": f"s{i:06d}-{rnd.randrange(16**8):08x}",
        "branch": rnd.choice(["main", "feature/search", "fix/login", "chore/release"]),
        "start": day,
        "end": day,
        "prompts": prompts,
        "files_read": rnd.sample(FILES, 3),
        "files_changed": rnd.sample(FILES, rnd.randint(0, 4)),
        "commands": [{"cmd": f"pytest tests/test_{rnd.choice(WORDS)}.py", "exit": rnd.choice([0, 0, 1])}],
        "errors": [],
        "memories": [],
        "truncated": False,
        "unanswered": False,
        "summary": f"Asked: {prompts[0][:160]}. Done: ran 1 command(s).",
    }


def _ms(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {"median": round(statistics.median(s), 1), "p90": round(s[int(0.9 * (len(s) - 1))], 1)}


def run(n: int, queries: list[str]) -> dict[str, Any]:
    from ccmemory.features.sessions import index, search, service, store

    rnd = random.Random(n)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        (root / ".ccmemory" / "local" / "sessions").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        folder = store.sessions_dir(root)
        for i in range(n):
            rec = synth(i, rnd)
            (folder / f"{store.safe_name(rec['id'])}.json").write_text(
                json.dumps(rec, indent=1), encoding="utf-8"
            )
        past = time.time() - 3600
        os.utime(folder, (past, past))  # as a folder not written in the last seconds

        t0 = time.perf_counter()
        report = index.sync(root, full=True)
        build_s = time.perf_counter() - t0
        db = root / ".ccmemory" / "local" / "index.db"
        size_mb = sum(p.stat().st_size for p in db.parent.glob("index.db*")) / 1e6

        old_ms, new_ms, prompt_ms, same = [], [], [], 0
        for q in queries:
            t0 = time.perf_counter()
            recs = store.all_records(root)
            old = [r["id"] for r, _ in search.hybrid(q, recs, root, limit=10, semantic=False)[0]]
            old_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            rows, _ = service.search_sessions(root, q, limit=10, semantic=False)
            new_ms.append((time.perf_counter() - t0) * 1000)
            same += [r["id"] for r in rows] == old
            t0 = time.perf_counter()
            service.search_prompts(root, q, limit=10)
            prompt_ms.append((time.perf_counter() - t0) * 1000)

        # the worker's case: one record rewritten, then a search (the folder changed: a stat sync)
        rec = synth(n + 1, rnd)
        store.write(root, rec)
        index.note_written(root, store.record_path(root, rec["id"]))
        os.utime(folder, (past + 1, past + 1))
        t0 = time.perf_counter()
        service.search_sessions(root, queries[0], limit=10, semantic=False)
        after_write_ms = (time.perf_counter() - t0) * 1000
    return {
        "records": n,
        "build_seconds": round(build_s, 2),
        "indexed": report.indexed,
        "index_mb": round(size_mb, 1),
        "json_scan_ms": _ms(old_ms),
        "index_ms": _ms(new_ms),
        "prompts_ms": _ms(prompt_ms),
        "search_after_a_write_ms": round(after_write_ms, 1),
        "same_top10": f"{same}/{len(queries)}",
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, nargs="+", default=[2000, 20000])
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rnd = random.Random(7)
    queries = [" ".join(rnd.choices(WORDS, k=rnd.randint(2, 6))) for _ in range(args.queries)]
    out = [run(n, queries) for n in args.records]
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for r in out:
        print(
            f"{r['records']} records: index built in {r['build_seconds']} s ({r['index_mb']} MB); search "
            f"JSON scan median {r['json_scan_ms']['median']} ms (p90 {r['json_scan_ms']['p90']}), "
            f"index median {r['index_ms']['median']} ms (p90 {r['index_ms']['p90']}), "
            f"prompts median {r['prompts_ms']['median']} ms, after a write {r['search_after_a_write_ms']} ms; "
            f"same top 10: {r['same_top10']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
