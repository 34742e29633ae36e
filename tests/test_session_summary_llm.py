"""A session's summary written by the LLM provider (issue 28): one budgeted call when due, the
rules summary when there is no provider, no budget or no usable reply; through the real SDK."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2 as httpx  # the anthropic SDK (2.x) runs on httpx2, the httpx fork with the same API
import pytest

from ccmemory.features.capture import sessionsummary as S
from ccmemory.features.capture.paths import LocalPaths
from ccmemory.features.capture.providers.choose import Choice
from ccmemory.features.capture.providers.testing import TestProvider
from ccmemory.features.capture.settings import CaptureSettings
from ccmemory.features.capture.usage import Budget
from tests.capture_helpers import SECRETS, hook_env, make_repo, run_hook, wait_for_worker
from tests.session_transcripts import write_transcript
from tests.test_capture_providers import anthropic_with, messages_response

REPLY = json.dumps(
    {
        "asked": "Rename the retry helper",
        "done": "Renamed it in src/retry.py; the retry tests failed once",
        "decided": "Keep the old name as an alias for one release",
        "open": "The failing retry test",
    }
)


def _rec(prompts: list[str]) -> dict[str, Any]:
    return {
        "id": "s-1",
        "branch": "main",
        "prompts": prompts,
        "files_changed": ["src/retry.py"],
        "commands": [{"cmd": "pytest -q tests/test_retry.py", "exit": 1}],
        "errors": [],
        "memories": [],
        "summary": "Asked: rules. Done: changed src/retry.py.",
    }


def _call(tmp_path: Path, provider: Any, calls: int = 10) -> tuple[S.Call | None, Budget]:
    settings = CaptureSettings(max_llm_calls_per_session=calls)
    budget = Budget(LocalPaths(tmp_path), "s-1", settings)
    budget.file.parent.mkdir(parents=True, exist_ok=True)
    return S.budgeted_call(Choice("test", "", provider), settings, budget), budget


def test_the_summary_is_the_models_when_due_and_reused_while_the_facts_stand(tmp_path: Path) -> None:
    provider = TestProvider(script=[REPLY, REPLY, REPLY])
    call, budget = _call(tmp_path, provider)
    first = _rec(["rename the retry helper"])
    assert S.apply(first, None, call, final=False) == "llm"
    assert (
        first["summary"].startswith("Asked: Rename the retry helper.") and "Decided: Keep" in first["summary"]
    )
    assert first["summary_rules"] == "Asked: rules. Done: changed src/retry.py."  # kept beside it
    assert len(provider.calls) == 1 and "SESSION-SUMMARY" in provider.calls[0][0]
    assert "Prompt: rename the retry helper" in provider.calls[0][1] and "exit 1" in provider.calls[0][1]
    # the same facts again (the next job of the same turn): reused, no call
    again = _rec(["rename the retry helper"])
    assert S.apply(again, first, call, final=False) == "llm (reused)" and len(provider.calls) == 1
    assert again["summary"] == first["summary"]
    # two prompts (doubled): due; three: not due, the earlier summary stays; the end: due
    second = _rec(["rename the retry helper", "also update the docs"])
    assert S.apply(second, again, call, final=False) == "llm" and len(provider.calls) == 2
    third = _rec(["rename the retry helper", "also update the docs", "and the changelog"])
    assert S.apply(third, second, call, final=False) == "llm (earlier)" and len(provider.calls) == 2
    assert third["summary_rules"] == "Asked: rules. Done: changed src/retry.py."
    assert S.apply(_rec(third["prompts"]), third, call, final=True) == "llm" and len(provider.calls) == 3
    assert budget.totals()["calls"] == 3


def test_no_provider_a_spent_budget_or_a_broken_reply_keep_the_rules_summary(tmp_path: Path) -> None:
    rec = _rec(["rename the retry helper"])
    assert S.apply(rec, None, None, final=True) == "rules" and rec["summary"].startswith("Asked: rules")
    for reply in ("not json at all", '{"asked": 42}', "[1, 2]", "{}", '{"asked": "x"'):
        provider = TestProvider(script=[reply])
        call, _ = _call(tmp_path / reply[:3].strip("{[ "), provider)
        rec = _rec(["rename the retry helper"])
        assert S.apply(rec, None, call, final=True) == "rules", reply
        assert rec["summary"] == "Asked: rules. Done: changed src/retry.py." and "summary_source" not in rec
    spent = TestProvider(script=[REPLY])
    call, budget = _call(tmp_path / "spent", spent, calls=0)
    rec = _rec(["rename the retry helper"])
    assert (
        S.apply(rec, None, call, final=True) == "rules"
        and spent.calls == []
        and budget.totals()["calls"] == 0
    )


def test_the_reply_is_redacted_and_bounded() -> None:
    hostile = json.dumps({"asked": f"use {SECRETS['github']}\x00 now " + "x" * 900, "open": "  "})
    got = S.parse(f"Here you go:\n{hostile}\nThanks")
    assert got is not None and SECRETS["github"] not in got and "\x00" not in got
    assert got.startswith("Asked: use") and len(got) <= S.MAX_PART_CHARS + 10 and "Open" not in got


def test_the_summary_call_through_the_anthropic_sdk(tmp_path: Path) -> None:
    """The real SDK against a recorded Messages API response: what is sent holds the record's
    facts (never a secret), the small model, and the budget counts the call's tokens."""
    provider, recorder = anthropic_with(
        [httpx.Response(200, json=messages_response(REPLY, input_tokens=210))]
    )
    call, budget = _call(tmp_path, provider)
    rec = _rec([f"rotate the key {SECRETS['aws']} then rename the retry helper"])
    assert S.apply(rec, None, call, final=True) == "llm"
    assert rec["summary"].startswith("Asked: Rename the retry helper.")
    body = json.loads(recorder.requests[0].content)
    assert body["model"] == CaptureSettings().signal_model and body["max_tokens"] == S.MAX_TOKENS
    sent = json.dumps(body)
    assert "Prompt: rotate the key" in sent and SECRETS["aws"] not in sent
    assert budget.totals()["input_tokens"] == 210


