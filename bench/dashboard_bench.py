"""Dashboard speed at N memories: each page's /api answer (cold, recomputed, warm p50) over real HTTP,
the overview page rendered in headless Chromium, and the cost of one telemetry emit next to the
capture spool append the hooks already do.

    .venv/bin/python bench/dashboard_bench.py --n 10000 [--repeats 15] [--out bench/RESULTS-dashboard.md]

Set-up (not timed as a page): `bench_index.make_vault` (N memories in a real git repo, 30 % with a
relation, 5 % superseding another), a full reindex, and stored vectors. The stored vectors are
random unit vectors under the local embedder's name (a real first embed of 10k texts takes minutes,
RESULTS-embed.md; the values do not change the timing), so the re-explanation metric still embeds
its up to 400 corrections/preferences with the real model on the cold overview. Telemetry: 20k
surfaced/retrieved events and 200 session spools.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

PAGES = [
    "overview",
    "review",
    "memories",
    "memories?q=cache+invalidation",
    "retrievals",
    "patterns",
    "graph",
    "team",
]


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def seed_telemetry(root: Path, ids: list[str], events: int = 20_000, sessions: int = 200) -> None:
    from ccmemory.core import spool, telemetry

    rng = random.Random(3)
    local = root / ".ccmemory" / "local"
    t0 = time.time() - 60 * 86400
    for i in range(events):
        ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0 + i * 250))
        ev = {
            "ts": ts,
            "k": rng.choice(["surfaced", "retrieved", "searched"]),
            "ids": rng.sample(ids, 3),
            "session": f"s{i % sessions}",
        }
        spool.append(local / telemetry.INBOX, ev, fsync=False)
    for s in range(sessions):
        a = t0 + s * 20000
        for dt in (0, 1800 + s * 7):
            spool.append(
                local / "spool" / f"s{s}.jsonl",
                {"k": "tool", "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(a + dt))},
                fsync=False,
            )


def store_random_vectors(svc: object) -> float:
    import numpy as np

    t = time.perf_counter()
    emb = svc.embedder()  # type: ignore[attr-defined]
    todo = svc.index.missing_vectors(svc.project, emb.name)  # type: ignore[attr-defined]
    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((len(todo), int(emb.dim))).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    svc.index.store_vectors(emb.name, int(emb.dim), [(h, v) for (h, _), v in zip(todo, vecs, strict=True)])  # type: ignore[attr-defined]
    return time.perf_counter() - t


def start_dashboard(root: Path, say: Any) -> Any:
    """The dashboard of `root` served in this process (real uvicorn on a real socket), after its
    start-up refresh (reindex check + telemetry ingest), which is timed and reported."""
    import threading

    from ccmemory.app.service import Service
    from ccmemory.core.vault import Vault
    from ccmemory.surfaces.dashboard.data import Dash
    from ccmemory.surfaces.dashboard.server import Server
    from tests.dashboard_util import Running

    r = Running.__new__(Running)
    r.dash = Dash(Service(Vault(root)), refresh_seconds=3600)
    t = time.perf_counter()
    r.dash.refresh(force=True)
    say(f"dashboard start: reindex check + telemetry ingest {time.perf_counter() - t:.2f} s")
    r.server = Server(r.dash)
    r.thread = threading.Thread(target=r.server.run, daemon=True)
    r.thread.start()
    while not r.server.uvicorn.started:
        time.sleep(0.05)
    return r


def time_pages(r: Any, repeats: int, say: Any) -> dict[str, dict[str, float]]:
    """Each page's /api answer over HTTP: first (snapshot + compute), recomputed after the cache is
    cleared (what an index or telemetry change does), and warm p50/p90 over `repeats` interleaved
    rounds. Says the table and returns page -> figures (ms)."""

    def get(page: str) -> float:
        t = time.perf_counter()
        status, _, body = r.request("GET", f"/api/{page}")
        assert status == 200, body[:300]
        return (time.perf_counter() - t) * 1000

    say("")
    say(
        "| page API | first (snapshot + compute) ms | recomputed after a change ms | warm p50 ms | warm p90 ms |"
    )
    say("|---|---|---|---|---|")
    first: dict[str, float] = {}
    for page in PAGES:  # the first call of the first page also loads the snapshot and the model
        first[page] = get(page)
    recomputed: dict[str, float] = {}
    for page in PAGES:
        with r.dash.lock:
            r.dash._cache.clear()  # what an index or telemetry change does (snapshot kept)
        recomputed[page] = get(page)
    warm: dict[str, list[float]] = {p: [] for p in PAGES}
    for _ in range(repeats):  # interleaved
        for page in PAGES:
            warm[page].append(get(page))
    out: dict[str, dict[str, float]] = {}
    for page in PAGES:
        out[page] = {
            "first": first[page],
            "recomputed": recomputed[page],
            "p50": statistics.median(warm[page]),
            "p90": pct(warm[page], 90),
        }
        say(
            f"| /api/{page} | {first[page]:.0f} | {recomputed[page]:.0f} | {out[page]['p50']:.1f} "
            f"| {out[page]['p90']:.1f} |"
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from bench_index import make_vault

    from ccmemory.app.service import Service
    from ccmemory.core.vault import Vault

    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ccm-dash-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        t = time.perf_counter()
        make_vault(root, args.n)
        made = time.perf_counter() - t
        svc = Service(Vault(root))
        t = time.perf_counter()
        svc.reindex()
        reindexed = time.perf_counter() - t
        vec_s = store_random_vectors(svc)
        ids = [m.id for m in svc.index.query(svc.filters(include_superseded=True), limit=args.n)]
        svc.close()
        seed_telemetry(root, ids)
        say(
            f"N={args.n}: vault written in {made:.1f} s, full reindex {reindexed:.1f} s, random vectors stored {vec_s:.1f} s"
        )

        r = start_dashboard(root, say)
        time_pages(r, args.repeats, say)
        with r.dash.lock:
            t = time.perf_counter()
            r.dash._snap = None
            r.dash._cache.clear()
            r.dash.snapshot()
            say(
                f"\nsnapshot reload after a reindex that changed files: {(time.perf_counter() - t) * 1000:.0f} ms"
            )

        # the overview page in a real browser
        from tests import site_cdp

        exe = site_cdp.find_chromium()
        if exe:
            b = site_cdp.Browser(exe)
            try:
                b.send(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": 1300, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
                )
                b.goto(r.server.url)
                renders = []
                for _ in range(max(5, args.repeats // 2)):
                    t = time.perf_counter()
                    b.goto(f"{r.base}/")
                    renders.append((time.perf_counter() - t) * 1000)
                cold = []
                for _ in range(3):
                    with r.dash.lock:
                        r.dash._cache.clear()
                    t = time.perf_counter()
                    b.goto(f"{r.base}/")
                    cold.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                b.goto(f"{r.base}/graph")
                b.wait_for("document.getElementById('graph').getAttribute('data-nodes') !== null", timeout=60)
                graph_ms = (time.perf_counter() - t) * 1000
                nodes = b.eval("document.getElementById('graph').getAttribute('data-nodes')")
            finally:
                b.close()
            say(
                f"overview page in Chromium, navigate → load event: warm p50 {statistics.median(renders):.0f} ms, "
                f"recomputed (cache cleared) p50 {statistics.median(cold):.0f} ms"
            )
            say(f"graph page in Chromium until {nodes} nodes drawn: {graph_ms:.0f} ms")
        else:
            say("chromium not installed: page render not measured")
        r.close()

    # the hooks' fast path: one telemetry emit vs the spool append PostToolUse already does
    from ccmemory.core import spool, telemetry

    with tempfile.TemporaryDirectory() as tmp:
        n = 2000
        t = time.perf_counter()
        for i in range(n):
            spool.append(
                Path(tmp) / "spool.jsonl", {"k": "tool", "ts": "2026-11-23T00:00:00Z", "n": i}, fsync=False
            )
        sp = (time.perf_counter() - t) / n * 1e6
        t = time.perf_counter()
        for _ in range(n):
            telemetry.emit(tmp, "retrieved", ["01M83KN13A7MQYYGQZRFH8YH9T"], session="mcp-1")
        em = (time.perf_counter() - t) / n * 1e6
    say(f"\none telemetry emit {em:.1f} µs vs one spool append {sp:.1f} µs (both O_APPEND, no fsync)")
    rev = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    end_load = os.getloadavg()
    say(
        f"\nload average at start {load[0]:.2f} / {load[1]:.2f}, at end {end_load[0]:.2f} / {end_load[1]:.2f} "
        f"(2 cores, shared); commit {rev}"
    )
    if args.out:
        cmd = f".venv/bin/python bench/dashboard_bench.py --n {args.n} --repeats {args.repeats} --out {args.out}"
        args.out.write_text(
            f"# Dashboard benchmark\n\n`{cmd}`\n\n" + "\n".join(lines) + "\n", encoding="utf-8"
        )


if __name__ == "__main__":
    main()
