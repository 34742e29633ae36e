"""The seed's metrics under the seed's own definitions and names (issue 31), next to ours.

"The seed" is the public repository patrickkidd/ccmemory, an earlier design of this product. The
definitions (not its code) are taken from its doc/TELEMETRY.md (the metrics framework and the
cognitive coefficient's "current formula"), doc/IMPLEMENTATION_PLAN.md (what
`correction_rate_improvement` is) and dashboard/app.py with doc/AS_BUILT.md (decision evolution
rate, rule exception rate). docs/dashboard.md gives each formula with its source and how it maps
onto this product's data. A definition that needs data this product does not record says
"not measurable" and why, never a number. Our own variants stay in metrics.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccmemory.surfaces.dashboard import metrics as mx

if TYPE_CHECKING:
    from ccmemory.app.service import Service

SEED = "patrickkidd/ccmemory"
DUPLICATE_COSINE = 0.85  # TELEMETRY.md, RER detection: "semantic similarity >0.85"
PROMPT_CAP = 1000  # newest context events embedded at most (cost bound)
PROMPT_CHARS = 1000  # per prompt (the local model reads about 256 word pieces)
HYPOTHESIS_WINDOW_DAYS = 30  # PROJECT_VISION.md: "hypotheses tested within 30 days"
DRR_WINDOW_DAYS = 30  # TELEMETRY.md's DRR query: decisions of the last 30 days ("new decisions")
PRECEDENT = ("CITES", "SUPERSEDES", "DEPENDS_ON")  # the seed's CITES|SUPERSEDES|BASED_ON
EXPLANATION_SIGNALS = frozenset({"correction", "preference", "context"})
REUSE_KINDS = ("surfaced", "recalled", "retrieved")  # a memory put in front of Claude
VECTOR_CACHE = "seed-prompt-vectors.npz"  # in .ccmemory/local/
TTC_TARGET_S = 1.0  # the seed's Time-to-Context target: p95 under a second


@dataclass(frozen=True)
class Definition:
    name: str  # the seed's own name
    formula: str
    source: str  # the seed file (and section) the definition comes from
    ours: str | None = None  # key of this product's variant in metrics.compute()
    unmeasurable: str | None = None  # why the data it needs is not recorded


TM = "doc/TELEMETRY.md"
DEFINITIONS: dict[str, Definition] = {
    "cognitive_coefficient": Definition(
        "Cognitive Coefficient",
        "min(4, 1 + 0.02 × curated decisions + 0.5 × correction_rate_improvement + decision reuse rate "
        "(seed)); correction_rate_improvement = clamp(1 − re-explanation rate (seed), 0, 1); curated "
        "decisions counted whether superseded or not",
        f"{TM} ('current formula'); doc/IMPLEMENTATION_PLAN.md (correction_rate_improvement)",
        "cognitive_coefficient",
    ),
    "re_explanation_rate": Definition(
        "Re-Explanation Rate (RER)",
        "duplicate context events ÷ total context events (the seed × 100); a context event is a user "
        "prompt in a session record that explains (rules signal correction, preference or context); "
        f"a duplicate has cosine > {DUPLICATE_COSINE} with a context event of an earlier session",
        f"{TM} §1 Re-Explanation Rate",
        "re_explanation_rate",
    ),
    "decision_reuse_rate": Definition(
        "Decision Reuse Rate (DRR)",
        f"decisions created in the last {DRR_WINDOW_DAYS} days with a CITES, SUPERSEDES or DEPENDS_ON "
        f"(the seed's BASED_ON) relation to a decision ÷ decisions created in the last {DRR_WINDOW_DAYS} "
        "days (the seed × 100)",
        f"{TM} §2 Decision Reuse Rate and its appendix query",
        "decision_reuse_rate",
    ),
    "decision_evolution_rate": Definition(
        "Decision Evolution Rate",
        "SUPERSEDES relations from a decision to a decision ÷ decisions",
        "dashboard/app.py (/api/metrics); doc/AS_BUILT.md (Metrics)",
        "evolution_rate",
    ),
    "rule_exception_rate": Definition(
        "Rule Exception Rate",
        "exceptions ÷ project facts (type fact)",
        "dashboard/app.py (/api/metrics); doc/AS_BUILT.md (Metrics)",
        "rule_exception_rate",
    ),
    "graph_density": Definition(
        "Context Graph Density (CGD)",
        "relations between memories (each stored relation) ÷ memories",
        f"{TM} §5 Context Graph Density",
        "graph_density",
    ),
    "context_injection_rate": Definition(
        "Context Injection Rate (CIR)",
        "sessions in which Claude's reply cited an injected memory by id (the seed's first meaning of "
        "'used'; recall's `cited` events) ÷ sessions (the capture spools' session spans)",
        f"{TM} §4 Context Injection Rate",
    ),
    "knowledge_sharing_index": Definition(
        "Knowledge Sharing Index (KSI)",
        "curated decisions searched or retrieved (MCP) by the local user when they are not the "
        "decision's author ÷ curated decisions; this clone's telemetry only (the local user's queries)",
        f"{TM} §7 Knowledge Sharing Index",
    ),
    "correction_velocity": Definition(
        "Correction Velocity (CV)",
        "average(time from wrong statement to correction node creation) over the corrections capture "
        "wrote from a user prompt of a session: the wrong statement is Claude's last action before "
        "the correcting prompt (the latest assistant reply or tool call of the transcript, or tool "
        "event of the hooks' spool), the creation the correction memory's `created` (the capture "
        "job's time, when the segment holding the prompt closed: the capture's own delay is "
        "included, the worker's processing after it is not); recorded by the capture worker in "
        ".ccmemory/local/correction-velocity.jsonl",
        f"{TM} §3 Correction Velocity",
    ),
    "time_to_context": Definition(
        "Time-to-Context (TTC)",
        "average(time from session start to first relevant context injection) over the sessions whose "
        "SessionStart hook injected context: the hook's own time from its entry to the context written "
        "(ms, recorded in .ccmemory/local/surfaced.jsonl; the interpreter's start-up before it is not "
        f"included), the first injection per session; p95 beside it, target p95 < {TTC_TARGET_S:g} s",
        f"{TM} §6 Time-to-Context",
    ),
    "onboarding_acceleration": Definition(
        "Onboarding Acceleration (OA)",
        "new member time-to-first-commit with ccmemory ÷ baseline time-to-first-commit without",
        f"{TM} §8 Onboarding Acceleration",
        unmeasurable="needs a baseline without ccmemory and each member's tenure; neither is recorded",
    ),
    "tribal_knowledge_capture_rate": Definition(
        "Tribal Knowledge Capture Rate (TKCR)",
        "corrections/exceptions captured ÷ estimated total corrections/exceptions",
        f"{TM} §9 Tribal Knowledge Capture Rate",
        unmeasurable="needs the estimated total of corrections and exceptions (the seed samples "
        "sessions by hand and surveys developers); only the captured ones are recorded",
    ),
    "loop_efficiency": Definition(
        "Loop Efficiency (LE)",
        "total AI actions ÷ human interventions; an AI action is a tool call, a human intervention "
        "a prompt typed (housekeeping slash commands left out), summed over the session records "
        "(ccmemory sessions autonomy)",
        f"{TM} §10 Loop Efficiency",
    ),
    "bridge_validation_rate": Definition(
        "Bridge validation rate",
        "proposed bridges (links between memories and reference knowledge) validated ÷ proposed",
        "doc/PROJECT_VISION.md (Success Metrics (Revised), secondary)",
        unmeasurable="no bridges between memories and reference sections are proposed or recorded",
    ),
    "hypothesis_usefulness": Definition(
        "Hypothesis usefulness",
        f"hypotheses tested (supported or refuted) within {HYPOTHESIS_WINDOW_DAYS} days ÷ hypotheses "
        "proposed; a proposal is a hypothesis memory that supersedes no other hypothesis, and it is "
        "tested when it, or a later version superseding it (transitively), has status supported or "
        f"refuted and was created at most {HYPOTHESIS_WINDOW_DAYS} days after the proposal",
        "doc/PROJECT_VISION.md (Success Metrics (Revised), tertiary)",
    ),
    "active_research_value": Definition(
        "Active research value",
        "knowledge gaps identified → searched → used; useful research findings per week",
        "doc/PROJECT_VISION.md (Success Metrics (Revised), cross-domain)",
        unmeasurable="knowledge gaps and research (web searches and what came of them) are not recorded",
    ),
}


def not_measurable(why: str) -> dict[str, Any]:
    return {"value": None, "display": "not measurable", "why": why}


# --- inputs --------------------------------------------------------------------------------------


def context_events(root: Path) -> list[tuple[str, str, str]]:
    """(session start, session id, prompt) of every explaining prompt in the session records."""
    from ccmemory.features.capture.signals import classify
    from ccmemory.features.sessions.store import all_records

    out = []
    for rec in all_records(root):
        start = str(rec.get("start") or rec.get("end") or "")
        for p in rec.get("prompts") or []:
            if isinstance(p, str) and EXPLANATION_SIGNALS & set(classify(p)):
                out.append((start, str(rec["id"]), p[:PROMPT_CHARS]))
    out.sort()
    return out[-PROMPT_CAP:]


def duplicate_flags(
    svc: Service, events: Sequence[tuple[str, str, str]]
) -> tuple[list[tuple[str, bool]] | None, str | None]:
    """(session start, duplicate?) per context event: is a context event of an earlier session
    more similar than DUPLICATE_COSINE? Vectors are cached by content hash in .ccmemory/local/."""
    if not events:
        return [], None
    emb = svc.embedder()
    if emb is None:
        return None, f"no embedder: {svc._embedder_problem}"
    try:
        matrix = _vectors(svc.vault.local / VECTOR_CACHE, emb, [e[2] for e in events])
    except Exception as exc:  # an embedder that fails says so in the metric, never crashes a page
        return None, f"{type(exc).__name__}: {exc}"
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.where(norms == 0, 1, norms)
    sims = unit @ unit.T
    starts = np.array([e[0] for e in events])
    out = []
    for i, (start, _, _) in enumerate(events):
        earlier = starts < start
        out.append((start, bool(earlier.any() and float(sims[i][earlier].max()) > DUPLICATE_COSINE)))
    return out, None


def _vectors(path: Path, emb: Any, texts: list[str]) -> Any:
    """One row per text: cached vectors (an .npz of keys and float32 rows, by content hash and
    embedder name), the missing ones embedded now and the cache rewritten with exactly these."""
    import io

    import numpy as np

    from ccmemory.core.atomic import atomic_write
    from ccmemory.retrieval.embed import content_hash

    cache: dict[str, Any] = {}
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["model"]) == emb.name:
                cache = dict(zip(z["keys"].tolist(), z["vectors"], strict=True))
    except (OSError, ValueError, KeyError):
        pass
    keys = [content_hash(t) for t in texts]
    missing = sorted({t for t, k in zip(texts, keys, strict=True) if k not in cache})
    if missing:
        for t, vec in zip(missing, emb.embed(missing, "document"), strict=True):
            cache[content_hash(t)] = np.asarray(vec, dtype=np.float32)
    unique = sorted(set(keys))
    if missing or len(unique) != len(cache):
        buf = io.BytesIO()
        np.savez(
            buf, model=np.array(emb.name), keys=np.array(unique), vectors=np.stack([cache[k] for k in unique])
        )
        atomic_write(path, buf.getvalue(), overwrite=True)
    return np.stack([cache[k] for k in keys])


# --- the metrics ---------------------------------------------------------------------------------


def compute(inp: mx.Inputs, at: datetime | None = None) -> dict[str, dict[str, Any]]:
    """Every seed metric as of `at` (memories created and events recorded before it)."""
    when = at or datetime.now(UTC)
    cut = mx.iso(at) if at else "9999"
    snap = inp.snap
    mems = [m for m in snap.mems if m.created < cut]
    ids = {m.id for m in mems}
    edges = [e for e in snap.edges if e.src in ids and e.dst in ids]
    decisions = [m for m in mems if m.type == "decision"]
    out: dict[str, dict[str, Any]] = {}
    out["re_explanation_rate"], rer = _rer(inp, cut)
    out["decision_reuse_rate"], drr = _drr(snap, decisions, edges, when)
    out["cognitive_coefficient"] = _coefficient(rer, drr, decisions)
    out["decision_evolution_rate"] = _evolution(snap, decisions, edges)
    out["rule_exception_rate"] = _ratio(
        sum(1 for m in mems if m.type == "exception"), sum(1 for m in mems if m.type == "fact"), "no facts"
    )
    out["graph_density"] = _ratio(len(edges), len(mems), "no memories")
    out["context_injection_rate"] = _cir(inp, cut)
    out["knowledge_sharing_index"] = _ksi(inp, decisions, cut)
    out["loop_efficiency"] = _loop_efficiency(inp, cut)
    out["time_to_context"] = _ttc(inp, cut)
    out["correction_velocity"] = _cv(inp, cut)
    out["hypothesis_usefulness"] = _hypothesis_usefulness(mems)
    for key, d in DEFINITIONS.items():
        if d.unmeasurable:
            out[key] = not_measurable(d.unmeasurable)
    return {
        key: out[key]
        | {"name": d.name, "formula": d.formula, "source": f"{SEED}: {d.source}", "ours": d.ours}
        for key, d in DEFINITIONS.items()
    }


def _loop_efficiency(inp: mx.Inputs, cut: str) -> dict[str, Any]:
    """Sum of AI actions over sum of human interventions of the sessions started before `cut`."""
    rows = [r for r in inp.autonomy if r[0] < cut]
    actions, interventions = sum(r[1] for r in rows), sum(r[2] for r in rows)
    if not interventions:
        return mx.value(None, "no session record with an autonomy score")
    return mx.value(actions / interventions) | {
        "part": actions,
        "whole": interventions,
        "sessions": len(rows),
    }


def ttc_rows(local: Path) -> list[tuple[str, str, float]]:
    """(ts, session, ms) of every SessionStart injection in surfaced.jsonl that recorded the hook's
    latency (older lines have none)."""
    import json

    out = []
    try:
        lines = (local / "surfaced.jsonl").read_bytes().splitlines()
    except OSError:
        return []
    for line in lines:
        try:
            ev = json.loads(line)
        except ValueError:
            continue  # a torn line
        if not isinstance(ev, dict):
            continue
        ms, ts, session = ev.get("ms"), ev.get("ts"), ev.get("session")
        if (
            isinstance(ms, int | float)
            and not isinstance(ms, bool)
            and isinstance(ts, str)
            and isinstance(session, str)
        ):
            out.append((ts, session, float(ms)))
    return out


def _ttc(inp: mx.Inputs, cut: str) -> dict[str, Any]:
    """The mean over sessions of the first injection's latency, with its p95 (nearest rank)."""
    import math

    first: dict[str, tuple[str, float]] = {}
    for ts, session, ms in inp.ttc:
        if ts < cut and (session not in first or ts < first[session][0]):
            first[session] = (ts, ms)
    if not first:
        return mx.value(None, "no SessionStart hook run has recorded its latency in surfaced.jsonl yet")
    seconds = sorted(ms / 1000 for _, ms in first.values())
    mean = sum(seconds) / len(seconds)
    p95 = seconds[max(0, math.ceil(0.95 * len(seconds)) - 1)]
    return mx.value(mean) | {
        "display": f"{mean:.3f} s (p95 {p95:.3f} s)",
        "unit": "seconds",
        "p95": round(p95, 6),
        "sessions": len(seconds),
        "target": f"p95 < {TTC_TARGET_S:g} s",
        "meets_target": p95 < TTC_TARGET_S,
    }


