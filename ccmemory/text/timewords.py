"""Time words in a search query become a date range (issue 30): "decisions from last week",
"what broke yesterday", "since March", "in Q3 2025", "before 2026-01-01".

`extract(query, now)` returns the query without the time phrase and the range it names (UTC,
`since` inclusive, `until` exclusive), or the query unchanged and None. Only unambiguous phrases
are taken: a month name needs `in`, `during`, `since` or `before` in front of it ("may" alone is a
verb), a year needs `in`/`since`/`before`. Pure functions over text, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_RANGES = [
    (
        "n_units",
        re.compile(r"\b(?:in the |over the )?(?:last|past) (\d{1,3}) (day|week|month|year)s?\b", re.I),
    ),
    ("rolling", re.compile(r"\b(?:in the |over the )?(?:last|past) (day|week|month|year)\b", re.I)),
    ("this", re.compile(r"\bthis (week|month|year)\b", re.I)),
    ("yesterday", re.compile(r"\byesterday\b", re.I)),
    ("today", re.compile(r"\btoday\b", re.I)),
    ("quarter", re.compile(r"\b(?:in|during) q([1-4])(?: (\d{4}))?\b", re.I)),
    ("month", re.compile(rf"\b(?:in|during) ({_MONTH})(?: (\d{{4}}))?\b", re.I)),
    ("year", re.compile(r"\b(?:in|during) (\d{4})\b", re.I)),
    ("since", re.compile(rf"\bsince (\d{{4}}-\d{{2}}-\d{{2}}|(?:{_MONTH})(?: \d{{4}})?|\d{{4}})\b", re.I)),
    ("before", re.compile(rf"\bbefore (\d{{4}}-\d{{2}}-\d{{2}}|(?:{_MONTH})(?: \d{{4}})?|\d{{4}})\b", re.I)),
]
_DANGLING = re.compile(r"\b(?:from|of|in|during|over|the)\s*$", re.I)


@dataclass(frozen=True)
class TimeRange:
    phrase: str
    since: datetime | None
    until: datetime | None

    def as_dict(self) -> dict[str, str | None]:
        def iso(d: datetime | None) -> str | None:
            return d.strftime("%Y-%m-%dT%H:%M:%SZ") if d else None

        return {"phrase": self.phrase, "since": iso(self.since), "until": iso(self.until)}


def _day(d: datetime) -> datetime:
    return d.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


def _next_month(d: datetime) -> datetime:
    return _month_start(d.year + (d.month == 12), d.month % 12 + 1)


def _past_year(month: int, year: str | None, now: datetime) -> int:
    """The year of the most recent `month` not after now (or the year given)."""
    if year:
        return int(year)
    return now.year if month <= now.month else now.year - 1


def _point(text: str, now: datetime) -> datetime | None:
    """The start of an ISO date, a month (most recent), or a year."""
    text = text.strip().lower()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            return None
    if re.fullmatch(r"\d{4}", text):
        return datetime(int(text), 1, 1, tzinfo=UTC) if 1970 <= int(text) <= 2999 else None
    parts = text.split()
    month = MONTHS.get(parts[0])
    if month is None:
        return None
    return _month_start(_past_year(month, parts[1] if len(parts) > 1 else None, now), month)


def _range(kind: str, m: re.Match[str], now: datetime) -> tuple[datetime | None, datetime | None] | None:
    g = m.groups()
    today = _day(now)
    if kind == "n_units":
        return now - timedelta(days=int(g[0]) * _UNIT_DAYS[g[1].lower()]), None
    if kind == "rolling":
        return now - timedelta(days=_UNIT_DAYS[g[0].lower()]), None
    if kind == "this":
        unit = g[0].lower()
        start = {
            "week": today - timedelta(days=today.weekday()),
            "month": today.replace(day=1),
            "year": today.replace(month=1, day=1),
        }[unit]
        return start, None
    if kind == "yesterday":
        return today - timedelta(days=1), today
    if kind == "today":
        return today, None
    if kind == "quarter":
        q = int(g[0])
        first = 3 * q - 2
        start = _month_start(_past_year(first, g[1], now), first)
        return start, _next_month(_month_start(start.year, first + 2))
    if kind == "month":
        month = MONTHS[g[0].lower()]
        start = _month_start(_past_year(month, g[1], now), month)
        return start, _next_month(start)
    if kind == "year":
        year = int(g[0])
        return (
            (datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))
            if 1970 <= year <= 2999
            else None
        )
    point = _point(g[0], now)
    if point is None:
        return None
    return (point, None) if kind == "since" else (None, point)


def extract(query: str, now: datetime | None = None) -> tuple[str, TimeRange | None]:
    """The query without its first time phrase, and the range it names (see the module doc)."""
    now = now or datetime.now(UTC)
    for kind, pattern in _RANGES:
        m = pattern.search(query)
        if not m:
            continue
        got = _range(kind, m, now)
        if got is None:
            continue
        before = _DANGLING.sub("", query[: m.start()]).rstrip()
        rest = " ".join(f"{before} {query[m.end() :]}".split()).strip(" ,;:?")
        if not rest:  # the query was only a time phrase: keep it as words too
            rest = query.strip()
        return rest, TimeRange(m.group(0), got[0], got[1])
    return query, None


def apply(query: str, filters: object, now: datetime | None = None) -> tuple[str, TimeRange | None]:
    """`extract`, then narrow `filters` (an index `Filters`: `since`/`until` attributes, `until`
    inclusive) to the range. Leave both alone when the caller gave either bound explicitly."""
    if getattr(filters, "since", None) is not None or getattr(filters, "until", None) is not None:
        return query, None
    rest, found = extract(query, now)
    if found is None:
        return query, None
    filters.since = found.since  # type: ignore[attr-defined]
    filters.until = found.until - timedelta(seconds=1) if found.until else None  # type: ignore[attr-defined]
    return rest, found
