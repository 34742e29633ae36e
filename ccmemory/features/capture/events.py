"""Tool events: the compact, redaction-ready summary of one tool call. Stdlib only (fast path)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FILE_READ_TOOLS = frozenset({"Read", "NotebookRead"})
FILE_WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


def tool_event(tool_id: str | None, name: str, tool_input: Any, response: Any = None) -> dict[str, Any]:
    """A compact tool event from a tool_use (+ optional structured result)."""
    inp = tool_input if isinstance(tool_input, dict) else {}
    ev: dict[str, Any] = {"k": "tool", "name": name}
    if tool_id:
        ev["id"] = tool_id
    path = inp.get("file_path") or inp.get("notebook_path") or inp.get("path")
    if isinstance(path, str) and name in FILE_READ_TOOLS | FILE_WRITE_TOOLS:
        ev["file"] = path
        ev["write"] = name in FILE_WRITE_TOOLS
    if name == "Bash" and isinstance(inp.get("command"), str):
        ev["cmd"] = inp["command"][:500]
    if isinstance(response, dict):
        code = response.get("exitCode", response.get("exit_code"))
        if isinstance(code, int):
            ev["exit"] = code
        if name == "Bash" and "exit" not in ev and response.get("interrupted") is False:
            ev["exit"] = 0
        fp = response.get("filePath")
        if "file" not in ev and isinstance(fp, str) and name in FILE_WRITE_TOOLS:
            ev["file"], ev["write"] = fp, True
    elif isinstance(response, str) and response.startswith("Error"):
        ev["error"] = response[:500]
    if name.startswith("mcp__"):
        ev["mcp"] = True
    return ev


def merge_events(spooled: list[dict[str, Any]], transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Spool first (what the hooks saw, definitive for prompts), then what only the transcript
    knows: tool calls the spool lacks (failed calls do not fire PostToolUse), errors and exit codes
    of known calls, assistant text, compaction summaries, slash-command wrappers. Transcript
    prompts are used only when the spool has none (hooks were not installed)."""
    out = list(spooled)
    spool_prompts = any(e.get("k") == "prompt" for e in spooled)
    for ev in transcript:
        kind = ev.get("k")
        if kind == "prompt" and spool_prompts:
            continue
        out.append(ev)  # segment.build merges tool calls by id and dedupes the rest
    return out
