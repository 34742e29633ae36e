"""What the issue-19 hardening costs on an ordinary vault (docs/security.md).

Interleaved, alternating runs of (a) parsing every file with the bounded loader vs plain
`yaml.load`, (b) the one walker (`Vault.walk`: lstat per entry, regular files only) and
(c) the safe reader (`read_regular`: O_NOFOLLOW|O_NONBLOCK + fstat) vs `Path.read_bytes`, over a
generated vault of N memories (bench_index.make_vault). Writes bench/RESULTS-hostile.md.

    .venv/bin/python bench/bench_hostile.py --n 3000 --rounds 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

from bench.bench_index import make_vault
from ccmemory.core import vault as vault_mod
from ccmemory.core.vault import Vault, parse_text
from ccmemory.core.walk import read_regular


def _time(fn: object) -> float:
    t = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_vault(root, args.n)
        vault = Vault(root)
        paths = list(vault.iter_paths())
        texts = [(p.read_text(encoding="utf-8"), str(p)) for p in paths]

        def parse_bounded() -> None:
            for text, rel in texts:
                parse_text(text, rel)

        plain_load = lambda src: yaml.load(src, Loader=vault_mod._Loader)  # noqa: E731

        def parse_plain() -> None:
            saved = vault_mod.load_yaml
            vault_mod.load_yaml = plain_load
            try:
                for text, rel in texts:
                    parse_text(text, rel)
            finally:
                vault_mod.load_yaml = saved

        def walk_new() -> None:
            vault.walk()

        def walk_old() -> None:  # sync.scan before issue 19 (followed symlinks, no lstat)
            from ccmemory.core.model import FOLDER_TO_TYPE

            out = {}
            stack = [(os.path.join(vault.dir, f), f) for f in sorted(FOLDER_TO_TYPE)]
            while stack:
                folder, rel_folder = stack.pop()
                try:
                    entries = list(os.scandir(folder))
                except (FileNotFoundError, NotADirectoryError):
                    continue
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=True):
                        stack.append((entry.path, f"{rel_folder}/{entry.name}"))
                    elif entry.name.endswith(".md"):
                        st = entry.stat()
                        out[f"{rel_folder}/{entry.name}"] = (entry.path, st.st_mtime_ns, st.st_size)

        def read_safe() -> None:
            for p in paths:
                read_regular(p)

        def read_plain() -> None:
            for p in paths:
                p.read_bytes()

        pairs = {
            "parse (bounded vs plain yaml.load)": (parse_bounded, parse_plain),
            "walk (Vault.walk vs os.walk)": (walk_new, walk_old),
            "read (read_regular vs read_bytes)": (read_safe, read_plain),
        }
        rows = []
        for name, (new, old) in pairs.items():
            a: list[float] = []
            b: list[float] = []
            for r in range(args.rounds):
                order = [(new, a), (old, b)] if r % 2 == 0 else [(old, b), (new, a)]
                for fn, acc in order:
                    acc.append(_time(fn))
            ma, mb = statistics.median(a), statistics.median(b)
            rows.append((name, ma * 1000, mb * 1000, ma / mb))
    load = os.getloadavg()
    out = [
        "# Cost of the issue-19 hardening on an ordinary vault",
        "",
        f"Command: `.venv/bin/python bench/bench_hostile.py --n {args.n} --rounds {args.rounds}`  ",
        f"Load average at the end (1/5/15 min): {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} "
        "(a shared 2-core machine: compare the ratios, not the absolute times)",
        "",
        f"{args.n} generated memories (bench_index.make_vault), medians of {args.rounds} interleaved rounds.",
        "",
        "| step | hardened ms | before ms | ratio |",
        "|---|---:|---:|---:|",
        *[f"| {n} | {a:.1f} | {b:.1f} | {r:.2f} |" for n, a, b, r in rows],
        "",
    ]
    text = "\n".join(out)
    print(text)
    (Path(__file__).resolve().parent / "RESULTS-hostile.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
