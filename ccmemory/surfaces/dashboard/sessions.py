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
    auto = _autonomy(dash)
    if q:
        rows, notice = search_sessions(dash.root, q, limit=LIMIT, semantic=not text_only)
        return {"q": q, "rows": _scored(rows, auto), "notice": notice, "searched": True, "autonomy": auto}
    rows = _scored(list_sessions(dash.root, limit=LIMIT), auto)
    return {"q": "", "rows": rows, "notice": None, "searched": False, "autonomy": auto}


def _autonomy(dash: Dash) -> dict[str, Any]:
    """The autonomy score per session and week (ccmemory.features.sessions.autonomy), with the
    chart's values: the weekly scores (None for a week without intervention) and their top."""
    from ccmemory.features.sessions.service import autonomy_report

    rep = autonomy_report(dash.root, limit=LIMIT)
    periods = rep["periods"][-12:]
    values = [p["score"] for p in periods]
    rep["chart"] = {
        "scores": values,
        "weeks": [p["period"] for p in periods],
        "top": max([v for v in values if v is not None] or [0]) or 1,
    }
    return rep


def _scored(rows: list[dict[str, Any]], auto: dict[str, Any]) -> list[dict[str, Any]]:
    scores = {s["id"]: s for s in auto["sessions"]}
    return [{**r, "autonomy": scores.get(r["id"])} for r in rows]


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
    from ccmemory.features.sessions.autonomy import score

    auto = rec.get("autonomy")
    classes = list(auto.get("classes") or []) if isinstance(auto, dict) else []
    prompts = [
        {"text": p, "kind": classes[i] if i < len(classes) else None}
        for i, p in enumerate(rec.get("prompts") or [])
    ]
    return {"session": rec, "memories": memories, "autonomy": score(rec), "prompts": prompts}
