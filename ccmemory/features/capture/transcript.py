"""Claude Code session transcripts (JSONL) -> a flat list of capture events.

Handles every record kind described in fixtures/transcripts/SCHEMA.md: assistant replies split over
records sharing `message.id`, tool_use/tool_result pairs with `toolUseResult`, `isMeta` records
(slash-command expansions, Stop-hook feedback), slash-command wrappers, compact boundaries and
summaries, rewinds (live branch = chain to the newest leaf), sidechains and sub-agent files.
Unknown record types are ignored. Reads are incremental from a byte offset and a torn last line is
left for the next read.

Events are plain dicts, the same shape the hooks write to the spool:
  {"k": "prompt", "text"}                       a human turn
  {"k": "command", "name", "args"}              a slash command typed by the human
  {"k": "tool", "id", "name", "file", "cmd", "exit", "error"}
  {"k": "assistant", "text"}                    one assistant API message (all its text blocks)
  {"k": "compact", "trigger", "summary"}
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccmemory.features.capture.events import FILE_WRITE_TOOLS, tool_event

_COMMAND_NAME = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_SYSTEM_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_LOCAL_WRAPPERS = ("<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>")
_INTERRUPT = "[Request interrupted by user"
_EXIT_CODE = re.compile(r"(?:Exit code|exit code|exited with code)\s*:?\s*(-?\d+)")


@dataclass
class ReadResult:
    records: list[dict[str, Any]]
    offset: int  # byte offset just after the last complete line consumed
    bad_lines: int = 0


MAX_LINE_BYTES = 32 * 1024 * 1024  # one JSONL record; a longer line is skipped as bad
MAX_KEPT_CHARS = 64 * 1024  # any string in a record beyond this keeps its head and tail only


def _slim(value: Any) -> Any:
    """Bound the memory a record holds: capture clips every text to a few thousand characters
    (segment.MAX_*), so a 5 MB tool output is cut to its head and tail as soon as it is parsed."""
    if isinstance(value, str):
        if len(value) <= MAX_KEPT_CHARS:
            return value
        half = MAX_KEPT_CHARS // 2
        return value[:half] + "\n…\n" + value[-half:]
    if isinstance(value, dict):
        return {k: _slim(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_slim(v) for v in value]
    return value


def read_records(
    path: Path, offset: int = 0, limit_bytes: int | None = None, *, complete: bool = False
) -> ReadResult:
    """Records from `offset` on. Only complete lines are consumed: a line still being written
    (no trailing newline yet) is left for the next call. Unparseable complete lines are skipped.
    `complete=True` (a finished file, e.g. on import) also takes an unterminated last line when it
    parses. The file is streamed line by line (a 120 MB transcript is never held whole) and big
    strings are slimmed as they are parsed (`_slim`)."""
    records: list[dict[str, Any]] = []
    bad = 0
    pos = offset
    budget = limit_bytes if limit_bytes is not None else -1
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed by the `with` below; open errors handled here
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return ReadResult([], offset)
    with fh:
        fh.seek(offset)
        while budget != 0:
            want = MAX_LINE_BYTES + 1 if budget < 0 else min(budget, MAX_LINE_BYTES + 1)
            raw = fh.readline(want)
            if not raw:
                break
            if budget > 0:
                budget -= len(raw)
            if not raw.endswith(b"\n"):
                if len(raw) > MAX_LINE_BYTES:  # an absurd line: skip to its end, count it bad
                    skipped = len(raw)
                    while True:
                        more = fh.readline(1 << 20)
                        skipped += len(more)
                        if not more or more.endswith(b"\n"):
                            break
                    if not more:
                        break  # unterminated: leave it for the next call
                    pos += skipped
                    bad += 1
                    continue
                if not (complete and fh.read(1) == b""):
                    break  # a torn last line: left for the next call
                try:
                    json.loads(raw)
                except ValueError:
                    break
            pos += len(raw)
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                bad += 1
                continue
            if isinstance(obj, dict):
                records.append(_slim(obj))
            else:
                bad += 1
    return ReadResult(records, pos, bad)


def live_branch(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop abandoned branches after a rewind: keep the chain that ends at the newest leaf.

    Only applied when the file actually forks (a uuid with two main-line children); otherwise file
    order is kept (records without parentUuid, partial incremental reads, sidechains)."""
    main = [r for r in records if r.get("uuid") and not r.get("isSidechain")]
    children: dict[str, int] = {}
    for r in main:
        parent = r.get("parentUuid")
        if isinstance(parent, str):
            children[parent] = children.get(parent, 0) + 1
    if not any(n > 1 for n in children.values()):
        return records
    by_uuid = {r["uuid"]: r for r in main}
    keep: set[str] = set()
    node: dict[str, Any] | None = main[-1]
    while node is not None and node["uuid"] not in keep:
        keep.add(node["uuid"])
        parent = node.get("parentUuid") or node.get("logicalParentUuid")
        node = by_uuid.get(parent) if isinstance(parent, str) else None
    return [r for r in records if not r.get("uuid") or r.get("isSidechain") or r["uuid"] in keep]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    return ""


