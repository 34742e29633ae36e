"""Learning from dismissals (issue 31): the false-positive rate of automatic capture per memory
type, from the review queue, beside the type's capture threshold (`capture.min_confidence`).

For the memories captured automatically (``source: llm`` or ``rules``; an explicit capture is
what the user asked for and cannot be a false positive of the detector):

- **dismissed**: a reviewer dismissed the memory from the review queue (the dashboard's dismiss
  on a developmental capture, a low-confidence capture or an open question: keys
  ``capture:<id>``, ``low_confidence:<id>``, ``question:<id>``). Dismissing a "stale" item or a
  duplicate/contradiction finding judges that check, not the capture, and is not counted.
- **accepted**: the memory is curated (merged into the main branch: promotion is a git merge)
  and was not dismissed.
- **pending**: developmental and not dismissed: not judged yet.
- **false-positive rate** = dismissed / (dismissed + accepted), None before anything is judged.

A **suggested** threshold is derived from the judged captures of a type when there are at least
``MIN_JUDGED`` of them and some were dismissed: the lowest confidence ``c`` among them such that the
captures at or above ``c`` have a false-positive rate of at most ``TARGET_RATE``, when that is
above the current threshold. It is shown, never applied: the threshold is the user's setting.

What this cannot see: a capture deleted without being dismissed (its file, and so its type, is
gone from the index), and dismissals made on another machine (they live in
`.ccmemory/local/telemetry.db`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

CAPTURED = ("llm", "rules")
REJECTING = ("capture", "low_confidence", "question")  # dismissal keys that judge a capture
MIN_JUDGED = 5
TARGET_RATE = 0.2


def dismissed_ids(keys: Iterable[str]) -> set[str]:
    """Memory ids named by review-queue dismissals that reject a capture."""
    out = set()
    for key in keys:
        kind, _, mid = str(key).partition(":")
        if kind in REJECTING and mid:
            out.add(mid)
    return out


def rates(mems: Iterable[Any], dismissed_keys: Iterable[str], floors: dict[str, float]) -> dict[str, Any]:
    """Per type (``{type: {captured, dismissed, accepted, pending, false_positive_rate,
    threshold, suggested}}``) and in total, for memories with ``type``, ``id``, ``source``,
    ``status`` and ``confidence`` (IndexedMemory). ``floors``: ``capture.min_confidence``."""
    gone = dismissed_ids(dismissed_keys)
    judged: dict[str, list[tuple[float | None, bool]]] = {}
    rows: dict[str, dict[str, Any]] = {}
    for m in mems:
        if m.source not in CAPTURED:
            continue
        row = rows.setdefault(m.type, {"captured": 0, "dismissed": 0, "accepted": 0, "pending": 0})
        row["captured"] += 1
        if m.id in gone:
            row["dismissed"] += 1
            judged.setdefault(m.type, []).append((m.confidence, True))
        elif m.status == "curated":
            row["accepted"] += 1
            judged.setdefault(m.type, []).append((m.confidence, False))
        else:
            row["pending"] += 1
    default = floors.get("default", 0.0)
    for mtype in sorted(set(floors) - {"default"} - set(rows)):
        rows[mtype] = {"captured": 0, "dismissed": 0, "accepted": 0, "pending": 0}
    out: dict[str, Any] = {}
    for mtype in sorted(rows):
        row = rows[mtype]
        floor = floors.get(mtype, default)
        out[mtype] = {
            **row,
            "false_positive_rate": _rate(row["dismissed"], row["accepted"]),
            "threshold": floor,
            "suggested": suggest(judged.get(mtype, []), floor),
        }
    total = {k: sum(r[k] for r in rows.values()) for k in ("captured", "dismissed", "accepted", "pending")}
    total["false_positive_rate"] = _rate(total["dismissed"], total["accepted"])
    return {"by_type": out, "total": total, "default_threshold": default}


def _rate(dismissed: int, accepted: int) -> float | None:
    judged = dismissed + accepted
    return round(dismissed / judged, 3) if judged else None


def suggest(judged: list[tuple[float | None, bool]], floor: float) -> float | None:
    """The lowest confidence at or above which the judged captures' false-positive rate is at
    most TARGET_RATE, when above `floor`; None with too few judged, none dismissed or no gain."""
    scored = [(c, bad) for c, bad in judged if c is not None]
    if len(scored) < MIN_JUDGED or not any(bad for _, bad in scored):
        return None
    for cut in sorted({c for c, _ in scored}):
        kept = [bad for c, bad in scored if c >= cut]
        if kept and sum(kept) / len(kept) <= TARGET_RATE:
            return cut if cut > floor else None
    return None


def text_lines(rep: dict[str, Any]) -> list[str]:
    """One line per type for `ccmemory doctor`: threshold, the rate beside it, and a suggestion."""
    lines = []
    for mtype, r in rep["by_type"].items():
        rate = "-" if r["false_positive_rate"] is None else f"{100 * r['false_positive_rate']:.0f}%"
        line = (
            f"{mtype:<16} threshold {r['threshold']:.2f}  false positives {rate}"
            f" ({r['dismissed']} dismissed / {r['dismissed'] + r['accepted']} judged; {r['pending']} pending)"
        )
        if r["suggested"] is not None:
            line += f"  suggested {r['suggested']:.2f}"
        lines.append(line)
    return lines
