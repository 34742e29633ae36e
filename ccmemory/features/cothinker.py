"""Concepts, hypotheses and knowledge gaps (issue 31): what is open, and a hypothesis's evidence.

A hypothesis's evidence is every SUPPORTS / REFUTES relation into it or into an earlier version
of it (the memories it supersedes, transitively): a status change is a new version superseding
the old one, and the evidence recorded against the old version still counts. A hypothesis whose
status is `supported` with no supporting evidence (or `refuted` with no refuting evidence) is
reported by `ccmemory check`. Pure functions over ids and edges, so `check` (files only), the
MCP tools and the site share one rule.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ccmemory.core.model import EVIDENCE_RELATIONS, HYPOTHESIS_STATUSES

#: the types whose required own fields `check` asks for (the other types predate the rule)
COTHINKER_TYPES = ("concept", "hypothesis", "knowledge_gap")


def status_of(fields: Mapping[str, Any]) -> str:
    """A hypothesis's status: its `status` field, `open` when empty (or not a known status)."""
    value = fields.get("status")
    return value if value in HYPOTHESIS_STATUSES else "open"


def is_open(mtype: str, fields: Mapping[str, Any]) -> bool:
    """Still open: a question or knowledge gap without an answer, a hypothesis still `open`."""
    if mtype in ("question", "knowledge_gap"):
        return str(fields.get("answer") or "").strip() == ""
    if mtype == "hypothesis":
        return status_of(fields) == "open"
    return False


@dataclass
class Evidence:
    supports: list[str] = field(default_factory=list)  # ids of the memories that support it
    refutes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"supports": self.supports, "refutes": self.refutes}


def versions(start: str, links: Mapping[str, Iterable[str]]) -> set[str]:
    """``start`` and every id reachable from it through ``links`` (id -> ids: the versions a
    memory supersedes, or those that supersede it), cycles cut."""
    found, todo = {start}, [start]
    while todo:
        for nxt in links.get(todo.pop(), ()):
            if nxt not in found:
                found.add(nxt)
                todo.append(nxt)
    return found


def evidence(hypotheses: Iterable[str], edges: Iterable[tuple[str, str, str]]) -> dict[str, Evidence]:
    """Evidence of each hypothesis id from `(src, type, dst)` edges in stored direction:
    SUPPORTS/REFUTES into it or into any memory it supersedes (transitively)."""
    earlier: dict[str, set[str]] = defaultdict(set)
    into: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for src, rtype, dst in edges:
        if rtype == "SUPERSEDES" and src != dst:
            earlier[src].add(dst)
        elif rtype in EVIDENCE_RELATIONS:
            into[dst][rtype].add(src)
    out: dict[str, Evidence] = {}
    for hid in hypotheses:
        chain = versions(hid, earlier)
        sup = {s for v in chain for s in into[v]["SUPPORTS"]} - chain
        ref = {s for v in chain for s in into[v]["REFUTES"]} - chain
        out[hid] = Evidence(sorted(sup), sorted(ref))
    return out


def status_problem(status: str, ev: Evidence) -> str | None:
    """Why a hypothesis's status does not follow from its evidence, or None."""
    if status == "supported" and not ev.supports:
        return (
            "status supported but no memory SUPPORTS this hypothesis (or an earlier version): record "
            "the evidence with a relation {type: SUPPORTS, target: <its id>}"
        )
    if status == "refuted" and not ev.refutes:
        return (
            "status refuted but no memory REFUTES this hypothesis (or an earlier version): record "
            "the evidence with a relation {type: REFUTES, target: <its id>}"
        )
    return None


def hypothesis_summary(m: Any, ev: Evidence | None) -> dict[str, Any]:
    """What the tools and pages show of a hypothesis besides its citation."""
    ev = ev or Evidence()
    out: dict[str, Any] = {
        "statement": m.fields.get("statement") or m.title,
        "status": status_of(m.fields),
        "evidence": {"supports": len(ev.supports), "refutes": len(ev.refutes)},
    }
    if m.fields.get("prediction"):
        out["prediction"] = m.fields["prediction"]
    return out


def evidence_for(svc: Any, hypothesis_ids: Iterable[str], max_depth: int = 50) -> dict[str, Evidence]:
    """`evidence` read from the index (`svc.view.edges`): the hypotheses' edges and those of
    their earlier versions, followed along SUPERSEDES up to `max_depth` versions back."""
    wanted = list(dict.fromkeys(hypothesis_ids))
    seen: set[str] = set()
    frontier = set(wanted)
    edges: set[tuple[str, str, str]] = set()
    for _ in range(max_depth):
        frontier -= seen
        if not frontier:
            break
        seen |= frontier
        found = svc.view.edges(sorted(frontier))
        edges |= {(e.src, e.type, e.dst) for e in found}
        frontier = {e.dst for e in found if e.type == "SUPERSEDES" and e.src in frontier}
    return evidence(wanted, sorted(edges))