def strip_reminders(text: str) -> str:
    return _SYSTEM_REMINDER.sub("", text).strip()


def _human_text(rec: dict[str, Any]) -> tuple[str, str] | None:
    """('prompt'|'command', text) for a human-typed user record, None otherwise."""
    if rec.get("isMeta") or rec.get("isCompactSummary") or rec.get("isVisibleInTranscriptOnly"):
        return None
    content = (rec.get("message") or {}).get("content")
    if isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    ):
        return None
    text = _text_of(content).strip()
    if not text or text.startswith(_INTERRUPT):
        return None
    if "<command-name>" in text:
        return ("command", text)
    if text.startswith(_LOCAL_WRAPPERS) or text.startswith("<bash-stdout>"):
        return None
    return ("prompt", text)


def parse_command(text: str) -> tuple[str, str]:
    """(name, args) from a slash-command wrapper."""
    name_m = _COMMAND_NAME.search(text)
    args_m = _COMMAND_ARGS.search(text)
    return (name_m.group(1).strip() if name_m else "", args_m.group(1).strip() if args_m else "")


def _apply_result(ev: dict[str, Any], block: dict[str, Any], structured: Any) -> None:
    text = strip_reminders(_text_of(block.get("content")))
    is_error = bool(block.get("is_error")) or (isinstance(structured, str) and structured.startswith("Error"))
    if ev.get("name") == "Bash":
        m = _EXIT_CODE.search(text[:200])
        if m:
            ev["exit"] = int(m.group(1))
        elif isinstance(structured, dict):
            code = structured.get("exitCode")
            ev["exit"] = code if isinstance(code, int) else (1 if is_error else 0)
        else:
            ev["exit"] = 1 if is_error else 0
    if is_error:
        ev["error"] = text[:500]
    if isinstance(structured, dict) and ev.get("name") in FILE_WRITE_TOOLS and "file" not in ev:
        fp = structured.get("filePath")
        if isinstance(fp, str):
            ev["file"], ev["write"] = fp, True


@dataclass
class Conversation:
    """Events of one transcript plus bookkeeping useful to callers."""

    events: list[dict[str, Any]] = field(default_factory=list)
    session: str | None = None
    cwd: str | None = None
    branch: str | None = None
    sidechain_events: list[dict[str, Any]] = field(default_factory=list)
    record_uuids: list[str | None] = field(default_factory=list)  # uuid per event (segment keys)


def to_events(records: Iterable[dict[str, Any]], *, include_sidechains: bool = False) -> Conversation:
    """Flatten records (in order) into events. Sidechain records go to `sidechain_events`."""
    flat = _Flatten(Conversation())
    for rec in live_branch(list(records)):
        flat.record(rec)
    conv = flat.conv
    if include_sidechains:
        conv.events.extend(conv.sidechain_events)
    return conv


Emit = Callable[[dict[str, Any]], None]


