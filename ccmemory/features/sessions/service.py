"""What the CLI and MCP surfaces show of session records: a brief per session (list, search),
the full record on request (progressive disclosure). Output is redacted once more on the way out,
so a record written by an older version cannot leak what today's patterns catch."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ccmemory.core.redact import redact, redact_obj
from ccmemory.features.sessions import index, record, search, store

log = logging.getLogger("ccmemory.features.sessions")


def brief(rec: dict[str, Any], score: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": rec["id"],
        "branch": rec.get("branch"),
        "start": rec.get("start"),
        "end": rec.get("end"),
        "prompts": len(rec.get("prompts") or []),
        "open": [redact(i) for i in record.open_items(rec)],
        "summary": redact(str(rec.get("summary") or "")),
    }
    if score is not None:
        out["score"] = score
    return out


def list_sessions(
    root: Path, *, since: str | None = None, limit: int = 20, branch: str | None = None
) -> list[dict[str, Any]]:
    return [brief(r) for r in store.all_records(root, since=since, branch=branch)[: max(0, limit)]]


def search_sessions(
    root: Path, query: str, *, since: str | None = None, limit: int = 10, semantic: bool = True
) -> tuple[list[dict[str, Any]], str | None]:
    """(briefs, best first; a notice when the semantic half was off). From the local session index
    (ccmemory.features.sessions.index); when it cannot be used, by reading every record."""
    try:
        idx = index.ready(root)
    except Exception as exc:  # a symlinked folder, a locked or unreadable file: read the records
        log.warning("session index unavailable (%s): reading the records", exc)
        recs = store.all_records(root, since=since)
        rows, notice = search.hybrid(query, recs, root, limit=max(0, limit), semantic=semantic)
        return [brief(r, s) for r, s in rows], notice
    try:
        ids, notice = search.indexed(query, idx, root, limit=max(0, limit), since=since, semantic=semantic)
        files = idx.files_of(i for i, _ in ids)
    finally:
        idx.close()
    out = []
    for sid, score in ids:
        rec = store.load(store.sessions_dir(root) / files[sid]) if sid in files else None
        if rec is not None:  # None: deleted since the index saw it
            out.append(brief(rec, score))
    return out, notice


def autonomy_report(
    root: Path, *, since: str | None = None, by: str = "week", limit: int = 20
) -> dict[str, Any]:
    """The autonomy score (ccmemory.features.sessions.autonomy) per session, per period and
    overall, from the live records (archived ones are not read)."""
    from ccmemory.features.sessions import autonomy

    return autonomy.report(store.all_records(root, since=since), by=by, limit=limit)


PROMPT_CHARS = 300  # of a prompt shown by search_prompts


def search_prompts(
    root: Path, query: str, *, since: str | None = None, limit: int = 10
) -> list[dict[str, Any]]:
    """Single prompts matching `query`, best first (BM25 over the prompt's text, from the session
    index): the prompt (redacted, at most PROMPT_CHARS), its session, place, time and branch."""
    with index.ready(root) as idx:
        hits = idx.rank_prompts(query, since=since, limit=max(0, limit))
    out = []
    for h in hits:
        text = " ".join(redact(h.text).split())
        out.append(
            {
                "session": h.session,
                "prompt": h.n,
                "text": text if len(text) <= PROMPT_CHARS else text[: PROMPT_CHARS - 1] + "…",
                "start": h.started,
                "end": h.ended,
                "branch": h.branch,
                "score": h.score,
            }
        )
    return out


def get(root: Path, session: str) -> dict[str, Any] | None:
    """One whole record, live or archived (`archived: true`); `session` may be a unique prefix or a
    `ccmemory://session/<id>` link."""
    from ccmemory.features.sessions.archive import read_archived

    session = session_ref(session)
    rec = store.read(root, session)
    archived = rec is None
    if rec is None:
        rec = read_archived(root, session)
    if rec is None:
        return None
    full = redact_obj(rec)
    assert isinstance(full, dict)
    full["open"] = record.open_items(full)
    full.pop("published", None)
    if archived:
        full["archived"] = True
    full["uri"] = uri(str(full["id"]))
    return full


URI_PREFIX = "ccmemory://session/"


def uri(session: str) -> str:
    """The link a memory carries to the session that produced it."""
    return URI_PREFIX + session


def session_ref(text: str) -> str:
    """A session id from an id, a prefix or a `ccmemory://session/<id>` link."""
    text = text.strip()
    return text[len(URI_PREFIX) :].strip("/") if text.lower().startswith(URI_PREFIX) else text


def timeline(
    root: Path,
    *,
    query: str | None = None,
    session: str | None = None,
    around: int = 2,
    semantic: bool = True,
) -> tuple[list[dict[str, Any]], str | None]:
    """The sessions just before and after an anchor, oldest first, the anchor marked
    (`anchor: true`): the session ``session`` names (an id, a prefix or a link; for a memory, the
    session that captured it), else the best match of ``query``. ([], why) when there is none."""
    recs = store.all_records(root)
    found: dict[str, Any] | None = None
    if session:
        found = get(root, session)
        if found is None:
            return [], f"no session record {session_ref(session)!r}"
        anchor_id = str(found["id"])
    elif query and query.strip():
        rows, _ = search.hybrid(query, recs, root, limit=1, semantic=semantic)
        if not rows:
            return [], "no session matches"
        anchor_id = str(rows[0][0]["id"])
    else:
        return [], "give a query, a session or a memory"
    ordered = recs[::-1]  # oldest first
    at = next((i for i, r in enumerate(ordered) if r["id"] == anchor_id), None)
    if at is None:  # an archived anchor (named by `session`, so `found`): shown alone
        return ([{**brief(found), "anchor": True, "archived": True}] if found else []), None
    around = max(0, around)
    window = ordered[max(0, at - around) : at + around + 1]
    return [{**brief(r), **({"anchor": True} if r["id"] == anchor_id else {})} for r in window], None
