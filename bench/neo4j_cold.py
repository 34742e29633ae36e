"""The first reindex after a Neo4j server start, against SQLite (issue #20's "cold start").

    .venv/bin/python bench/neo4j_cold.py [--n 10000] [--runs 2] [--profile] [--json out.json]

Each run starts a fresh server with `scripts/neo4j-dev` configured like a real one (full JIT,
G1 GC, 2 GB heap, as bench/neo4j_bench.py does), reindexes the same N-memory vault into a fresh
SQLite file and then into the just-started server (the cold figure), then once more into a
second project on the now warm server, and stops the server. With --profile the time of each
write step of the Neo4j backend (ccmemory.index.neo4j.write, the commit, the rest of `apply`)
is added up (the reindex's own thread only), for the second reindex too. CPU seconds of the
client process and of the server JVM are reported for each reindex (on a shared machine they
move less than wall time), the server's also per thread group (JIT compilers, Bolt, GC).
Load average is printed before and after: the machine is shared.
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

STEPS: collections.defaultdict[str, float] = collections.defaultdict(float)
# server JVM CPU s during each step
SERVER_CPU: collections.defaultdict[str, float] = collections.defaultdict(float)
SERVER_PID = 0


# called once per memory: timed, but reading the server's CPU time each call would cost more than them
PER_ROW = {"memory_row", "term_props", "edge_rows"}


def _timed_step(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def inner(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            return fn(*args, **kwargs)  # only the reindex's own thread is timed
        pid = 0 if name in PER_ROW else SERVER_PID
        t, c = time.perf_counter(), server_cpu(pid)
        try:
            return fn(*args, **kwargs)
        finally:
            STEPS[name] += time.perf_counter() - t
            if pid:
                SERVER_CPU[name] += server_cpu(pid) - c

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


def _stat_cpu(stat: Path) -> tuple[str, float] | None:
    """(name, CPU seconds user + system) of a Linux /proc stat file; None once it is gone."""
    try:
        raw = stat.read_text()
    except OSError:
        return None
    fields = raw.rsplit(")", 1)[1].split()
    return raw[raw.index("(") + 1 : raw.rindex(")")], (int(fields[11]) + int(fields[12])) / os.sysconf(
        "SC_CLK_TCK"
    )


def server_cpu(pid: int) -> float:
    """CPU seconds the server process has used so far (nan if it is gone)."""
    if not pid:
        return 0.0
    got = _stat_cpu(Path(f"/proc/{pid}/stat"))
    return float("nan") if got is None else got[1]


# (thread group, test on the thread's name as /proc gives it, at most 15 characters)
THREAD_GROUPS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("jit_c2", lambda name: name.startswith("C2 ")),
    ("jit_c1", lambda name: name.startswith("C1 ")),
    ("bolt", lambda name: "Bolt" in name),
    ("gc", lambda name: name.startswith(("G1 ", "GC "))),
)


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds so far of the server JVM's threads by THREAD_GROUPS: the C2 and C1 JIT
    compilers, the Bolt threads (the queries and their network I/O), GC, and "other"."""
    out: collections.defaultdict[str, float] = collections.defaultdict(float)
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        got = _stat_cpu(stat)
        if got is None:
            continue  # the thread ended
        name, seconds = got
        out[next((group for group, test in THREAD_GROUPS if test(name)), "other")] += seconds
    return out


def timed_cpu(fn: Callable[[], float], pid: int) -> tuple[float, float, float, dict[str, float]]:
    """(wall s, client CPU s, server CPU s, server CPU s per thread group) of `fn`."""
    c0, s0, t0 = time.process_time(), server_cpu(pid), thread_cpu(pid)
    wall = fn()
    t1 = thread_cpu(pid)
    threads = {k: round(t1[k] - t0.get(k, 0.0), 2) for k in sorted(t1)}
    return wall, time.process_time() - c0, server_cpu(pid) - s0, threads


def largest_first(seconds: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 2) for k, v in sorted(seconds.items(), key=lambda kv: -kv[1])}


def dev(*args: str) -> str:
    env = {**SERVER_JVM, **os.environ}
    cmd = [sys.executable, str(ROOT / "scripts" / "neo4j-dev"), *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout


def one_run(vault: Any, tmp: Path, k: int) -> dict[str, Any]:
    global SERVER_PID
    from ccmemory.index.neo4j import Neo4jIndex

    status = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "neo4j-dev"), "status"], capture_output=True, check=False
    )
    if status.returncode == 0:
        raise SystemExit("a neo4j-dev server of this checkout is running: stop it first (it may be a test's)")
    load = os.getloadavg()[0]
    t = time.perf_counter()
    info = json.loads(dev("start", "--json").strip().splitlines()[-1])
    started = time.perf_counter() - t
    try:
        lite = SQLiteIndex(tmp / f"cold{k}.db")
        c0 = time.process_time()
        t_lite = full_reindex(lite, vault, "bench")
        cpu_lite = time.process_time() - c0
        lite.close()
        t = time.perf_counter()
        neo = Neo4jIndex(info["uri"], info["user"], info["password"])
        connect = time.perf_counter() - t
        STEPS.clear()
        pid = SERVER_PID = info["pid"]
        SERVER_CPU.clear()
        t_cold, cpu_cold, srv_cold, thr_cold = timed_cpu(
            lambda: full_reindex(neo, vault, "cold-" + uuid.uuid4().hex[:6]), pid
        )
        steps = largest_first(STEPS)
        steps_cpu = largest_first(SERVER_CPU)
        STEPS.clear()
        SERVER_CPU.clear()
        t_warm, cpu_warm, srv_warm, thr_warm = timed_cpu(
            lambda: full_reindex(neo, vault, "warm-" + uuid.uuid4().hex[:6]), pid
        )
        warm_steps = largest_first(STEPS)
        warm_steps_cpu = largest_first(SERVER_CPU)
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
        "second_ratio": round(t_warm / t_lite, 2),
        "cpu_s": {
            "sqlite_client": round(cpu_lite, 2),
            "cold_client": round(cpu_cold, 2),
            "cold_server": round(srv_cold, 2),
            "second_client": round(cpu_warm, 2),
            "second_server": round(srv_warm, 2),
        },
        "server_threads_cpu_s": {"cold": thr_cold, "second": thr_warm},
        "load_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "cold_steps_s": steps,
        "second_steps_s": warm_steps,
        "cold_steps_server_cpu_s": steps_cpu,
        "second_steps_server_cpu_s": warm_steps_cpu,
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
