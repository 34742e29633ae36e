"""A work segment: what happened between two extraction points, bounded in size.

Built from events (spool and/or transcript, see `transcript.py` for the shapes). Bounded like the
seeds' accumulator: at most N prompts, files, commands and errors, each text clipped, so a prompt
to a provider never grows with the length of the session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ccmemory.core.redact import redact

MAX_PROMPTS = 8
MAX_PROMPT_CHARS = 2000
MAX_FILES = 30
MAX_COMMANDS = 15
MAX_COMMAND_CHARS = 300
MAX_ERRORS = 8
MAX_ERROR_CHARS = 400
MAX_ASSISTANT_CHARS = 3000
MAX_COMPACT_CHARS = 2000


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass
class Segment:
    prompts: list[str] = field(default_factory=list)
    commands_typed: list[tuple[str, str]] = field(default_factory=list)  # (/name, args)
    files_read: list[str] = field(default_factory=list)
    files_modified: list[str] = field(default_factory=list)
    commands: list[tuple[str, int | None]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    last_assistant: str = ""
    compact_summary: str = ""
    tool_calls: int = 0
    dropped: int = 0  # items left out because of the bounds

    def is_empty(self) -> bool:
        return not (self.prompts or self.commands_typed or self.tool_calls or self.last_assistant)

    def to_text(self) -> str:
        """The segment as the plain text a provider sees (already redacted)."""
        out: list[str] = []
        if self.compact_summary:
            out.append("Earlier context (compaction summary):\n" + self.compact_summary)
        for name, args in self.commands_typed:
            out.append(f"User ran slash command: {name} {args}".rstrip())
        if self.prompts:
            out.append("User prompts:\n" + "\n".join(f"- {p}" for p in self.prompts))
        if self.files_read:
            out.append("Files read: " + ", ".join(self.files_read))
        if self.files_modified:
            out.append("Files modified: " + ", ".join(self.files_modified))
        if self.commands:
            lines = [
                f"- `{cmd}`" + (f" (exit {code})" if code is not None else "") for cmd, code in self.commands
            ]
            out.append("Commands:\n" + "\n".join(lines))
        if self.errors:
            out.append("Errors:\n" + "\n".join(f"- {e}" for e in self.errors))
        if self.last_assistant:
            out.append("Last assistant message:\n" + self.last_assistant)
        if self.dropped:
            out.append(f"({self.dropped} further items omitted)")
        return redact("\n\n".join(out))


def _add_unique(items: list[Any], value: Any, limit: int, seg: Segment) -> None:
    if value in items:
        return
    if len(items) >= limit:
        seg.dropped += 1
        return
    items.append(value)


def build(events: Iterable[dict[str, Any]], root: str | None = None) -> Segment:
    """Fold events into a bounded, redacted segment. Paths under `root` become repo-relative."""
    seg = Segment()
    seen_tools: set[str] = set()
    prefix = (root.rstrip("/") + "/") if root else None

    def rel(path: str) -> str:
        return path[len(prefix) :] if prefix and path.startswith(prefix) else path

    for ev in events:
        kind = ev.get("k")
        if kind == "tool":
            _add_tool(seg, ev, seen_tools, rel)
            continue
        fold = _FOLD.get(kind) if isinstance(kind, str) else None
        if fold is not None:
            fold(seg, ev)
    # files read then modified are listed once, as modified
    seg.files_read = [f for f in seg.files_read if f not in seg.files_modified]
    return seg


def _add_prompt(seg: Segment, ev: dict[str, Any]) -> None:
    text = _clip(redact(str(ev.get("text", ""))), MAX_PROMPT_CHARS)
    if text and text not in seg.prompts:
        if len(seg.prompts) >= MAX_PROMPTS:
            seg.prompts.pop(0)  # keep the most recent prompts
            seg.dropped += 1
        seg.prompts.append(text)


def _add_command(seg: Segment, ev: dict[str, Any]) -> None:
    name = str(ev.get("name", "")).strip()
    args = _clip(redact(str(ev.get("args", ""))), MAX_PROMPT_CHARS)
    if name:
        _add_unique(seg.commands_typed, (name, args), MAX_PROMPTS, seg)


def _set_assistant(seg: Segment, ev: dict[str, Any]) -> None:
    text = str(ev.get("text", "")).strip()
    if text:
        seg.last_assistant = _clip(redact(text), MAX_ASSISTANT_CHARS)


def _set_compact(seg: Segment, ev: dict[str, Any]) -> None:
    summary = str(ev.get("summary") or "")
    if summary:
        seg.compact_summary = _clip(redact(summary), MAX_COMPACT_CHARS)


_FOLD: dict[str, Callable[[Segment, dict[str, Any]], None]] = {
    "prompt": _add_prompt,
    "command": _add_command,
    "assistant": _set_assistant,
    "compact": _set_compact,
}


def _add_tool(seg: Segment, ev: dict[str, Any], seen_tools: set[str], rel: Callable[[str], str]) -> None:
    tid = ev.get("id")
    if isinstance(tid, str) and tid:
        if tid in seen_tools:
            # the same call from spool and transcript: keep the richer error/exit info
            _merge_result(seg, ev)
            return
        seen_tools.add(tid)
    seg.tool_calls += 1
    path = ev.get("file")
    if isinstance(path, str) and path:
        target = seg.files_modified if ev.get("write") else seg.files_read
        _add_unique(target, rel(path), MAX_FILES, seg)
    cmd = ev.get("cmd")
    if isinstance(cmd, str) and cmd.strip():
        code = ev.get("exit") if isinstance(ev.get("exit"), int) else None
        entry = (_clip(redact(cmd), MAX_COMMAND_CHARS), code)
        _add_unique(seg.commands, entry, MAX_COMMANDS, seg)
    _merge_result(seg, ev)


def _merge_result(seg: Segment, ev: dict[str, Any]) -> None:
    err = ev.get("error")
    if isinstance(err, str) and err.strip():
        _add_unique(seg.errors, _clip(redact(err), MAX_ERROR_CHARS), MAX_ERRORS, seg)
    cmd, code = ev.get("cmd"), ev.get("exit")
    if isinstance(cmd, str) and isinstance(code, int):
        clipped = _clip(redact(cmd), MAX_COMMAND_CHARS)
        for i, (c, old) in enumerate(seg.commands):
            if c == clipped and old is None:
                seg.commands[i] = (c, code)
