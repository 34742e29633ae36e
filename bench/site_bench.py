"""Site build time for N synthetic memories (default 1000) in a real git repository.

    python bench/site_bench.py [--memories 1000] [--commits 10] [--no-related]

Creates a temporary repository with N memories of all types (topics, relations, supersession
chains, a few hundred words of body each) committed in several commits, then runs
`ccmemory site build --json` as a user would and prints the wall time and the phases.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from ccmemory.app.vaultinit import init_vault  # noqa: E402
from ccmemory.core.model import TYPES, Memory, Relation, new_id  # noqa: E402
from ccmemory.core.vault import Vault  # noqa: E402
from ccmemory.features.cothinker import COTHINKER_TYPES  # noqa: E402

SYLLABLES = "ka lo mi ne ru sa te vi zo ba de fu gi ho ju".split()
TOPICS = [f"topic-{i}" for i in range(40)]


def vocabulary(rng: random.Random, size: int = 3000) -> tuple[list[str], list[float]]:
    """Pseudo-words with Zipf-like frequencies, like the words of real notes."""
    words = sorted({"".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(size)})
    rng.shuffle(words)
    return words, [1.0 / (rank + 1) for rank in range(len(words))]


VOCAB: tuple[list[str], list[float]] = ([], [])


def sentence(rng: random.Random, n: int) -> str:
    words, weights = VOCAB
    return " ".join(rng.choices(words, weights, k=n)).capitalize() + "."


def make(n: int, rng: random.Random) -> list[Memory]:
    global VOCAB
    VOCAB = vocabulary(rng)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    mems: list[Memory] = []
    # the eleven types of the original layout: the co-thinker types (issue 31) need fields these
    # memories do not have, and leaving them out keeps a given seed's vault as it was
    types = [t for t in TYPES if t not in COTHINKER_TYPES]
    for i in range(n):
        mtype = types[i % len(types)]
        m = Memory(
            id=new_id(),
            type=mtype,
            title=f"{sentence(rng, 6)[:-1]} #{i}",
            created=start + timedelta(hours=7 * i),
            body="\n\n".join(sentence(rng, 40) for _ in range(4)),
            author=f"dev{i % 7}@example.com",
            topics=rng.sample(TOPICS, 2),
            files=[f"src/mod{i % 30}.py"],
            confidence=round(rng.uniform(0.4, 1.0), 2),
        )
        if mtype == "question":
            m.fields = {"question": sentence(rng, 8), "answer": "" if i % 2 else sentence(rng, 6)}
        elif mtype == "decision":
            m.fields = {"rationale": sentence(rng, 12)}
        if mems and i % 5 == 0:
            m.relations = [Relation("RELATES_TO", rng.choice(mems).id, "synthetic")]
        if mtype == "decision" and i % 4 == 0:
            older = [x for x in mems if x.type == "decision"]
            if older:
                m.supersedes = [older[-1].id]
        mems.append(m)
    return mems


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--commits", type=int, default=10)
    ap.add_argument("--no-related", action="store_true")
    args = ap.parse_args()
    rng = random.Random(42)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        git(root, "config", "user.email", "bench@example.com")
        git(root, "config", "user.name", "Bench")
        git(root, "config", "commit.gpgsign", "false")
        init_vault(root)
        vault = Vault(root)
        mems = make(args.memories, rng)
        per = max(1, len(mems) // args.commits)
        for c in range(0, len(mems), per):
            for m in mems[c : c + per]:
                vault.write_new(m)
            git(root, "add", "-A")
            git(root, "commit", "-qm", f"memories {c}..{c + per - 1}")
        env = {k: v for k, v in os.environ.items() if not k.startswith("CCMEMORY_")}
        env["PYTHONPATH"] = str(REPO_ROOT)
        cmd = [sys.executable, "-m", "ccmemory", "site", "build", "--json"]
        if args.no_related:
            cmd.append("--no-related")
        t = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            sys.exit(proc.stderr)
        info = json.loads(proc.stdout)
        print(
            json.dumps(
                {
                    "memories": info["memories"],
                    "pages": info["pages"],
                    "wall_seconds": round(wall, 2),
                    "cpu_seconds": round(cpu, 2),  # user+sys: what an idle machine would need
                    "build_seconds": info["seconds"],
                    "phases": info["timings"],
                    "cpus": os.cpu_count(),
                    "load_average": [round(x, 1) for x in os.getloadavg()],
                    "related": not args.no_related,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
