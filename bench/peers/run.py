"""ccmemory side by side with Basic Memory on the same generated notes (not part of CI).

    .venv/bin/python bench/peers/run.py [--n 300] [--runs 2] [--write bench/RESULTS-peers.md]

Generates ``--n`` notes with the same titles and bodies in both formats (ccmemory memory
files under ``.ccmemory/`` of a git repository; Basic Memory markdown notes with its
frontmatter in a plain folder), then alternates the two tools ``--runs`` times on:

- build: the first index of all notes (ccmemory ``reindex --no-embed``: both tools' full-text
  index; Basic Memory ``project add``, which indexes the folder; its semantic search cannot
  run offline: its FastEmbed model downloads from a hub);
- no-change: the same command again with nothing changed;
- one-edit: one note's body changed, then the command again;
- search: one cold CLI full-text search (a fresh process, as a user or hook runs it).

Basic Memory is installed on demand into its own throw-away virtual environment under
``~/.cache/ccmemory-bench/`` (never a project dependency). It needs Python >= 3.12: the
script looks for python3.13/python3.12 on PATH and in ``~/.pyenv/versions`` (or ``--python``).
Its state lives in a temporary HOME per run, so the user's own Basic Memory is never touched.
Every figure is a wall-clock time of the real CLI with the load average next to it.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

BM_VERSION = "0.24.1"
# basic-memory 0.24.1 pins fastmcp 4.1.3, whose server extra asks for certifi>=2026.10.19,
# which the package index here did not have (newest 2026.10.18): install with uv and this
# override (certifi is only the CA bundle).
BM_OVERRIDES = "certifi==2026.10.18\n"
CACHE = Path.home() / ".cache" / "ccmemory-bench"

WORDS = (
    "auth token cookie session cache build database migration pipeline flag search index rate "
    "limit release branch error logging payment webhook upload fixture dependency pin cli "
    "secret staging cluster queue retry backoff schema tenant invoice export report worker"
).split()
GLUE = "the a we it because so when after before never always should must not with".split()
QUERIES = ["tenant invoice export", "retry queue backoff", "session cookie secret"]


def notes(n: int, seed: int = 20) -> list[tuple[str, str]]:
    rng = random.Random(seed)

    def sentence(k: int) -> str:
        return (
            " ".join(rng.choice(GLUE) if i % 3 == 1 else rng.choice(WORDS) for i in range(k)).capitalize()
            + "."
        )

    return [
        (
            f"{sentence(rng.randint(5, 8)).rstrip('.')} {i}",
            " ".join(sentence(rng.randint(8, 14)) for _ in range(3)),
        )
        for i in range(n)
    ]


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def timed(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[float, str]:
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return float("inf"), f"timed out after {timeout:.0f} s"
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {(proc.stderr or proc.stdout)[-800:]}")
    return seconds, proc.stdout


# --------------------------------------------------------------------------- Basic Memory


def find_python(explicit: str | None) -> str:
    if explicit:
        return explicit
    cands = [shutil.which(n) for n in ("python3.13", "python3.12")]
    cands += sorted(glob.glob(str(Path.home() / ".pyenv/versions/3.1[23]*/bin/python3.1[23]")), reverse=True)
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    raise RuntimeError("Basic Memory needs Python >= 3.12 and none was found (use --python)")


def install_basic_memory(python: str) -> Path:
    venv = CACHE / f"bm-{BM_VERSION}"
    bm = venv / "bin" / "bm"
    if bm.exists():
        return bm
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "uv"], check=True)
    overrides = venv / "overrides.txt"
    overrides.write_text(BM_OVERRIDES)
    subprocess.run(
        [
            str(venv / "bin" / "uv"),
            "pip",
            "install",
            "-q",
            "--python",
            str(venv / "bin" / "python"),
            f"basic-memory=={BM_VERSION}",
            "--override",
            str(overrides),
        ],
        check=True,
    )
    return bm


def write_bm(folder: Path, items: list[tuple[str, str]]) -> list[Path]:
    folder.mkdir(parents=True)
    paths = []
    for i, (title, body) in enumerate(items):
        p = folder / f"note-{i:05d}.md"
        p.write_text(
            f"---\ntitle: {title}\ntype: note\npermalink: note-{i:05d}\n---\n\n# {title}\n\n{body}\n"
        )
        paths.append(p)
    return paths


class BasicMemory:
    def __init__(self, bm: Path, work: Path, items: list[tuple[str, str]], timeout: float):
        self.bm, self.timeout = str(bm), timeout
        self.home = work / "bm-home"
        self.folder = work / "bm-notes"
        self.paths = write_bm(self.folder, items)
        self.env = {**os.environ, "HOME": str(self.home), "NO_COLOR": "1"}

    def run(self, *args: str) -> tuple[float, str]:
        return timed([self.bm, *args], self.folder, self.env, self.timeout)

    def build(self) -> float:
        shutil.rmtree(self.home, ignore_errors=True)
        self.home.mkdir(parents=True)
        return self.run("project", "add", "bench", str(self.folder), "--default")[0]

    def again(self) -> float:
        return self.run("reindex", "--search", "--project", "bench")[0]

    def edit(self, k: int) -> float:
        p = self.paths[0]
        p.write_text(p.read_text() + f"\nEdited {k}: the tenant invoice export moved.\n")
        return self.again()

    def search(self, q: str) -> float:
        return self.run("tool", "search-notes", q, "--project", "bench")[0]


# --------------------------------------------------------------------------- ccmemory


class CCMemory:
    def __init__(self, work: Path, items: list[tuple[str, str]], timeout: float):
        from ccmemory.app.vaultinit import init_vault
        from ccmemory.core.model import Memory, new_id
        from ccmemory.core.vault import Vault

        self.root, self.timeout = work / "ccm", timeout
        self.root.mkdir()
        for cmd in (
            ["init", "-q", "-b", "main"],
            ["config", "user.email", "b@example.com"],
            ["config", "user.name", "B"],
        ):
            subprocess.run(["git", *cmd], cwd=self.root, check=True)
        init_vault(self.root)
        vault = Vault(self.root)
        when = datetime(2026, 11, 1, tzinfo=UTC)
        self.paths = [
            vault.write_new(Memory(id=new_id(), type="fact", title=t, created=when, body=b)) for t, b in items
        ]
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("CCMEMORY_")}
        self.env["PYTHONPATH"] = str(REPO)

    def run(self, *args: str) -> tuple[float, str]:
        return timed([sys.executable, "-m", "ccmemory", *args], self.root, self.env, self.timeout)

    def build(self) -> float:
        shutil.rmtree(self.root / ".ccmemory" / "local", ignore_errors=True)
        return self.run("reindex", "--no-embed")[0]

    def again(self) -> float:
        return self.run("reindex", "--no-embed")[0]

    def edit(self, k: int) -> float:
        p = self.paths[0]
        p.write_text(p.read_text() + f"\nEdited {k}: the tenant invoice export moved.\n")
        return self.again()

    def search(self, q: str) -> float:
        return self.run("search", "--mode", "text", "--", q)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=900, help="per Basic Memory command")
    ap.add_argument("--python", help="a Python >= 3.12 for Basic Memory's venv")
    ap.add_argument("--write", help="append the result table to this markdown file")
    args = ap.parse_args()

    lines = [
        f"## {args.n} notes, {args.runs} alternating runs ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
    ]
    print(lines[0], flush=True)
    try:
        bm_path = install_basic_memory(find_python(args.python))
        bm_problem = None
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        bm_path, bm_problem = None, f"Basic Memory could not be installed: {exc}"
        print(bm_problem, flush=True)
    items = notes(args.n)
    work = Path(tempfile.mkdtemp(prefix="ccm-peers-"))
    figures: dict[str, dict[str, list[float]]] = {"ccmemory": {}, "basic-memory": {}}
    loads: list[str] = [load()]
    try:
        tools: dict[str, object] = {"ccmemory": CCMemory(work, items, args.timeout)}
        if bm_path is not None:
            tools["basic-memory"] = BasicMemory(bm_path, work, items, args.timeout)
        for r in range(args.runs):
            order = list(tools) if r % 2 == 0 else list(reversed(tools))
            for name in order:
                tool = tools[name]
                steps = {
                    "build": tool.build,  # type: ignore[attr-defined]
                    "no-change": tool.again,  # type: ignore[attr-defined]
                    "one-edit": lambda t=tool, k=r: t.edit(k),  # type: ignore[attr-defined]
                    "search": lambda t=tool, k=r: t.search(QUERIES[k % len(QUERIES)]),  # type: ignore[attr-defined]
                }
                for step, fn in steps.items():
                    before = load()
                    try:
                        s = fn()
                    except RuntimeError as exc:
                        print(f"  {name} {step}: failed: {exc}", flush=True)
                        s = float("nan")
                    figures[name].setdefault(step, []).append(s)
                    print(
                        f"  run {r + 1} {name:12s} {step:9s} {s:8.2f} s  load {before} -> {load()}",
                        flush=True,
                    )
            loads.append(load())
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def cell(xs: list[float]) -> str:
        return " / ".join(f"{x:.2f}" for x in xs) if xs else "—"

    lines += [
        "| step | ccmemory (s, each run) | Basic Memory 0.24.1 (s, each run) | ratio of medians |",
        "|---|---|---|---|",
    ]
    for step in ("build", "no-change", "one-edit", "search"):
        a, b = figures["ccmemory"].get(step, []), figures["basic-memory"].get(step, [])
        ratio = f"{statistics.median(b) / statistics.median(a):.1f}×" if a and b else "—"
        lines.append(f"| {step} | {cell(a)} | {cell(b)} | {ratio} |")
    lines += [
        "",
        f"Load average (1 min) at the start and after each run: {', '.join(loads)} (2 shared cores).",
    ]
    if bm_problem:
        lines += ["", bm_problem]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        with open(args.write, "a", encoding="utf-8") as fh:
            fh.write("\n" + text)


if __name__ == "__main__":
    main()