def cv_rows(local: Path) -> list[tuple[str, float]]:
    """(memory created, seconds from the wrong statement to it) per row of the capture's
    correction-velocity log (ccmemory.features.capture.velocity)."""
    from ccmemory.core.model import format_timestamp, parse_timestamp
    from ccmemory.features.capture.velocity import read_rows

    out = []
    for row in read_rows(local):
        created, wrong = parse_timestamp(row["created"]), parse_timestamp(row["wrong"])
        if created is not None and wrong is not None:
            out.append((format_timestamp(created), (created - wrong).total_seconds()))
    return out


def _cv(inp: mx.Inputs, cut: str) -> dict[str, Any]:
    """The mean over the recorded corrections created before `cut` of (created − wrong statement)."""
    if not inp.telemetry_enabled:
        return mx.value(None, "telemetry is off")
    seconds = [s for created, s in inp.cv if created < cut]
    if not seconds:
        return mx.value(
            None, "no correction captured from a prompt has been recorded in correction-velocity.jsonl yet"
        )
    mean = sum(seconds) / len(seconds)
    return mx.value(mean) | {"display": _duration(mean), "unit": "seconds", "corrections": len(seconds)}


def _duration(seconds: float) -> str:
    if abs(seconds) < 120:
        return f"{seconds:.0f} s"
    if abs(seconds) < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _hypothesis_usefulness(mems: Sequence[Any]) -> dict[str, Any]:
    """Proposals (hypotheses superseding no hypothesis) tested within the window: the proposal or a
    later version of it (superseding it, transitively) says supported or refuted, created at most
    HYPOTHESIS_WINDOW_DAYS after the proposal."""
    from ccmemory.core.model import parse_timestamp
    from ccmemory.features.cothinker import status_of, versions

    hyps = {m.id: m for m in mems if m.type == "hypothesis"}
    later: dict[str, list[str]] = {}  # a version -> the versions that supersede it
    for m in hyps.values():
        for old in m.supersedes:
            if old in hyps:
                later.setdefault(old, []).append(m.id)
    roots = [m for m in hyps.values() if not any(old in hyps for old in m.supersedes)]
    window = timedelta(days=HYPOTHESIS_WINDOW_DAYS)
    tested = 0
    for root in roots:
        proposed = parse_timestamp(root.created)
        chain = versions(root.id, later)
        decided = [
            when
            for v in chain
            if status_of(hyps[v].fields) in ("supported", "refuted")
            and (when := parse_timestamp(hyps[v].created)) is not None
        ]
        if proposed is not None and any(when - proposed <= window for when in decided):
            tested += 1
    return _ratio(tested, len(roots), "no hypothesis proposed")


