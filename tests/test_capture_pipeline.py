"""The extraction pipeline with the deterministic test provider: skipping, explicit capture,
validation, duplicates, superseding, secrets."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from ccmemory.app.service import Service
from ccmemory.core.vault import Vault
from ccmemory.features.capture.extract import Context, Planner, apply_plan
from ccmemory.features.capture.providers.choose import Choice
from ccmemory.features.capture.providers.testing import TestProvider
from ccmemory.features.capture.segment import build
from ccmemory.features.capture.settings import CaptureSettings
from ccmemory.features.capture.store import Store
from tests.capture_helpers import (
    assert_no_secrets,
    hook_env,
    make_repo,
    memory_files,
    read_memory,
    secret_text,
)


def ctx(repo: Path, key: str) -> Context:
    return Context(
        root=repo,
        session="s",
        branch="main",
        author="dev@example.com",
        job_key=key,
        created=datetime(2026, 11, 21, 9, 0, tzinfo=UTC),
    )


def planner(repo: Path, provider: TestProvider | None = None, **settings: object) -> Planner:
    choice = Choice("test", "t", provider or TestProvider())
    return Planner(Store(Vault(repo), service=Service), choice, CaptureSettings(**settings), None)  # type: ignore[arg-type]


def new_memory(repo: Path, mtype: str, title: str, body: str = "") -> Path:
    out = subprocess.run(
        [sys.executable, "-m", "ccmemory", "new", mtype, title, "--body", body],
        cwd=repo,
        capture_output=True,
        text=True,
        env=hook_env(),
        check=True,
    )
    return repo / out.stdout.strip().splitlines()[-1]


def test_every_substantive_segment_reaches_the_llm(tmp_path: Path) -> None:
    """No regex gate: a plain task with no correction/preference signal still goes to the model;
    only acknowledgements (and empty segments) stay out."""
    repo = make_repo(tmp_path)
    provider = TestProvider()
    seg = build(
        [
            {"k": "prompt", "text": "Add a function that multiplies two numbers"},
            {"k": "tool", "id": "1", "name": "Write", "file": "/w/m.py", "write": True},
            {"k": "assistant", "text": "Done: added multiply() and a test."},
        ]
    )
    plan = planner(repo, provider).plan(seg, ctx(repo, "j1"))
    assert len(provider.calls) == 1 and plan.llm_called
    assert "multiplies two numbers" in provider.calls[0][1]
    ack = build([{"k": "prompt", "text": "thanks!"}])
    plan = planner(repo, provider).plan(ack, ctx(repo, "j1b"))
    assert len(provider.calls) == 1 and not plan.llm_called and plan.notes == ["only acknowledgements"]


def test_explicit_commands_need_no_llm(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    provider = TestProvider()
    seg = build(
        [
            {
                "k": "command",
                "name": "/ccmemory:exception",
                "args": "no tests for the spike because it is thrown away",
            },
            {
                "k": "prompt",
                "text": "/correction tokens live in localStorage -> tokens live in httpOnly cookies",
            },
            {"k": "prompt", "text": "/remember I prefer small commits with imperative messages"},
            {"k": "prompt", "text": "/decision"},  # no arguments: nothing to record
        ]
    )
    plan = planner(repo, provider).plan(seg, ctx(repo, "j2"))
    assert provider.calls == []
    by_type = {m["type"]: m for m in plan.memories}
    assert set(by_type) == {"exception", "correction", "preference"}
    assert by_type["exception"]["fields"] == {
        "rule_broken": "no tests for the spike",
        "justification": "it is thrown away",
    }
    assert by_type["correction"]["fields"]["wrong_belief"] == "tokens live in localStorage"
    assert all(m["source"] == "explicit" for m in plan.memories)


def test_llm_memories_are_validated_and_capped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    items = [
        {"type": "fact", "title": f"Fact {i} about the build", "fields": {"category": "nope"}}
        for i in range(9)
    ]
    bad = json.dumps({"memories": [*items, {"type": "fact", "title": ""}]})
    provider = TestProvider(script=[bad])
    seg = build([{"k": "prompt", "text": "FYI the build requires Node 20"}])
    plan = planner(repo, provider).plan(seg, ctx(repo, "j3"))
    assert len(plan.memories) == 5
    assert all("category" not in m["fields"] for m in plan.memories)  # invalid enum dropped


def test_duplicates_of_existing_memories_are_dropped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    old = new_memory(repo, "correction", "No, use pnpm instead of npm in this repo")
    seg = build([{"k": "prompt", "text": "No, use pnpm instead of npm in this repo"}])
    plan = planner(repo).plan(seg, ctx(repo, "j4"))
    assert plan.memories == []
    assert plan.skipped[0]["reason"] == f"duplicate of {read_memory(old).id}"


def test_superseding_is_written_on_the_new_file_only(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    old = new_memory(
        repo, "preference", "Always use tabs for indentation in Go code", "The team prefers tabs."
    )
    before = old.read_bytes()
    old_id = read_memory(old).id
    provider = TestProvider()
    seg = build([{"k": "prompt", "text": "From now on always use spaces for indentation in Python code"}])
    p = planner(repo, provider)
    plan = p.plan(seg, ctx(repo, "j5"))
    assert [m["type"] for m in plan.memories] == ["preference"]
    assert plan.memories[0]["supersedes"] == [old_id]
    assert any("SUPERSEDE-CHECK" in system for system, _ in provider.calls)  # LLM confirmed
    written, _ = apply_plan(plan, p.store)
    assert read_memory(written[0]).supersedes == [old_id]
    assert old.read_bytes() == before  # the old file is never rewritten


def test_superseding_not_confirmed_by_llm_is_not_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    new_memory(repo, "preference", "Always use tabs for indentation in Go code")
    provider = TestProvider(
        script=[
            '{"memories": [{"type": "preference", "title": "Always use spaces for indentation in '
            'Python code", "fields": {"scope": "project"}}]}',
            '{"supersedes": []}',
        ]
    )
    seg = build([{"k": "prompt", "text": "I prefer spaces in Python"}])
    plan = planner(repo, provider).plan(seg, ctx(repo, "j6"))
    assert plan.memories[0]["supersedes"] == []


def test_rules_only_provider(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "docs").mkdir()
    (repo / "docs" / "adr-7.md").write_text("# ADR 7\n")
    seg = build(
        [
            {"k": "prompt", "text": "No, it's pytest, not unittest."},
            {"k": "prompt", "text": "Follow docs/adr-7.md and https://12factor.net/config please"},
            {"k": "prompt", "text": "make it faster"},
        ]
    )
    p = Planner(Store(Vault(repo), service=Service), Choice("rules", "r"), CaptureSettings(), None)
    plan = p.plan(seg, ctx(repo, "j7"))
    got = sorted((m["type"], m["title"]) for m in plan.memories)
    assert got == [
        ("correction", "It's pytest, not unittest"),
        ("reference", "Reference: docs/adr-7.md"),
        ("reference", "Reference: https://12factor.net/config"),
    ]
    corr = next(m for m in plan.memories if m["type"] == "correction")
    assert corr["fields"]["wrong_belief"] == "unittest" and corr["extra"]["extractor"] == "rules"
    # provenance says what happened: no model was involved (issue 33; was "llm")
    assert {m["source"] for m in plan.memories} == {"rules"}


def test_secrets_reach_neither_prompt_nor_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    provider = TestProvider()
    secret = secret_text()
    seg = build(
        [
            {"k": "prompt", "text": f"No, read the key from the vault instead of .env: {secret}"},
            {"k": "tool", "id": "t", "name": "Bash", "cmd": f"deploy {secret}", "exit": 1, "error": secret},
            {"k": "assistant", "text": secret},
        ]
    )
    p = planner(repo, provider)
    plan = p.plan(seg, ctx(repo, "j8"))
    assert provider.calls
    for system, prompt in provider.calls:
        assert_no_secrets(system + prompt, "a provider prompt")
    written, _ = apply_plan(plan, p.store)
    assert written
    for f in written:
        assert_no_secrets(f.read_text(), str(f))


def test_apply_is_idempotent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    seg = build([{"k": "prompt", "text": "No, use pnpm instead of npm"}])
    p = planner(repo)
    plan = p.plan(seg, ctx(repo, "j9"))
    first, _ = apply_plan(plan, p.store)
    second, skipped = apply_plan(plan, Store(Vault(repo), service=Service))
    assert len(first) == 1 and second == [] and skipped == [plan.memories[0]["id"]]
    again = p.plan(seg, ctx(repo, "j9"))
    assert again.memories == [] or again.memories[0]["id"] == plan.memories[0]["id"]
    assert len(memory_files(repo)) == 1
