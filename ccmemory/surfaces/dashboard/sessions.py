"""The dashboard's Sessions pages (issue 28): the local session records (list newest first, the
sessions search, one session with its summary, prompts, files, commands and the memories it
captured). Data only; the templates escape every field (autoescape), nothing is rendered as HTML."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ccmemory.surfaces.dashboard.data import Dash

LIMIT = 100


def listing(dash: Dash, q: str | None, *, text_only: bool = False) -> dict[str, Any]:
    from ccmemory.features.sessions.service import list_sessions, search_sessions

    q = (q or "").strip()[:500]
    if q:
        rows, notice = search_sessions(dash.root, q, limit=LIMIT, semantic=not text_only)
        return {"q": q, "rows": rows, "notice": notice, "searched": True}
    return {"q": "", "rows": list_sessions(dash.root, limit=LIMIT), "notice": None, "searched": False}


def one(dash: Dash, session: str) -> dict[str, Any] | None:
    from ccmemory.features.sessions.service import get

    rec = get(dash.root, session)
    if rec is None:
        return None
    memories = []
    for mid in rec.get("memories") or []:
        m = dash.svc.get(str(mid))
        memories.append(
            {
                "id": str(mid),
                "title": m.title if m else None,
                "type": m.type if m else None,
                "found": m is not None,
            }
        )
    return {"session": rec, "memories": memories}
