"""SessionStart hook latency with an empty session history and with 2,000 session records
(issue 28: the last sessions of the branch are read at every session start).

    python bench/sessions_start_latency.py [--runs 15] [--records 2000]
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


def measure(root: Path, runs: int) -> tuple[float, int]:
    """(median ms, characters printed) of `python -m ccmemory hook SessionStart` in `root`."""
    payload = json.dumps(
        {"session_id": "now", "cwd": str(root), "hook_event_name": "SessionStart", "source": "startup"}
    ).encode()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCMEMORY_")}
    env.update({"CCMEMORY_NO_WORKER": "1", "PYTHONPATH": str(ROOT)})
    times = []
    out = b""
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "ccmemory", "hook", "SessionStart"],
            input=payload,
            capture_output=True,
            cwd=root,
            env=env,
            check=True,
        )
        times.append((time.perf_counter() - t) * 1000)
        out = proc.stdout
    return statistics.median(times), len(out)


def main() -> int:
    from ccmemory.features.sessions import record, store
    from ccmemory.surfaces.cli.cmd_core import init_vault

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--records", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        init_vault(root)
        empty = measure(root, args.runs)
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
        full = measure(root, args.runs)
    print(f"SessionStart, no session record: median {empty[0]:.1f} ms ({empty[1]} characters printed)")
    print(f"SessionStart, {args.records} records: median {full[0]:.1f} ms ({full[1]} characters printed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
