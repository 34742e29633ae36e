"""Providers: the Anthropic API through the real SDK against recorded HTTP responses, the
`claude` CLI through a fake executable on PATH, and the automatic choice."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import httpx2 as httpx  # the anthropic SDK (2.x) runs on httpx2, the httpx fork with the same API
import pytest

from ccmemory.app.service import Service
from ccmemory.core.vault import Vault
from ccmemory.features.capture.extract import Context, Planner, apply_plan
from ccmemory.features.capture.providers.anthropic_api import AnthropicProvider
from ccmemory.features.capture.providers.base import ProviderError
from ccmemory.features.capture.providers.choose import Choice, choose, describe
from ccmemory.features.capture.providers.claude_cli import ClaudeCliProvider
from ccmemory.features.capture.segment import build
from ccmemory.features.capture.settings import CaptureSettings
from ccmemory.features.capture.store import Store
from tests.capture_helpers import SECRETS, assert_no_secrets, make_repo, memory_files, read_memory


def messages_response(text: str, *, input_tokens: int = 812, output_tokens: int = 154) -> dict:
    """A Messages API response body, as the API returns it."""
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5-20250929",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "service_tier": "standard",
        },
    }


class Recorder:
    def __init__(self, replies: list[httpx.Response]):
        self.replies = replies
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.replies.pop(0)


def anthropic_with(replies: list[httpx.Response]) -> tuple[AnthropicProvider, Recorder]:
    rec = Recorder(replies)
    client = httpx.Client(transport=httpx.MockTransport(rec))
    return AnthropicProvider(
        api_key="sk-ant-api03-test-key-not-real-000000000000", http_client=client, max_retries=0
    ), rec


EXTRACTED = {
    "memories": [
        {
            "type": "correction",
            "title": "Use pnpm, not npm, in this repository",
            "body": "The user corrected the assistant: this repo uses pnpm workspaces.",
            "topics": ["tooling"],
            "files": ["package.json"],
            "confidence": 0.95,
            "fields": {
                "wrong_belief": "npm is the package manager",
                "right_belief": "pnpm is the package manager",
                "severity": "significant",
            },
        },
        {"type": "decision", "title": "x", "fields": {"severity": "bogus"}, "confidence": 7},
        {"type": "not-a-type", "title": "dropped"},
    ]
}


def segment_with_secret() -> object:
    return build(
        [
            {"k": "prompt", "text": f"No, use pnpm instead of npm. GITHUB_TOKEN={SECRETS['github']}"},
            {
                "k": "tool",
                "id": "t1",
                "name": "Bash",
                "cmd": f"psql postgres://app:{SECRETS['db_password']}@db/x",
                "exit": 2,
                "error": f"auth failed for {SECRETS['aws']}",
            },
            {"k": "assistant", "text": f"I used key {SECRETS['anthropic']}"},
        ]
    )


def ctx(repo: Path, key: str = "job-1") -> Context:
    return Context(
        root=repo,
        session="sess-1",
        branch="main",
        author="dev@example.com",
        job_key=key,
        created=datetime(2026, 11, 20, 14, 3, 11, tzinfo=UTC),
    )


def test_anthropic_provider_through_the_sdk(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    provider, rec = anthropic_with(
        [
            httpx.Response(
                200, json=messages_response("Here you go:\n```json\n" + json.dumps(EXTRACTED) + "\n```")
            )
        ]
    )
    store = Store(Vault(repo), service=Service)
    planner = Planner(store, Choice("anthropic", "test", provider), CaptureSettings(), None)
    plan = planner.plan(segment_with_secret(), ctx(repo))  # type: ignore[arg-type]
    assert plan.llm_called
    assert [m["type"] for m in plan.memories] == ["correction", "decision"]
    decision = plan.memories[1]
    assert "severity" not in decision["fields"] and decision["confidence"] == 1.0
    written, _ = apply_plan(plan, store)
    assert len(written) == 2
    mem = read_memory(written[0])
    assert mem.fields["right_belief"] == "pnpm is the package manager"
    assert mem.files == ["package.json"] and mem.extra["extractor"] == "anthropic"
    # the request: real Messages API call, model from settings, nothing secret in it
    req = rec.requests[0]
    assert req.url.path == "/v1/messages"
    assert "x-api-key" in req.headers or "authorization" in req.headers
    body = json.loads(req.content)
    assert body["model"] == "claude-sonnet-5-5" and body["messages"][0]["role"] == "user"
    assert_no_secrets(req.content.decode(), "the Anthropic request")
    for f in written:
        assert_no_secrets(f.read_text(), str(f))


def test_anthropic_malformed_reply_is_handled_cleanly(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    provider, _ = anthropic_with(
        [
            httpx.Response(
                200, json=messages_response('{"memories": [{"type": "correction", "title": "unterminated')
            )
        ]
    )
    planner = Planner(
        Store(Vault(repo), service=Service), Choice("anthropic", "t", provider), CaptureSettings(), None
    )
    plan = planner.plan(segment_with_secret(), ctx(repo))  # type: ignore[arg-type]
    assert plan.memories == [] and plan.llm_called
    assert any("unusable" in n for n in plan.notes)


def test_anthropic_http_errors_raise_provider_error() -> None:
    provider, _ = anthropic_with(
        [
            httpx.Response(
                529, json={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
            )
        ]
    )
    with pytest.raises(ProviderError, match=r"(?i)overloaded"):
        provider.complete("s", "p", model="claude-haiku-5-5", max_tokens=10)
    provider, _ = anthropic_with(
        [httpx.Response(200, content=b"<html>not json</html>", headers={"content-type": "text/html"})]
    )
    with pytest.raises(ProviderError):
        provider.complete("s", "p", model="claude-haiku-5-5", max_tokens=10)


FAKE_CLAUDE = r"""#!{python}
import json, os, sys
prompt = sys.stdin.read()
log = {{"argv": sys.argv[1:], "disable": os.environ.get("CCMEMORY_DISABLE"), "cwd": os.getcwd(),
        "prompt": prompt}}
