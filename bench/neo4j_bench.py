"""Reindex N synthetic memories into Neo4j and into SQLite; no-change reindex; search p50.

    .venv/bin/python bench/neo4j_bench.py [--n 10000] [--queries 50] [--repeat 3] [--warmup N]
                                          [--write bench/RESULTS-neo4j.md]

Each backend first reindexes a separate, untimed-for-the-table warm-up vault of --warmup memories
(default --n; a throw-away SQLite file, a throw-away Neo4j project, cleared afterwards): a server
that has just started runs its first reindex in the JVM's interpreter and C1 code while the C2 JIT
compiles, which a long-running server has done long before. Its time is reported as the "cold"
figure. Then the full reindex of the measured vault is timed --repeat times per backend,
alternating SQLite and Neo4j (a fresh database / project each time) so both see the same machine
load; the table gives the median, and each pair is listed.

Neo4j: the server named by CCMEMORY_TEST_NEO4J_URI (+ _USER/_PASSWORD), else the throw-away one
of `scripts/neo4j-dev start` (stopped afterwards if this run started it). A server this run starts
is configured like a real Neo4j server rather than like the test server: the full JIT (C1+C2),
G1 GC and a 2 GB heap (CCMEMORY_NEO4J_DEV_JIT/_GC/_HEAP override them; see scripts/neo4j-dev).
The settings of the server used are written to the results.
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
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ccmemory.app.sync import reindex  # noqa: E402
from ccmemory.core.model import TYPES, Memory, Relation, new_id  # noqa: E402
from ccmemory.core.vault import Vault  # noqa: E402
from ccmemory.index.base import Filters, Index  # noqa: E402
from ccmemory.index.sqlite import SQLiteIndex  # noqa: E402
from ccmemory.retrieval.search import search  # noqa: E402

WORDS = (
    "auth token cookie session cache redis postgres deploy migration schema index query retry "
    "timeout queue worker billing invoice email webhook rate limit pagination cursor search "
    "vector embedding prompt model latency memory graph neo4j sqlite lock transaction backup "
    "restore metrics alert dashboard feature flag rollout canary config secret vault cert tls"
).split()
FIELDS: dict[str, dict[str, Any]] = {
    "decision": {"rationale": "because {w}", "options_considered": ["{w}", "{v}"]},
    "correction": {"wrong_belief": "{w} is fine", "right_belief": "{v} is needed", "severity": "minor"},
    "fact": {"category": "architecture"},
    "failed_approach": {"approach": "{w}", "outcome": "broke {v}", "lesson": "avoid {w}"},
    "insight": {"category": "analysis", "implications": "{w} affects {v}"},
}


def make_vault(root: Path, n: int, seed: int = 7) -> Vault:
    rnd = random.Random(seed)
    (root / ".ccmemory").mkdir(parents=True)
    vault = Vault(root)
    base = datetime(2025, 1, 1, tzinfo=UTC)
    ids: list[str] = []
    types = list(FIELDS)
    for k in range(n):
        mtype = types[k % len(types)]
        w, v = rnd.sample(WORDS, 2)
        title = f"{w.title()} {v} {' '.join(rnd.sample(WORDS, 3))} #{k}"
        body = " ".join(rnd.choice(WORDS) for _ in range(40))
        fields = {
            key: ([x.format(w=w, v=v) for x in val] if isinstance(val, list) else val.format(w=w, v=v))
            for key, val in FIELDS[mtype].items()
        }
        assert set(fields) <= set(TYPES[mtype].fields)
        created = base + timedelta(minutes=17 * k)
        mid = new_id(int(created.timestamp() * 1000))
        rels = []
        sup: list[str] = []
        if ids and k % 9 == 0:
            rels.append(Relation("DEPENDS_ON", rnd.choice(ids), "shares the " + w))
        if ids and k % 23 == 0:
            sup = [ids[-1]]
        vault.write_new(
            Memory(
                id=mid,
                type=mtype,
                title=title,
                created=created,
                body=body,
                author=f"dev{k % 5}@example.com",
                topics=[w, v],
                files=[f"src/{w}/{v}.py"],
                confidence=0.5 + (k % 5) / 10,
                source="llm",
                supersedes=sup,
                relations=rels,
                fields=fields,
            )
        )
        ids.append(mid)
    return vault


def timed(fn: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def full_reindex(idx: Index, vault: Vault, project: str) -> float:
    seconds, rep = timed(lambda: reindex(vault, idx, project))
    assert rep.added > 0 and not rep.errors, rep.as_dict()
    return float(seconds)


def bench_backend(
    name: str, idx: Index, vault: Vault, project: str, queries: list[str], full: float
) -> dict[str, Any]:
    """No-change reindex and searches on an index that holds `vault` (its full reindex took `full`)."""
    nochange, rep2 = timed(lambda: reindex(vault, idx, project))
    assert rep2.added == rep2.updated == rep2.removed == 0, rep2.as_dict()
    f = Filters(project)
    search(idx, queries[0], f, mode="text", expand=False)  # warm-up (plans, caches)
    lat = []
    for q in queries:
        dt, resp = timed(lambda q=q: search(idx, q, f, mode="text", limit=10, expand=False))
        assert resp.hits, q
        lat.append(dt)
    lat.sort()
    # one-hop expansion (relations, shared topics/files) costs far more on dense synthetic topics:
    # timed on a few queries only
    exp = sorted(timed(lambda q=q: search(idx, q, f, mode="text", limit=10))[0] for q in queries[:3])
    return {
        "backend": name,
        "memories": idx.count(Filters(project, include_superseded=True)),
        "full_reindex_s": round(full, 2),
        "nochange_reindex_s": round(nochange, 3),
        "search_p50_ms": round(statistics.median(lat) * 1000, 1),
        "search_p95_ms": round(lat[int(len(lat) * 0.95) - 1] * 1000, 1),
        "expanded_search_median_of_3_ms": round(exp[1] * 1000, 1),
    }


SERVER_JVM = {
    "CCMEMORY_NEO4J_DEV_JIT": "full",
    "CCMEMORY_NEO4J_DEV_GC": "g1",
    "CCMEMORY_NEO4J_DEV_HEAP": "2g",
}


def neo4j_server() -> tuple[str, str, str, bool, str]:
    """(uri, user, password, started here, a description of the server's JVM settings)."""
    uri = os.environ.get("CCMEMORY_TEST_NEO4J_URI")
    if uri:
        return (
            uri,
            os.environ.get("CCMEMORY_TEST_NEO4J_USER", "neo4j"),
            os.environ.get("CCMEMORY_TEST_NEO4J_PASSWORD", "ccmemory-test"),
            False,
            "external server (CCMEMORY_TEST_NEO4J_URI), settings unknown",
        )
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "neo4j-dev"), "start", "--json"],
        check=True,
        capture_output=True,
        text=True,
        env={**SERVER_JVM, **os.environ},
    ).stdout
    info = json.loads(out.strip().splitlines()[-1])
    jvm = info.get("jvm") or {}
    desc = (
        f"JIT {jvm.get('jit', '?')}, {jvm.get('gc', '?')} GC, heap {jvm.get('heap', '?')}, page cache 128 MB"
    )
    if info["reused"]:
        desc += " (an already running server, reused)"
    return info["uri"], info["user"], info["password"], not info["reused"], desc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3, help="timed full reindexes per backend")
    ap.add_argument("--warmup", type=int, help="memories in the warm-up vault (default --n; 0: none)")
    ap.add_argument("--write", type=Path)
    args = ap.parse_args()
    if args.warmup is None:
        args.warmup = args.n
    args.repeat = max(1, args.repeat)

    from ccmemory.index.neo4j import Neo4jIndex

    rnd = random.Random(11)
    queries = [" ".join(rnd.sample(WORDS, 2)) for _ in range(args.queries)]
    load_before = os.getloadavg()
    cold: dict[str, float] = {}
    pairs: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        t_gen, vault = timed(lambda: make_vault(Path(tmp) / "repo", args.n))
        print(f"generated {args.n} memory files in {t_gen:.1f}s", file=sys.stderr)
        warm = make_vault(Path(tmp) / "warm", args.warmup, seed=8) if args.warmup else None
        uri, user, password, started, server_desc = neo4j_server()
        neo = Neo4jIndex(uri, user, password)
        lites: list[SQLiteIndex] = []
        projects: list[str] = []
        try:
            if warm is not None:
                lite = SQLiteIndex(Path(tmp) / "warm.db")
                cold["sqlite"] = full_reindex(lite, warm, "warm")
                lite.close()
                project = "benchwarm-" + uuid.uuid4().hex[:8]
                projects.append(project)
                cold["neo4j"] = full_reindex(neo, warm, project)
                neo.clear(project)
                print(f"warm-up (cold) full reindex: {cold}", file=sys.stderr)
            for r in range(args.repeat):
                lites.append(SQLiteIndex(Path(tmp) / f"index{r}.db"))
                t_lite = full_reindex(lites[-1], vault, "bench")
                projects.append("bench-" + uuid.uuid4().hex[:8])
                t_neo = full_reindex(neo, vault, projects[-1])
                pairs.append((t_lite, t_neo))
                print(f"run {r + 1}: sqlite {t_lite:.2f}s, neo4j {t_neo:.2f}s", file=sys.stderr)
                if r < args.repeat - 1:
                    lites[-1].close()
                    neo.clear(projects[-1])
            results = [
                bench_backend(
                    "sqlite", lites[-1], vault, "bench", queries, statistics.median(p[0] for p in pairs)
                ),
                bench_backend(
                    "neo4j", neo, vault, projects[-1], queries, statistics.median(p[1] for p in pairs)
                ),
            ]
            version = neo.server_info()["version"]
        finally:
            for lite in lites:
                lite.close()
            for project in projects:
                neo.clear(project)
            neo.close()
            if started:
                subprocess.run([sys.executable, str(ROOT / "scripts" / "neo4j-dev"), "stop"], check=False)
        for res in results:
            print(res, file=sys.stderr)
    load_after = os.getloadavg()
    ratio = results[1]["full_reindex_s"] / max(results[0]["full_reindex_s"], 1e-9)
    print(
        json.dumps(
            {
                "results": results,
                "runs": pairs,
                "cold": cold,
                "neo4j_over_sqlite_full_reindex": round(ratio, 2),
                "load": [load_before, load_after],
            },
            indent=2,
        )
    )
    if args.write:
        write_results(args, results, ratio, version, server_desc, pairs, cold, (load_before, load_after))


