"""MCP server benchmark, through the real protocol (SDK client over stdio).

1. Start-up: spawn `python -m ccmemory mcp`, initialize, and time the first answered `tools/list`.
2. Search latency: p50/p90 of the `search` tool (default hybrid mode) over N synthetic memories.

    .venv/bin/python bench/mcp_bench.py --memories 10000 --queries 200 --starts 5

Prints a JSON summary; the figures go into bench/RESULTS-mcp.md by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _mcp_client import SyncClient, make_repo

from ccmemory.core.model import TYPES, Memory, Relation, new_id
from ccmemory.core.vault import Vault, render
from ccmemory.features.cothinker import COTHINKER_TYPES

WORDS = (
    "auth token cookie session cache queue worker retry timeout database index migration schema api "
    "gateway billing invoice payment refund deploy release rollback feature flag config secret vault "
    "logging metrics tracing alert oncall latency throughput batch stream kafka redis postgres sqlite "
    "neo4j graph search embedding vector ranking test fixture mock ci pipeline docker kubernetes helm "
    "frontend react component state router form validation error handler middleware tenant region"
).split()


def synth(root: Path, n: int, seed: int = 7, topics: int = 400) -> None:
    """Write n memory files straight to disk (rendered like Vault.write_new, without fsync each).

    Each memory gets 2 of `topics` topics, uniformly: about 2n/topics memories share a topic.
    """
    rnd = random.Random(seed)
    topic_names = [f"{a}-{b}" for a in WORDS for b in WORDS if a != b][:topics]
    vault = Vault(root)
    # the eleven types of the original layout: the co-thinker types (issue 31) need fields these
    # memories do not have, and leaving them out keeps a given seed's vault as it was
    types = [t for t in TYPES if t not in COTHINKER_TYPES]
    start = datetime(2025, 1, 1, tzinfo=UTC)
    ids: list[str] = []
    for i in range(n):
        mtype = rnd.choice(types)
        words = rnd.sample(WORDS, 6)
        created = start + timedelta(minutes=i * 7)
        mid = new_id(int(created.timestamp() * 1000))
        rels = []
        if ids and rnd.random() < 0.2:
            rels.append(Relation(rnd.choice(["DEPENDS_ON", "RELATES_TO", "CITES"]), rnd.choice(ids)))
        sup = [rnd.choice(ids)] if ids and rnd.random() < 0.03 else []
        m = Memory(
            id=mid,
            type=mtype,
            title=f"{words[0].title()} {words[1]} and {words[2]} for {words[3]}",
            created=created,
            body=" ".join(rnd.choice(WORDS) for _ in range(60)),
            author=f"dev{rnd.randint(1, 8)}@example.com",
            topics=rnd.sample(topic_names, 2),
            files=[f"src/{words[4]}/{words[5]}.py"],
            confidence=round(rnd.uniform(0.5, 1.0), 2),
            source=rnd.choice(["llm", "explicit", "manual"]),
            supersedes=sup,
            relations=rels,
        )
        path = vault.path_for(m)
        path = path.with_name(f"{path.stem}-{i}.md")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(m), encoding="utf-8")
        ids.append(mid)


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(p / 100 * (len(values) - 1))))
    return values[k]


def startup(repo: Path, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        with SyncClient.stdio(repo) as c:
            tools = c.list_tools()
            times.append(time.perf_counter() - t0)
            assert len(tools) >= 25
    return times


def tool_lists(repo: Path) -> dict[str, dict[str, int]]:
    """What the tool list costs a session, lean (the default) and full: characters of the JSON the
    client receives (names, descriptions, schemas) and that divided by 4 as the token estimate."""
    sizes = {}
    for mode in ("lean", "full"):
        with SyncClient.stdio(repo, env={"CCMEMORY_MCP_TOOLS": mode}) as c:
            tools = c.list_tools()
        chars = len(json.dumps([t.model_dump(mode="json", exclude_none=True) for t in tools]))
        sizes[mode] = {"tools": len(tools), "characters": chars, "tokens_chars_div_4": chars // 4}
    return sizes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--topics", type=int, default=400, help="distinct topics (density: 2n/topics per topic)")
    ap.add_argument("--keep", action="store_true", help="keep the temp repository")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="ccmemory-mcp-bench-"))
    repo = make_repo(tmp / "repo")
    t0 = time.perf_counter()
    synth(repo, args.memories, topics=args.topics)
    t_synth = time.perf_counter() - t0
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ccmemory", "reindex"], cwd=repo, check=True, capture_output=True)
    t_index = time.perf_counter() - t0

    starts = startup(repo, args.starts)
    lists = tool_lists(repo)

    rnd = random.Random(11)
    queries = [" ".join(rnd.sample(WORDS, rnd.randint(1, 4))) for _ in range(args.queries)]
    lat: list[float] = []
    with SyncClient.stdio(repo) as c:
        t0 = time.perf_counter()
        first = c.call("search", {"query": "auth token cookie"})
        t_first = time.perf_counter() - t0
        mode_used = first["mode_used"]
        notices = first.get("notices", [])
        for q in queries:
            t0 = time.perf_counter()
            res = c.call("search", {"query": q})
            lat.append(time.perf_counter() - t0)
            assert res["results"], q
        some_id = first["results"][0]["id"]
        get_lat = []
        for _ in range(50):
            t0 = time.perf_counter()
            c.call("get_memory", {"id": some_id})
            get_lat.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        c.call("get_metrics")
        t_metrics = time.perf_counter() - t0
        t0 = time.perf_counter()
        c.call("detect_issues")
        t_issues = time.perf_counter() - t0

    out = {
        "machine": f"{platform.platform()} python {platform.python_version()} cpus {os.cpu_count()}",
        "load_average": os.getloadavg(),
        "memories": args.memories,
        "topics": args.topics,
        "write_files_s": round(t_synth, 2),
        "reindex_s": round(t_index, 2),
        "startup_to_tools_list_s": {
            "runs": [round(x, 3) for x in starts],
            "median": round(statistics.median(starts), 3),
            "min": round(min(starts), 3),
        },
        "tool_list": lists,
        "search": {
            "mode_requested": "hybrid",
            "mode_used": mode_used,
            "notices": notices,
            "first_call_s": round(t_first, 3),
            "queries": len(lat),
            "p50_ms": round(pct(lat, 50) * 1000, 1),
            "p90_ms": round(pct(lat, 90) * 1000, 1),
            "max_ms": round(max(lat) * 1000, 1),
        },
        "get_memory_p50_ms (protocol round trip + one lookup)": round(pct(get_lat, 50) * 1000, 1),
        "get_metrics_s": round(t_metrics, 3),
        "detect_issues_s": round(t_issues, 3),
    }
    print(json.dumps(out, indent=2))
    if args.keep:
        print(f"repository kept at {repo}", file=sys.stderr)
    else:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