def _ratio(part: int, whole: int, why: str) -> dict[str, Any]:
    return mx.value(part / whole) | {"part": part, "whole": whole} if whole else mx.value(None, why)


def _rer(inp: mx.Inputs, cut: str) -> tuple[dict[str, Any], float | None]:
    if inp.prompt_flags is None:
        return mx.value(None, inp.prompt_problem or "no embeddings"), None
    flags = [dup for start, dup in inp.prompt_flags if start < cut]
    if not flags:
        return mx.value(None, "no context events (explaining prompts) in the session records"), None
    rate = sum(flags) / len(flags)
    return mx.value(rate) | {"duplicates": sum(flags), "events": len(flags)}, rate


def _drr(
    snap: mx.Snapshot, decisions: list[Any], edges: list[Any], when: datetime
) -> tuple[dict[str, Any], float | None]:
    lo = mx.iso(when - timedelta(days=DRR_WINDOW_DAYS))
    new = [d for d in decisions if d.created >= lo]
    if not new:
        return mx.value(None, f"no decisions created in the last {DRR_WINDOW_DAYS} days"), None
    linked = {
        e.src
        for e in edges
        if e.type in PRECEDENT and e.src != e.dst and snap.by_id[e.dst].type == "decision"
    }
    with_precedent = sum(1 for d in new if d.id in linked)
    rate = with_precedent / len(new)
    return mx.value(rate) | {"part": with_precedent, "whole": len(new)}, rate


