"""The autonomy score (issue 31; the seed's Loop Efficiency = AI actions / human interventions):
real fixture transcripts imported through the CLI with counts worked out by hand, the rules'
classes, the LLM's classes through the real SDK against recorded responses, MCP and the dashboard."""

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
from ccmemory.features.sessions import autonomy as A
from tests.capture_helpers import FIXTURES, SECRETS, make_repo
from tests.conftest import RunCli
from tests.session_transcripts import write_transcript
from tests.test_capture_providers import anthropic_with, messages_response

# Worked out by reading each file: human prompts (not isMeta, not tool results, not Stop-hook
# feedback, on the live branch) and the distinct tool_use ids (main line and sub-agents).
BY_HAND: dict[str, dict[str, int]] = {
    # one request, then 13 tool calls (Read, Edit, Write, Bash...) with no human in between
    "DRMacIver_claude-reliability/coverage-test-fix.transcript.jsonl": {"actions": 13, "goal": 1},
    # one request; the Stop hook's feedback is an isMeta record, not the human: 4 tool calls
    "DRMacIver_claude-reliability/stop-hook-reflection-first-stop.transcript.jsonl": {
        "actions": 4,
        "goal": 1,
    },
    # `/init` (a slash command that starts work), 12 tool calls
    "d-kimuson_claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": {"actions": 12, "goal": 1},
    # `/orchestrator create TODO app` and "Thanks! Please update CLAUDE.md for current changes"
    # (thanks, but it asks for new work: a goal); 11 main-line tool calls + 156 by sub-agents
    "d-kimuson_claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": {"actions": 167, "goal": 2},
    # the live branch after the rewind: Start, Second attempt, Keep going, After compaction
    # ("First attempt" was rewound away); no tool call
    "daaain_claude-code-log/dag_compact_after_rewind.jsonl": {"actions": 0, "goal": 3, "continuation": 1},
    # four requests/questions ("Great! Can you also show me..." asks for more): 2 tool calls
    "daaain_claude-code-log/representative_messages.jsonl": {"actions": 2, "goal": 4},
    # "Create a hello world function", "Now add a goodbye function": 2 tool calls
    "simonw_claude-code-transcripts/sample_session.jsonl": {"actions": 2, "goal": 2},
}


