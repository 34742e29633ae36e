"""8 concurrent clients on one Neo4j team server (issue #29): throughput, latency, errors, lost writes.

    .venv/bin/python bench/neo4j_concurrency_bench.py [--clients 8] [--mcp 4] [--ops 12] [--write FILE]

A team as in tests/test_neo4j_concurrency.py (tests/neo4j_team_load.py): one git origin with 6
curated memories, N clones (N git identities, so N index scopes of one project), of which the
last `--mcp` drive a real `ccmemory mcp` server over stdio and the others run real `ccmemory`
CLI processes. Every client does `--ops` operations of its plan (new, search, context, edit,
delete; CLI clients start and end with an incremental reindex, MCP clients end with one), all
at once. Then each clone's files are compared with its scope's records (lost writes), and a
`reindex --full` of every clone, all at once, must give the same index.

The server: CCMEMORY_TEST_NEO4J_URI (with _USER/_PASSWORD) if set, else `scripts/neo4j-dev
start` (reused when running; stopped at the end only if this run started it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.neo4j_team_load import (  # noqa: E402
    ServerInfo,
    check_team,
    cli,
    drop,
    make_team,
    run_team,
    summary,
)

NEO4J_DEV = ROOT / "scripts" / "neo4j-dev"


def server() -> tuple[ServerInfo, bool, str]:
    uri = os.environ.get("CCMEMORY_TEST_NEO4J_URI")
    if uri:
        user = os.environ.get("CCMEMORY_TEST_NEO4J_USER", "neo4j")
        return (
            ServerInfo(uri, user, os.environ.get("CCMEMORY_TEST_NEO4J_PASSWORD", "ccmemory-test")),
            False,
            "",
        )
    out = subprocess.run(
        [sys.executable, str(NEO4J_DEV), "start", "--json"], capture_output=True, text=True, check=True
    )
    info = json.loads(out.stdout.strip().splitlines()[-1])
    return (
        ServerInfo(info["uri"], info["user"], info["password"]),
        not info["reused"],
        info.get("version", ""),
    )


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--mcp", type=int, default=4, help="how many of the clients use MCP over stdio")
    ap.add_argument("--ops", type=int, default=12, help="operations per client (besides the reindexes)")
    ap.add_argument("--write", type=Path, help="append the result as a markdown section to this file")
    args = ap.parse_args()

    info, started, version = server()
    base = Path(tempfile.mkdtemp(prefix="ccm-conc-"))
    team = make_team(
        base, info, "bench-conc-" + uuid.uuid4().hex[:8], clients=args.clients, mcp_clients=args.mcp
    )
    before = load()
    try:
        t0 = time.perf_counter()
        logs = run_team(team, seconds=3600, max_ops=args.ops)
        wall = time.perf_counter() - t0
        incremental = check_team(team, logs)
        problems: list[str] = []

        def full(i: int) -> None:
            proc, _ = cli(team, team.clones[i].root, "reindex", "--full", "--json")
            if proc.returncode != 0 or "Traceback" in proc.stderr:
                problems.append(f"{team.clones[i].user}: exit {proc.returncode}: {proc.stderr[-500:]}")

        t1 = time.perf_counter()
        threads = [threading.Thread(target=full, args=(i,)) for i in range(len(team.clones))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        full_wall = time.perf_counter() - t1
        rebuilt = check_team(team, logs)
        same = all(rebuilt.dumps.get(u) == d for u, d in incremental.dumps.items())
    finally:
        drop(team)
        if started:
            subprocess.run([sys.executable, str(NEO4J_DEV), "stop"], capture_output=True)
    after = load()

    stats = summary(logs)
    ops = [op for log in logs for op in log.ops if op.kind not in ("mcp_start",)]
    errors = [f"{log.clone.user} {op.kind}: {op.detail[:300]}" for log in logs for op in log.errors]
    memories = sum(len(log.recorded) for log in logs)
    cmd = "PYTHONPATH=. .venv/bin/python bench/neo4j_concurrency_bench.py " + " ".join(sys.argv[1:])
    lines = [
        "",
        f"### {datetime.now(UTC):%Y-%m-%d %H:%M} UTC: {args.clients} clients ({args.clients - args.mcp} CLI, "
        f"{args.mcp} MCP) × {args.ops} operations",
        "",
        f"Command: `{cmd}`",
        "",
        f"Server: {info.uri} {version}. Load before: `{before}`; after: `{after}`.",
        "",
        f"{len(ops)} operations in {wall:.1f} s: **{len(ops) / wall:.2f} ops/s** overall; "
        f"{memories} memories written; **{len(errors)} errors**; "
        f"**{len(incremental.lost)} lost writes** after the run, {len(rebuilt.lost)} after the concurrent "
        f"`reindex --full` of every clone ({full_wall:.1f} s), which gave "
        f"{'the same index' if same else 'a DIFFERENT index'}; {len(problems)} full reindexes failed.",
        "",
        "| operation | n | errors | p50 (s) | p95 (s) |",
        "|---|---|---|---|---|",
    ]
    for kind, s in stats.items():
        lines.append(f"| {kind} | {s['n']:.0f} | {s['errors']:.0f} | {s['p50']:.2f} | {s['p95']:.2f} |")
    for e in (errors + incremental.lost + rebuilt.lost + problems)[:20]:
        lines.append(f"- {e}")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        with args.write.open("a", encoding="utf-8") as fh:
            fh.write(text)
    return 0 if not (errors or incremental.lost or rebuilt.lost or problems) and same else 1


if __name__ == "__main__":
    raise SystemExit(main())
