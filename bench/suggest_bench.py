"""List what `ccmemory suggest` proposes on each dev set vault (issue 31), for bench/RESULTS-suggestions.md.

    .venv/bin/python bench/suggest_bench.py [--body]

Each vault under bench/memories/ (a `ccmemory/` folder) is copied into a fresh git repository,
indexed (text only) and asked for suggestions through the product's own feature module.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ccmemory.app.service import Service  # noqa: E402
from ccmemory.features.suggest import suggestions  # noqa: E402

SETS = ("recall-harbor", "recall-quayside", "tuning2", "blind")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--body", action="store_true", help="print each proposed memory's body too")
    args = ap.parse_args()
    for name in SETS:
        src = ROOT / "bench" / "memories" / name / "ccmemory"
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp) / "repo"
            shutil.copytree(src, repo / ".ccmemory")
            for cmd in (["init", "-q", "-b", "main"], ["add", "-A"]):
                subprocess.run(["git", *cmd], cwd=repo, check=True)
            subprocess.run(
                ["git", "-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qm", "seed"],
                cwd=repo,
                check=True,
            )
            with Service.open(repo) as svc:
                svc.reindex()
                found = suggestions(svc)
                count = svc.index.stats(svc.project)["memories"]
            print(f"## {name}: {count} memories, {len(found)} suggestions")
            for s in found:
                print(f"- `{s.key}` {s.why} → {s.type}: {s.title} (evidence: {len(s.evidence)})")
                if args.body:
                    print("  " + s.body.replace("\n", "\n  "))


if __name__ == "__main__":
    main()