def _coefficient(rer: float | None, drr: float | None, decisions: list[Any]) -> dict[str, Any]:
    if rer is None or drr is None:
        missing = [n for n, v in (("re-explanation rate", rer), ("decision reuse rate", drr)) if v is None]
        return mx.value(None, "needs the seed's " + " and ".join(missing))
    curated = sum(1 for d in decisions if d.status == "curated")
    improvement = max(0.0, min(1.0, 1.0 - rer))
    return mx.value(min(4.0, 1 + 0.02 * curated + 0.5 * improvement + drr)) | {
        "curated_decisions": curated,
        "heuristic": True,
    }


def _evolution(snap: mx.Snapshot, decisions: list[Any], edges: list[Any]) -> dict[str, Any]:
    sup = sum(
        1
        for e in edges
        if e.type == "SUPERSEDES"
        and snap.by_id[e.src].type == "decision"
        and snap.by_id[e.dst].type == "decision"
    )
    return _ratio(sup, len(decisions), "no decisions")


def _cir(inp: mx.Inputs, cut: str) -> dict[str, Any]:
    if not inp.telemetry_enabled:
        return mx.value(None, "telemetry is off")
    sessions = {s for s, start, _ in inp.sessions if start < cut}
    if not sessions:
        return mx.value(None, "no Claude Code sessions recorded (capture spools)")
    used = {e[2] for e in inp.events if e[1] == "cited" and e[0] < cut and e[2] in sessions}
    return mx.value(len(used) / len(sessions)) | {"part": len(used), "whole": len(sessions)}


