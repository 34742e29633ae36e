"""Write small synthetic Claude Code transcripts (the record shapes of fixtures/transcripts/SCHEMA.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_transcript(
    path: Path,
    session: str,
    turns: list[dict[str, Any]],
    *,
    branch: str = "main",
    cwd: str = "/work/project",
    day: str = "2026-01-10",
) -> Path:
    """`turns`: dicts with `prompt`, optional `reply`, optional `bash` (command, exit) and `edit` (file)."""
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    n = 0

    def add(rec: dict[str, Any]) -> None:
        nonlocal parent, n
        n += 1
        uuid = f"{session}-{n:04d}"
        base = {
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": session,
            "timestamp": f"{day}T10:{n // 60:02d}:{n % 60:02d}.000Z",
            "gitBranch": branch,
            "cwd": cwd,
            "isSidechain": False,
        }
        lines.append({**base, **rec})
        parent = uuid

    for i, turn in enumerate(turns):
        add({"type": "user", "message": {"role": "user", "content": turn["prompt"]}})
        tools: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = []
        if "edit" in turn:
            fp = f"{cwd}/{turn['edit']}"
            tools.append(
                ("Edit", {"file_path": fp, "old_string": "a", "new_string": "b"}, {"filePath": fp}, False)
            )
        if "bash" in turn:
            cmd, code = turn["bash"]
            tools.append(
                ("Bash", {"command": cmd}, {"stdout": "", "stderr": "", "exitCode": code}, code != 0)
            )
        for j, (name, inp, result, is_error) in enumerate(tools):
            tid = f"toolu_{session}_{i}_{j}"
            add(
                {
                    "type": "assistant",
                    "message": {
                        "id": f"msg_{session}_{i}_{j}",
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}],
                    },
                }
            )
            text = f"Exit code {result.get('exitCode', 0)}" if name == "Bash" else "ok"
            add(
                {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": is_error}
                        ],
                    },
                    "toolUseResult": result,
                }
            )
        if turn.get("reply", True):
            reply = turn.get("reply") if isinstance(turn.get("reply"), str) else "Done."
            add(
                {
                    "type": "assistant",
                    "message": {
                        "id": f"msg_{session}_{i}_r",
                        "role": "assistant",
                        "content": [{"type": "text", "text": reply}],
                    },
                }
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path
