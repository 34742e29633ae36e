"""Where a cold `ccmemory search QUERY` (hybrid, no warm server) spends its time, stage by stage
(issue 29; on demand, not in CI).

    flock /tmp/ccm-bench.lock env -u PYTHONDONTWRITEBYTECODE CCMEMORY_SEARCH_WARM=0 \\
        .venv/bin/python bench/scale/cold_stages.py /tmp/vault-100000 --runs 5 [--src DIR]

Each run is a fresh interpreter (``--python``, with ``PYTHONPATH=--src`` when given) in the vault,
running the real CLI in process (``ccmemory.surfaces.cli.main(["search", QUERY])``, stdout to
/dev/null) with timers wrapped around the functions of each stage. A stage's figure is its wall
time in milliseconds, nested stages included in their parent, and when it began (ms after the
spawn). "start-up" is from the parent's clock before the child was spawned to the child's first line (interpreter
start and ``site``). Stages that ran in another thread are marked with their thread's name. The
median over runs is printed, with the 1-minute load average before each run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench_index import QUERIES  # noqa: E402

#: (label, "module:qualified name") of each timed function; nesting comes from the call order.
STAGES: list[tuple[str, str]] = [
    ("open the service (Service.open)", "ccmemory.app.service:Service.open"),
    ("freshness check (git)", "ccmemory.app.freshness:moved"),
    ("ask a warm process (socket)", "ccmemory.features.recall.warm:search"),
    ("Service.search", "ccmemory.app.service:Service.search"),
    ("missing-vector check", "ccmemory.index.sqlite:SQLiteIndex.missing_vectors"),
    ("matrix (map the file or read SQLite)", "ccmemory.index.sqlite:SQLiteIndex._vector_matrix"),
    ("full text", "ccmemory.index.sqlite:SQLiteIndex.text_search"),
    ("query embedding (model load included)", "ccmemory.retrieval.embed:LocalMiniLM.embed"),
    ("model load (LocalMiniLM.load)", "ccmemory.retrieval.embed:LocalMiniLM.load"),
    ("tokenizer", "ccmemory.retrieval.embed:LocalMiniLM._load_tokenizer"),
    ("ort session (import, probe, session)", "ccmemory.retrieval.embed:LocalMiniLM._load_session"),
    ("kernel probe", "ccmemory.retrieval.int8graph:signed_kernel_exact"),
    ("integer graph path", "ccmemory.retrieval.int8graph:prepared"),
    ("vector search", "ccmemory.index.sqlite:SQLiteIndex.vector_search"),
    ("memories read (get)", "ccmemory.index.sqlite:SQLiteIndex.get"),
    ("staleness (for_indexed)", "ccmemory.features.lifecycle.staleness:for_indexed"),
    ("short ids", "ccmemory.app.resolve:short_ids"),
    ("printing", "ccmemory.surfaces.cli.cmd_search:_echo_hits"),
]

_CHILD = r"""
import importlib, json, sys, threading, time
t_child = time.time()
t0 = time.perf_counter()
spawned = float(sys.argv[1]); query = sys.argv[2]; stages = json.loads(sys.argv[3])
marks = {"start-up": (t_child - spawned) * 1000}
t = time.perf_counter()
from ccmemory.surfaces.cli import main
import ccmemory.surfaces.cli.app, ccmemory.surfaces.cli.cmd_search
marks["import the CLI (click, app, cmd_search)"] = (time.perf_counter() - t) * 1000
events = []

def wrap(owner, attr, label):
    fn = owner.__dict__[attr]
    is_static = isinstance(fn, (classmethod, staticmethod))
    inner = fn.__func__ if is_static else fn
    def timed(*a, **k):
        s = time.perf_counter()
        try:
            return inner(*a, **k)
        finally:
            events.append((label, s - t0, time.perf_counter() - t0, threading.current_thread().name))
    setattr(owner, attr, type(fn)(timed) if is_static else timed)

for label, target in stages:
    mod, qual = target.split(":")
    try:
        owner = importlib.import_module(mod)
    except ImportError:
        continue
    *path, attr = qual.split(".")
    for p in path:
        owner = getattr(owner, p)
    if attr in getattr(owner, "__dict__", {}):
        wrap(owner, attr, label)
t = time.perf_counter()
sys.stdout = open("/dev/null", "w")
rc = main(["search", query])
sys.stdout = sys.__stdout__
marks["CLI main (everything after imports)"] = (time.perf_counter() - t) * 1000
marks["in-process total"] = (time.perf_counter() - t0) * 1000 + marks["start-up"]
per = {}
for label, s, e, thread in events:  # first call of each stage (the cold one), its thread, start
    per.setdefault(label, ((e - s) * 1000, thread, marks["start-up"] + s * 1000))
print(json.dumps({"marks": marks, "stages": per, "rc": rc}))
"""


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--src", help="PYTHONPATH for the child (a checkout)")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.src:
        env["PYTHONPATH"] = args.src
    runs: list[dict[str, object]] = []
    loads: list[float] = []
    for i in range(args.runs):
        query = QUERIES[i % len(QUERIES)]
        loads.append(load())
        spawned = time.time()
        out = subprocess.run(
            [args.python, "-c", _CHILD, str(spawned), query, json.dumps(STAGES)],
            cwd=args.vault,
            env=env,
            capture_output=True,
            text=True,
        )
        wall = (time.time() - spawned) * 1000
        if out.returncode != 0:
            raise SystemExit(out.stderr)
        res = json.loads(out.stdout.strip().splitlines()[-1])
        res["marks"]["whole process (parent's clock)"] = wall
        runs.append(res)
    print(f"{args.vault} ({args.runs} runs, load {min(loads):.2f}–{max(loads):.2f})")
    labels = ["start-up", "import the CLI (click, app, cmd_search)"]
    for label in labels:
        print(f"{label:60s} {statistics.median(r['marks'][label] for r in runs):8.1f} ms")  # type: ignore[index]
    for label, _ in STAGES:
        vals = [r["stages"][label] for r in runs if label in r["stages"]]  # type: ignore[operator,index]
        if vals:
            threads = {v[1] for v in vals}
            where = "" if threads == {"MainThread"} else f"  [{', '.join(sorted(threads))}]"
            starts = statistics.median(v[2] for v in vals)
            print(
                f"  {label:58s} {statistics.median(v[0] for v in vals):8.1f} ms  (from {starts:6.1f}){where}"
            )
    for label in [
        "CLI main (everything after imports)",
        "in-process total",
        "whole process (parent's clock)",
    ]:
        print(f"{label:60s} {statistics.median(r['marks'][label] for r in runs):8.1f} ms")  # type: ignore[index]


if __name__ == "__main__":
    main()
