"""SessionStart hook latency with an empty session history and with 2,000 session records
(issue 28: the last sessions of the branch are read at every session start).

    python bench/sessions_start_latency.py [--runs 15] [--records 2000] [--baseline /path/to/main]

`--baseline` also times another checkout's hook (e.g. main, which reads no session record) on the
same repositories, interleaved run by run so both see the same machine load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def measure(root: Path, runs: int, codes: list[Path]) -> list[tuple[float, int]]:
    """Per checkout in `codes`: (median ms, characters printed) of `python -m ccmemory hook
    SessionStart` in `root`, the checkouts' runs interleaved."""
    payload = json.dumps(
        {"session_id": "now", "cwd": str(root), "hook_event_name": "SessionStart", "source": "startup"}
    ).encode()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CCMEMORY_")}
    times: list[list[float]] = [[] for _ in codes]
    outs = [0 for _ in codes]
    for _ in range(runs):
        for i, code in enumerate(codes):
            env = {**base, "CCMEMORY_NO_WORKER": "1", "PYTHONPATH": str(code)}
            t = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "ccmemory", "hook", "SessionStart"],
                input=payload,
                capture_output=True,
                cwd=root,
                env=env,
                check=True,
            )
            times[i].append((time.perf_counter() - t) * 1000)
            outs[i] = len(proc.stdout)
    return [(statistics.median(t), n) for t, n in zip(times, outs, strict=True)]


def main() -> int:
    from ccmemory.app.vaultinit import init_vault
    from ccmemory.features.sessions import record, store

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--records", type=int, default=2000)
    ap.add_argument("--baseline", type=Path, help="another checkout to time the same way")
    args = ap.parse_args()

    def both(root: Path, label: str) -> None:
        codes = [ROOT, *([args.baseline] if args.baseline else [])]
        for code, (ms, chars) in zip(codes, measure(root, args.runs, codes), strict=True):
            print(f"SessionStart, {label}, {code}: median {ms:.1f} ms ({chars} characters printed)")

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        init_vault(root)
        both(root, "no session record")
        for i in range(args.records):
            ts = f"2026-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
            events: list[dict[str, object]] = [
                {"k": "prompt", "text": f"task {i}: refactor module {i} " * 20, "ts": ts}
            ]
            events += [
                {"k": "tool", "id": f"t{j}", "name": "Bash", "cmd": f"pytest tests/test_{j}.py", "exit": 0}
                for j in range(30)
            ]
            store.write(root, record.build(events, session=f"s{i:05d}", branch="main" if i % 2 else "dev"))
        both(root, f"{args.records} session records")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
