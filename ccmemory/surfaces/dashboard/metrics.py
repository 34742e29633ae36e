"""The dashboard's metrics, each with its formula and "not enough data" when undefined.

Definitions are in docs/dashboard.md; the `FORMULAS` below are what the pages show next to each
number. Inputs: the indexed memories and edges (a `Snapshot`), the telemetry store's events and the
session spans read from the capture spools. Nothing here writes anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ccmemory.index.base import Edge, IndexedMemory

if TYPE_CHECKING:
    from ccmemory.app.service import Service

MIN_N = 5  # a rate over fewer items than this is "not enough data"
# cosine (normalised embeddings) that counts as re-explained; bench/reexplain_calibration.py and
# bench/RESULTS-dashboard.md say how it was chosen (and that the check is small)
REEXPLAIN_THRESHOLD = 0.60
REEXPLAIN_CAP = 400  # newest corrections/preferences embedded at most (cost bound)
CAPTURED_SOURCES = ("llm", "rules", "explicit")
RULE_TYPES = ("decision", "preference")

FORMULAS = {
    "cognitive_coefficient": "min(4, 1 + 0.02 × curated decisions + 0.5 × (1 − re-explanation rate) "
    "+ decision reuse rate) — a heuristic, not a measurement",
    "re_explanation_rate": f"corrections and preferences whose embedding has cosine ≥ {REEXPLAIN_THRESHOLD} "
    "with an older memory ÷ corrections and preferences",
    "decision_reuse_rate": "decisions surfaced at session start or retrieved through MCP in a session "
    "other than the one that captured them, after they were created ÷ decisions",
    "evolution_rate": "decisions superseded by a newer memory ÷ decisions",
    "rule_exception_rate": "exception memories ÷ current decisions and preferences (the rules)",
    "graph_density": "relations between memories ÷ (n × (n − 1)), n = memories",
    "capture_per_session_hour": "memories captured by the hooks (source llm or explicit) ÷ hours of "
    "Claude Code sessions (first to last event of each session's capture spool)",
}


@dataclass
class Snapshot:
    """Every memory and edge of the project, loaded once per index change."""

    mems: list[IndexedMemory]
    edges: list[Edge]
    superseded: set[str]
    by_id: dict[str, IndexedMemory] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {m.id: m for m in self.mems}


def load_snapshot(svc: Service) -> Snapshot:
    from ccmemory.features.analysis import all_edges, all_memories

    mems = all_memories(svc)
    edges = all_edges(svc, [m.id for m in mems])
    return Snapshot(mems, edges, svc.view.superseded_ids())


def value(v: float | None, why: str | None = None) -> dict[str, Any]:
    if v is None:
        return {"value": None, "display": "not enough data", "why": why}
    display = f"{v:.3g}" if 0 < abs(v) < 0.01 else f"{v:.2f}"  # graph density is tiny at scale
    return {"value": float(f"{v:.6g}"), "display": display, "why": None}


def iso(d: datetime) -> str:
    return d.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Inputs:
    snap: Snapshot
    events: Sequence[tuple[str, str, str | None, str | None, int]]  # (ts, kind, session, id, n)
    sessions: Sequence[tuple[str, str, str]]
    reexplained: dict[str, bool] | None  # correction/preference id -> re-explained; None: no embeddings
    reexplain_problem: str | None = None
    telemetry_enabled: bool = True
    # the seed's metrics (seed.py): (session start, duplicate?) per context event; None: no embeddings
    prompt_flags: list[tuple[str, bool]] | None = None
    prompt_problem: str | None = None
    user: str | None = None  # the local user id (the seed's knowledge sharing index)
    # the seed's loop efficiency (seed.py): (session start, AI actions, human interventions) per
    # session record with an autonomy score (ccmemory.features.sessions.autonomy)
    autonomy: Sequence[tuple[str, int, int]] = ()
    # the seed's time-to-context (seed.py): (ts, session, ms) per SessionStart injection
    ttc: Sequence[tuple[str, str, float]] = ()
    # the seed's correction velocity (seed.py): (memory created, seconds from the wrong statement)
    # per correction capture wrote from a prompt (ccmemory.features.capture.velocity)
    cv: Sequence[tuple[str, float]] = ()


def reexplained_flags(
    svc: Service, snap: Snapshot, cache: dict[str, tuple[str, int]] | None = None
) -> tuple[dict[str, bool] | None, str | None, list[tuple[str, str, int]]]:
    """For each correction/preference (newest REEXPLAIN_CAP): is an older memory this close?

    `cache` holds earlier answers (id -> (content hash + threshold, flag)); only memories not in it
    are embedded. Returns (flags, problem, new cache rows)."""
    cache = cache or {}
    todo = sorted(
        (m for m in snap.mems if m.type in ("correction", "preference")),
        key=lambda m: m.created,
        reverse=True,
    )[:REEXPLAIN_CAP]
    key = {m.id: f"{m.hash}@{REEXPLAIN_THRESHOLD}" for m in todo}
    flags = {m.id: bool(cache[m.id][1]) for m in todo if cache.get(m.id, ("",))[0] == key[m.id]}
    missing = [m for m in todo if m.id not in flags]
    if not missing:
        return flags, None, []
    emb = svc.embedder()
    if emb is None:
        return None, f"no embedder: {svc._embedder_problem}", []
    try:
        _, problem = svc.embed_missing()
        if problem:
            return None, problem, []
        vectors = _vectors(svc, emb, missing)
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}", []
    f = svc.filters(include_superseded=True)
    new: list[tuple[str, str, int]] = []
    for m, vec in zip(missing, vectors, strict=True):
        near = svc.index.vector_search(emb.name, vec, f, limit=8)
        flags[m.id] = _has_older_twin(snap, m, near)
        new.append((m.id, key[m.id], int(flags[m.id])))
    return flags, None, new


def _vectors(svc: Service, emb: Any, mems: list[IndexedMemory]) -> list[Any]:
    """Each memory's vector: the index's stored one when there is one, else embedded now."""
    from ccmemory.index.base import embed_text

    stored = _stored_vectors(svc, emb.name)
    need = [m for m in mems if m.id not in stored]
    fresh = emb.embed([embed_text(m) for m in need], kind="document") if need else []
    by_id = {
        **{m.id: stored[m.id] for m in mems if m.id in stored},
        **dict(zip([m.id for m in need], fresh, strict=True)),
    }
    return [by_id[m.id] for m in mems]


def _has_older_twin(snap: Snapshot, m: IndexedMemory, near: list[tuple[str, float]]) -> bool:
    """Is any other, older memory among the nearest neighbours at or above the threshold?"""
    return any(
        other != m.id
        and score >= REEXPLAIN_THRESHOLD
        and other in snap.by_id
        and snap.by_id[other].created < m.created
        for other, score in near
    )


def _stored_vectors(svc: Service, embedder: str) -> dict[str, Any]:
    """The vectors the index already holds for each memory's `embed_text` (the same text this
    metric embeds), so a first overview need not run the model again. Only the embedded SQLite
    index exposes them (its cached matrix, `SQLiteIndex._vector_matrix`); elsewhere: {}."""
    matrix_of = getattr(svc.index, "_vector_matrix", None)
    if matrix_of is None:
        return {}
    entry = matrix_of(svc.project, embedder)
    ids, matrix = entry[1], entry[2]
    return {i: matrix[row] for row, i in enumerate(ids)}


def compute(inp: Inputs, at: datetime | None = None) -> dict[str, dict[str, Any]]:
    """Every metric as of `at` (memories created and events recorded before it)."""
    cut = iso(at) if at else "9999"
    snap = inp.snap
    mems = [m for m in snap.mems if m.created < cut]
    ids = {m.id for m in mems}
    decisions = [m for m in mems if m.type == "decision"]
    superseded = {i for i in snap.superseded if i in ids}
    out: dict[str, dict[str, Any]] = {}
    out["re_explanation_rate"], re_rate = _re_explanation(inp, ids)
    out["decision_reuse_rate"], drr = _decision_reuse(inp, decisions, cut)
    out["cognitive_coefficient"] = _cognitive_coefficient(re_rate, drr, decisions, superseded)
    out["evolution_rate"] = _evolution(decisions, superseded)
    out["rule_exception_rate"] = _rule_exception(mems, superseded)
    out["graph_density"] = _graph_density(snap.edges, ids, len(mems))
    out["capture_per_session_hour"] = _capture_rate(mems, _session_hours(inp.sessions, cut))
    for k, f in FORMULAS.items():
        out[k]["formula"] = f
    return out


def _re_explanation(inp: Inputs, ids: set[str]) -> tuple[dict[str, Any], float | None]:
    if inp.reexplained is None:
        return value(None, inp.reexplain_problem or "no embeddings"), None
    flags = [v for k, v in inp.reexplained.items() if k in ids]
    if len(flags) < MIN_N:
        return value(None, f"{len(flags)} corrections/preferences (need {MIN_N})"), None
    re_rate = sum(flags) / len(flags)
    return value(re_rate) | {"n": len(flags)}, re_rate


def _decision_reuse(
    inp: Inputs, decisions: list[IndexedMemory], cut: str
) -> tuple[dict[str, Any], float | None]:
    uses = [e for e in inp.events if e[1] in ("surfaced", "retrieved") and e[0] < cut and e[3]]
    if not inp.telemetry_enabled:
        return value(None, "telemetry is off"), None
    if len(decisions) < MIN_N:
        return value(None, f"{len(decisions)} decisions (need {MIN_N})"), None
    if not uses:
        return value(None, "no surfaced or retrieved events recorded yet"), None
    by_id = {d.id: d for d in decisions}
    reused = {
        mid
        for ts, _, session, mid, _ in uses
        if mid in by_id and ts > by_id[mid].created and session != by_id[mid].session
    }
    drr = len(reused) / len(decisions)
    return value(drr) | {"n": len(decisions), "reused": len(reused)}, drr


def _cognitive_coefficient(
    re_rate: float | None, drr: float | None, decisions: list[IndexedMemory], superseded: set[str]
) -> dict[str, Any]:
    curated_decisions = sum(1 for d in decisions if d.status == "curated" and d.id not in superseded)
    if re_rate is None or drr is None:
        missing = [
            n for n, v in (("re-explanation rate", re_rate), ("decision reuse rate", drr)) if v is None
        ]
        return value(None, "needs " + " and ".join(missing))
    cc = min(4.0, 1 + 0.02 * curated_decisions + 0.5 * (1 - re_rate) + drr)
    return value(cc) | {"curated_decisions": curated_decisions, "heuristic": True}


def _evolution(decisions: list[IndexedMemory], superseded: set[str]) -> dict[str, Any]:
    if not decisions:
        return value(None, "no decisions")
    return value(sum(1 for d in decisions if d.id in superseded) / len(decisions))


def _rule_exception(mems: list[IndexedMemory], superseded: set[str]) -> dict[str, Any]:
    rules = [m for m in mems if m.type in RULE_TYPES and m.id not in superseded]
    exceptions = sum(1 for m in mems if m.type == "exception")
    return value(exceptions / len(rules)) if rules else value(None, "no current decisions or preferences")


def _graph_density(edges: list[Edge], ids: set[str], n: int) -> dict[str, Any]:
    pairs = {(e.src, e.dst) for e in edges if e.src in ids and e.dst in ids and e.src != e.dst}
    return value(len(pairs) / (n * (n - 1))) if n >= 2 else value(None, "fewer than 2 memories")


def _session_hours(sessions: Sequence[tuple[str, str, str]], cut: str) -> float:
    hours = 0.0
    for _, start, end in sessions:
        if start < cut:
            try:
                a = datetime.strptime(start, "%Y-%m-%dT%H:%M:%SZ")
                b = datetime.strptime(min(end, cut), "%Y-%m-%dT%H:%M:%SZ")
            except ValueError:
                continue
            hours += max((b - a).total_seconds(), 0) / 3600
    return hours


def _capture_rate(mems: list[IndexedMemory], hours: float) -> dict[str, Any]:
    captured = sum(1 for m in mems if m.source in CAPTURED_SOURCES)
    return (
        value(captured / hours) | {"captured": captured, "hours": round(hours, 2)}
        if hours >= 0.1
        else value(None, f"{hours:.2f} session-hours recorded (need 0.1)")
    )


def weekly(inp: Inputs, weeks: int = 8, now: datetime | None = None) -> list[dict[str, Any]]:
    """The metrics as of the end of each of the last `weeks` 7-day windows, oldest first."""
    now = (now or datetime.now(UTC)).replace(microsecond=0) + timedelta(seconds=1)
    out = []
    for w in range(weeks - 1, -1, -1):
        end = now - timedelta(days=7 * w)
        start = end - timedelta(days=7)
        lo, hi = iso(start), iso(end)
        created = [m for m in inp.snap.mems if lo <= m.created < hi]
        row: dict[str, Any] = {
            "week_start": start.strftime("%Y-%m-%d"),
            "created": len(created),
            "decisions": sum(1 for m in created if m.type == "decision"),
            "corrections": sum(1 for m in created if m.type == "correction"),
            "captured": sum(1 for m in created if m.source in CAPTURED_SOURCES),
        }
        row["metrics"] = {k: v["value"] for k, v in compute(inp, end).items()}
        out.append(row)
    return out
