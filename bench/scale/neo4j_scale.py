"""Neo4j at scale (issue 29; on demand, not in CI): full text-only reindex against SQLite on the
same vault, warm text search p50/p95, and the memory of the server's JVM.

    flock /tmp/ccm-bench.lock .venv/bin/python bench/scale/neo4j_scale.py \\
        --vault /tmp/h29neo/vault-100000 --warm /tmp/h29neo/vault-10000 \\
        --heap 4g --pagecache 2048 --work /tmp/h29neo --json /tmp/h29neo/neo4j-100k.json

Vaults come from `make_vault.py`. Every reindex is a whole `python -m ccmemory reindex --full
--no-embed` process (wall, peak RSS of the client), with `CCMEMORY_BACKEND` set to `sqlite` or
`neo4j`; the same interpreter and checkout for both. The server is `scripts/neo4j-dev`, started
here like a real one (full JIT, G1, `--heap`, `--pagecache` MB) with its own state directory under
`--work`, and stopped at the end. Order: SQLite on `--warm` and on `--vault`; then Neo4j on
`--warm` twice (project `<name>-warm`: the first is the cold reindex of a fresh server, the second
the same work warm: their difference is the server's fixed JIT warm-up); then Neo4j on `--vault`
(warm server) `--rounds` times, each followed by SQLite on `--vault` again so the pairs see the
same load; then warm search in process over `bench_index.QUERIES` (10 queries x 5 after one
untimed pass) on both backends. The server's RSS (and the JVM's own heap figures) are taken after
start, after each reindex and after the searches. The 1-minute load is recorded next to each
figure.
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
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_index import QUERIES, pct  # noqa: E402
from run import _SEARCH, load, timed  # noqa: E402

DEV = ROOT / "scripts" / "neo4j-dev"


def rss_mb(pid: int) -> dict[str, float]:
    """Resident and peak resident memory of a process (MB), from /proc."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, val = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = round(int(val.split()[0]) / 1024, 1)
    return out


def start_server(env: dict[str, str]) -> dict[str, Any]:
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, str(DEV), "start", "--json"], env=env, check=True, capture_output=True, text=True
    ).stdout
    info: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    info["start_s"] = round(time.perf_counter() - t, 2)
    return info


def reindex(python: str, root: Path, env: dict[str, str], label: str) -> dict[str, Any]:
    before = load()
    wall, rss = timed(python, root, "reindex", "--full", "--no-embed", env=env)
    res = {"what": label, "wall_s": round(wall, 2), "client_rss_mb": round(rss), "load": before}
    print(json.dumps(res), flush=True)
    return res


def search(python: str, root: Path, env: dict[str, str]) -> dict[str, Any]:
    before = load()
    out = subprocess.run(
        [python, "-c", _SEARCH, json.dumps(QUERIES), "text"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    lat = list(json.loads(out.stdout))
    return {"p50_ms": round(pct(lat, 50), 1), "p95_ms": round(pct(lat, 95), 1), "load": before}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--warm", type=Path, required=True, help="a small vault for the warm-up reindex")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--heap", default="4g")
    ap.add_argument("--pagecache", default="2048", help="MB")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    base = {k: v for k, v in os.environ.items() if not k.startswith("CCMEMORY_")}
    base["PYTHONPATH"] = str(ROOT)
    base["CCMEMORY_VECTOR_CACHE"] = "off"
    server_env = {
        **base,
        "CCMEMORY_NEO4J_DEV_STATE": str(args.work / "neo4j-dev-state"),
        "CCMEMORY_NEO4J_DEV_JIT": "full",
        "CCMEMORY_NEO4J_DEV_GC": "g1",
        "CCMEMORY_NEO4J_DEV_HEAP": args.heap,
        "CCMEMORY_NEO4J_DEV_PAGECACHE": str(args.pagecache),
    }
    lite = {**base, "CCMEMORY_BACKEND": "sqlite"}
    res: dict[str, Any] = {"runs": [], "server_memory": []}

    def lite_index(root: Path) -> None:
        for old in (root / ".ccmemory" / "local").glob("index.db*"):
            old.unlink()

    lite_index(args.warm)
    res["runs"].append(
        reindex(args.python, args.warm, {**lite, "CCMEMORY_PROJECT": "scale-warm"}, "sqlite warm vault")
    )
    lite_index(args.vault)
    res["runs"].append(reindex(args.python, args.vault, lite, "sqlite vault"))

    info = start_server(server_env)
    pid = int(info["pid"])
    res["server"] = {k: info[k] for k in ("version", "jvm", "start_s", "startup_seconds")}
    print(json.dumps(res["server"]), flush=True)

    def mem(when: str) -> None:
        row = {"when": when, **rss_mb(pid), "load": load()}
        res["server_memory"].append(row)
        print(json.dumps(row), flush=True)

    neo = {
        **base,
        "CCMEMORY_BACKEND": "neo4j",
        "CCMEMORY_NEO4J_URI": info["uri"],
        "CCMEMORY_NEO4J_USER": info["user"],
        "CCMEMORY_NEO4J_PASSWORD": info["password"],
    }
    try:
        mem("started")
        warm_env = {**neo, "CCMEMORY_PROJECT": "scale-warm"}
        res["runs"].append(reindex(args.python, args.warm, warm_env, "neo4j warm vault, cold server"))
        mem("after the cold warm-vault reindex")
        res["runs"].append(reindex(args.python, args.warm, warm_env, "neo4j warm vault, again"))
        mem("after the second warm-vault reindex")
        for r in range(args.rounds):
            res["runs"].append(reindex(args.python, args.vault, neo, f"neo4j vault, round {r + 1}"))
            mem(f"after the vault reindex, round {r + 1}")
            lite_index(args.vault)
            res["runs"].append(reindex(args.python, args.vault, lite, f"sqlite vault, round {r + 1}"))
        res["search_neo4j"] = search(args.python, args.vault, neo)
        print(json.dumps({"search neo4j": res["search_neo4j"]}), flush=True)
        mem("after the searches")
        res["search_sqlite"] = search(args.python, args.vault, lite)
        print(json.dumps({"search sqlite": res["search_sqlite"]}), flush=True)
    finally:
        subprocess.run([sys.executable, str(DEV), "stop"], env=server_env, check=False)
    neo_walls = [r["wall_s"] for r in res["runs"] if r["what"].startswith("neo4j vault")]
    lite_walls = [r["wall_s"] for r in res["runs"] if r["what"].startswith("sqlite vault")]
    res["ratio_median"] = round(statistics.median(neo_walls) / statistics.median(lite_walls), 2)
    print(json.dumps({"neo4j / sqlite (medians)": res["ratio_median"]}), flush=True)
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
