"""Time the pattern job's cache (issue 31): suggestions computed directly (`features.suggest.compute`)
against read from `.ccmemory/local/suggestions.json` while the index is unchanged (`current`, the
path the dashboard, MCP `list_suggestions` and `ccmemory suggest` take), interleaved, on the dev-set
vaults and on a synthetic vault (bench/scale/make_vault.py), and check both give the same answer.

    flock /tmp/ccm-bench.lock .venv/bin/python bench/suggest_cache_bench.py [--n 5000] [--runs 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "scale"))

from ccmemory.app.service import Service  # noqa: E402
from ccmemory.features import suggest  # noqa: E402

SETS = ("recall-harbor", "recall-quayside", "tuning2", "blind")


def _commit(repo: Path) -> None:
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"]):
        subprocess.run(["git", *cmd], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qm", "seed"], cwd=repo, check=True
    )


def measure(repo: Path, runs: int) -> tuple[int, int, float, float]:
    with Service.open(repo) as svc:
        svc.reindex()
        count = svc.index.stats(svc.project)["memories"]
        direct = suggest.refresh(svc)  # stores the cache (and warms the index's pages)
        direct_t, cached_t = [], []
        for _ in range(runs):  # interleaved: one of each per round
            t = time.perf_counter()
            got = suggest.compute(svc)
            direct_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            hit = suggest.current(svc)
            cached_t.append(time.perf_counter() - t)
            assert [asdict(s) for s in hit] == [asdict(s) for s in got] == [asdict(s) for s in direct]
        assert suggest.cached(svc) is not None
    return count, len(direct), statistics.median(direct_t), statistics.median(cached_t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000, help="memories in the synthetic vault (0: none)")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    load = Path("/proc/loadavg").read_text().split()[0]
    print(f"load (1 min) at start: {load}")
    print("| vault | memories | suggestions | computed (median) | from the cache (median) | ratio |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        repos = []
        for name in SETS:
            repo = Path(tmp) / name
            shutil.copytree(ROOT / "bench" / "memories" / name / "ccmemory", repo / ".ccmemory")
            _commit(repo)
            repos.append((name, repo))
        if args.n:
            import make_vault as mv

            # make_vault.py has no template for the types added since (concept, hypothesis,
            # knowledge_gap): generate the ones it knows
            mv.TYPES = {k: v for k, v in mv.TYPES.items() if k in mv._OWN}  # type: ignore[attr-defined]
            make_vault = mv.make_vault
            repo = Path(tmp) / f"synthetic-{args.n}"
            make_vault(repo, args.n)
            repos.append((f"synthetic {args.n}", repo))
        for name, repo in repos:
            count, found, d, c = measure(repo, args.runs)
            print(f"| {name} | {count} | {found} | {d * 1000:.1f} ms | {c * 1000:.1f} ms | {d / c:.1f}× |")
    print(f"load (1 min) at end: {Path('/proc/loadavg').read_text().split()[0]}")


if __name__ == "__main__":
    main()