def write_results(
    args: argparse.Namespace,
    results: list[dict[str, Any]],
    ratio: float,
    version: str,
    server: str,
    pairs: list[tuple[float, float]],
    cold: dict[str, float],
    load: tuple[tuple[float, ...], tuple[float, ...]],
) -> None:
    cmd = (
        f".venv/bin/python bench/neo4j_bench.py --n {args.n} --queries {args.queries} "
        f"--repeat {args.repeat} --warmup {args.warmup} --write {args.write}"
    )
    lines = [
        "# Neo4j vs SQLite index benchmark",
        "",
        f"Command: `{cmd}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"Neo4j {version} Community (scripts/neo4j-dev, embedded server on Java 17; {server}), "
        f"run {datetime.now(UTC).strftime('%Y-%m-%d %H:%M')} UTC.",
        "",
        f"{args.n} synthetic memories (5 types, 2 topics and 1 file each, a DEPENDS_ON every 9th, "
        f"a SUPERSEDES every 23rd); {args.queries} two-word text searches through `search.search` "
        "(mode=text, limit 10, no expansion; the last column is the median of 3 searches with the "
        "one-hop expansion along relations, shared topics and files). Full reindex: the median of "
        f"{args.repeat} runs per backend, alternating SQLite and Neo4j, after an untimed warm-up "
        f"reindex of a separate {args.warmup}-memory vault on each (see the script's docstring).",
        "",
        "| backend | memories | full reindex (s) | no-change reindex (s) | search p50 (ms) "
        "| search p95 (ms) | expanded search (ms) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['backend']} | {r['memories']} | {r['full_reindex_s']} | {r['nochange_reindex_s']} | "
            f"{r['search_p50_ms']} | {r['search_p95_ms']} | {r['expanded_search_median_of_3_ms']} |"
        )
    lines += ["", f"Neo4j full reindex / SQLite full reindex: **{ratio:.2f}×** (target ≤ 3×).", ""]
    lines.append(
        "Full reindex runs (SQLite s, Neo4j s, ratio): "
        + "; ".join(f"{a:.2f}, {b:.2f}, {b / a:.2f}×" for a, b in pairs)
        + "."
    )
    if cold:
        lines.append(
            f"Warm-up (cold) reindex of the {args.warmup}-memory warm-up vault, the first after the "
            f"server started: SQLite {cold['sqlite']:.2f} s, Neo4j {cold['neo4j']:.2f} s "
            f"({cold['neo4j'] / cold['sqlite']:.2f}×)."
        )
    lines.append(
        "Load average (1, 5, 15 min) before and after: "
        + " → ".join(", ".join(f"{x:.2f}" for x in la) for la in load)
        + f" on {os.cpu_count()} shared cores."
    )
    lines.append("")
    args.write.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