def _ksi(inp: mx.Inputs, decisions: list[Any], cut: str) -> dict[str, Any]:
    if not inp.telemetry_enabled:
        return mx.value(None, "telemetry is off")
    if not inp.user:
        return mx.value(None, "no local user id (CCMEMORY_USER_ID or git user.email)")
    curated = {d.id: d for d in decisions if d.status == "curated"}
    if not curated:
        return mx.value(None, "no curated decisions")
    queried = {
        mid
        for ts, kind, _, mid, _ in inp.events
        if kind in ("searched", "retrieved") and ts < cut and mid in curated and ts > curated[mid].created
    }
    shared = sum(1 for mid in queried if curated[mid].author and curated[mid].author != inp.user)
    return mx.value(shared / len(curated)) | {"part": shared, "whole": len(curated)}


# --- hours saved ---------------------------------------------------------------------------------

ENABLE = (
    "set metrics.minutes_per_reexplanation (and metrics.hourly_rate for the dollar value) in "
    ".ccmemory/config.yaml"
)


def assumptions(raw_config: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The `metrics:` section when it holds a valid minutes_per_reexplanation, else (None, why)."""
    from ccmemory.core.config_schema import validate

    section = raw_config.get("metrics")
    if not isinstance(section, dict) or section.get("minutes_per_reexplanation") is None:
        return None, "no assumptions configured"
    problems = validate({"metrics": section})
    if problems:
        return None, "; ".join(f"{p.key}: {p.message}" for p in problems)
    return {
        "minutes_per_reexplanation": float(section["minutes_per_reexplanation"]),
        "hourly_rate": None if section.get("hourly_rate") is None else float(section["hourly_rate"]),
        "currency": str(section.get("currency") or "USD"),
    }, None


def reexplanations_avoided(inp: mx.Inputs, lo: str = "", hi: str = "9999") -> int:
    """Distinct (session, memory) pairs where a memory was surfaced at session start, recalled for a
    prompt or retrieved through MCP in a session other than the one that captured it, after it was
    created, between `lo` and `hi`."""
    by_id = inp.snap.by_id
    return len(
        {
            (session, mid)
            for ts, kind, session, mid, _ in inp.events
            if kind in REUSE_KINDS
            and lo <= ts < hi
            and mid in by_id
            and ts > by_id[mid].created
            and session != by_id[mid].session
        }
    )


def hours_saved(inp: mx.Inputs, raw_config: dict[str, Any], lo: str = "", hi: str = "9999") -> dict[str, Any]:
    """Hours (and money) saved, only with the configured assumptions, which are returned with it."""
    conf, why = assumptions(raw_config)
    if conf is None or not inp.telemetry_enabled:
        off: dict[str, Any] = {"shown": False, "why": why or "telemetry is off", "enable": ENABLE}
        if conf is not None:
            off["enable"] = "turn telemetry on (telemetry.enabled in .ccmemory/config.yaml)"
        return off | {"display": describe(off)}
    avoided = reexplanations_avoided(inp, lo, hi)
    hours = avoided * conf["minutes_per_reexplanation"] / 60
    out: dict[str, Any] = {
        "shown": True,
        "reexplanations_avoided": avoided,
        "hours": round(hours, 2),
        "assumptions": conf,
        "formula": "re-explanations avoided × minutes_per_reexplanation ÷ 60; value = hours × hourly_rate; "
        "a re-explanation avoided = a memory surfaced, recalled or retrieved in a session other than the "
        "one that captured it, once per session",
    }
    if conf["hourly_rate"] is not None:
        out["value"] = round(hours * conf["hourly_rate"], 2)
    out["display"] = describe(out)
    return out


def describe(h: dict[str, Any]) -> str:
    """One line with the figure and its assumptions beside it."""
    if not h.get("shown"):
        return f"hours saved: not shown ({h.get('why')}); to enable: {h.get('enable')}"
    a = h["assumptions"]
    text = (
        f"hours saved: {h['hours']:.1f} h = {h['reexplanations_avoided']} re-explanations avoided × "
        f"{a['minutes_per_reexplanation']:g} min (assumed, config)"
    )
    if "value" in h:
        cur = a["currency"]
        text += f"; value {h['value']:,.2f} {cur} at {a['hourly_rate']:g} {cur}/h (assumed, config)"
    else:
        text += "; no dollar value (metrics.hourly_rate not set)"
    return text
