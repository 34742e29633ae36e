"""The seed's Correction Velocity (issue 31): for each correction memory capture writes from a user
prompt of a session, one line in `.ccmemory/local/correction-velocity.jsonl` (append-only, ids and
times only, never text) with

- `prompt`: the time of the correcting prompt (the spool's, else the transcript's),
- `wrong`: the time of Claude's last action before that prompt, the "wrong statement" proxy: the
  latest main-line assistant record of the transcript (a reply or a tool call) or spool tool
  event before the prompt (`wrong_from` says which),
- `created`: the memory's `created` (the capture job's time: the hook that closed the segment),
- `written`: when the worker wrote the file.

The rows are worked out when the job is planned (they are stored in the job next to the plan) and
appended once the memory file is written (not while telemetry is off). A correction whose prompt
cannot be told (several prompts in the segment and none holding the correction's words, as an
LLM's paraphrase may not), or with no action of Claude's before it, gets no row. What capture
extracts is not changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from ccmemory.core import spool
from ccmemory.core.model import parse_timestamp

LOG = "correction-velocity.jsonl"


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _needles(mem: dict[str, Any]) -> list[str]:
    """Words of the correction that its prompt holds: the quoted line of a rules correction, else
    the two beliefs (an explicit `/correction WRONG -> RIGHT` holds both)."""
    quoted = [ln[2:] for ln in str(mem.get("body") or "").splitlines() if ln.startswith("> ")]
    if quoted:
        return [_norm(quoted[0])]
    fields = mem.get("fields") or {}
    return [_norm(str(fields[k])) for k in ("wrong_belief", "right_belief") if fields.get(k)]


def _prompts(events: Iterable[dict[str, Any]]) -> list[tuple[datetime, str]]:
    """(time, text) of the user turns among a segment's events that carry a time."""
    out = []
    for ev in events:
        kind = ev.get("k")
        when = parse_timestamp(ev.get("ts"))
        if when is None or kind not in ("prompt", "command"):
            continue
        text = str(ev.get("text") or "") if kind == "prompt" else f"{ev.get('name')} {ev.get('args') or ''}"
        out.append((when, _norm(text)))
    return out


def source_prompt(mem: dict[str, Any], prompts: list[tuple[datetime, str]]) -> datetime | None:
    """When the prompt a correction came from was typed: the last prompt holding its words, else
    the segment's only prompt, else None (unknown)."""
    needles = [n for n in _needles(mem) if n]
    hits = [when for when, text in prompts if needles and all(n in text for n in needles)]
    if hits:
        return hits[-1]
    return prompts[0][0] if len(prompts) == 1 else None


def claude_actions(spool_path: Path, spool_to: int, transcript: Path | None) -> list[tuple[datetime, str]]:
    """(time, "transcript" | "spool") of every action of Claude's in the session so far: main-line
    assistant records with a reply or a tool call, and the hooks' tool events."""
    out: list[tuple[datetime, str]] = []
    events, _ = spool.read_range(spool_path, 0, spool_to)
    for ev in events:
        when = parse_timestamp(ev.get("ts")) if ev.get("k") == "tool" else None
        if when is not None:
            out.append((when, "spool"))
    if transcript is not None and transcript.is_file():
        from ccmemory.features.capture.transcript import live_branch, read_records

        for rec in live_branch(read_records(transcript, 0).records):
            when = parse_timestamp(rec.get("timestamp")) if _acts(rec) else None
            if when is not None:
                out.append((when, "transcript"))
    return out


def _acts(rec: dict[str, Any]) -> bool:
    """A main-line assistant record with a reply (text) or a tool call."""
    if rec.get("type") != "assistant" or rec.get("isSidechain") or rec.get("isApiErrorMessage"):
        return False
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return bool(content.strip())
    return isinstance(content, list) and any(
        isinstance(b, dict)
        and (
            b.get("type") == "tool_use"
            or (b.get("type") == "text" and bool(str(b.get("text") or "").strip()))
        )
        for b in content
    )


def plan_rows(
    memories: list[dict[str, Any]],
    segment_events: list[dict[str, Any]],
    spool_path: Path,
    spool_to: int,
    transcript: Path | None,
) -> list[dict[str, Any]]:
    """The rows for a plan's corrections (not yet `written`); [] when it has none from a session."""
    corrections = [m for m in memories if m.get("type") == "correction" and m.get("session")]
    prompts = _prompts(segment_events)
    if not corrections or not prompts:
        return []
    actions: list[tuple[datetime, str]] | None = None
    rows = []
    for mem in corrections:
        typed = source_prompt(mem, prompts)
        if typed is None:
            continue
        if actions is None:  # read once, only for a plan with a correction
            actions = claude_actions(spool_path, spool_to, transcript)
        before = [a for a in actions if a[0] < typed]
        if not before:
            continue
        wrong, where = max(before)
        rows.append(
            {
                "id": mem["id"],
                "session": mem["session"],
                "prompt": _iso(typed),
                "wrong": _iso(wrong),
                "wrong_from": where,
                "created": mem.get("created"),
            }
        )
    return rows


def _iso(when: datetime) -> str:
    text = when.isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def append(local: Path, rows: list[dict[str, Any]], written_ids: set[str], now: datetime) -> None:
    """Append the rows of the memories written (`written_ids`) that the log does not hold yet."""
    logged = {row["id"] for row in read_rows(local)}
    for row in rows:
        if row.get("id") in written_ids and row.get("id") not in logged:
            spool.append(local / LOG, {**row, "written": _iso(now)})


def read_rows(local: Path) -> list[dict[str, Any]]:
    """The log's rows with usable times (torn or foreign lines skipped), one per memory id."""
    rows, _ = spool.read_range(local / LOG, 0)
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        if isinstance(row.get("id"), str) and all(
            parse_timestamp(row.get(k)) is not None for k in ("prompt", "wrong", "created")
        ):
            out.setdefault(row["id"], row)
    return list(out.values())
