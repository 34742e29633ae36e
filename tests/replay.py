"""Replay a Claude Code transcript through real `ccmemory hook` subprocesses, writing the
transcript incrementally as Claude Code does, and sending each event the exact stdin JSON shape
of HOOKS_CONTRACT.md."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.capture_helpers import hook_env, run_hook


@dataclass
class ReplayResult:
    events: list[str] = field(default_factory=list)
    outputs: dict[str, list[bytes]] = field(default_factory=dict)
    codes: list[int] = field(default_factory=list)


def _human_prompt(rec: dict[str, Any]) -> str | None:
    if rec.get("type") != "user" or rec.get("isMeta") or rec.get("isSidechain"):
        return None
    if rec.get("isCompactSummary"):
        return None
    content = (rec.get("message") or {}).get("content")
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    if not isinstance(content, str) or not content.strip():
        return None
    if "<command-name>" in content:
        import re

        name = re.search(r"<command-name>(.*?)</command-name>", content, re.S)
        args = re.search(r"<command-args>(.*?)</command-args>", content, re.S)
        return f"{name.group(1).strip() if name else ''} {args.group(1).strip() if args else ''}".strip()
    if content.startswith(("<local-command", "[Request interrupted")):
        return None
    return content


def replay(
    source: Path, repo: Path, *, session: str = "replay-session", env: dict[str, str] | None = None
) -> ReplayResult:
    env = env or hook_env()
    projects = repo.parent / "claude-projects" / repo.name.replace("/", "-")
    projects.mkdir(parents=True, exist_ok=True)
    transcript = projects / f"{session}.jsonl"
    transcript.write_bytes(b"")
    lines = source.read_bytes().splitlines(keepends=True)
    result = ReplayResult()
    base = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(repo),
        "permission_mode": "default",
    }
    tool_uses: dict[str, dict[str, Any]] = {}

    def fire(event: str, **fields: Any) -> None:
        proc = run_hook(event, {**base, "hook_event_name": event, **fields}, repo, env)
        result.events.append(event)
        result.codes.append(proc.returncode)
        result.outputs.setdefault(event, []).append(proc.stdout)

    fire("SessionStart", source="startup")
    in_turn = False
    for raw in lines:
        try:
            rec = json.loads(raw)
        except ValueError:
            rec = {}
        prompt = _human_prompt(rec) if isinstance(rec, dict) else None
        if prompt is not None:
            if in_turn:
                fire("Stop", stop_hook_active=False)
            fire("UserPromptSubmit", prompt=prompt)  # fired before the prompt is written
            in_turn = True
        compact = isinstance(rec, dict) and rec.get("subtype") == "compact_boundary"
        if compact:  # Claude Code runs PreCompact before it compacts
            trigger = (rec.get("compactMetadata") or {}).get("trigger") or "auto"
            fire("PreCompact", trigger=trigger, custom_instructions="")
        with open(transcript, "ab") as fh:
            fh.write(raw if raw.endswith(b"\n") else raw + b"\n")
        if compact:
            fire("SessionStart", source="compact")
        if not isinstance(rec, dict) or rec.get("isSidechain"):
            continue
        content = (rec.get("message") or {}).get("content")
        if rec.get("type") == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    tool_uses[str(block.get("id"))] = block
        if rec.get("type") == "user" and isinstance(content, list):
            for block in content:
                if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                    continue
                use = tool_uses.get(str(block.get("tool_use_id")))
                if use is None or block.get("is_error"):
                    continue  # PostToolUse fires only for calls that succeeded
                response = rec.get("toolUseResult")
                fire(
                    "PostToolUse",
                    tool_name=use.get("name"),
                    tool_input=use.get("input") or {},
                    tool_response=response if response is not None else {},
                    tool_use_id=use.get("id"),
                )
    if in_turn:
        fire("Stop", stop_hook_active=False)
    fire("SessionEnd", reason="prompt_input_exit")
    return result
