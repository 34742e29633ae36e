"""Recall at the moment of work (issue 27): what the hooks inject, and how fast.

    .venv/bin/python bench/recall_bench.py quality --set recall-harbor --split T
    .venv/bin/python bench/recall_bench.py quality --set recall-wren --split H   # tuning since 2026-11-26
    .venv/bin/python bench/recall_bench.py quality --set recall-fossa --split H --heldout   # the lead, once
    .venv/bin/python bench/recall_bench.py latency --sizes 1000 10000

``quality`` builds a real repository from a labelled dev set (``bench/memories/<set>/``: memory
specs and ``recall.txt``, written without the ranking code), indexes it with the product
embedder, and runs every event of one split through the product's recall (``ccmemory.features.recall``:
the same selection, budget and rendering as the hooks; each event as a fresh session):

- task / question prompts: recall = the expected memory is injected; precision = injected
  memories that were expected; tokens per prompt;
- chatter prompts: the share that inject nothing;
- edit / read / bash events: recall and precision where a memory is expected, "nothing" where
  none is.

Both ways a hook can rank: ``text`` (the hook alone: full text over the local index) and
``hybrid`` (a warm process with the embedder, as when the MCP server runs). Held-out data
(``recall_rank.held_out``: the set ``blind``, and split H of any recall set not yet listed as
tuning data in ``recall_rank.TUNING_WHOLE``: ``recall-fossa``, or a new set) is refused unless
``--heldout`` is given (run it once, after the recipe is fixed).

``latency`` times the real hooks (``plugin/scripts/hook.sh UserPromptSubmit`` / ``PreToolUse``,
a subprocess each, as Claude Code calls them) on synthetic vaults of the given sizes
(``bench_index.make_vault``: every memory names a file), without and with a warm ``ccmemory mcp``
process (its first answer waits until the vault is embedded).
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "memories"))
sys.path.insert(0, str(ROOT / "bench"))

import devset  # type: ignore[import-not-found]  # noqa: E402
from recall_rank import held_out  # type: ignore[import-not-found]  # noqa: E402

from ccmemory.features.recall import engine  # noqa: E402
from ccmemory.features.recall.config import RecallSettings  # noqa: E402
from ccmemory.features.recall.paths import command_words, tool_paths  # noqa: E402
from ccmemory.features.recall.run import FILE_HEADER, PROMPT_HEADER  # noqa: E402

PROMPT_KINDS = ("task", "question", "chatter")
TOOL_KINDS = ("edit", "read", "bash")
TOOL_NAME = {"edit": "Edit", "read": "Read", "bash": "Bash"}


@dataclass
class Event:
    split: str
    kind: str
    targets: list[str]  # memory keys; empty = nothing should be injected
    payload: str


def load_events(split: str) -> list[Event]:
    out = []
    for line in (devset.SET_DIR / "recall.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        sp, kind, targets, payload = (p.strip() for p in line.split("|", 3))
        if sp != split:
            continue
        keys = [] if targets == "-" else [t.strip() for t in targets.split(",") if t.strip()]
        out.append(Event(sp, kind, keys, payload))
    return out


@dataclass
class Tally:
    n: int = 0
    expected: int = 0  # events with a target
    hit: int = 0  # of those, a target injected
    silent_ok: int = 0  # events without a target that injected nothing
    injected: int = 0  # memories injected
    correct: int = 0  # of those, expected
    tokens: list[int] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        none = self.n - self.expected
        return {
            "events": self.n,
            "recall": round(self.hit / self.expected, 3) if self.expected else None,
            "nothing when none expected": round(self.silent_ok / none, 3) if none else None,
            "precision": round(self.correct / self.injected, 3) if self.injected else None,
            "tokens/event": round(statistics.mean(self.tokens), 1) if self.tokens else 0.0,
        }


def choose(picks: list[engine.Pick], s: RecallSettings, header: str, prompt: bool = False) -> engine.Rendered:
    """What a fresh session would be shown (the hooks' selection, without session state)."""
    return engine.show(picks, s, header, check_first=prompt)


def run_quality(args: argparse.Namespace) -> None:
    if held_out(args.set, args.split) and not args.heldout:
        raise SystemExit("held-out data: pass --heldout (run it once, after the recipe is fixed)")
    devset.select(args.set)
    devset.write_files()
    events = load_events(args.split)
    keys = devset.keys()
    by_id = {v: k for k, v in keys.items()}
    from ccmemory.app.service import Service

    s = RecallSettings()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        devset.make_repo(root)
        svc = Service.open(root)
        svc.reindex()
        emb = svc.embedder()
        _, problem = svc.embed_missing()  # every memory's vector, before any prompt is ranked
        if problem or svc.vectors_pending:
            raise SystemExit(f"embedding failed: {problem or svc.vectors_pending} left")
        results: dict[str, dict[str, Any]] = {}
        for mode in ("text", "hybrid"):
            tallies = {k: Tally() for k in (*PROMPT_KINDS, *TOOL_KINDS)}
            for ev in events:
                if ev.kind in PROMPT_KINDS:
                    picks = []
                    if engine.speaks_to_project(ev.payload):  # as ccmemory.features.recall.run.prompt
                        picks = engine.prompt_picks(
                            svc.index,
                            svc.project,
                            ev.payload,
                            limit=s.pick_limit,
                            embedder=emb if mode == "hybrid" else None,
                        )
                    out = choose(picks, s, PROMPT_HEADER, prompt=True)
                else:
                    tool_input = {"command": ev.payload} if ev.kind == "bash" else {"file_path": ev.payload}
                    touched = tool_paths(TOOL_NAME[ev.kind], tool_input, str(root), str(root))
                    picks = engine.file_picks(svc.index, svc.project, touched, limit=s.pick_limit)
                    words = command_words(ev.payload) if ev.kind == "bash" else ""
                    if engine.worth_asking(words, command=True):  # as ccmemory.features.recall.run.tool does
                        said = engine.prompt_picks(
                            svc.index,
                            svc.project,
                            words,
                            limit=s.pick_limit,
                            embedder=emb if mode == "hybrid" else None,
                            command=True,
                        )
                        picks = engine.combine(picks, said, s.pick_limit)
                    out = choose(picks, s, FILE_HEADER.format(what=", ".join(touched)))
                got = [by_id.get(i, i) for i in out.ids]
                t = tallies[ev.kind]
                t.n += 1
                t.injected += len(got)
                t.correct += len(set(got) & set(ev.targets))
                t.tokens.append(out.tokens)
                if ev.targets:
                    t.expected += 1
                    if set(got) & set(ev.targets):
                        t.hit += 1
                    elif args.show_misses:
                        t.misses.append(f"{ev.kind}: {ev.payload!r} wants {ev.targets} got {got}")
                elif not got:
                    t.silent_ok += 1
                elif args.show_misses:
                    t.misses.append(f"{ev.kind} (none expected): {ev.payload!r} got {got}")
            results[mode] = {k: t.row() for k, t in tallies.items() if t.n}
            prompts = [ev for ev in events if ev.kind in ("task", "question")]
            tok = [x for k in PROMPT_KINDS for x in tallies[k].tokens]
            results[mode]["tokens per prompt (all prompts)"] = round(statistics.mean(tok), 1) if tok else 0
            results[mode]["prompts with a target"] = len(prompts)
            if args.show_misses:
                for t in tallies.values():
                    for miss in t.misses:
                        print(f"[{mode}] {miss}", file=sys.stderr)
        svc.close()
    print(json.dumps({"set": args.set, "split": args.split, "load": os.getloadavg()[0], **results}, indent=1))


# --- latency ---------------------------------------------------------------------------------------


def _hook(root: Path, event: str, payload: dict[str, Any], env: dict[str, str]) -> float:
    data = json.dumps({**payload, "cwd": str(root), "session_id": f"bench-{time.monotonic_ns()}"}).encode()
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
        raise SystemExit(f"hook failed: {proc.stderr.decode()[-500:]}")
    return elapsed


def _pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def _warm(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccmemory", "mcp"],
        cwd=root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    from ccmemory.features.recall import warm

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (
            warm.ask(str(root), {"op": "prompt", "text": "warm up the model now", "limit": 1}, 5.0)
            is not None
        ):
            return proc
        time.sleep(0.5)
    proc.kill()
    raise SystemExit("the warm process did not answer within 120 s")


def run_latency(args: argparse.Namespace) -> None:
    import bench_index  # type: ignore[import-not-found]

    # the synthetic vault's own vocabulary: its queries, and files its memories name (src/<word>.py)
    prompts = (bench_index.QUERIES * 10)[: args.prompts]
    edits = [f"src/{w}.py" for w in (bench_index.WORDS * 10)[: args.prompts]]
    # a shell command of one content word (asked since 2026-11-27): the command path's full cost
    commands = [f"just {w}" for w in (bench_index.WORDS * 10)[3 : 3 + args.prompts]]
    results: dict[str, Any] = {"load before": os.getloadavg()[0]}
    venv_bin = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)}
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "repo"
            root.mkdir()
            bench_index.make_vault(root, n)
            subprocess.run(
                [sys.executable, "-m", "ccmemory", "reindex"],
                cwd=root,
                env=env,
                check=True,
                capture_output=True,
            )
            for warm_mode in ("hook alone (full text)", "warm MCP process (hybrid)"):
                proc = _warm(root, env) if warm_mode.startswith("warm") else None
                try:
                    times: dict[str, list[float]] = {
                        "UserPromptSubmit": [],
                        "PreToolUse": [],
                        "PreToolUse (Bash)": [],
                    }
                    for text, path, command in zip(prompts, edits, commands, strict=False):
                        times["UserPromptSubmit"].append(
                            _hook(root, "UserPromptSubmit", {"prompt": text}, env)
                        )
                        times["PreToolUse"].append(
                            _hook(
                                root,
                                "PreToolUse",
                                {"tool_name": "Edit", "tool_input": {"file_path": str(root / path)}},
                                env,
                            )
                        )
                        times["PreToolUse (Bash)"].append(
                            _hook(
                                root,
                                "PreToolUse",
                                {"tool_name": "Bash", "tool_input": {"command": command}},
                                env,
                            )
                        )
                finally:
                    if proc is not None:
                        proc.stdin.close()  # type: ignore[union-attr]
                        proc.wait(timeout=30)
                for event, values in times.items():
                    results[f"{n} memories, {warm_mode}, {event}"] = {
                        "p50 ms": round(statistics.median(values), 1),
                        "p95 ms": round(_pct(values, 95), 1),
                        "runs": len(values),
                    }
                    print(
                        n, warm_mode, event, results[f"{n} memories, {warm_mode}, {event}"], file=sys.stderr
                    )
    results["load after"] = os.getloadavg()[0]
    print(json.dumps(results, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("quality")
    q.add_argument("--set", default="recall-harbor")
    q.add_argument("--split", default="T")
    q.add_argument("--heldout", action="store_true")
    q.add_argument("--show-misses", action="store_true")
    lat = sub.add_parser("latency")
    lat.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    lat.add_argument("--prompts", type=int, default=30)
    args = parser.parse_args()
    run_quality(args) if args.cmd == "quality" else run_latency(args)


if __name__ == "__main__":
    main()
