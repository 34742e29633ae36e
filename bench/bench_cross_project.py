"""What cross-project features cost (run on demand, not in the test suite).

    .venv/bin/python bench/bench_cross_project.py --size 1000 --out bench/RESULTS-cross-project.md

Three synthetic repositories of --size memories each (bench_index.make_vault): app, and two
related to it (SQLite, each its own index), plus a personal vault of 20 preferences. Measures,
interleaved (plain / cross alternating, so load drifts hit both alike):

- session-start context in process: no related projects and an empty personal vault, versus two
  related projects (opened read-only, stale-checked, applies_to queried) and the personal vault
  (reindexed incrementally, then queried);
- full-text search: `Service.search` versus `crossproject.cross_search` over bench_index.QUERIES;
- `ccmemory context` as a whole process, both ways.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_index import QUERIES, make_vault, pct  # noqa: E402

from ccmemory.app.service import Service  # noqa: E402
from ccmemory.core.config import Config, RelatedProject  # noqa: E402
from ccmemory.core.model import Memory, new_id  # noqa: E402
from ccmemory.core.vault import Vault  # noqa: E402
from ccmemory.features import personal  # noqa: E402
from ccmemory.features.context import context_for  # noqa: E402
from ccmemory.features.crossproject import cross_search  # noqa: E402


def ms(fn: object, *args: object, **kw: object) -> float:
    t = time.perf_counter()
    fn(*args, **kw)  # type: ignore[operator]
    return (time.perf_counter() - t) * 1000


def proc_ms(root: Path, env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ccmemory", "context"], cwd=root, env=env, check=True, capture_output=True
    )
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--out")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ccm-cross-"))
    roots = {}
    for i, name in enumerate(("app", "rel1", "rel2")):
        root = tmp / name
        root.mkdir()
        make_vault(root, args.size, seed=7 + i)
        with Service(Vault(root)) as svc:
            svc.reindex()
        roots[name] = root
    empty, full = tmp / "home-empty", tmp / "home-full"
    os.environ["CCMEMORY_HOME"] = str(full)
    for i in range(20):
        personal.record_global(
            Memory(
                id=new_id(),
                type="preference",
                title=f"Global rule {i} about style",
                created=datetime.now(UTC).replace(microsecond=0),
                author="b@x",
            ),
            service=Service,
        )
    related = [RelatedProject(n, "technical", roots[n]) for n in ("rel1", "rel2")]
    plain = Service(Vault(roots["app"]), Config(project="app", user_id="bench@example.com"))
    cross = Service(Vault(roots["app"]), Config(project="app", user_id="bench@example.com", related=related))
    ctx = {"plain": [], "cross": []}
    search = {"plain": [], "cross": []}
    for _ in range(2):  # warm-up
        os.environ["CCMEMORY_HOME"] = str(empty)
        context_for(plain)
        os.environ["CCMEMORY_HOME"] = str(full)
        context_for(cross)
    for _ in range(args.rounds):
        os.environ["CCMEMORY_HOME"] = str(empty)
        ctx["plain"].append(ms(lambda: context_for(plain)))
        os.environ["CCMEMORY_HOME"] = str(full)
        ctx["cross"].append(ms(lambda: context_for(cross)))
    for _ in range(3):
        for q in QUERIES:
            search["plain"].append(ms(plain.search, q, mode="text"))
            search["cross"].append(ms(cross_search, cross, q, mode="text"))
    # whole processes: app's config names the related repos only for the "cross" runs
    cfg_path = roots["app"] / ".ccmemory" / "config.yaml"
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("CCMEMORY_")}
    base_env["PYTHONPATH"] = str(ROOT)
    proc = {"plain": [], "cross": []}
    related_yaml = "related_to:\n" + "".join(
        f"  - {{name: {n}, path: ../{n}, relation: technical}}\n" for n in ("rel1", "rel2")
    )
    for _ in range(5):
        cfg_path.write_text("backend: sqlite\n")
        proc["plain"].append(proc_ms(roots["app"], {**base_env, "CCMEMORY_HOME": str(empty)}))
        cfg_path.write_text("backend: sqlite\n" + related_yaml)
        proc["cross"].append(proc_ms(roots["app"], {**base_env, "CCMEMORY_HOME": str(full)}))
    load = os.getloadavg()
    lines = [
        "# Cross-project costs",
        "",
        f"Command: `.venv/bin/python bench/bench_cross_project.py --size {args.size} --rounds {args.rounds}`",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {platform.python_implementation()} "
        f"{platform.python_version()}; {os.cpu_count()} CPUs; load average after the run "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (a shared machine: compare the ratios).",
        f"Three repositories of {args.size} memories (app + 2 related, SQLite), personal vault of 20 "
        "preferences. Plain and cross runs alternate.",
        "",
        "| measure | plain p50 ms | cross p50 ms | plain p95 ms | cross p95 ms | ratio p50 |",
        "|---|---|---|---|---|---|",
    ]
    for label, d in (
        ("session-start context (in process)", ctx),
        ("full-text search (in process)", search),
        ("`ccmemory context` (whole process)", proc),
    ):
        p50a, p50b = statistics.median(d["plain"]), statistics.median(d["cross"])
        lines.append(
            f"| {label} | {p50a:.1f} | {p50b:.1f} | {pct(d['plain'], 95):.1f} | {pct(d['cross'], 95):.1f} "
            f"| {p50b / p50a:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    plain.close()
    cross.close()


if __name__ == "__main__":
    main()
