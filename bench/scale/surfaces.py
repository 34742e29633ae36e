"""Everything a user touches, measured on a large vault (issue 29; on demand, not in CI).

    flock /tmp/ccm-bench.lock env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/scale/surfaces.py \\
        --vault /tmp/copy-of-v100k [--only check mcp dashboard site] [--site-n 10000] [--out FILE]

`--vault` is a vault built by `make_vault.py` and indexed (`reindex --full --no-embed`, and
optionally `fill_vectors.py` for hybrid figures). **It is changed**: a branch `surfaces-pr` is
made and deleted again, 20k telemetry events are added once (as `dashboard_bench.py` seeds), the
index catches up. Run it on a copy. Child processes run this checkout (PYTHONPATH), with the
per-user vector cache off. The 1-minute load average is printed next to every figure.

1. `check`: `ccmemory check` on main (whole process, median of 3), then `ccmemory check --base
   main` on a branch that adds 5 memories and edits one on top of main (a pull request's shape).
   `--src LABEL=DIR` (repeatable) times those checkouts instead, interleaved run by run.
2. MCP through the real SDK client over stdio (`tests/_mcp_client.py`): spawn → first answered
   `tools/list` (`mcp_bench.startup`, 3 starts); the first `search` of a session; then `search`
   p50/p95 over 30 queries after one warm-up pass, text mode, and hybrid when the index holds vectors.
3. Dashboard: `dashboard_bench.start_dashboard` and `time_pages` (real uvicorn over HTTP): every
   page's /api answer first, recomputed after a change, warm p50/p90.
4. `ccmemory site build --json` (whole process) on a `make_vault.py` vault of `--site-n` memories
   (built under `--work` once), its phases; then on the large vault, in process, the phases that
   can be measured there without building the site (`SiteGenerator.collect` with the related lists
   of `--site-sample` memories spread over the vault), and an estimate of the whole build at the
   large size, each phase labelled measured or extrapolated.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(ROOT / "tests"))

from bench_index import QUERIES, VOCAB, pct  # noqa: E402
from run import load, timed  # noqa: E402

BRANCH = "surfaces-pr"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "CCMEMORY_VECTOR_CACHE": "off"}
Say = Callable[[str], None]


def git(root: Path, *args: str) -> str:
    """git without the repository's hooks (a post-checkout reindex would land in the timings)."""
    out = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args], cwd=root, capture_output=True, text=True, check=True
    )
    return out.stdout


def queries(n: int = 30) -> list[str]:
    """bench_index's 10 queries, then 2-3 word queries drawn from the vault's own vocabulary."""
    rng = random.Random(42)
    out = list(QUERIES)
    while len(out) < n:
        out.append(" ".join(rng.sample(VOCAB[:400], rng.randint(2, 3))))
    return out[:n]


