"""Transcript parsing over every record kind in the fixture transcripts."""

from __future__ import annotations

import json
from pathlib import Path

from ccmemory.features.capture.segment import build
from ccmemory.features.capture.transcript import read_events, read_records, to_events
from tests.capture_helpers import FIXTURES

KIMUSON = FIXTURES / "d-kimuson_claude-code-viewer"
DAAAIN = FIXTURES / "daaain_claude-code-log"
DRM = FIXTURES / "DRMacIver_claude-reliability"
SIMONW = FIXTURES / "simonw_claude-code-transcripts"


def kinds(events: list[dict]) -> list[str]:
    return [e["k"] for e in events]


def test_split_assistant_messages_are_grouped_by_message_id() -> None:
    path = DRM / "coverage-test-fix.transcript.jsonl"
    conv, _ = read_events(path)
    records = read_records(path).records
    ids = {r["message"]["id"] for r in records if r.get("type") == "assistant"}
    texts = [
        r
        for r in records
        if r.get("type") == "assistant" and any(b.get("type") == "text" for b in r["message"]["content"])
    ]
    text_ids = {r["message"]["id"] for r in texts}
    assert len(records) > len(ids)  # the file really splits messages
    assert kinds(conv.events).count("assistant") == len(text_ids)


def test_tool_use_result_pairs_and_exit_codes() -> None:
    conv, _ = read_events(SIMONW / "sample_session.jsonl")
    tools = [e for e in conv.events if e["k"] == "tool"]
    assert tools[0]["name"] == "Write" and tools[0]["file"] == "/project/hello.py"
    assert tools[0]["write"] is True
    bash = next(e for e in tools if e["name"] == "Bash")
    assert bash["cmd"].startswith("git add") and bash["exit"] == 0


def test_errors_from_tool_results() -> None:
    conv, _ = read_events(KIMUSON / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
    errs = [e for e in conv.events if e.get("error")]
    assert errs and "permission" in errs[0]["error"].lower()


def test_slash_command_wrappers_and_is_meta() -> None:
    conv, _ = read_events(KIMUSON / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    cmds = [e for e in conv.events if e["k"] == "command"]
    assert cmds == [
        {"k": "command", "name": "/orchestrator", "args": "create TODO app by Next.js", "ts": cmds[0]["ts"]}
    ]
    prompts = [e["text"] for e in conv.events if e["k"] == "prompt"]
    assert prompts == ["Thanks! Please update CLAUDE.md for current changes"]  # isMeta dropped


def test_sidechains_are_kept_apart() -> None:
    conv, _ = read_events(KIMUSON / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    assert len(conv.sidechain_events) > 100
    agent, _ = read_events(KIMUSON / "agent-test-hash-123.jsonl")
    assert agent.events == [] and kinds(agent.sidechain_events) == ["prompt", "assistant"]


def test_stop_hook_feedback_meta_records_are_not_prompts() -> None:
    conv, _ = read_events(DRM / "stop-hook-reflection-first-stop.transcript.jsonl")
    prompts = [e["text"] for e in conv.events if e["k"] == "prompt"]
    assert len(prompts) == 1 and prompts[0].startswith("Read test.txt")
    assert not any("Stop hook feedback" in p for p in prompts)


def test_compact_boundary_summary_and_rewind() -> None:
    conv, _ = read_events(DAAAIN / "dag_compact_after_rewind.jsonl")
    prompts = [e["text"] for e in conv.events if e["k"] == "prompt"]
    assert "First attempt" not in prompts  # abandoned branch after the rewind
    assert prompts == ["Start", "Second attempt", "Keep going", "After compaction"]
    compacts = [e for e in conv.events if e["k"] == "compact"]
    assert compacts[0]["trigger"] == "auto"
    assert compacts[1]["summary"].startswith("This session is being continued")
    seg = build(conv.events)
    assert seg.compact_summary.startswith("This session is being continued")
    assert seg.last_assistant == "Final answer"


def test_summary_records_unknown_types_and_missing_fields() -> None:
    records = [
        {"type": "summary", "summary": "x", "leafUuid": "l"},
        {"type": "queue-operation", "operation": "dequeue"},
        {"type": "file-history-snapshot", "messageId": "m"},
        {"type": "something-new", "payload": 1},
        {"type": "user", "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "message": {"content": "plain string content"}},
        {"type": "user", "message": None},
        {"type": "assistant"},
    ]
    conv = to_events(records)
    assert kinds(conv.events) == ["prompt", "assistant"]


def test_incremental_reads_and_torn_last_line(tmp_path: Path) -> None:
    src = (SIMONW / "sample_session.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(src[:3]) + src[3][:20])  # torn 4th line
    first = read_records(path)
    assert len(first.records) == 3 and first.offset == len(b"".join(src[:3]))
    path.write_bytes(b"".join(src))
    rest = read_records(path, first.offset)
    assert len(first.records) + len(rest.records) == len(src)
    assert rest.offset == path.stat().st_size
    assert read_records(path, rest.offset).records == []


def test_garbage_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("not json\n[1,2]\n" + json.dumps({"type": "user", "message": {"content": "x"}}) + "\n")
    res = read_records(path)
    assert len(res.records) == 1 and res.bad_lines == 2


def test_every_fixture_parses_completely() -> None:
    for path in FIXTURES.glob("*/*.jsonl"):
        res = read_records(path, complete=True)
        assert res.bad_lines == 0 and res.offset == path.stat().st_size, path
        to_events(res.records)


def test_segment_is_bounded() -> None:
    events = [{"k": "prompt", "text": f"prompt {i} " + "x" * 5000} for i in range(50)]
    events += [{"k": "tool", "id": f"t{i}", "name": "Read", "file": f"/f{i}.py"} for i in range(200)]
    events += [
        {
            "k": "tool",
            "id": f"b{i}",
            "name": "Bash",
            "cmd": f"cmd {i}",
            "exit": 1,
            "error": f"boom {i} " * 200,
        }
        for i in range(100)
    ]
    seg = build(events)
    assert len(seg.prompts) == 8 and seg.prompts[-1].startswith("prompt 49")
    assert all(len(p) <= 2000 for p in seg.prompts)
    assert len(seg.files_read) == 30 and len(seg.commands) == 15 and len(seg.errors) == 8
    assert len(seg.to_text()) < 40_000 and seg.dropped > 0
