"""Capture quality bench (issue 12): rules mode over the labelled corpus and the fixture
transcripts, and the LLM path's calls and input tokens per session with a recorded provider.

    .venv/bin/python bench/capture/run.py            # writes bench/RESULTS-capture.md

- Corpus: tests/data/capture_corpus_{tune,heldout}.jsonl (precision, recall, inversions).
- Transcripts: tests/fixtures/transcripts and /work/shared/fixtures/transcripts (same files are
  counted once), imported with `import_path` into a fresh git repo, rules only; then imported again
  with force (duplicates = files the second run adds).
- Explicit commands: a synthetic session of explicit commands written for this bench (reversals,
  restatements, distinct ones) through the same import path; dropped = commands without a file.
- LLM path: the real Anthropic SDK client over an httpx MockTransport that answers
  `{"memories": []}` and reports input tokens as len(request body) / 4 (an estimate: the
  API's own tokenizer is not available offline). Calls and tokens per session, batched (the
  default, 6 segments per call) and unbatched (1 segment per call).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.capture.corpus import BLIND, CORPUS, load, score  # noqa: E402

FIXTURE_DIRS = [ROOT / "tests" / "fixtures" / "transcripts", Path("/work/shared/fixtures/transcripts")]
COMMANDS = [  # written for this bench; reversals, restatements and distinct commands
    "/decision Use SQLite for the local cache because it needs no server",
    "/decision Use Postgres for the local cache instead of SQLite because we need concurrent writers",
    "/remember We always squash-merge feature branches",
    "/remember We always squash-merge feature branches",
    "/correction the API base path is /v1 -> the API base path is /api/v2",
    "/correction the API base path is /api/v2 -> the API base path is /api/v3",
    "/exception no changelog entry for the hotfix because it reverts yesterday's release",
    "/decision Do not vendor third-party JavaScript",
    "/decision Vendor third-party JavaScript for the offline build",
    "/decision Switch from Jenkins to GitHub Actions for CI",
    "/remember The staging database is reset every Monday",
    "/decision Keep the monorepo layout",
]


def transcripts() -> list[Path]:
    seen: set[str] = set()
    out = []
    for folder in FIXTURE_DIRS:
        if not folder.is_dir():
            continue
        for p in sorted(folder.rglob("*.jsonl")):
            digest = hashlib.sha256(p.read_bytes()).hexdigest()
            if digest not in seen and not p.name.startswith("agent-"):
                seen.add(digest)
                out.append(p)
    return out


def fresh_repo(base: Path, name: str) -> Path:
    repo = base / name
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / ".ccmemory").mkdir()
    (repo / ".gitignore").write_text(".ccmemory/local/\n")
    return repo


def memory_files(repo: Path) -> list[Path]:
    return sorted(p for p in (repo / ".ccmemory").rglob("*.md") if "local" not in p.parts)


def commands_transcript(path: Path) -> Path:
    records: list[dict[str, Any]] = []
    for i, cmd in enumerate(COMMANDS):
        name, _, args = cmd.partition(" ")
        text = (
            f"<command-message>{name[1:]} is running…</command-message>\n"
            f"<command-name>{name}</command-name>\n<command-args>{args}</command-args>"
        )
        ts = f"2026-11-20T10:{i:02d}:00Z"
        records.append(
            {
                "type": "user",
                "uuid": f"u{i}",
                "parentUuid": f"a{i - 1}" if i else None,
                "sessionId": "bench-commands",
                "cwd": "/w",
                "timestamp": ts,
                "message": {"role": "user", "content": text},
            }
        )
        records.append(
            {
                "type": "assistant",
                "uuid": f"a{i}",
                "parentUuid": f"u{i}",
                "sessionId": "bench-commands",
                "timestamp": ts,
                "requestId": f"r{i}",
                "message": {
                    "id": f"m{i}",
                    "role": "assistant",
                    "type": "message",
                    "content": [{"type": "text", "text": "Noted."}],
                },
            }
        )
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def recorded_anthropic() -> tuple[Any, list[int]]:
    import httpx2 as httpx

    from ccmemory.features.capture.providers.anthropic_api import AnthropicProvider

    sizes: list[int] = []

    def handler(request: Any) -> Any:
        sizes.append(len(request.content))
        body = {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-5-5",
            "content": [{"type": "text", "text": '{"memories": []}'}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": len(request.content) // 4, "output_tokens": 5},
        }
        return httpx.Response(200, json=body)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    return AnthropicProvider(
        api_key="sk-ant-api03-bench-not-real-0000", http_client=client, max_retries=0
    ), sizes


def main() -> int:
    os.environ["CCMEMORY_EMBEDDER"] = os.environ.get("CCMEMORY_EMBEDDER", "auto")
    from ccmemory.app.service import Service
    from ccmemory.core.vault import Vault
    from ccmemory.features.capture.backfill import import_path
    from ccmemory.features.capture.providers.choose import Choice
    from ccmemory.features.capture.settings import CaptureSettings
    from ccmemory.features.capture.store import Store

    started = time.time()
    lines: list[str] = ["# Capture quality (issue 12)", ""]
    lines += [
        "Command: `.venv/bin/python bench/capture/run.py`",
        f"Load (`uptime`): {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}",
        "",
        "## Rules-only corrections on the labelled corpus",
        "",
        "| half | utterances | expecting a memory | written | right | precision | recall | inversions |",
        "|---|---|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    blind = [name for name, file in BLIND.items() if (CORPUS / file).exists()]
    for half in ("tuning", "held-out", "probes", *blind):
        s = score(load(half))
        lines.append(
            f"| {half} | {s.items} | {s.expected} | {s.written} | {s.right} | {s.precision:.3f} | "
            f"{s.recall:.3f} | {len(s.inversions)} |"
        )
        notes += [f"- {half} false positive: {x}" for x in s.false_positives]
        notes += [f"- {half} inversion: {x}" for x in s.inversions]
        notes += [f"- {half} missed: {x}" for x in s.missed]
    lines += [
        "",
        "Both halves were written by the same author before the rules; the held-out half was not "
        "looked at while writing the rules, but its phrasings come from the same hand, so its "
        "figure is optimistic. `probes` are 30 adversarial utterances written after the rules: "
        "their first run gave written 13, right 10, precision 0.769, recall 0.714, inversions 0; "
        'two filters were then added for what it exposed (reported speech "claims", the hedge '
        '"I\'d"), so the probes row above is no longer held out.',
        "",
        "`blind-2` (tests/data/capture_corpus_blind2.md: 120 prompts, 55 corrections and 65 that are "
        "not, written on 2026-11-26 by another author who read none of the capture code or corpora) "
        "was run once on the code before that day's seventh session (b450ee5): written 21, right 17, "
        "precision 0.810, recall 0.309; and once on d502701 (a first round of rules written on the "
        "probes): written 27, right 21, precision 0.778, recall 0.382. Those two runs are the blind "
        "estimate. The rules of cf5c7c9 (corrections that name the assistant's own work, a bare "
        '"… X, not Y" after a line that says something is wrong, questions dropped sentence by '
        "sentence, new work and third-person statements refused) were then written on its misses, so "
        "its row above is in sample. prob-007 ('Instead of copying the file, symlink it.') is refused "
        "since then: blind-2 labels such plans for the task at hand as not corrections.",
        "",
        "`blind-3` (tests/data/capture_corpus_blind3.md: 120 prompts, 55 corrections and 65 that are "
        "not, written the same day by a third author, blind too) is the test of those rules, run once "
        "per code: before the session (b450ee5) written 23, right 22, precision 0.957, recall 0.400; "
        "with the rules of cf5c7c9 (at daef452) written 36, right 36, precision 1.000, recall 0.655, "
        "no inversion. That run is the blind estimate of those rules. A second round of rules was then "
        'written on its misses ("the region is X, you put Y", "the endpoint is X, Y is '
        'deprecated", "Gradle, not maven." opening a line, "you put Y but it belongs in X", "its" for '
        '"it\'s"), so both blind rows above are in sample now; no blind figure exists for that round. '
        "prob-021 ('`git rebase`, not `git merge`, for feature branches.', labelled not a correction "
        "by the probes' author, a correction by the blind sets' rule) is written since then.",
        "",
        *(notes or ["No false positive, inversion or miss."]),
        "",
    ]

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        files = transcripts()
        folder = base / "projects"
        folder.mkdir()
        for i, p in enumerate(files):
            shutil.copy(p, folder / f"{i:02d}-{p.name}")
        settings = CaptureSettings()

        # rules mode over the fixture transcripts, then again with force
        repo = fresh_repo(base, "rules")
        store = Store(Vault(repo), service=Service)
        first = import_path(repo, folder, choice=Choice("rules", "bench"), settings=settings, store=store)
        n_first = len(memory_files(repo))
        again = import_path(
            repo, folder, choice=Choice("rules", "bench"), settings=settings, store=store, force=True
        )
        dup = len(memory_files(repo)) - n_first
        store.close()
        kinds: dict[str, int] = {}
        for f in memory_files(repo):
            kinds[f.parent.name] = kinds.get(f.parent.name, 0) + 1
        lines += [
            "## Rules mode over the fixture transcripts",
            "",
            f"{first.files} transcripts (sub-agent files skipped, identical files counted once), "
            f"{first.segments} segments.",
            "",
            "| memories written | by folder | duplicates skipped (1st run) | files added by a forced 2nd run |",
            "|---|---|---|---|",
            f"| {n_first} | {json.dumps(kinds) if kinds else '-'} | {first.duplicates} | {dup} |",
            "",
        ]
        if again.written:
            lines.append(f"Forced re-run wrote: {[str(p.name) for p in again.written]}")

        # explicit commands: none dropped
        repo = fresh_repo(base, "explicit")
        store = Store(Vault(repo), service=Service)
        cmds = commands_transcript(base / "commands.jsonl")
        rep = import_path(repo, cmds, choice=Choice("rules", "bench"), settings=settings, store=store)
        store.close()
        vault = Vault(repo)
        mems = [vault.read(p) for p in memory_files(repo)]
        distinct_cmds = len(dict.fromkeys(COMMANDS))  # the repeated /remember is one entry each time
        written = len(mems)
        sup = sum(1 for m in mems if m.supersedes)
        rel = sum(1 for m in mems if m.relations)
        lines += [
            "## Explicit commands",
            "",
            f"{len(COMMANDS)} explicit commands in one session ({distinct_cmds} distinct texts; a repeated "
            "identical command in the same session is one entry, see README).",
            "",
            "| commands | memories written | dropped | with `supersedes` | with a relation |",
            "|---|---|---|---|---|",
            f"| {len(COMMANDS)} | {written} | {distinct_cmds - written} | {sup} | {rel} |",
            "",
        ]
        for m in mems:
            lines.append(
                f"- {m.type}: {m.title}"
                + (f" — supersedes {len(m.supersedes)}" if m.supersedes else "")
                + (f" — relates to {len(m.relations)}" if m.relations else "")
            )
        lines.append("")
        _ = rep

        # LLM path: calls and input tokens per session with the recorded provider
        lines += [
            "## LLM path (recorded Anthropic provider)",
            "",
            "Input tokens are the request body's length / 4 (no tokenizer offline); every substantive "
            "segment is sent.",
            "",
            "| session | segments | calls (batched) | input tokens (batched) | calls (1 segment/call) | "
            "input tokens (1 segment/call) |",
            "|---|---|---|---|---|---|",
        ]
        results = {}
        for label, batch in (("batched", settings.batch_segments), ("single", 1)):
            repo = fresh_repo(base, f"llm-{label}")
            store = Store(Vault(repo), service=Service)
            provider, _sizes = recorded_anthropic()
            s = CaptureSettings(
                batch_segments=batch, max_llm_calls_per_session=1000, max_tokens_per_session=10**9
            )
            results[label] = import_path(
                repo, folder, choice=Choice("anthropic", "recorded", provider), settings=s, store=store
            )
            store.close()
        tot = {"b": [0, 0], "s": [0, 0]}
        for session, per in sorted(results["batched"].sessions.items()):
            single = results["single"].sessions.get(session, {"llm_calls": 0, "input_tokens": 0})
            lines.append(
                f"| {session[:36]} | {per['segments']} | {per['llm_calls']} | {per['input_tokens']} | "
                f"{single['llm_calls']} | {single['input_tokens']} |"
            )
            tot["b"][0] += per["llm_calls"]
            tot["b"][1] += per["input_tokens"]
            tot["s"][0] += single["llm_calls"]
            tot["s"][1] += single["input_tokens"]
        lines.append(
            f"| **total** | {results['batched'].segments} | {tot['b'][0]} | {tot['b'][1]} | {tot['s'][0]} | {tot['s'][1]} |"
        )
    lines += ["", f"Run time: {time.time() - started:.1f} s.", ""]
    out = ROOT / "bench" / "RESULTS-capture.md"
    out.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
