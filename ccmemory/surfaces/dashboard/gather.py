"""The metrics' inputs, and all of them computed at once, for the dashboard and for callers without
one (`ccmemory stats`, MCP `get_metrics`): ours (metrics.py), the seed's (seed.py) and hours saved.

Reads the index (a snapshot), the local telemetry store (ingesting new lines first, as the
dashboard does) and the session records; writes only local caches (telemetry.db's derived table,
the seed's prompt vectors under .ccmemory/local/).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ccmemory.surfaces.dashboard import metrics as mx
from ccmemory.surfaces.dashboard import seed

if TYPE_CHECKING:
    from ccmemory.app.service import Service
    from ccmemory.core.telemetry import Store

EVENT_KINDS = ["surfaced", "retrieved", "searched", "recalled", "cited"]


Flags = tuple[Any, str | None]  # (per-item flags or None, why None)


def sessions_stamp(svc: Service) -> int:
    """Changes when a session record is written or removed: records are written by an atomic rename
    into the folder, which changes the folder's mtime (for the caller's cache of prompt flags)."""
    from ccmemory.features.sessions.store import sessions_dir

    try:
        return sessions_dir(svc.vault.root).stat().st_mtime_ns
    except OSError:
        return 0


def prompt_flags(svc: Service) -> Flags:
    """The seed's re-explanation input: (session start, duplicate?) per context event."""
    return seed.duplicate_flags(svc, seed.context_events(svc.vault.root))


def autonomy_rows(svc: Service) -> list[tuple[str, int, int]]:
    """(session start, AI actions, human interventions) of every live session record with an
    autonomy score: the seed's loop efficiency input."""
    from ccmemory.features.sessions.autonomy import score
    from ccmemory.features.sessions.store import all_records

    out = []
    for rec in all_records(svc.vault.root):
        sc = score(rec)
        if sc is not None:
            out.append((str(rec.get("start") or rec.get("end") or ""), sc["actions"], sc["interventions"]))
    return out


def inputs(
    svc: Service,
    store: Store,
    snap: mx.Snapshot,
    reexplained: Flags | None = None,
    prompts: Flags | None = None,
) -> mx.Inputs:
    """Everything the metrics read; `reexplained` and `prompts` are cached (flags, problem) pairs
    when the caller keeps them."""
    if reexplained is None:
        flags, problem, new = mx.reexplained_flags(svc, snap, store.derived("reexplained"))
        store.set_derived("reexplained", new)  # only embedded once per memory version
        reexplained = (flags, problem)
    prompt_flags_, prompt_problem = prompts if prompts is not None else prompt_flags(svc)
    return mx.Inputs(
        snap,
        store.events(EVENT_KINDS),
        store.sessions(),
        reexplained[0],
        reexplained[1],
        store.config.enabled,
        prompt_flags=prompt_flags_,
        prompt_problem=prompt_problem,
        user=svc.config.user_id,
        autonomy=autonomy_rows(svc),
        ttc=seed.ttc_rows(svc.vault.dir / "local"),
        cv=seed.cv_rows(svc.vault.dir / "local"),
    )


def all_metrics(svc: Service) -> dict[str, Any]:
    """{"metrics": ours, "seed_metrics": the seed's, "hours_saved": ...} for the project now."""
    from ccmemory.core import telemetry

    store = telemetry.open_store(svc.vault.dir, svc.config.raw)
    try:
        store.ingest()
        inp = inputs(svc, store, mx.load_snapshot(svc))
        return {
            "metrics": mx.compute(inp),
            "seed_metrics": seed.compute(inp),
            "hours_saved": seed.hours_saved(inp, svc.config.raw),
        }
    finally:
        store.close()


def render(data: dict[str, Any]) -> list[str]:
    """Text lines: each seed metric next to ours (value, then formula), and hours saved."""
    ours = data["metrics"]
    lines = ["metrics (ours; formulas in docs/dashboard.md)"]
    for key, m in ours.items():
        why = f" ({m['why']})" if m.get("why") else ""
        lines.append(f"  {key.replace('_', ' '):28} {m['display']}{why}")
        lines.append(f"    = {m['formula']}")
    lines.append(f"metrics as the seed defines them ({seed.SEED}; ours beside where they differ)")
    for m in data["seed_metrics"].values():
        why = f" ({m['why']})" if m.get("why") else ""
        beside = f"   [ours: {ours[m['ours']]['display']}]" if m.get("ours") in ours else ""
        lines.append(f"  {m['name']:38} {m['display']}{why}{beside}")
        lines.append(f"    = {m['formula']}  [{m['source']}]")
    lines.append(seed.describe(data["hours_saved"]))
    return lines
