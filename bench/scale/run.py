"""Scale bench (issue 29; on demand, not in CI): reindex and text search on 10k and 100k vaults.

    .venv/bin/python bench/scale/run.py --sizes 10000 100000 \\
        --python after=.venv/bin/python --python before=/work/main/.venv/bin/python \\
        --work /tmp/ccmemory-scale --out bench/RESULTS-scale.md

Vaults are built once by `make_vault.py` under `--work` (kept for the next run). For each
interpreter (each has its own ccmemory installed: compare two checkouts on the same vault) and
size: a full text-only rebuild from an empty index (`reindex --full --no-embed`, wall and peak
RSS of the process), the no-change `reindex --no-embed` (median of 5), the one-file-changed
`reindex --no-embed` (a line appended to a different file each time, its mtime set 10 s back so
it is not "racy"; median of 5), and warm text search in process (10 queries x 5, after one
untimed pass; p50/p95). The 1-minute load average is recorded next to every figure: the machine
may be shared. The hand edits are reverted (`git checkout`) after each interpreter's runs.

`--only search` measures search alone on the vault's existing index (built once by a run
without it, or by `reindex --full --no-embed`): for `--rounds` rounds, each label in turn (so
before and after are interleaved under the same load), warm text search in process as above and
the `ccmemory search QUERY --mode text` CLI, one whole process per query (median and p95 over
the rounds); `--mode hybrid` does the same in hybrid mode (the vectors filled first, e.g. by
`fill_vectors.py`; the warm pass asserts every query was answered in hybrid mode); `--warm`
also times the CLI while the label's own `ccmemory mcp` runs (started per label and round, warmed
by one request on its recall socket, stopped after), which a CLI that knows the socket's
`search` request asks instead of loading the model and the vectors itself. `--only
rebuild` times the full text-only rebuild alone (from an empty index, labels interleaved for
`--rounds` rounds) and fails unless every label built the same index (a digest of every
table). `--src LABEL=DIR` runs that label with PYTHONPATH=DIR (two checkouts, one
interpreter). `--vault LABEL=DIR` (with `--only search`) searches that label's own copy of the
vault instead of `--work`'s: needed when the labels write files beside the index that the other
would not read (another layout of the vector matrix file), which would otherwise be rewritten
at every turn. Run with PYTHONDONTWRITEBYTECODE unset, so both checkouts import cached bytecode
as an installed ccmemory does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_index import QUERIES, pct  # noqa: E402
from make_vault import make_vault  # noqa: E402

# wall seconds and peak RSS of one child process, measured by a wrapper of its own
# (RUSAGE_CHILDREN is a maximum over every child the wrapper ever had: one each)
_TIMED = (
    "import resource,subprocess,sys,time;t=time.perf_counter();"
    "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);w=time.perf_counter()-t;"
    "print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024, p.returncode);"
    "sys.stderr.write(p.stderr if p.returncode > 1 else '')"
)
_SEARCH = """
import json, sys, time
from pathlib import Path
from ccmemory.app.service import Service
queries, mode = json.loads(sys.argv[1]), sys.argv[2]
svc = Service.open(Path("."))
for q in queries:
    assert svc.search(q, mode=mode).mode == mode
lat = []
for _ in range(5):
    for q in queries:
        t = time.perf_counter()
        svc.search(q, mode=mode, limit=10)
        lat.append((time.perf_counter() - t) * 1000)