@pytest.mark.slow
def test_the_worker_writes_the_models_summary_through_the_sdk_over_http(tmp_path: Path) -> None:
    """Hooks and the capture worker as Claude Code runs them, with the Anthropic provider talking
    to a local HTTP server that answers with recorded Messages API bodies (the SDK's own
    transport, ANTHROPIC_BASE_URL): the record's summary is the model's, and what was sent for it
    holds no secret."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from tests._webserver import running

    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            summary = "SESSION-SUMMARY" in json.dumps(body.get("system"))
            out = json.dumps(messages_response(REPLY if summary else '{"memories": []}')).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: Any) -> None:
            pass

    with running(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as url:
        repo = make_repo(tmp_path)
        prompt = f"rename the retry helper, the key is {SECRETS['github']}"
        t = write_transcript(
            tmp_path / "t" / "live.jsonl",
            "llm-sum-1",
            [{"prompt": prompt, "edit": "src/retry.py", "bash": ("pytest -q tests/test_retry.py", 1)}],
            cwd=str(repo),
        )
        env = hook_env(
            CCMEMORY_PROVIDER="anthropic",
            ANTHROPIC_API_KEY="sk-ant-api03-test-key-not-real-000000000000",
            ANTHROPIC_BASE_URL=url,
        )
        base = {"session_id": "llm-sum-1", "transcript_path": str(t), "cwd": str(repo)}
        run_hook(
            "UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}, repo, env
        )
        run_hook("Stop", {**base, "hook_event_name": "Stop"}, repo, env)
        wait_for_worker(repo)
    rec = json.loads((repo / ".ccmemory/local/sessions/llm-sum-1.json").read_text())
    assert rec["summary_source"] == "llm" and rec["summary"].startswith("Asked: Rename the retry helper.")
    assert rec["summary_rules"].startswith("Asked: rename the retry helper")  # the rules one, kept
    asked = [b for b in seen if "SESSION-SUMMARY" in json.dumps(b.get("system"))]
    assert len(asked) == 1 and "src/retry.py" in json.dumps(asked[0])
    assert not any(SECRETS["github"] in json.dumps(b) for b in seen)