@dataclass
class _Flatten:
    """The state of one `to_events` pass: tool calls waiting for their result, assistant
    messages split over several records, blocks and tool ids already seen."""

    conv: Conversation
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    assistant_events: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen_blocks: set[tuple[str, int, str]] = field(default_factory=set)
    seen_tools: set[str] = field(default_factory=set)

    def record(self, rec: dict[str, Any]) -> None:
        rtype = rec.get("type")
        if rtype not in ("user", "assistant", "system"):
            return  # summary, queue-operation, file-history-snapshot, unknown: ignored
        if not isinstance(rec.get("message") or {}, dict):
            return  # a hostile or broken record: `message` must be an object
        conv = self.conv
        side = bool(rec.get("isSidechain"))
        target = conv.sidechain_events if side else conv.events

        def emit(ev: dict[str, Any]) -> None:
            target.append(ev)
            if not side:
                conv.record_uuids.append(rec.get("uuid"))

        if not side:
            conv.session = conv.session or rec.get("sessionId")
            conv.cwd = conv.cwd or rec.get("cwd")
            if rec.get("gitBranch"):
                conv.branch = rec.get("gitBranch")
        if rtype == "system":
            if rec.get("subtype") == "compact_boundary":
                meta = rec.get("compactMetadata") or {}
                emit({"k": "compact", "trigger": meta.get("trigger"), "summary": ""})
        elif rtype == "user":
            self._user(rec, emit)
        elif not rec.get("isApiErrorMessage"):
            self._assistant(rec, emit, target)

    def _user(self, rec: dict[str, Any], emit: Emit) -> None:
        message = rec.get("message") or {}
        if rec.get("isCompactSummary"):
            text = _text_of(message.get("content"))
            emit({"k": "compact", "trigger": None, "summary": text[:4000]})
            return
        human = _human_text(rec)
        if human is not None:
            kind, text = human
            ts = rec.get("timestamp")
            if kind == "command":
                name, args = parse_command(text)
                emit({"k": "command", "name": name, "args": args, "ts": ts})
            else:
                emit({"k": "prompt", "text": strip_reminders(text), "ts": ts})
            return
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    ev = self.pending.pop(str(block.get("tool_use_id")), None)
                    if ev is not None:
                        _apply_result(ev, block, rec.get("toolUseResult"))

    def _assistant(self, rec: dict[str, Any], emit: Emit, target: list[dict[str, Any]]) -> None:
        message = rec.get("message") or {}
        msg_id = str(message.get("id") or rec.get("uuid") or id(rec))
        content = message.get("content")
        if not isinstance(content, list):
            content = [{"type": "text", "text": content}] if isinstance(content, str) else []
        for index, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                self._text(msg_id, index, str(block.get("text") or "").strip(), emit, target)
            elif btype == "tool_use":
                self._tool_use(block, emit)
            # thinking, images and unknown blocks are not captured

    def _text(self, msg_id: str, index: int, text: str, emit: Emit, target: list[dict[str, Any]]) -> None:
        """One text block; the blocks of one message (streamed as several records) join up."""
        key = (msg_id, index, text[:200])
        if not text or key in self.seen_blocks:
            return
        self.seen_blocks.add(key)
        existing = self.assistant_events.get(msg_id)
        if existing is None or (existing not in target):
            existing = {"k": "assistant", "text": text}
            self.assistant_events[msg_id] = existing
            emit(existing)
        elif text not in existing["text"]:
            existing["text"] += "\n" + text

    def _tool_use(self, block: dict[str, Any], emit: Emit) -> None:
        tid = str(block.get("id") or "")
        if tid and tid in self.seen_tools:
            return
        self.seen_tools.add(tid)
        ev = tool_event(tid or None, str(block.get("name") or "?"), block.get("input"))
        emit(ev)
        if tid:
            self.pending[tid] = ev


def read_events(path: Path, offset: int = 0, *, complete: bool = False) -> tuple[Conversation, int]:
    res = read_records(path, offset, complete=complete)
    return to_events(res.records), res.offset


def subagent_files(session_file: Path) -> Iterator[Path]:
    """Sub-agent transcripts that belong to a session: v2.1 `<session>/subagents/agent-*.jsonl`."""
    folder = session_file.with_suffix("") / "subagents"
    if folder.is_dir():
        yield from sorted(folder.glob("agent-*.jsonl"))


def is_subagent_file(path: Path) -> bool:
    return path.name.startswith("agent-")
