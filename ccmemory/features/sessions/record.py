"""Build a session record from transcript events (ccmemory.features.capture.transcript).

The record keeps what a later session needs, not the transcript: redacted prompts, files read and
changed, commands with their exit code, errors, memory ids, times, branch, and a rules summary made
only from those facts (never empty, never invented). It is capped (`max_bytes`, default 50 KB):
over the cap the longest lists are cut from the middle and `truncated` is set.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ccmemory.core.redact import redact

SCHEMA = 1
DEFAULT_MAX_BYTES = 50 * 1024
MAX_PROMPT_CHARS = 2000
MAX_ITEM_CHARS = 300
_SUMMARY_PROMPT_CHARS = 160


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _add_unique(items: list[str], value: str) -> None:
    if value and value not in items:
        items.append(value)


def _rel(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def _tool(ev: dict[str, Any], rec: dict[str, Any], cwd: str | None) -> None:
    file = ev.get("file")
    if isinstance(file, str):
        target = rec["files_changed"] if ev.get("write") else rec["files_read"]
        _add_unique(target, redact(_rel(file, cwd))[:MAX_ITEM_CHARS])
    cmd = ev.get("cmd")
    if isinstance(cmd, str) and cmd.strip():
        entry: dict[str, Any] = {"cmd": _clip(redact(cmd), MAX_ITEM_CHARS)}
        if isinstance(ev.get("exit"), int):
            entry["exit"] = ev["exit"]
        rec["commands"].append(entry)
    err = ev.get("error")
    if isinstance(err, str) and err.strip():
        where = cmd if isinstance(cmd, str) else str(ev.get("name") or "tool")
        _add_unique(rec["errors"], _clip(redact(f"{where}: {err}"), MAX_ITEM_CHARS))


def dedupe_tools(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One event per tool call id: the spool and the transcript both hold most calls (the
    transcript adds exit codes and errors of calls the spool lacks); later facts fill in."""
    out: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    for ev in events:
        tid = ev.get("id") if ev.get("k") == "tool" else None
        if isinstance(tid, str) and tid in by_id:
            merged = by_id[tid]
            for key, value in ev.items():
                merged.setdefault(key, value)
            continue
        ev = dict(ev)
        if isinstance(tid, str):
            by_id[tid] = ev
        out.append(ev)
    return out


def last_is_prompt(events: list[dict[str, Any]]) -> bool:
    """True when the last turn in file order is a human prompt no reply or tool call followed."""
    for ev in reversed(events):
        kind = ev.get("k")
        if kind in ("prompt", "command"):
            return True
        if kind in ("assistant", "tool"):
            return False
    return False


def build(
    events: list[dict[str, Any]],
    *,
    session: str,
    branch: str | None = None,
    cwd: str | None = None,
    memories: list[str] | None = None,
    start: str | None = None,
    end: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    unanswered: bool | None = None,
    subagent_events: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A record from one session's events (prompts, slash commands, tools, assistant replies).
    `subagent_events`: the sub-agents' events of the same transcript (their tool calls count as
    AI actions in the autonomy score, ccmemory.features.sessions.autonomy)."""
    rec: dict[str, Any] = {
        "schema": SCHEMA,
        "id": session,
        "branch": branch,
        "start": start,
        "end": end,
        "prompts": [],
        "files_read": [],
        "files_changed": [],
        "commands": [],
        "errors": [],
        "memories": sorted(set(memories or [])),
        "truncated": False,
    }
    times: list[str] = []
    for ev in dedupe_tools(events):
        kind = ev.get("k")
        if isinstance(ev.get("ts"), str):
            times.append(ev["ts"])
        if kind == "prompt" and str(ev.get("text") or "").strip():
            rec["prompts"].append(redact(str(ev["text"]).strip())[:MAX_PROMPT_CHARS])
        elif kind == "command" and ev.get("name"):
            text = f"{ev['name']} {ev.get('args') or ''}".strip()
            rec["prompts"].append(redact(text)[:MAX_PROMPT_CHARS])
        elif kind == "tool":
            _tool(ev, rec, cwd)
    rec["start"] = rec["start"] or (min(times) if times else None)
    rec["end"] = rec["end"] or (max(times) if times else None)
    rec["unanswered"] = last_is_prompt(events) if unanswered is None else unanswered
    rec["summary"] = summarize(rec)
    from ccmemory.features.sessions import autonomy

    actions = autonomy.count_actions(events, subagent_events or [])
    rec["autonomy"] = autonomy.for_record(rec["prompts"], actions)  # before the cap: every prompt
    return cap(rec, max_bytes)


def open_items(rec: dict[str, Any]) -> list[str]:
    """What the record shows as left open: a failing last command, a last prompt unanswered."""
    out: list[str] = []
    cmds = rec.get("commands") or []
    if cmds and isinstance(cmds[-1].get("exit"), int) and cmds[-1]["exit"] != 0:
        out.append(f"last command failed (exit {cmds[-1]['exit']}): {_clip(cmds[-1]['cmd'], 80)}")
    prompts = rec.get("prompts") or []
    if rec.get("unanswered") and prompts:
        out.append(f"last prompt unanswered: {_clip(prompts[-1], 80)}")
    return out


def summarize(rec: dict[str, Any]) -> str:
    """Asked / done / open, from the record's own facts only."""
    parts: list[str] = []
    prompts = rec.get("prompts") or []
    if prompts:
        more = f" (+{len(prompts) - 1} more prompt(s))" if len(prompts) > 1 else ""
        parts.append(f"Asked: {_clip(prompts[0], _SUMMARY_PROMPT_CHARS).rstrip('.')}{more}.")
    else:
        parts.append("No prompt recorded.")
    done: list[str] = []
    changed = rec.get("files_changed") or []
    if changed:
        names = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
        done.append(f"changed {names}")
    cmds = rec.get("commands") or []
    if cmds:
        failed = sum(1 for c in cmds if isinstance(c.get("exit"), int) and c["exit"] != 0)
        done.append(f"ran {len(cmds)} command(s)" + (f", {failed} failed" if failed else ""))
    if rec.get("files_read"):
        done.append(f"read {len(rec['files_read'])} file(s)")
    if rec.get("memories"):
        done.append(f"captured {len(rec['memories'])} memory(ies)")
    parts.append(("Done: " + "; ".join(done) + ".") if done else "Done: no file change or command recorded.")
    items = open_items(rec)
    if items:
        parts.append("Open: " + "; ".join(i.rstrip(".") for i in items) + ".")
    return " ".join(parts)


def size_of(rec: dict[str, Any]) -> int:
    return len(json.dumps(rec, ensure_ascii=False).encode("utf-8"))


def cap(rec: dict[str, Any], max_bytes: int) -> dict[str, Any]:
    """Cut the longest list (keeping its head and tail) until the record fits `max_bytes`."""
    keys = ("prompts", "commands", "files_read", "files_changed", "errors")
    while size_of(rec) > max_bytes:
        longest = max(keys, key=lambda k: len(json.dumps(rec[k], ensure_ascii=False)))
        items = rec[longest]
        if len(items) > 2:
            mid, cut = len(items) // 2, max(1, len(items) // 10)
            del items[mid - cut // 2 : mid - cut // 2 + cut]
        elif items and isinstance(items[0], str) and len(items[0]) > 40:
            rec[longest] = [s[: len(s) // 2] for s in items]
        else:
            break
        rec["truncated"] = True
    return rec


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
