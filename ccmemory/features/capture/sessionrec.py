"""Write a session's history record (ccmemory.features.sessions) from its transcript, merged with
the session's spool (what the hooks saw).

Called by the capture worker after a job (Stop / SessionEnd / PreCompact / UserPromptSubmit) and
by `ccmemory import`; never by a hook process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ccmemory.features.sessions.record import DEFAULT_MAX_BYTES


def _memory_ids(root: Path, session: str, memories: Any) -> list[str]:
    if memories is None:
        return []
    try:
        return [e.id for e in memories.all_memories() if e.session == session]
    except Exception:  # the record is still worth writing without them
        return []


def from_transcript(
    root: Path,
    transcript: Path | None,
    *,
    session: str | None = None,
    spool_events: list[dict[str, Any]] | None = None,
    branch: str | None = None,
    memories: Any = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> tuple[dict[str, Any] | None, int]:
    """(record written or None, bad transcript lines skipped). `memories` is a capture Store
    (its memories whose `session` is this one are listed)."""
    from ccmemory.features.capture.events import merge_events
    from ccmemory.features.capture.transcript import read_records, to_events
    from ccmemory.features.sessions import record, store

    events: list[dict[str, Any]] = []
    bad = 0
    conv_branch = conv_cwd = None
    if transcript is not None and transcript.is_file():
        res = read_records(transcript, 0, complete=True)
        bad = res.bad_lines
        conv = to_events(res.records)
        events = conv.events
        session = session or conv.session or transcript.stem
        conv_branch, conv_cwd = conv.branch, conv.cwd
    unanswered = record.last_is_prompt(events) if events else False
    if spool_events:
        events = merge_events(spool_events, events)
    if not session or not events:
        return None, bad
    rec = record.build(
        events,
        session=session,
        branch=branch or conv_branch,
        cwd=conv_cwd or str(root),
        memories=_memory_ids(root, session, memories),
        max_bytes=max_bytes,
        unanswered=unanswered,
    )
    rec["bad_lines"] = bad
    rec["updated"] = record.now_iso()
    store.write(root, rec)
    return rec, bad


def import_files(
    root: Path, files: list[Path], *, memories: Any = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[list[str], list[str]]:
    """Records for transcript files (`ccmemory import`): (session ids written, notes about lines
    skipped or files that held no session). Sub-agent files are not sessions of their own."""
    from ccmemory.features.capture.transcript import is_subagent_file

    written: list[str] = []
    notes: list[str] = []
    for path in files:
        if is_subagent_file(path):
            continue
        rec, bad = from_transcript(root, path, memories=memories, max_bytes=max_bytes)
        if bad:
            notes.append(f"{path}: {bad} line(s) that are not JSON objects skipped")
        if rec is None:
            notes.append(f"{path}: no prompt, tool call or reply found; no session record")
        else:
            written.append(str(rec["id"]))
    return written, notes
