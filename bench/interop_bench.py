"""Import speed of agent rule files (issue 30): a generated CLAUDE.md of N rules into a fresh vault.

    .venv/bin/python bench/interop_bench.py [--rules 500]

Times the real CLI (`ccmemory import CLAUDE.md`, then again: nothing new) and prints the load.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rules_text(n: int, seed: int = 7) -> str:
    rnd = random.Random(seed)
    verbs = ["Always", "Never", "Prefer", "Use", "Avoid", "Keep", "The"]
    nouns = ["the ledger", "invoices", "the booking queue", "weights", "aviary ids", "the CI", "migrations"]
    lines = ["# Rules", ""]
    for i in range(n):
        if i % 50 == 0:
            lines += ["", f"## Section {i // 50}", ""]
        verb, noun = rnd.choice(verbs), rnd.choice(nouns)
        why = " because the nightly job breaks otherwise" if verb in ("Never", "Avoid") and i % 3 == 0 else ""
        lines.append(f"- {verb} {noun} rule number {i} with detail {rnd.randint(1, 10**6)}{why}.")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", type=int, default=500)
    args = ap.parse_args()
    cli = [sys.executable, "-m", "ccmemory"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
        subprocess.run([*cli, "init", "--no-git-hooks"], cwd=repo, env=env, check=True, capture_output=True)
        (repo / "CLAUDE.md").write_text(rules_text(args.rules))
        for label in ("first import", "again (nothing new)"):
            start = time.perf_counter()
            subprocess.run(
                [*cli, "import", "CLAUDE.md", "--json"], cwd=repo, env=env, check=True, capture_output=True
            )
            print(
                f"{label}: {time.perf_counter() - start:.2f} s for {args.rules} rules (load {os.getloadavg()[0]:.1f})"
            )
        written = len(list((repo / ".ccmemory").rglob("*.md"))) - 1
        print(f"memory files: {written}")


if __name__ == "__main__":
    main()
