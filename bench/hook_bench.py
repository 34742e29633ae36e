"""Hook latency: median wall time of `ccmemory hook PostToolUse` (a real subprocess fed a
realistic payload, in a real git repo with `.ccmemory/`) against `python -c pass` in the same run.

    python bench/hook_bench.py [--runs 40] [--write bench/RESULTS-hooks.md]

Target (issue #5): PostToolUse median <= 3x bare Python startup on the same machine.
Runs are interleaved (pass, hook, pass, hook, ...) so background load hits both alike.
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
import tempfile
import time
from pathlib import Path

PAYLOAD_TOOL = {
    "tool_name": "Edit",
    "tool_input": {
        "file_path": "src/auth/token.ts",
        "old_string": "localStorage.setItem('token', token)",
        "new_string": "document.cookie = `token=${token}; HttpOnly; Secure; SameSite=Strict`",
        "replace_all": False,
    },
    "tool_response": {
        "filePath": "src/auth/token.ts",
        "oldString": "localStorage.setItem('token', token)",
        "newString": "document.cookie = `token=${token}; HttpOnly; Secure; SameSite=Strict`",
        "originalFile": "export function save(token: string) {\n  localStorage.setItem('token', token)\n}\n"
        * 40,
        "structuredPatch": [
            {
                "oldStart": 2,
                "oldLines": 1,
                "newStart": 2,
                "newLines": 1,
                "lines": [
                    "-  localStorage.setItem('token', token)",
                    "+  document.cookie = `token=${token}; HttpOnly`",
                ],
            }
        ],
        "userModified": False,
        "replaceAll": False,
    },
    "tool_use_id": "toolu_01NzjV452AGVQR51StZtarfB",
}


def timed(cmd: list[str], data: bytes | None, cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        cmd, input=data, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=env, check=False
    )
    return (time.perf_counter() - start) * 1000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--write", type=Path, default=None)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="ccmemory-bench-"))
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".ccmemory").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCMEMORY_")}
    env["CCMEMORY_NO_WORKER"] = "1"
    payload = json.dumps(
        {
            "session_id": "5f2c0b7e-1c1d-4c4b-9a51-8f3e2d1c0a99",
            "transcript_path": str(tmp / "session.jsonl"),
            "cwd": str(repo),
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            **PAYLOAD_TOOL,
        }
    ).encode()
    exe = sys.executable
    console = shutil.which("ccmemory", path=str(Path(exe).parent)) or shutil.which("ccmemory")
    wrapper = Path(__file__).resolve().parent.parent / "plugin" / "scripts" / "hook.sh"
    env["PATH"] = f"{Path(exe).parent}{os.pathsep}{env.get('PATH', '')}"
    variants = {
        "python -c pass": ([exe, "-c", "pass"], None),
        "plugin/scripts/hook.sh PostToolUse (what Claude Code runs)": (
            [str(wrapper), "PostToolUse"],
            payload,
        ),
        "ccmemory hook PostToolUse (console script)": ([console, "hook", "PostToolUse"], payload)
        if console
        else None,
        "python -m ccmemory hook PostToolUse": ([exe, "-m", "ccmemory", "hook", "PostToolUse"], payload),
        "ccmemory hook UserPromptSubmit (console script)": (
            [console, "hook", "UserPromptSubmit"],
            json.dumps(
                {
                    "session_id": "s",
                    "cwd": str(repo),
                    "transcript_path": "",
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": "add a test",
                }
            ).encode(),
        )
        if console
        else None,
    }
    runs: dict[str, list[float]] = {k: [] for k, v in variants.items() if v}
    for v in variants.values():  # warm-up (page cache, pyc)
        if v:
            timed(v[0], v[1], repo, env)
    for _ in range(args.runs):
        for name, v in variants.items():
            if v:
                runs[name].append(timed(v[0], v[1], repo, env))
    base = statistics.median(runs["python -c pass"])
    lines = [
        f"| {name} | {statistics.median(t):.1f} | {min(t):.1f} | {statistics.median(t) / base:.2f}x |"
        for name, t in runs.items()
    ]
    spooled = sum(1 for _ in (repo / ".ccmemory/local/spool").glob("*.jsonl"))
    report = "\n".join(
        [
            "| command | median ms | min ms | vs python -c pass |",
            "|---|---|---|---|",
            *lines,
        ]
    )
    print(report)
    print(
        f"({args.runs} interleaved runs; python {platform.python_version()}; "
        f"{os.cpu_count()} CPUs; spool files written: {spooled})"
    )
    if args.write:
        cmd = f"python bench/hook_bench.py --runs {args.runs} --write {args.write}"
        args.write.write_text(
            "# Hook latency\n\n"
            f"Command: `{cmd}` (interpreter: `{exe}`)\n\n"
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
            f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
            f"{args.runs} interleaved runs per command. Each hook run is a real subprocess fed a "
            "realistic PostToolUse payload (an Edit with its structured result) in a git repo "
            "with `.ccmemory/`; it redacts and appends one fsync'ed line to the session spool.\n\n"
            f"{report}\n\n"
            "Target (issue #5): PostToolUse median <= 3x `python -c pass`. The machine is shared, "
            "so absolute numbers move with load; runs are interleaved so both sides see the same "
            "load.\n"
        )
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
