"""The first reindex after a Neo4j server start, against SQLite (issue #20's "cold start").

    .venv/bin/python bench/neo4j_cold.py [--n 10000] [--runs 2] [--profile] [--json out.json]

Each run starts a fresh server with `scripts/neo4j-dev` configured like a real one (full JIT,
G1 GC, 2 GB heap, as bench/neo4j_bench.py does), reindexes the same N-memory vault into a fresh
SQLite file and then into the just-started server (the cold figure), then once more into a
second project on the now warm server, and stops the server. With --profile the time of each
write step of the Neo4j backend (ccmemory.index.neo4j.write, the commit, the rest of `apply`)
is added up (the reindex's own thread only). Load average is printed before and after: the
machine is shared.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from neo4j_bench import SERVER_JVM, full_reindex, make_vault  # noqa: E402

from ccmemory.index.sqlite import SQLiteIndex  # noqa: E402

STEPS: collections.Counter[str] = collections.Counter()


def _timed_step(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def inner(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            return fn(*args, **kwargs)  # only the reindex's own thread is timed
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            STEPS[name] += time.perf_counter() - t

    return inner


def install_profile() -> None:
    """Time every write step (module functions looked up at call time) and the commits."""
    import neo4j

    from ccmemory.index.neo4j import write
    from ccmemory.index.neo4j.index import Neo4jIndex

    for name in dir(write):
        obj = getattr(write, name)
        if callable(obj) and getattr(obj, "__module__", "") == write.__name__ and name != "derive":
            setattr(write, name, _timed_step(name, obj))
    Neo4jIndex.apply = _timed_step("apply (total)", Neo4jIndex.apply)  # type: ignore[method-assign]
    neo4j.Transaction.commit = _timed_step("commit", neo4j.Transaction.commit)  # type: ignore[method-assign]


def dev(*args: str) -> str:
    env = {**SERVER_JVM, **os.environ}
    cmd = [sys.executable, str(ROOT / "scripts" / "neo4j-dev"), *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout


def one_run(vault: Any, tmp: Path, k: int) -> dict[str, Any]:
    from ccmemory.index.neo4j import Neo4jIndex

    status = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "neo4j-dev"), "status"], capture_output=True, check=False
    )
    if status.returncode == 0:
        raise SystemExit("a neo4j-dev server of this checkout is running: stop it first (it may be a test's)")
    t = time.perf_counter()
    info = json.loads(dev("start", "--json").strip().splitlines()[-1])
    started = time.perf_counter() - t
    try:
        lite = SQLiteIndex(tmp / f"cold{k}.db")
        t_lite = full_reindex(lite, vault, "bench")
        lite.close()
        t = time.perf_counter()
        neo = Neo4jIndex(info["uri"], info["user"], info["password"])
        connect = time.perf_counter() - t
        STEPS.clear()
        t_cold = full_reindex(neo, vault, "cold-" + uuid.uuid4().hex[:6])
        steps = {k2: round(v, 2) for k2, v in STEPS.most_common()}
        STEPS.clear()
        t_warm = full_reindex(neo, vault, "warm-" + uuid.uuid4().hex[:6])
        neo.close()
    finally:
        dev("stop")
    return {
        "server_start_s": round(started, 1),
        "connect_s": round(connect, 2),
        "sqlite_s": round(t_lite, 2),
        "neo4j_cold_s": round(t_cold, 2),
        "neo4j_second_s": round(t_warm, 2),
        "cold_ratio": round(t_cold / t_lite, 2),
        "cold_steps_s": steps,
        "jvm": info.get("jvm"),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.profile:
        install_profile()
    load_before = os.getloadavg()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        vault = make_vault(Path(tmp) / "repo", args.n)
        for k in range(args.runs):
            runs.append(one_run(vault, Path(tmp), k))
            print(json.dumps(runs[-1]), file=sys.stderr)
    out = {
        "n": args.n,
        "runs": runs,
        "median_cold_ratio": statistics.median(r["cold_ratio"] for r in runs),
        "load": [load_before, os.getloadavg()],
    }
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