print(json.dumps(lat))
"""


# label -> the environment of its child processes (PYTHONPATH from --src)
ENVS: dict[str, dict[str, str]] = {}


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def timed(python: str, root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall s, peak RSS MB) of `python -m ccmemory args` run in `root`."""
    out = subprocess.run(
        [sys.executable, "-c", _TIMED, python, "-m", "ccmemory", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    wall, rss, rc = out.stdout.split()
    if int(rc) > 1:  # 1: invalid files left out, not a failure of the command
        raise SystemExit(f"ccmemory {' '.join(args)} exited {rc}: {out.stderr}")
    return float(wall), float(rss)


def vault_for(work: Path, n: int) -> Path:
    root = work / f"vault-{n}"
    if not (root / ".git").is_dir():
        if root.exists():
            shutil.rmtree(root)
        seconds = make_vault(root, n)
        print(f"built {n} memories in {seconds:.1f} s (load {load():.2f})", flush=True)
    return root


def measure(python: str, root: Path, n: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    res: dict[str, Any] = {}
    for old in (root / ".ccmemory" / "local").glob("index.db*"):
        old.unlink()
    res["load_full"] = load()
    res["full_s"], res["full_rss_mb"] = timed(python, root, "reindex", "--full", "--no-embed", env=env)
    timed(python, root, "reindex", "--no-embed", env=env)  # the first run after a rebuild stores git's view
    res["load_nochange"] = load()
    res["nochange_s"] = statistics.median(
        timed(python, root, "reindex", "--no-embed", env=env)[0] for _ in range(5)
    )
    files = sorted((root / ".ccmemory" / "decisions").glob("*.md"))
    walls = []
    res["load_one"] = load()
    for k in range(5):
        one = files[(n // 22) + k * 7]
        one.write_text(one.read_text(encoding="utf-8") + f"\nedit {k}\n", encoding="utf-8")
        back = time.time() - 10
        os.utime(one, (back, back))
        walls.append(timed(python, root, "reindex", "--no-embed", env=env)[0])
    res["one_s"] = statistics.median(walls)
    res["load_search"] = load()
    lat = search_latencies(python, root, env)
    res["search_p50_ms"], res["search_p95_ms"] = pct(lat, 50), pct(lat, 95)
    subprocess.run(["git", "checkout", "-q", "--", ".ccmemory"], cwd=root, check=True)
    timed(python, root, "reindex", "--no-embed", env=env)
    return res


def search_latencies(
    python: str, root: Path, env: dict[str, str] | None = None, mode: str = "text"
) -> list[float]:
    """Warm in-process search: ms of each of 10 queries x 5 after one untimed pass."""
    out = subprocess.run(
        [python, "-c", _SEARCH, json.dumps(QUERIES), mode],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return list(json.loads(out.stdout))


def cli_walls(python: str, root: Path, env: dict[str, str] | None = None, mode: str = "text") -> list[float]:
    """Seconds of one whole `ccmemory search QUERY --mode MODE` process per query."""
    return [timed(python, root, "search", q, "--mode", mode, env=env)[0] for q in QUERIES]


def measure_search(
    pythons: dict[str, str],
    root: Path,
    rounds: int,
    mode: str = "text",
    warm: bool = False,
    roots: dict[str, Path] | None = None,
) -> dict[str, dict[str, Any]]:
    """Search only, on the existing index (``roots``' copy for a label named there), labels
    interleaved round by round. With ``warm``,
    each label's CLI runs are also timed while that label's own `ccmemory mcp` serves the
    repository's recall socket (started for the label's turn, warmed, stopped after)."""
    lat: dict[str, list[float]] = {label: [] for label in pythons}
    cli: dict[str, list[float]] = {label: [] for label in pythons}
    hot: dict[str, list[float]] = {label: [] for label in pythons}
    loads: dict[str, list[float]] = {label: [] for label in pythons}
    for r in range(rounds):
        for label, python in pythons.items():
            at = (roots or {}).get(label, root)
            loads[label].append(load())
            lat[label] += search_latencies(python, at, ENVS.get(label), mode)
            cli[label] += cli_walls(python, at, ENVS.get(label), mode)
            p50, cli50 = pct(lat[label][-50:], 50), statistics.median(cli[label][-len(QUERIES) :])
            line = f"round {r + 1} {label}: p50 {p50:.1f} ms, CLI {cli50:.3f} s (load {loads[label][-1]:.2f})"
            if warm:
                with mcp_server(python, at, ENVS.get(label)):
                    loads[label].append(load())
                    hot[label] += cli_walls(python, at, ENVS.get(label), mode)
                hot50 = statistics.median(hot[label][-len(QUERIES) :])
                line += f"; CLI with a warm MCP server {hot50:.3f} s (load {loads[label][-1]:.2f})"
            print(line, flush=True)
    out: dict[str, dict[str, Any]] = {
        label: {
            "search_p50_ms": pct(lat[label], 50),
            "search_p95_ms": pct(lat[label], 95),
            "cli_median_s": statistics.median(cli[label]),
            "cli_p95_s": pct(cli[label], 95),
            "load": f"{min(loads[label]):.2f}-{max(loads[label]):.2f}",
        }
        for label in pythons
    }
    if warm:
        for label in pythons:
            out[label]["warm_median_s"] = statistics.median(hot[label])
            out[label]["warm_p95_s"] = pct(hot[label], 95)
    return out


@contextmanager
def mcp_server(python: str, root: Path, env: dict[str, str] | None) -> Iterator[None]:
    """`ccmemory mcp` for `root` (stdio, no client: its recall socket is served from start-up),
    warmed by one prompt request over the socket (index, model and vectors loaded), stopped
    after by closing its stdin."""
    import socket

    sock_path = root / ".ccmemory" / "local" / "recall.sock"
    if len(str(sock_path).encode()) > 100:
        raise SystemExit(f"{sock_path}: too long for a socket here; use a shorter --work")
    proc = subprocess.Popen(
        [python, "-m", "ccmemory", "mcp"],
        cwd=root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        request = {"op": "prompt", "text": "database migration lock schema deploy", "limit": 3}
        while True:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit("the MCP server did not serve its recall socket")
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(120)
                    s.connect(str(sock_path))
                    s.sendall(json.dumps(request).encode() + b"\n")
                    if b"picks" in s.recv(1 << 20):
                        break
            except OSError:
                time.sleep(0.5)
        yield
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def measure_rebuild(pythons: dict[str, str], root: Path, rounds: int) -> dict[str, dict[str, Any]]:
    """The full text-only rebuild from an empty index, labels interleaved round by round; after
    each, a digest of every table of the index (FTS5's shadow tables included), which must be
    the same for every label."""
    walls: dict[str, list[float]] = {label: [] for label in pythons}
    rss: dict[str, list[float]] = {label: [] for label in pythons}
    loads: dict[str, list[float]] = {label: [] for label in pythons}
    digests: set[str] = set()
    for r in range(rounds):
        for label, python in pythons.items():
            for old in (root / ".ccmemory" / "local").glob("index.db*"):
                old.unlink()
            loads[label].append(load())
            wall, peak = timed(python, root, "reindex", "--full", "--no-embed", env=ENVS.get(label))
            walls[label].append(wall)
            rss[label].append(peak)
            digests.add(index_digest(root / ".ccmemory" / "local" / "index.db"))
            print(
                f"round {r + 1} {label}: {wall:.2f} s, {peak:.0f} MB (load {loads[label][-1]:.2f})",
                flush=True,
            )
    if len(digests) != 1:
        raise SystemExit(f"the labels built different indexes: {sorted(digests)}")
    return {
        label: {
            "walls": walls[label],
            "median_s": statistics.median(walls[label]),
            "rss_mb": max(rss[label]),
            "load": f"{min(loads[label]):.2f}-{max(loads[label]):.2f}",
        }
        for label in pythons
    }


def index_digest(db_path: Path) -> str:
    """sha256 over every table's rows (sorted; the meta keys of git's state and of the vector state
    token, random per write, left out)."""
    import hashlib
    import sqlite3

    db = sqlite3.connect(db_path)
    h = hashlib.sha256()
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
        if name.startswith("sqlite_"):
            continue
        cols = "rowid, title, body, fields" if name == "memory_fts" else "*"
        rows = [
            r
            for r in db.execute(f'SELECT {cols} FROM "{name}"')
            if not str(r[0]).startswith("sync:") and r[0] != "vectors_state"
        ]
        h.update(name.encode() + repr(sorted(rows, key=repr)).encode())
    db.close()
    return h.hexdigest()[:16]


def rebuild_table(res: dict[str, dict[str, Any]], n: int, rounds: int) -> str:
    labels = list(res)
    lines = [
        f"| full text-only rebuild at {n:,} ({rounds} interleaved rounds) | " + " | ".join(labels) + " |",
        "|" + "---|" * (len(labels) + 1),
        "| each round (s) | "
        + " | ".join(", ".join(f"{w:.1f}" for w in res[label]["walls"]) for label in labels)
        + " |",
        "| median (s) | " + " | ".join(f"{res[label]['median_s']:.2f}" for label in labels) + " |",
        "| peak RSS (MB) | " + " | ".join(f"{res[label]['rss_mb']:.0f}" for label in labels) + " |",
        "| 1-minute load before each | " + " | ".join(res[label]["load"] for label in labels) + " |",
    ]
    if len(labels) == 2:
        a, b = labels
        lines.append(f"| {b} / {a} (median) | | {res[b]['median_s'] / res[a]['median_s']:.2f} |")
    return "\n".join(lines)


def search_table(res: dict[str, dict[str, Any]], n: int, rounds: int, mode: str = "text") -> str:
    labels = list(res)
    lines = [
        f"| measure at {n:,} ({rounds} interleaved rounds) | " + " | ".join(labels) + " |",
        "|" + "---|" * (len(labels) + 1),
    ]
    for name, key, fmt in (
        (f"{mode} search in process p50 (ms)", "search_p50_ms", "{:.1f}"),
        (f"{mode} search in process p95 (ms)", "search_p95_ms", "{:.1f}"),
        (f"`ccmemory search --mode {mode}` median (s)", "cli_median_s", "{:.3f}"),
        (f"`ccmemory search --mode {mode}` p95 (s)", "cli_p95_s", "{:.3f}"),
        (f"`ccmemory search --mode {mode}` with a warm MCP server, median (s)", "warm_median_s", "{:.3f}"),
        (f"`ccmemory search --mode {mode}` with a warm MCP server, p95 (s)", "warm_p95_s", "{:.3f}"),
        ("1-minute load over the rounds", "load", "{}"),
    ):
        if key not in res[labels[0]]:
            continue
        lines.append(f"| {name} | " + " | ".join(fmt.format(res[label][key]) for label in labels) + " |")
    return "\n".join(lines)


def table(results: dict[str, dict[int, dict[str, Any]]], sizes: list[int]) -> str:
    rows = [
        ("full text-only rebuild (`reindex --full --no-embed`)", "full_s", "s", "load_full"),
        ("peak RSS of that rebuild", "full_rss_mb", "MB", "load_full"),
        ("no-change `reindex --no-embed` (median of 5)", "nochange_s", "s", "load_nochange"),
        ("one file changed, `reindex --no-embed` (median of 5)", "one_s", "s", "load_one"),
        ("text search in process p50", "search_p50_ms", "ms", "load_search"),
        ("text search in process p95", "search_p95_ms", "ms", "load_search"),
    ]
    head = ["measure"] + [f"{label} at {n:,}" for n in sizes for label in results]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, key, unit, load_key in rows:
        cells = [name]
        for n in sizes:
            for label in results:
                r = results[label][n]
                value = r[key]
                shown = f"{value:.2f}" if unit == "s" else f"{value:.0f}"
                cells.append(f"{shown} {unit} (load {r[load_key]:.2f})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument(
        "--python", action="append", default=[], metavar="LABEL=PATH", help="an interpreter with ccmemory"
    )
    ap.add_argument(
        "--src", action="append", default=[], metavar="LABEL=DIR", help="run LABEL with PYTHONPATH=DIR"
    )
    ap.add_argument(
        "--vault",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="--only search: LABEL's own vault copy",
    )
    ap.add_argument("--only", choices=["search", "rebuild"], help="search or the full rebuild only")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of --only search / rebuild")
    ap.add_argument(
        "--mode",
        choices=["text", "hybrid"],
        default="text",
        help="search mode of --only search (hybrid needs the vectors: bench/scale/fill_vectors.py)",
    )
    ap.add_argument(
        "--warm",
        action="store_true",
        help="--only search: also time the CLI while the label's own `ccmemory mcp` serves the socket",
    )
    ap.add_argument("--work", type=Path, default=Path("/tmp/ccmemory-scale"))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    pythons = {label: os.path.abspath(path) for label, path in (p.split("=", 1) for p in args.python)}
    pythons = pythons or {"this": sys.executable}
    for label, src in (s.split("=", 1) for s in args.src):
        ENVS[label] = {**os.environ, "PYTHONPATH": os.path.abspath(src)}
    args.work.mkdir(parents=True, exist_ok=True)
    head = (
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{len(os.sched_getaffinity(0))} cores, Python {platform.python_version()}.\n"
        f"Command: `{' '.join(['.venv/bin/python', 'bench/scale/run.py', *sys.argv[1:]])}`\n\n"
    )
    if args.only == "rebuild":
        text = head + "\n\n".join(
            rebuild_table(measure_rebuild(pythons, vault_for(args.work, n), args.rounds), n, args.rounds)
            for n in args.sizes
        )
        print(text)
        if args.out:
            args.out.write_text(text + "\n", encoding="utf-8")
        return
    if args.only == "search":
        parts = []
        for n in args.sizes:
            root = args.work / f"vault-{n}"
            if not (root / ".ccmemory" / "local" / "index.db").is_file():
                raise SystemExit(f"no index in {root}: build it first (a run without --only)")
            roots = {label: Path(d) for label, d in (v.split("=", 1) for v in args.vault)}
            res = measure_search(pythons, root, args.rounds, args.mode, args.warm, roots)
            parts.append(search_table(res, n, args.rounds, args.mode))
        text = head + "\n\n".join(parts) + "\n"
        print(text)
        if args.out:
            args.out.write_text(text, encoding="utf-8")
        return
    results: dict[str, dict[int, dict[str, Any]]] = {label: {} for label in pythons}
    for n in args.sizes:
        root = vault_for(args.work, n)
        for label, python in pythons.items():
            results[label][n] = measure(python, root, n, ENVS.get(label))
            print(label, n, json.dumps(results[label][n]), flush=True)
    text = head + table(results, args.sizes) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
