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
    live: bool = False,
    publish: int | None = None,
    notes: list[str] | None = None,
    summarize_with: Any = None,
    final: bool = False,
    classify_with: Any = None,
) -> tuple[dict[str, Any] | None, int]:
    """(record written or None, bad transcript lines skipped). `memories` is a capture Store
    (its memories whose `session` is this one are listed). `live`: the session is running or just
    ended (the capture worker), so HEAD is its end commit. `publish`: None, or publish the summary
    under `.ccmemory/sessions/` with that many prompts (0 = none); what publishing could not do
    is appended to `notes`. `summarize_with`: the LLM call for the summary
    (ccmemory.features.capture.sessionsummary; None: the rules summary, or an earlier LLM one);
    `final`: the session ended or is compacting. `classify_with`: the LLM call that classes the
    prompts for the autonomy score (ccmemory.features.sessions.autonomy; None: the rules)."""
    from ccmemory.features.capture.events import merge_events
    from ccmemory.features.capture.transcript import read_records, to_events
    from ccmemory.features.sessions import record, store

    events: list[dict[str, Any]] = []
    side: list[dict[str, Any]] = []
    bad = 0
    conv_branch = conv_cwd = None
    if transcript is not None and transcript.is_file():
        res = read_records(transcript, 0, complete=True)
        bad = res.bad_lines
        conv = to_events(res.records)
        events, side = conv.events, conv.sidechain_events
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
        subagent_events=side,
    )
    rec["bad_lines"] = bad
    rec["updated"] = record.now_iso()
    _commits_and_state(root, rec, live)
    from ccmemory.features.capture.sessionsummary import apply as llm_summary

    previous = store.read_exact(root, session)
    llm_summary(rec, previous, summarize_with, final=final)
    from ccmemory.features.sessions.autonomy import apply as llm_classes

    llm_classes(rec, previous, classify_with, final=final)
    if publish is not None:
        from ccmemory.features.sessions.publish import publish as publish_one

        done = publish_one(root, rec, prompts=publish)
        if done.status not in ("written", "updated", "unchanged") and notes is not None:
            notes.append(done.message)
    path = store.write(root, rec)
    from ccmemory.features.sessions.index import note_written

    note_written(root, path)  # the local session index (a failure: the next search catches up)
    return rec, bad


def _commits_and_state(root: Path, rec: dict[str, Any], live: bool) -> None:
    """The commits at start and end (ccmemory.features.sessions.commits); what an earlier write
    of this record knew (the start commit, the published file's state) is kept."""
    from ccmemory.features.sessions import commits, store

    prev = store.read_exact(root, str(rec["id"])) or {}
    rec["commit_start"] = prev.get("commit_start") or commits.commit_at(root, rec.get("start"))
    rec["commit_end"] = commits.head(root) if live else commits.commit_at(root, rec.get("end"))
    if isinstance(prev.get("published"), dict):
        rec["published"] = prev["published"]


def import_files(
    root: Path,
    files: list[Path],
    *,
    memories: Any = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    publish: int | None = None,
) -> tuple[list[str], list[str]]:
    """Records for transcript files (`ccmemory import`): (session ids written, notes about lines
    skipped or files that held no session). Sub-agent files are not sessions of their own."""
    from ccmemory.features.capture.transcript import is_subagent_file

    written: list[str] = []
    notes: list[str] = []
    for path in files:
        if is_subagent_file(path):
            continue
        rec, bad = from_transcript(
            root, path, memories=memories, max_bytes=max_bytes, publish=publish, notes=notes
        )
        if bad:
            notes.append(f"{path}: {bad} line(s) that are not JSON objects skipped")
        if rec is None:
            notes.append(f"{path}: no prompt, tool call or reply found; no session record")
        else:
            written.append(str(rec["id"]))
    return written, notes