def _expected(counts: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {"actions": counts["actions"]}
    for k in A.KINDS:
        out[k] = counts.get(k, 0)
    out["interventions"] = sum(out[k] for k in A.KINDS)
    out["score"] = round(out["actions"] / out["interventions"], 2)
    return out


def _import(run_cli: RunCli, repo: Path, path: Path) -> list[str]:
    out = json.loads(run_cli(repo, "import", "--provider", "rules", "--json", str(path)).stdout)
    ids = out["session_records"]
    assert isinstance(ids, list)
    return [str(i) for i in ids]


def test_the_fixture_transcripts_score_as_counted_by_hand(tmp_path: Path, run_cli: RunCli) -> None:
    repo = make_repo(tmp_path)
    want: dict[str, dict[str, Any]] = {}
    for rel, counts in BY_HAND.items():
        (sid,) = _import(run_cli, repo, FIXTURES / rel)
        want[sid] = _expected(counts)
    rep = json.loads(run_cli(repo, "sessions", "autonomy", "--json", "--limit", "50").stdout)
    got = {
        s["id"]: {k: s[k] for k in ("actions", "interventions", "score", *A.KINDS)} for s in rep["sessions"]
    }
    assert got == want
    assert {s["by"] for s in rep["sessions"]} == {"rules"}
    overall = rep["overall"]
    # 13+4+12+167+0+2+2 = 200 actions over 1+1+1+2+4+4+2 = 15 interventions (a ratio of sums)
    assert (overall["actions"], overall["interventions"], overall["score"]) == (200, 15, 13.33)
    assert overall["sessions"] == 7 and overall["continuation"] == 1
    # per week: the two claude-reliability sessions are both of 2026-W04 (13+4 over 2)
    weeks = {p["period"]: p for p in rep["periods"]}
    assert (weeks["2026-W04"]["actions"], weeks["2026-W04"]["interventions"]) == (17, 2)
    assert weeks["2026-W04"]["score"] == 8.5
    months = json.loads(run_cli(repo, "sessions", "autonomy", "--by", "month", "--json").stdout)["periods"]
    assert [p["period"] for p in months] == sorted(p["period"] for p in months) and "2026-01" in {
        p["period"] for p in months
    }
    text = run_cli(repo, "sessions", "autonomy").stdout
    assert "overall (7 sessions): score  13.33  actions  200  interventions  15" in text
    # one session's record shows it too
    sid = next(s for s, w in want.items() if w["actions"] == 167)
    shown = run_cli(repo, "sessions", "show", sid).stdout
    assert "autonomy: 83.50 (167 AI actions / 2 interventions: goal 2," in shown


STEERED = [
    ("Add a --json flag to the export command", "goal"),
    ("continue", "continuation"),
    ("No, the flag belongs on the list command, not export", "correction"),
    ("it still fails with the same error", "correction"),
    ("looks good, thanks!", "validation"),
    ("did the tests pass?", "validation"),
    ("yes, go ahead", "continuation"),
    ("Thanks! Now add the same flag to the import command and document it", "goal"),
    ("why did you delete the docstring?", "correction"),
    ("<command-message>compact</command-message>\n<command-name>/compact</command-name>", "housekeeping"),
    ("<command-message>review</command-message>\n<command-name>/review</command-name>", "goal"),
]


# what is easy to get wrong: an approval or a go-ahead that also asks for something is a goal
MORE = [
    ("please continue", "continuation"),
    ("Looks good, continue", "validation"),
    ("perfect, that works", "validation"),
    ("ok add tests for the parser", "goal"),
    ("correct the typo in the README", "goal"),
    ("good, now fix the failing tests", "goal"),
    ("yes please do the migration", "goal"),
    ("Next, add a changelog entry", "goal"),
    ("no, continue with the other file first", "correction"),
    ("hmm, that's not what I asked for", "correction"),
]


@pytest.mark.parametrize(("text", "kind"), STEERED[:9] + MORE)
def test_the_rules_class_each_move(text: str, kind: str) -> None:
    assert A.classify(text, first=text == STEERED[0][0]) == kind


def test_a_first_prompt_is_a_goal_unless_it_only_says_go_on() -> None:
    assert A.classify("no, rewrite the parser with a state machine", first=True) == "goal"
    assert A.classify("continue", first=True) == "continuation"


def test_a_steered_session_through_the_cli(tmp_path: Path, run_cli: RunCli) -> None:
    repo = make_repo(tmp_path)
    turns = []
    for i, (text, _) in enumerate(STEERED):
        turn: dict[str, Any] = {"prompt": text}
        if i % 2 == 0:
            turn["bash"] = (f"pytest -q -k case{i}", 0)  # 6 turns with a command
        if i in (0, 2):
            turn["edit"] = "src/export.py"  # and 2 edits
        turns.append(turn)
    write_transcript(tmp_path / "t" / "s.jsonl", "steered-1", turns, day="2026-02-03")
    assert _import(run_cli, repo, tmp_path / "t") == ["steered-1"]
    rec = json.loads((repo / ".ccmemory/local/sessions/steered-1.json").read_text(encoding="utf-8"))
    assert rec["autonomy"]["classes"] == [k for _, k in STEERED]
    (row,) = json.loads(run_cli(repo, "sessions", "autonomy", "--json").stdout)["sessions"]
    # 8 tool calls; 10 interventions (the /compact housekeeping is not one): 3 goal, 3 correction,
    # 2 validation, 2 continuation
    assert {k: row[k] for k in ("actions", "interventions", "score", *A.KINDS)} == {
        "actions": 8,
        "interventions": 10,
        "score": 0.8,
        "goal": 3,
        "correction": 3,
        "validation": 2,
        "continuation": 2,
    }


def test_records_written_before_the_score_are_left_out(tmp_path: Path, run_cli: RunCli) -> None:
    repo = make_repo(tmp_path)
    write_transcript(tmp_path / "t" / "a.jsonl", "old-1", [{"prompt": "fix the build", "bash": ("make", 0)}])
    _import(run_cli, repo, tmp_path / "t")
    path = repo / ".ccmemory/local/sessions/old-1.json"
    rec = json.loads(path.read_text(encoding="utf-8"))
    del rec["autonomy"]
    path.write_text(json.dumps(rec), encoding="utf-8")
    rep = json.loads(run_cli(repo, "sessions", "autonomy", "--json").stdout)
    assert rep["sessions"] == [] and rep["overall"]["unscored"] == 1 and rep["overall"]["score"] is None
    assert "No session with an autonomy score yet" in run_cli(repo, "sessions", "autonomy").stdout


# --- the LLM's classes -------------------------------------------------------------------------


def _rec(prompts: list[str]) -> dict[str, Any]:
    return {"id": "s-1", "prompts": prompts, "autonomy": A.for_record(prompts, 9)}


def _call(tmp_path: Path, provider: Any) -> tuple[A.Call | None, Budget]:
    settings = CaptureSettings(max_llm_calls_per_session=10)
    budget = Budget(LocalPaths(tmp_path), "s-1", settings)
    budget.file.parent.mkdir(parents=True, exist_ok=True)
    call = S.budgeted_call(
        Choice("test", "", provider), settings, budget, purpose="prompt-classes", max_tokens=A.MAX_TOKENS
    )
    return call, budget


def test_the_llm_classes_through_the_anthropic_sdk(tmp_path: Path) -> None:
    """The real SDK against a recorded Messages API response: the prompts go numbered (never a
    secret) to the small model, the reply's classes replace the rules', the budget counts it."""
    provider, recorder = anthropic_with(
        [httpx.Response(200, json=messages_response('{"classes": "gvc"}', input_tokens=120))]
    )
    call, budget = _call(tmp_path, provider)
    prompts = [f"rotate the key {SECRETS['aws']} in the deploy script", "great", "hmm, use the vault"]
    rec = _rec(prompts)
    assert rec["autonomy"]["classes"] == ["goal", "validation", "correction"]  # the rules agree here
    rec["autonomy"]["classes"] = ["goal", "goal", "goal"]  # so make them differ
    assert A.apply(rec, None, call, final=True) == "llm"
    assert rec["autonomy"]["classes"] == ["goal", "validation", "correction"]
    assert rec["autonomy"]["by"] == "llm" and rec["autonomy"]["llm_prompts"] == 3
    body = json.loads(recorder.requests[0].content)
    assert body["model"] == CaptureSettings().signal_model and body["max_tokens"] == A.MAX_TOKENS
    sent = json.dumps(body)
    assert "1. rotate the key" in sent and "3. hmm, use the vault" in sent and SECRETS["aws"] not in sent
    assert "PROMPT-CLASSES" in body["system"] if isinstance(body["system"], str) else sent
    assert budget.totals()["input_tokens"] == 120 and budget.totals()["calls"] == 1


def test_the_llm_classes_are_reused_extended_and_never_worse_than_the_rules(tmp_path: Path) -> None:
    provider = TestProvider(script=['{"classes": "gc"}', '{"classes": ["g", "c", "n", "v"]}'])
    call, _ = _call(tmp_path, provider)
    first = _rec(["add a retry to the fetcher", "make it three retries"])
    assert A.apply(first, None, call, final=False) == "llm" and len(provider.calls) == 1
    assert first["autonomy"]["classes"] == ["goal", "correction"]
    again = _rec(list(first["prompts"]))  # the same prompts: no second call
    assert A.apply(again, first, call, final=True) == "llm (reused)" and len(provider.calls) == 1
    assert again["autonomy"]["classes"] == ["goal", "correction"]
    three = _rec([*first["prompts"], "continue"])  # not doubled, not final: earlier + rules
    assert A.apply(three, again, call, final=False) == "llm (earlier)" and len(provider.calls) == 1
    assert three["autonomy"]["classes"] == ["goal", "correction", "continuation"]
    assert three["autonomy"]["by"] == "llm+rules"
    four = _rec([*three["prompts"], "looks right"])  # doubled: due
    assert A.apply(four, three, call, final=False) == "llm" and len(provider.calls) == 2
    assert four["autonomy"]["classes"] == ["goal", "correction", "continuation", "validation"]
    for reply in ("no json", '{"classes": "gx"}', '{"classes": "g"}', '{"classes": 5}', "[]"):
        bad = TestProvider(script=[reply])
        c, _ = _call(tmp_path / reply[:4].strip('{[" '), bad)
        rec = _rec(["add a retry to the fetcher", "make it three retries"])
        assert A.apply(rec, None, c, final=True) == "rules", reply
        assert rec["autonomy"]["classes"] == ["goal", "goal"] and rec["autonomy"]["by"] == "rules"
    cut = _rec(["a", "b"])
    cut["truncated"] = True  # a record cut at its cap: the rules only
    assert A.apply(cut, None, call, final=True) == "rules" and len(provider.calls) == 2


def test_the_record_writer_passes_the_call(tmp_path: Path) -> None:
    """sessionrec.from_transcript (what the capture worker calls) asks the provider for the
    classes and keeps them in the record it writes."""
    from ccmemory.features.capture.sessionrec import from_transcript

    repo = make_repo(tmp_path)
    t = write_transcript(
        tmp_path / "t.jsonl",
        "w-1",
        [{"prompt": "bump the version", "bash": ("make release", 1)}, {"prompt": "try with sudo"}],
    )
    provider = TestProvider(script=['{"classes": "gc"}'])
    call, _ = _call(tmp_path / "b", provider)
    rec, _ = from_transcript(repo, t, classify_with=call, final=True)
    assert rec is not None and rec["autonomy"]["classes"] == ["goal", "correction"]
    stored = json.loads((repo / ".ccmemory/local/sessions/w-1.json").read_text(encoding="utf-8"))
    assert stored["autonomy"]["by"] == "llm" and stored["autonomy"]["actions"] == 1


# --- MCP and the dashboard -----------------------------------------------------------------------


def test_the_mcp_sessions_tool_gives_the_autonomy_report(tmp_path: Path, run_cli: RunCli) -> None:
    from tests._mcp_client import SyncClient
    from tests._mcp_client import make_repo as mcp_repo

    repo = mcp_repo(tmp_path / "repo")
    write_transcript(
        tmp_path / "t" / "a.jsonl",
        "mcp-auto",
        [{"prompt": "rename the helper", "bash": ("pytest", 0), "edit": "a.py"}, {"prompt": "continue"}],
    )
    _import(run_cli, repo, tmp_path / "t")
    with SyncClient.stdio(repo, env={"CCMEMORY_MCP_TOOLS": "full"}) as client:
        tool = next(t for t in client.list_tools() if t.name == "sessions")
        assert len(json.dumps(tool.model_dump(mode="json", exclude_none=True))) < 1200
        out = client.call("sessions", {"action": "autonomy"})
    (row,) = out["autonomy"]["sessions"]
    assert (row["id"], row["actions"], row["interventions"], row["continuation"]) == ("mcp-auto", 2, 2, 1)
    assert out["autonomy"]["overall"]["score"] == 1.0


def test_the_dashboard_shows_the_score_per_session_and_week(tmp_path: Path, run_cli: RunCli) -> None:
    from tests.dashboard_util import Running

    repo = make_repo(tmp_path)
    write_transcript(
        tmp_path / "t" / "a.jsonl",
        "dash-auto-1",
        [{"prompt": "speed up the thumbnails", "bash": ("pytest", 0), "edit": "t.py"}, {"prompt": "great"}],
        day="2026-03-02",
    )
    _import(run_cli, repo, tmp_path / "t")
    r = Running(repo)
    try:
        status, _, body = r.request("GET", "/sessions")
        html = body.decode("utf-8")
        assert status == 200 and 'id="autonomy-overall">1.00<' in html
        assert "autonomy 1.00 (2/2)" in html and "autonomy score per week" in html
        status, _, body = r.request("GET", "/session/dash-auto-1")
        html = body.decode("utf-8")
        assert 'id="session-autonomy">Autonomy 1.00: 2 AI actions / 2 interventions' in html
        assert "kind-validation" in html
        _, _, body = r.request("GET", "/api/sessions")
        assert json.loads(body)["autonomy"]["overall"]["validation"] == 1
    finally:
        r.close()


def test_the_capture_worker_asks_the_provider_for_the_classes_at_stop(tmp_path: Path) -> None:
    """Through the hooks and the detached worker (provider 'test'): the record written at Stop
    carries the provider's classes, and the usage log the call (purpose prompt-classes)."""
    from tests.capture_helpers import hook_env, run_hook, wait_for_worker

    repo = make_repo(tmp_path)
    turns = [{"prompt": "add a health endpoint", "edit": "app.py", "bash": ("pytest -q", 1)}]
    turns.append({"prompt": "it still fails with a 404", "bash": ("pytest -q", 0)})
    t = write_transcript(tmp_path / "t" / "live.jsonl", "live-auto", turns, cwd=str(repo))
    env = hook_env()
    base = {"session_id": "live-auto", "transcript_path": str(t), "cwd": str(repo)}
    for turn in turns:
        prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": turn["prompt"]}
        run_hook("UserPromptSubmit", prompt, repo, env)
    run_hook("Stop", {**base, "hook_event_name": "Stop"}, repo, env)
    wait_for_worker(repo)
    rec = json.loads((repo / ".ccmemory/local/sessions/live-auto.json").read_text(encoding="utf-8"))
    assert rec["autonomy"]["classes"] == ["goal", "correction"]
    assert rec["autonomy"]["by"] == "llm" and rec["autonomy"]["actions"] == 3
    usage = (repo / ".ccmemory/local/usage.jsonl").read_text(encoding="utf-8")
    assert '"purpose":"prompt-classes"' in usage


def test_the_seeds_loop_efficiency_in_stats_is_the_overall_score(tmp_path: Path, run_cli: RunCli) -> None:
    """`ccmemory stats --json` gives the seed's Loop Efficiency (seed_metrics.loop_efficiency):
    the same ratio of sums as `sessions autonomy`, 200 actions / 15 interventions here."""
    repo = make_repo(tmp_path)
    for rel in BY_HAND:
        _import(run_cli, repo, FIXTURES / rel)
    le = json.loads(run_cli(repo, "stats", "--json").stdout)["seed_metrics"]["loop_efficiency"]
    assert (le["part"], le["whole"], le["sessions"]) == (200, 15, 7)
    assert le["value"] == pytest.approx(200 / 15, abs=1e-4) and le["display"] == "13.33"
    assert le["name"] == "Loop Efficiency (LE)" and "TELEMETRY.md §10" in le["source"]