with open({log!r}, "a") as fh:
    fh.write(json.dumps(log) + "\n")
mode = {mode!r}
if mode == "fail":
    print("boom", file=sys.stderr); sys.exit(1)
if mode == "error":
    print(json.dumps({{"type": "result", "subtype": "error", "is_error": True, "result": "Invalid API key"}}))
    sys.exit(1)
result = {result!r}
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1200,
                  "num_turns": 1, "result": result, "session_id": "abc",
                  "total_cost_usd": 0.004, "usage": {{"input_tokens": 900, "output_tokens": 120,
                  "cache_read_input_tokens": 100}}}}))
"""


def fake_claude(tmp_path: Path, mode: str = "ok", result: str = "") -> tuple[Path, Path]:
    import sys

    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    log = tmp_path / "claude-calls.jsonl"
    exe = bindir / "claude"
    exe.write_text(FAKE_CLAUDE.format(python=sys.executable, log=str(log), mode=mode, result=result))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return bindir, log


def test_claude_cli_provider_with_fake_executable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path)
    bindir, log = fake_claude(tmp_path, result=json.dumps(EXTRACTED))
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    choice = choose(CaptureSettings(), env={"PATH": os.environ["PATH"]})
    assert choice.name == "claude-cli" and isinstance(choice.provider, ClaudeCliProvider)
    planner = Planner(Store(Vault(repo), service=Service), choice, CaptureSettings(), None)
    plan = planner.plan(segment_with_secret(), ctx(repo))  # type: ignore[arg-type]
    assert [m["type"] for m in plan.memories] == ["correction", "decision"]
    call = json.loads(log.read_text().splitlines()[0])
    assert call["disable"] == "1"  # our own hooks stay quiet in the child session
    assert not call["cwd"].startswith(str(repo))
    assert call["argv"][:3] == ["-p", "--output-format", "json"]
    assert "--model" in call["argv"] and "claude-sonnet-5-5" in call["argv"]
    assert_no_secrets(json.dumps(call), "the claude CLI call")


@pytest.mark.parametrize("mode", ["fail", "error"])
def test_claude_cli_failures_raise_provider_error(tmp_path: Path, mode: str) -> None:
    bindir, _ = fake_claude(tmp_path, mode=mode)
    provider = ClaudeCliProvider(str(bindir / "claude"))
    with pytest.raises(ProviderError):
        provider.complete("s", "p", model="m", max_tokens=10)


def test_automatic_choice_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir, _ = fake_claude(tmp_path)
    with_cli = {"PATH": f"{bindir}{os.pathsep}/usr/bin:/bin"}
    monkeypatch.setenv("PATH", with_cli["PATH"])
    s = CaptureSettings()
    assert choose(s, env={**with_cli, "ANTHROPIC_API_KEY": "k"}, instantiate=False).name == "anthropic"
    assert choose(s, env=with_cli, instantiate=False).name == "claude-cli"
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    rules = choose(s, env={"PATH": "/usr/bin:/bin"}, instantiate=False)
    assert rules.name == "rules" and not rules.is_llm and "rules only" in rules.reason
    s.provider = "none"
    assert choose(s, env={}).name == "none"


def test_describe_for_doctor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path)
    (repo / ".ccmemory" / "config.yaml").write_text(
        "capture:\n  provider: rules\n  max_llm_calls_per_session: 7\n"
    )
    info = describe(repo)
    assert info["provider"] == "rules" and info["max_llm_calls_per_session"] == 7
    assert "reason" in info


def test_budget_limits_calls_and_records_usage(tmp_path: Path) -> None:
    from ccmemory.features.capture.paths import LocalPaths
    from ccmemory.features.capture.usage import Budget

    repo = make_repo(tmp_path)
    replies = [httpx.Response(200, json=messages_response('{"memories": []}')) for _ in range(3)]
    provider, rec = anthropic_with(replies)
    settings = CaptureSettings(max_llm_calls_per_session=1)
    budget = Budget(LocalPaths(repo), "sess-1", settings)
    planner = Planner(
        Store(Vault(repo), service=Service), Choice("anthropic", "t", provider), settings, budget
    )
    seg = build([{"k": "prompt", "text": "No, use pnpm instead of npm"}])
    first = planner.plan(seg, ctx(repo, "a"))
    second = planner.plan(seg, ctx(repo, "b"))
    assert first.llm_called and not second.llm_called
    assert len(rec.requests) == 1
    assert any("over budget" in n for n in second.notes)
    assert [m["type"] for m in second.memories] == ["correction"]  # rules fallback still works
    usage = [json.loads(x) for x in (repo / ".ccmemory/local/usage.jsonl").read_text().splitlines()]
    assert usage[0]["input_tokens"] == 812 and usage[0]["output_tokens"] == 154
    assert usage[0]["purpose"] == "extract" and usage[0]["session"] == "sess-1"
    assert memory_files(repo) == []
