"""Reindex N synthetic memories into Neo4j and into SQLite; no-change reindex; search p50.

    .venv/bin/python bench/neo4j_bench.py [--n 10000] [--queries 50] [--write bench/RESULTS-neo4j.md]

Neo4j: the server named by CCMEMORY_TEST_NEO4J_URI (+ _USER/_PASSWORD), else the throw-away one
of `scripts/neo4j-dev start` (stopped afterwards if this run started it).
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

from ccmemory.index.base import Filters, Index  # noqa: E402
from ccmemory.index.sqlite import SQLiteIndex  # noqa: E402
from ccmemory.model import TYPES, Memory, Relation, new_id  # noqa: E402
from ccmemory.search import search  # noqa: E402
from ccmemory.sync import reindex  # noqa: E402
from ccmemory.vault import Vault  # noqa: E402

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


def bench_backend(name: str, idx: Index, vault: Vault, project: str, queries: list[str]) -> dict[str, Any]:
    full, rep = timed(lambda: reindex(vault, idx, project))
    assert rep.added > 0 and not rep.errors, rep.as_dict()
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


def neo4j_server() -> tuple[str, str, str, bool]:
    uri = os.environ.get("CCMEMORY_TEST_NEO4J_URI")
    if uri:
        return (
            uri,
            os.environ.get("CCMEMORY_TEST_NEO4J_USER", "neo4j"),
            os.environ.get("CCMEMORY_TEST_NEO4J_PASSWORD", "ccmemory-test"),
            False,
        )
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "neo4j-dev"), "start", "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    info = json.loads(out.strip().splitlines()[-1])
    return info["uri"], info["user"], info["password"], not info["reused"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--write", type=Path)
    args = ap.parse_args()

    from ccmemory.index.neo4j import Neo4jIndex

    rnd = random.Random(11)
    queries = [" ".join(rnd.sample(WORDS, 2)) for _ in range(args.queries)]
    with tempfile.TemporaryDirectory() as tmp:
        t_gen, vault = timed(lambda: make_vault(Path(tmp) / "repo", args.n))
        print(f"generated {args.n} memory files in {t_gen:.1f}s", file=sys.stderr)
        results = []
        lite = SQLiteIndex(Path(tmp) / "index.db")
        results.append(bench_backend("sqlite", lite, vault, "bench", queries))
        lite.close()
        print(results[-1], file=sys.stderr)
        uri, user, password, started = neo4j_server()
        project = "bench-" + uuid.uuid4().hex[:8]
        neo = Neo4jIndex(uri, user, password)
        try:
            results.append(bench_backend("neo4j", neo, vault, project, queries))
            version = neo.server_info()["version"]
        finally:
            neo.clear(project)
            neo.close()
            if started:
                subprocess.run([sys.executable, str(ROOT / "scripts" / "neo4j-dev"), "stop"], check=False)
        print(results[-1], file=sys.stderr)
    ratio = results[1]["full_reindex_s"] / max(results[0]["full_reindex_s"], 1e-9)
    print(json.dumps({"results": results, "neo4j_over_sqlite_full_reindex": round(ratio, 2)}, indent=2))
    if args.write:
        write_results(args, results, ratio, version)


def write_results(
    args: argparse.Namespace, results: list[dict[str, Any]], ratio: float, version: str
) -> None:
    cmd = f".venv/bin/python bench/neo4j_bench.py --n {args.n} --queries {args.queries} --write {args.write}"
    lines = [
        "# Neo4j vs SQLite index benchmark",
        "",
        f"Command: `{cmd}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"Neo4j {version} Community (scripts/neo4j-dev, embedded server on Java 17, 1 GB heap), "
        f"run {datetime.now(UTC).strftime('%Y-%m-%d %H:%M')} UTC.",
        "",
        f"{args.n} synthetic memories (5 types, 2 topics and 1 file each, a DEPENDS_ON every 9th, "
        f"a SUPERSEDES every 23rd); {args.queries} two-word text searches through `search.search` "
        "(mode=text, limit 10, no expansion; the last column is the median of 3 searches with the "
        "one-hop expansion along relations, shared topics and files).",
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
    args.write.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
