"""What recall cost and what came of it, from the local telemetry (ids, counts, times only).

Pure functions over ``telemetry.Store.events`` rows ``(ts, kind, session, memory_id, n)``:
tokens injected per day and per session (``injected`` events), memories recalled
(``recalled``), and how many recalled memories were then fetched in full (a ``retrieved`` event
for the same id within :data:`FOLLOW_WINDOW` after it was recalled; the MCP server does not know
Claude Code's session id, so the join is by time), had their files edited in the session
(``followed``) or were cited by id in a reply (``cited``; ``follow.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

FOLLOW_WINDOW = timedelta(minutes=30)
#: the telemetry kinds :func:`summarise` reads
USAGE_KINDS = ("injected", "recalled", "retrieved", "followed", "cited")
Event = tuple[str, str, "str | None", "str | None", int]


@dataclass
class Usage:
    tokens: int = 0
    injections: int = 0
    recalled: int = 0  # memory lines injected
    fetched: int = 0  # of those, fetched in full afterwards
    followed: int = 0  # recalled memories whose files were then edited in the session
    cited: int = 0  # recalled memories whose id Claude then wrote in a reply
    by_day: dict[str, dict[str, int]] = field(default_factory=dict)
    by_session: dict[str, dict[str, int]] = field(default_factory=dict)

    def as_dict(self, sessions: int = 20) -> dict[str, object]:
        recent = sorted(self.by_session.items(), key=lambda kv: kv[1]["last"], reverse=True)[:sessions]
        return {
            "tokens": self.tokens,
            "injections": self.injections,
            "tokens_per_injection": round(self.tokens / self.injections, 1) if self.injections else 0.0,
            "recalled": self.recalled,
            "fetched_after": self.fetched,
            "fetched_share": round(self.fetched / self.recalled, 3) if self.recalled else None,
            "edited_after": self.followed,
            "edited_share": round(self.followed / self.recalled, 3) if self.recalled else None,
            "cited_after": self.cited,
            "cited_share": round(self.cited / self.recalled, 3) if self.recalled else None,
            "by_day": dict(sorted(self.by_day.items())),
            "sessions": [{"session": s, **{k: v for k, v in d.items() if k != "last"}} for s, d in recent],
        }


def _when(ts: str) -> datetime | None:
    try:
        return datetime.fromisoformat(ts)
    except ValueError:
        return None


def summarise(events: Iterable[Sequence[object]]) -> Usage:
    u = Usage()
    retrieved: dict[str, list[datetime]] = {}
    recalls: list[tuple[str, datetime]] = []
    for ts, kind, session, mid, n in (tuple(e) for e in events):
        if not isinstance(ts, str):
            continue
        sid = session if isinstance(session, str) else "(no session)"
        if kind == "injected" and isinstance(n, int):
            u.tokens += n
            u.injections += 1
            day = u.by_day.setdefault(ts[:10], {"tokens": 0, "injections": 0})
            day["tokens"] += n
            day["injections"] += 1
            s = u.by_session.setdefault(sid, {"tokens": 0, "injections": 0, "last": 0})
            s["tokens"] += n
            s["injections"] += 1
        elif kind == "recalled" and isinstance(mid, str):
            u.recalled += 1
            when = _when(ts)
            if when is not None:
                recalls.append((mid, when))
        elif kind == "followed" and isinstance(mid, str):
            u.followed += 1
        elif kind == "cited" and isinstance(mid, str) and session is not None:
            u.cited += 1  # only recall's citations carry a session
        elif kind == "retrieved" and isinstance(mid, str):
            when = _when(ts)
            if when is not None:
                retrieved.setdefault(mid, []).append(when)
        if kind == "injected" and sid in u.by_session:
            stamp = _when(ts)
            if stamp is not None:
                u.by_session[sid]["last"] = max(u.by_session[sid]["last"], int(stamp.timestamp()))
    for mid, when in recalls:
        if any(when <= t <= when + FOLLOW_WINDOW for t in retrieved.get(mid, ())):
            u.fetched += 1
    return u
