"""Build a large synthetic vault fast (issue 29): memory files written directly, one commit.

    .venv/bin/python bench/scale/make_vault.py /tmp/vault-100k --n 100000

The old generator (`bench/bench_index.py`'s `make_vault`) wrote every file through
`Vault.write_new` (redaction, validation, python-frontmatter, an atomic write with fsync): 13
minutes for 100k. Here each file is formatted from a template in the documented layout
(docs/file-format.md; the same text `ccmemory.core.vault.render` gives, checked on a sample at
the end), written with a plain `write`, and the whole vault is committed with one `git add` and
one `git commit` on `main`. Deterministic for a given `--seed` (ids included).

Every type, its own fields (valid enum values, required texts), topics, files, supersedes and
relations to earlier memories, and a Zipf-distributed vocabulary (as in bench_index) are used.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_index import VOCAB, WORDS, ZIPF  # noqa: E402

from ccmemory.core.model import TYPES  # noqa: E402
from ccmemory.core.vault import slugify  # noqa: E402

# type -> the own-field lines (YAML) of a memory of that type; {w} is filled with words
_OWN: dict[str, list[str]] = {
    "decision": ["rationale: {w}", "revisit_trigger: {w}"],
    "correction": ["wrong_belief: {w}", "right_belief: {w}", "severity: significant"],
    "preference": ["scope: project"],
    "exception": ["rule_broken: {w}", "justification: {w}", "scope: one-time"],
    "insight": ["category: analysis", "implications: {w}"],
    "question": ["question: {w}?", "answer: {w}"],
    "failed_approach": ["approach: {w}", "outcome: {w}", "lesson: {w}"],
    "fact": ["category: convention"],
    "gotcha": ["severity: minor"],
    "pattern": [],
    "reference": ["uri: https://example.com/{w1}", "ref_type: url"],
}


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _ulid(ms: int, rng: random.Random) -> str:
    """A ULID (as `ccmemory.core.model.new_id`) from a time and the seeded generator."""
    value = (ms << 80) | rng.getrandbits(80)
    return "".join(_CROCKFORD[(value >> (5 * k)) & 31] for k in range(25, -1, -1))


def _memory_text(
    rng: random.Random, i: int, mid: str, mtype: str, ids: list[str], start: datetime
) -> tuple[str, str]:
    """(file name, file text) of memory number i."""
    words = rng.sample(WORDS, 8)
    body = " ".join(rng.choices(VOCAB, weights=ZIPF, k=60)) + "."
    title = " ".join(words[:5]).capitalize() + f" {i}"
    created = start + timedelta(minutes=37 * i)
    lines = [
        "---",
        f"id: {mid}",
        f"type: {mtype}",
        f"title: {title}",
        f"created: {created.strftime('%Y-%m-%dT%H:%M:%SZ')}",
        f"author: dev{i % 17}@example.com",
        f"topics: [{words[5]}, {words[6]}]",
        f"files: [src/{words[7]}.py]",
        "confidence: 0.8",
        "source: manual",
    ]
    if ids and rng.random() < 0.05:
        lines.append(f"supersedes: [{rng.choice(ids)}]")
    if ids and rng.random() < 0.3:
        lines += ["relations:", f"- {{type: RELATES_TO, target: {rng.choice(ids)}}}"]
    for own in _OWN[mtype]:
        lines.append(own.format(w=" ".join(rng.choices(VOCAB, weights=ZIPF, k=6)), w1=words[0]))
    name = f"{created.strftime('%Y-%m-%d')}-{slugify(title)}-{mid[-4:].lower()}.md"
    return name, "\n".join([*lines, "---", "", body, ""])


def make_vault(root: Path, n: int, seed: int = 7) -> float:
    """Create `root` as a git repository holding n memories in one commit; returns seconds."""
    started = time.perf_counter()
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    git = ["git", "-c", "core.autocrlf=false"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*git, "config", "user.email", "bench@example.com"], cwd=root, check=True)
    subprocess.run([*git, "config", "user.name", "Bench"], cwd=root, check=True)
    vault = root / ".ccmemory"
    (vault / "local").mkdir(parents=True, exist_ok=True)
    (vault / "config.yaml").write_text("project: scale-bench\n", encoding="utf-8")
    (root / ".gitignore").write_text(".ccmemory/local/\n", encoding="utf-8")
    # the eleven types of the original layout (the co-thinker types of issue 31 are left out, so a
    # given --seed builds the same vault as before they existed)
    types = list(_OWN)
    for mtype in types:
        (vault / TYPES[mtype].folder).mkdir(exist_ok=True)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    base_ms = int(start.timestamp() * 1000)
    ids: list[str] = []
    old = time.time() - 3600  # older than the racy window, as in a real checkout
    for i in range(n):
        mtype = types[i % len(types)]
        mid = _ulid(base_ms + i * 1000 + rng.randrange(1000), rng)
        name, text = _memory_text(rng, i, mid, mtype, ids, start)
        path = vault / TYPES[mtype].folder / name
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.utime(path, (old, old))
        ids.append(mid)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run(
        [*git, "commit", "-q", "--no-verify", "-m", f"{n} synthetic memories"], cwd=root, check=True
    )
    return time.perf_counter() - started


def check_sample(root: Path, k: int = 50) -> None:
    """Parse a sample with the product's parser and compare with its own renderer."""
    from ccmemory.core.vault import parse_text, render

    files = sorted((root / ".ccmemory").rglob("*.md"))
    for path in files[:: max(1, len(files) // k)]:
        text = path.read_text(encoding="utf-8")
        parsed = parse_text(text, path.name)
        if render(parsed.memory) != text:
            raise SystemExit(f"{path}: differs from ccmemory's own rendering")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="a new or empty directory")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    if args.root.exists() and any(args.root.iterdir()):
        raise SystemExit(f"{args.root} is not empty")
    seconds = make_vault(args.root, args.n, args.seed)
    check_sample(args.root)
    print(f"{args.n} memories in {args.root}: {seconds:.1f} s")


if __name__ == "__main__":
    main()
