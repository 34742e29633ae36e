"""Hook latency on a large vault (issue 29; on demand, not in CI).

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/scale/hooks.py --runs 15 \\
        --vault /tmp/h29b/vault-100000 --src before=/tmp/before --src after=. [--out FILE]

Each run is one real `plugin/scripts/hook.sh EVENT` subprocess (what Claude Code runs), fed a
hook payload on stdin in the vault (built by `make_vault.py`, indexed by `reindex --full
--no-embed`): SessionStart (`source: startup`, its context injection), UserPromptSubmit with a
prompt from the vault's vocabulary (`bench_index.QUERIES`, one per run in turn; most inject memories) and PreToolUse
for an Edit of `src/token.py` (a file about 1.6 % of the memories name). Every label (`--src
LABEL=DIR`: PYTHONPATH=DIR, one interpreter) runs each event once per round, labels and events
interleaved, so all see the same load; p50/p95 per label and event, the 1-minute load average
before each round; whether every round's outputs were byte-identical across labels. A hook that
fails or prints nothing where it should is reported.
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
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

from bench_index import QUERIES, pct  # noqa: E402

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse")


def payload(event: str, root: Path, i: int) -> dict[str, object]:
    base: dict[str, object] = {
        "session_id": f"bench-{time.monotonic_ns()}",
        "cwd": str(root),
        "transcript_path": "",
        "hook_event_name": event,
    }
    if event == "SessionStart":
        return {**base, "source": "startup"}
    if event == "UserPromptSubmit":
        return {**base, "prompt": QUERIES[i % len(QUERIES)]}
    return {
        **base,
        "tool_name": "Edit",
        "tool_input": {"file_path": str(root / "src/token.py"), "old_string": "a", "new_string": "b"},
    }


def run_hook(event: str, root: Path, i: int, env: dict[str, str]) -> tuple[float, bytes]:
    data = json.dumps(payload(event, root, i)).encode()
    start = time.perf_counter()
    proc = subprocess.run(
        ["sh", str(ROOT / "plugin" / "scripts" / "hook.sh"), event],
        input=data,
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
    )
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{event} failed: {proc.stderr.decode()[-500:]}")
    return elapsed, proc.stdout


STALENESS_CACHE = ".ccmemory/local/staleness-cache.json"


def new_head(root: Path, label: str) -> None:
    """An empty commit (same tree, new HEAD), then the label's own staleness cache in place."""
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "--no-verify", "-m", "bench: new HEAD"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    saved = root / ".git" / f"bench-staleness-{label}.json"
    target = root / STALENESS_CACHE
    if saved.is_file():
        target.write_bytes(saved.read_bytes())
    else:
        target.unlink(missing_ok=True)


def keep_cache(root: Path, label: str) -> None:
    target = root / STALENESS_CACHE
    if target.is_file():
        (root / ".git" / f"bench-staleness-{label}.json").write_bytes(target.read_bytes())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", type=Path, required=True, action="append")
    ap.add_argument("--src", action="append", default=[], metavar="LABEL=DIR")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--events", nargs="+", default=list(EVENTS))
    ap.add_argument("--out", type=Path)
    ap.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="PATH",
        help="a file under the vault deleted before every hook run (e.g. .ccmemory/local/"
        "staleness-cache.json: every SessionStart then pays the history walk, as after a new commit)",
    )
    ap.add_argument(
        "--new-head",
        action="store_true",
        help="before every SessionStart run, an empty commit moves HEAD (the first session after a "
        "commit: the stored staleness answer is for the previous HEAD); each label keeps its own "
        "staleness cache file, as its own previous session left it",
    )
    args = ap.parse_args()
    venv_bin = str(Path(sys.executable).parent)
    envs = {}
    for label, src in (s.split("=", 1) for s in args.src or [f"this={ROOT}"]):
        envs[label] = {
            **{k: v for k, v in os.environ.items() if not k.startswith("CCMEMORY_")},
            "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""),
            "PYTHONPATH": os.path.abspath(src),
            "CCMEMORY_NO_WORKER": "1",
        }
    lines = [
        "| vault | event | "
        + " | ".join(f"{lb} p50 / p95 ms" for lb in envs)
        + " | output bytes | identical |"
    ]
    lines.append("|" + "---|" * (len(envs) + 4))
    for root in args.vault:
        times: dict[tuple[str, str], list[float]] = {(lb, ev): [] for lb in envs for ev in args.events}
        out_bytes: dict[tuple[str, str], int] = {}
        differ: dict[str, int] = dict.fromkeys(args.events, 0)  # rounds whose outputs differ by label
        loads = []
        for label, env in envs.items():  # warm-up: page cache, bytecode, each label's own cache
            for ev in args.events:
                if args.new_head and ev == "SessionStart":
                    new_head(root, label)
                run_hook(ev, root, 0, env)
                if args.new_head and ev == "SessionStart":
                    keep_cache(root, label)
        outputs: dict[tuple[str, str], bytes] = {}
        for i in range(args.runs):
            loads.append(os.getloadavg()[0])
            for label, env in envs.items():
                for ev in args.events:
                    for rel in args.drop:
                        (root / rel).unlink(missing_ok=True)
                    if args.new_head and ev == "SessionStart":
                        new_head(root, label)
                    ms, out = run_hook(ev, root, i, env)
                    if args.new_head and ev == "SessionStart":
                        keep_cache(root, label)
                    times[(label, ev)].append(ms)
                    out_bytes[(label, ev)] = len(out)
                    outputs[(label, ev)] = out
            for ev in args.events:  # byte for byte, label against label, in every round
                differ[ev] += len({outputs[(lb, ev)] for lb in envs}) > 1
        load = f"{min(loads):.2f}-{max(loads):.2f}"
        for ev in args.events:
            cells = [
                f"{statistics.median(times[(lb, ev)]):.0f} / {pct(times[(lb, ev)], 95):.0f}" for lb in envs
            ]
            sizes = "/".join(str(out_bytes[(lb, ev)]) for lb in envs)
            same = "yes" if not differ[ev] else f"no ({differ[ev]} rounds differ)"
            lines.append(
                f"| {root.name} (load {load}) | {ev} | " + " | ".join(cells) + f" | {sizes} | {same} |"
            )
        print("\n".join(lines[-len(args.events) :]), flush=True)
    text = "\n".join(lines) + f"\n\n({args.runs} interleaved rounds per vault)\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
