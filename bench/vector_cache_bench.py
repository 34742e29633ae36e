"""The per-user vector cache (issue 29): what a second clone of an embedded vault costs.

    .venv/bin/python bench/vector_cache_bench.py --size 2000

Builds a synthetic vault (``bench_index.make_vault``), commits it, and runs the real CLI
(`ccmemory reindex --json`, a subprocess each, as a user would) three times with one cache file:
the first clone (every vector embedded, then kept in the cache), a second clone (every vector
from the cache), and a third clone with the cache turned off (every vector embedded again).
Prints wall times, embedding calls and the cache's size, with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))


def reindex(repo: Path, env: dict[str, str]) -> dict[str, object]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ccmemory", "reindex", "--json"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(proc.stdout)
    return {
        "seconds": round(time.perf_counter() - start, 2),
        "added": data["added"],
        "embedded": data["embedded"],
        "from cache": data["vectors_from_cache"],
    }


def main() -> None:
    import bench_index  # type: ignore[import-not-found]

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=2000)
    args = ap.parse_args()
    out: dict[str, object] = {"size": args.size, "load before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        origin = base / "origin"
        origin.mkdir()
        bench_index.make_vault(origin, args.size)  # commits the vault
        cache = base / "cache" / "vectors.sqlite"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "CCMEMORY_VECTOR_CACHE": str(cache)}
        for name, extra in (
            ("first clone (cache empty)", {}),
            ("second clone (cache filled)", {}),
            ("third clone (cache off)", {"CCMEMORY_VECTOR_CACHE": "off"}),
        ):
            clone = base / name.split()[0]
            subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
            out[name] = reindex(clone, {**env, **extra})
            print(name, out[name], file=sys.stderr)
        out["cache file MB"] = round(cache.stat().st_size / 2**20, 1)
    out["load after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