# --- 1. check -------------------------------------------------------------------------------------
def make_pr(root: Path) -> None:
    """Branch `surfaces-pr` from main: 5 new memories (one titled like a curated one) and one
    curated memory edited, committed."""
    from ccmemory.core.model import Memory, new_id
    from ccmemory.core.vault import Vault

    git(root, "checkout", "-q", "-B", BRANCH, "main")
    vault = Vault(root)
    existing = sorted((root / ".ccmemory" / "decisions").glob("*.md"))
    rng = random.Random(5)
    words = VOCAB[:600]
    twin_title = next(
        line[len("title: ") :].strip().strip("'\"")
        for line in existing[len(existing) // 3].read_text(encoding="utf-8").splitlines()
        if line.startswith("title: ")
    )
    specs: list[tuple[str, dict[str, Any]]] = [
        ("decision", {"rationale": " ".join(rng.sample(words, 8))}),
        (
            "correction",
            {
                "wrong_belief": " ".join(rng.sample(words, 6)),
                "right_belief": " ".join(rng.sample(words, 6)),
                "severity": "significant",
            },
        ),
        ("gotcha", {"severity": "minor"}),
        ("fact", {"category": "convention"}),
        ("preference", {"scope": "project"}),
    ]
    for k, (mtype, fields) in enumerate(specs):
        title = twin_title if k == 0 else " ".join(rng.sample(words, 6)).capitalize()
        vault.write_new(
            Memory(
                id=new_id(),
                type=mtype,
                title=title,
                created=datetime.now(UTC),
                body=" ".join(rng.choices(words, k=60)),
                author="pr@example.com",
                topics=rng.sample(words[:80], 2),
                files=[f"src/{rng.choice(words)}.py"],
                fields=fields,
            )
        )
    edited = existing[len(existing) // 2]
    edited.write_text(
        edited.read_text(encoding="utf-8") + "\nEdited in the pull request.\n", encoding="utf-8"
    )
    git(root, "add", "-A", ".ccmemory")
    git(root, "commit", "-q", "--no-verify", "-m", "bench: a pull request's memories")


def measure_check(root: Path, runs: int, say: Say, srcs: dict[str, str] | None = None) -> dict[str, Any]:
    """`check` on main, then `check --base main` on the pull-request branch: `runs` whole processes
    each; with `srcs` (label -> checkout on PYTHONPATH) the labels take turns run by run."""
    if git(root, "rev-parse", "--abbrev-ref", "HEAD").strip() != "main":
        git(root, "checkout", "-q", "main")
    srcs = srcs or {"this checkout": str(ROOT)}
    res: dict[str, Any] = {}
    for name, args in (("check", ["check"]), ("check --base main", ["check", "--base", "main"])):
        if name != "check":
            make_pr(root)
        walls: dict[str, list[float]] = {label: [] for label in srcs}
        rss: dict[str, list[float]] = {label: [] for label in srcs}
        loads: list[float] = []
        for _ in range(runs):
            for label, src in srcs.items():
                loads.append(load())
                wall, peak = timed(sys.executable, root, *args, env={**ENV, "PYTHONPATH": src})
                walls[label].append(wall)
                rss[label].append(peak)
        shape = " (branch: 5 new memories, 1 edited)" if name != "check" else ""
        for label in srcs:
            w = walls[label]
            res[f"{name} [{label}]"] = {
                "median_s": statistics.median(w),
                "runs": w,
                "rss_mb": max(rss[label]),
            }
            say(
                f"`ccmemory {name}`{shape} [{label}]: median {statistics.median(w):.2f} s of "
                f"{', '.join(f'{x:.2f}' for x in w)} s, peak RSS {max(rss[label]):.0f} MB "
                f"(load {min(loads):.2f}-{max(loads):.2f})"
            )
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-q", "-D", BRANCH)
    subprocess.run(
        [sys.executable, "-m", "ccmemory", "reindex", "--no-embed"],
        cwd=root,
        env=ENV,
        check=True,
        capture_output=True,
    )
    return res


# --- 2. MCP ---------------------------------------------------------------------------------------
def measure_mcp(root: Path, starts: int, say: Say) -> dict[str, Any]:
    from _mcp_client import SyncClient
    from mcp_bench import startup

    res: dict[str, Any] = {}
    ld = load()
    st = startup(root, starts)
    res["startup_s"] = st
    say(
        f"MCP start-up, spawn → first answered tools/list: median {statistics.median(st):.2f} s of "
        f"{', '.join(f'{x:.2f}' for x in st)} s (load {ld:.2f})"
    )
    qs = queries()
    with SyncClient.stdio(root, env=ENV) as c:
        ld = load()
        t = time.perf_counter()
        first = c.call("search", {"query": qs[0], "mode": "text"})
        res["first_text_s"] = time.perf_counter() - t
        say(
            f"MCP first `search` of a session (text; opens the index, reindex check): "
            f"{res['first_text_s']:.2f} s, {len(first['results'])} results (load {ld:.2f})"
        )
        for mode in ("text", "hybrid"):
            ld = load()
            t = time.perf_counter()
            answer = c.call("search", {"query": qs[1], "mode": mode})
            first_s = time.perf_counter() - t
            used = answer.get("mode_used", mode)
            if mode == "hybrid" and used != "hybrid":
                say(f"MCP hybrid: not measured (mode_used {used}: {answer.get('notices')}) (load {ld:.2f})")
                break
            for q in qs:  # warm-up pass
                c.call("search", {"query": q, "mode": mode})
            ld = load()
            lat = []
            for q in qs:
                t = time.perf_counter()
                ans = c.call("search", {"query": q, "mode": mode})
                lat.append((time.perf_counter() - t) * 1000)
                assert ans.get("mode_used", mode) == mode, ans.get("notices")
            ld_end = load()
            res[mode] = {
                "first_s": first_s,
                "p50_ms": pct(lat, 50),
                "p95_ms": pct(lat, 95),
                "load": (ld, ld_end),
            }
            say(
                f"MCP `search` {mode} over {len(qs)} queries after a warm-up pass: p50 {pct(lat, 50):.1f} ms, "
                f"p95 {pct(lat, 95):.1f} ms, max {max(lat):.1f} ms; the mode's first call {first_s:.2f} s "
                f"(load {ld:.2f}-{ld_end:.2f})"
            )
    return res


# --- 3. dashboard -----------------------------------------------------------------------------------
def measure_dashboard(root: Path, repeats: int, say: Say) -> dict[str, Any]:
    from dashboard_bench import seed_telemetry, start_dashboard, time_pages

    from ccmemory.app.service import Service

    marker = root / ".ccmemory" / "local" / "bench-telemetry-seeded"
    if not marker.exists():
        with Service.open(root) as svc:
            ids = [m.id for m in svc.index.query(svc.filters(include_superseded=True), limit=5000)]
        seed_telemetry(root, ids)
        marker.write_text("20k events, 200 spools\n", encoding="utf-8")
    ld = load()
    say(f"dashboard (load {ld:.2f} at start; 20k telemetry events, 200 spools):")
    r = start_dashboard(root, say)
    try:
        pages = time_pages(r, repeats, say)
    finally:
        r.close()
    say(f"(load {load():.2f} at the end)")
    return {"pages": pages, "load": ld}


# --- 4. site --------------------------------------------------------------------------------------
def site_build(root: Path, say: Say) -> dict[str, Any]:
    """One whole `ccmemory site build --json` process: wall, CPU (user+sys of it and its children)."""
    ld = load()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ccmemory", "site", "build", "--json"],
        cwd=root,
        env=ENV,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"site build failed: {proc.stderr[-2000:]}")
    info = json.loads(proc.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = {
        "memories": info["memories"],
        "pages": info["pages"],
        "wall_s": wall,
        "cpu_s": cpu,
        "phases": info["timings"],
        "load": (ld, load()),
    }
    phases = ", ".join(f"{k} {v:.1f}" for k, v in info["timings"].items())
    say(
        f"`ccmemory site build` at {info['memories']} memories: {wall:.1f} s wall, {cpu:.1f} s CPU, "
        f"{info['pages']} pages; phases (s): {phases} (load {out['load'][0]:.2f}-{out['load'][1]:.2f})"
    )
    return out


def site_phases_large(root: Path, sample: int, say: Say) -> dict[str, float]:
    """`SiteGenerator.collect` on the large vault (its reindex check, queries, git history), with
    the related lists of `sample` memories spread over the vault instead of every memory."""
    from ccmemory.app.service import Service
    from ccmemory.surfaces.site.generator import SiteGenerator

    timings: dict[str, float] = {}
    ld = load()
    with Service.open(root) as svc:
        gen = SiteGenerator(svc)
        whole = gen._related
        seen: dict[str, int] = {}

        def sampled(memories: list[Any], by_id: dict[str, Any], superseded: set[str]) -> dict[str, list[Any]]:
            seen["n"] = len(memories)
            step = max(1, len(memories) // sample)
            return whole(memories[::step][:sample], by_id, superseded)

        gen._related = sampled  # type: ignore[method-assign]
        gen.collect(timings)
    n = seen["n"]
    per = timings["related"] / min(sample, n)
    out = {**timings, "n": n, "related_per_memory_s": per, "load": ld}
    say(
        f"site phases measured in process at {n} memories: reindex check {timings['reindex']:.1f} s, "
        f"queries {timings['query']:.1f} s, git history {timings['git_history']:.1f} s, related lists "
        f"{per * 1000:.1f} ms per memory over {min(sample, n)} memories (load {ld:.2f}-{load():.2f})"
    )
    return out


def measure_site(root: Path, work: Path, n_small: int, sample: int, say: Say) -> dict[str, Any]:
    from make_vault import make_vault

    small = work / f"site-vault-{n_small}"
    if not (small / ".git").is_dir():
        seconds = make_vault(small, n_small)
        subprocess.run(
            [sys.executable, "-m", "ccmemory", "reindex", "--full", "--no-embed"],
            cwd=small,
            env=ENV,
            check=True,
            capture_output=True,
        )
        say(f"site vault: make_vault {n_small} in {seconds:.1f} s, indexed text-only (not timed)")
    built = site_build(small, say)
    large = site_phases_large(root, sample, say)
    n_big, n_s = large["n"], built["memories"]
    ph = built["phases"]
    scale = n_big / n_s
    est = {
        "reindex": (large["reindex"], "measured"),
        "query": (large["query"], "measured"),
        "git_history": (large["git_history"], "measured"),
        "related": (large["related_per_memory_s"] * n_big, "per-memory cost measured, x memories"),
        "render": (ph["render"] * scale, f"{n_s} figure x {scale:.0f}"),
        "write": (ph["write"] * scale, f"{n_s} figure x {scale:.0f}"),
        "mkdocs": (ph["mkdocs"] * scale, f"{n_s} figure x {scale:.0f} (linear assumed)"),
    }
    say("")
    say(f"| site build phase | at {n_s} (s, measured) | at {n_big} (s) | how the {n_big} figure was got |")
    say("|---|---|---|---|")
    for k, (v, how) in est.items():
        say(f"| {k} | {ph.get(k, 0.0):.1f} | {v:.0f} | {how} |")
    total = sum(v for v, _ in est.values())
    say(f"| total | {sum(ph.values()):.1f} | **~{total:.0f} (estimate)** | |")
    return {"small": built, "large": large, "estimate_s": total}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", type=Path, required=True, help="a make_vault vault, indexed; it is changed")
    ap.add_argument("--only", nargs="+", choices=["check", "mcp", "dashboard", "site"])
    ap.add_argument("--check-runs", type=int, default=3)
    ap.add_argument(
        "--src",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="check only: also time this checkout (PYTHONPATH=DIR), labels interleaved run by run",
    )
    ap.add_argument("--starts", type=int, default=3, help="MCP server starts timed")
    ap.add_argument("--repeats", type=int, default=5, help="warm rounds over the dashboard pages")
    ap.add_argument("--site-n", type=int, default=10_000, help="memories of the vault whose site is built")
    ap.add_argument("--site-sample", type=int, default=300, help="related lists computed on the large vault")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ccmemory-surfaces"))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    os.environ.update({"PYTHONPATH": str(ROOT), "CCMEMORY_VECTOR_CACHE": "off"})
    root = args.vault.resolve()
    parts = args.only or ["check", "mcp", "dashboard", "site"]
    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    say(
        f"surfaces of {root} at ccmemory {rev.stdout.strip()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    results: dict[str, Any] = {}
    if "check" in parts:
        srcs = dict(x.split("=", 1) for x in args.src) or None
        results["check"] = measure_check(root, args.check_runs, say, srcs)
    if "mcp" in parts:
        results["mcp"] = measure_mcp(root, args.starts, say)
    if "dashboard" in parts:
        results["dashboard"] = measure_dashboard(root, args.repeats, say)
    if "site" in parts:
        args.work.mkdir(parents=True, exist_ok=True)
        results["site"] = measure_site(root, args.work, args.site_n, args.site_sample, say)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n\n" + json.dumps(results, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
