"""Suggestions from patterns in the memories (issue 31): each one proposes a memory, with the
memories that are its evidence; the user accepts it (the memory is written through the one
builder, linked to its evidence) or dismisses it (remembered in `.ccmemory/local/`, never shown
again). Nothing is written without the user accepting it.

The patterns, and what each proposes:

- **corrections about one subject** (a file named by 2+ corrections in force, or a topic shared
  by 3+): a *fact* gathering what is right (each correction's right belief), so one memory
  carries the rules of that subject;
- **a rule broken again and again** (2+ exceptions citing the same rule, or 3+ sharing a
  topic): an open *question*: should the rule change?
- **a decision revised again and again** (a supersession chain of 3+): an *insight* naming the
  churn, with the chain, to set a revisit trigger or say what keeps changing it;
- **a file with many warnings** (3+ gotchas, corrections, exceptions or failed approaches in
  force name it): an *insight* that the file needs care, listing them;
- **the same mistake corrected again** (corrections on one file or topic that restate one
  another, by content words, recorded on 2+ different days or in 2+ sessions): a *hypothesis*
  that what is right about it does not reach Claude when it works on it, with a testable
  prediction; it cites the corrections as its basis (docs/file-format.md, hypotheses).

Rules only (no LLM): the evidence is exactly the memories listed.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ccmemory.app.service import Service
    from ccmemory.index.base import IndexedMemory

WARNING_TYPES = ("gotcha", "correction", "exception", "failed_approach")
FILE_HOTSPOT_MIN = 3
TOPIC_MIN = 3  # corrections or exceptions sharing only a topic: at least this many
EVIDENCE_CAP = 12
DISMISS_PREFIX = "suggest:"


@dataclass
class Suggestion:
    kind: str  # corrections | exceptions | revisions | file | hypothesis
    key: str  # stable id: dismissals and `--accept` name it
    why: str  # one line: the pattern found
    type: str  # the memory type accepting writes
    title: str
    body: str
    fields: dict[str, Any] = field(default_factory=dict)
    topics: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)  # memory ids
    relation: str = "RELATES_TO"  # how the accepted memory links to its evidence

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "kind": self.kind,
            "why": self.why,
            "proposes": {"type": self.type, "title": self.title, "body": self.body, "fields": self.fields},
            "evidence": self.evidence,
        }


def _key(kind: str, subject: str) -> str:
    return f"{kind}-{hashlib.sha1(f'{kind}:{subject}'.encode()).hexdigest()[:10]}"


def _bullets(mems: Sequence[IndexedMemory], text: Any = None) -> str:
    lines = []
    for m in mems[:EVIDENCE_CAP]:
        extra = text(m) if text else ""
        lines.append(f"- {m.title} (`{m.id[:10]}`, {str(m.created)[:10]})" + (f": {extra}" if extra else ""))
    return "\n".join(lines)


def from_corrections(mems: Sequence[IndexedMemory]) -> list[Suggestion]:
    from ccmemory.features.analysis import correction_hotspots

    out = []
    for spot in correction_hotspots(mems, 2):
        group = sorted(spot["members"], key=lambda m: str(m.created))
        if spot["by"] == "topic" and len(group) < TOPIC_MIN:  # a topic is broad: two can be unrelated
            continue
        subject = f"{spot['by']} {spot['key']}"
        out.append(
            Suggestion(
                "corrections",
                _key("corrections", subject),
                f"{len(group)} corrections about {subject}: gather what is right in one memory, shown "
                "whenever it comes up",
                "fact",
                f"What is right about {spot['key']} (from {len(group)} corrections)"[:200],
                "Claude was corrected about this more than once; what is right:\n\n"
                + _bullets(group, lambda m: str(m.fields.get("right_belief") or "")),
                fields={"category": "convention"},
                topics=[spot["key"]] if spot["by"] == "topic" else [],
                files=[spot["key"]] if spot["by"] == "file" else [],
                evidence=[m.id for m in group],
            )
        )
    return out


HYPOTHESIS_WINDOW_DAYS = 30


def _occasions(group: Sequence[IndexedMemory]) -> int:
    """On how many occasions a group was recorded: distinct sessions, or days where none is known."""
    sessions = {m.session for m in group if m.session}
    days = {str(m.created)[:10] for m in group}
    return max(len(sessions), len(days))


RECUR_SIMILARITY = 0.3  # content-word Jaccard of two corrections that restate one mistake


def _correction_text(m: IndexedMemory) -> str:
    return " ".join(
        [m.title, str(m.fields.get("wrong_belief") or ""), str(m.fields.get("right_belief") or "")]
    )


def restated_groups(group: Sequence[IndexedMemory]) -> list[list[IndexedMemory]]:
    """The corrections in `group` that restate one another (pairwise content-word Jaccard >=
    RECUR_SIMILARITY, joined transitively), each group of 2+ oldest first. Sharing a topic or a
    file is not enough: on the dev sets those corrections were different mistakes."""
    from ccmemory.text.overlap import similarity

    parent = list(range(len(group)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    texts = [_correction_text(m) for m in group]
    for i in range(len(group)):
        for j in range(i + 1, len(group)):
            if similarity(texts[i], texts[j]) >= RECUR_SIMILARITY:
                parent[root(j)] = root(i)
    comps: dict[int, list[IndexedMemory]] = defaultdict(list)
    for i, m in enumerate(group):
        comps[root(i)].append(m)
    return [sorted(c, key=lambda m: (str(m.created), m.id)) for c in comps.values() if len(c) >= 2]


def from_recurring_corrections(mems: Sequence[IndexedMemory]) -> list[Suggestion]:
    """The same mistake corrected on 2+ occasions (corrections on one file or topic that restate
    one another): the right rule did not stick. Proposes a hypothesis with a testable prediction."""
    from ccmemory.features.analysis import correction_hotspots

    out = []
    seen: set[frozenset[str]] = set()
    for spot in correction_hotspots(mems, 2):
        for group in restated_groups(spot["members"]):
            ids = frozenset(m.id for m in group)
            times = _occasions(group)
            if times < 2 or ids in seen:
                continue
            seen.add(ids)
            out.append(_hypothesis(spot["by"], spot["key"], group, times))
    return out


def _hypothesis(by: str, key: str, group: list[IndexedMemory], times: int) -> Suggestion:
    statement = (
        f"Claude keeps making the same mistake about {key} because what is right about it is not in "
        "its context when it works on it"
    )
    prediction = (
        f"Once what is right about {key} is recorded where session context picks it up (a fact or "
        f"preference on the same {by}), no new correction of this mistake is recorded in the next "
        f"{HYPOTHESIS_WINDOW_DAYS} days; a new one refutes this."
    )
    return Suggestion(
        "hypothesis",
        _key("hypothesis", f"{by} {key} " + " ".join(sorted(m.id for m in group))),
        f"the same mistake about {by} {key} corrected {len(group)} times on {times} occasions",
        "hypothesis",
        f"The same correction about {key} recurs because the rule is not in context"[:200],
        f"The same mistake was corrected on {times} separate occasions (the basis of this hypothesis):\n\n"
        + _bullets(group, lambda m: str(m.fields.get("right_belief") or "")),
        fields={"statement": statement[:2000], "prediction": prediction[:2000], "status": "open"},
        topics=[key] if by == "topic" else [],
        files=[key] if by == "file" else [],
        evidence=[m.id for m in group],
        relation="CITES",
    )


def from_exceptions(mems: Sequence[IndexedMemory]) -> list[Suggestion]:
    from ccmemory.features.analysis import exception_clusters

    out = []
    for cluster in exception_clusters(mems, 2):
        group = cluster["members"]
        if cluster["by"] == "topic" and len(group) < TOPIC_MIN:  # different rules on one topic
            continue
        what = (
            f"the rule “{cluster['key']}”"
            if cluster["by"] == "rule_broken"
            else f"rules about {cluster['key']}"
        )
        question = f"Should {what} change? It was broken {len(group)} times"
        out.append(
            Suggestion(
                "exceptions",
                _key("exceptions", f"{cluster['by']} {cluster['key']}"),
                f"{len(group)} exceptions to {what}: a rule broken this often may be the wrong rule",
                "question",
                question[:200],
                "Exceptions granted so far:\n\n"
                + _bullets(group, lambda m: m.fields.get("justification") or ""),
                fields={"question": question},
                topics=[cluster["key"]] if cluster["by"] == "topic" else [],
                evidence=[m.id for m in group],
            )
        )
    return out


def from_revisions(mems: Sequence[IndexedMemory], edges: Sequence[Any]) -> list[Suggestion]:
    from ccmemory.features.analysis import supersession_chains

    out = []
    for chain in supersession_chains(mems, edges, 3):
        current = chain[-1]
        out.append(
            Suggestion(
                "revisions",
                _key("revisions", chain[0].id),
                f"“{current.title}” replaced {len(chain) - 1} earlier versions",
                "insight",
                f"{current.type.capitalize()} revised {len(chain) - 1} times: {current.title}"[:200],
                "Its versions, oldest first:\n\n" + _bullets(chain),
                fields={
                    "category": "analysis",
                    "implications": "Set a revisit trigger on the current version, or record what keeps "
                    "changing it, before the next revision.",
                },
                topics=list(current.topics)[:4],
                evidence=[m.id for m in chain],
            )
        )
    return out


def from_files(mems: Sequence[IndexedMemory]) -> list[Suggestion]:
    by_file: dict[str, list[IndexedMemory]] = defaultdict(list)
    for m in mems:
        if m.type in WARNING_TYPES:
            for f in set(m.files):
                by_file[f].append(m)
    out = []
    for path, group in sorted(by_file.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        if len(group) < FILE_HOTSPOT_MIN:
            continue
        kinds = ", ".join(sorted({m.type.replace("_", " ") for m in group}))
        out.append(
            Suggestion(
                "file",
                _key("file", path),
                f"{len(group)} warnings ({kinds}) name {path}",
                "insight",
                f"{path} needs care: {len(group)} warnings about it"[:200],
                "Read these before changing it:\n\n" + _bullets(group),
                fields={
                    "category": "analysis",
                    "implications": "Review these memories before editing the file.",
                },
                files=[path],
                evidence=[m.id for m in group],
            )
        )
    return out


def compute(svc: Service) -> list[Suggestion]:
    """Every suggestion the patterns find now, dismissed ones included (no cache)."""
    from ccmemory.features.analysis import all_edges, all_memories

    mems = all_memories(svc, include_superseded=True)
    in_force = all_memories(svc, include_superseded=False)
    edges = all_edges(svc, [m.id for m in mems])
    return [
        *from_corrections(in_force),
        *from_exceptions(in_force),
        *from_revisions(mems, edges),
        *from_files(in_force),
        *from_recurring_corrections(in_force),
    ]


# --- the pattern job's cache -------------------------------------------------------------------
# The capture worker recomputes the suggestions after its jobs (`refresh`), off the hook path, and
# keeps them in .ccmemory/local/suggestions.json keyed by the index state; the dashboard, MCP
# `list_suggestions` and `ccmemory suggest` read them from there while the key still matches and
# recompute (and store) them otherwise. Dismissals are applied on reading, so they never make the
# cache stale.

CACHE_NAME = "suggestions.json"
CACHE_VERSION = 1  # bump when a pattern rule changes: results cached by older rules become stale


def state_key(svc: Service) -> str:
    """What the suggestions depend on, hashed: every indexed file's content hash (memories,
    relations and supersession all come from the files), how many memories the viewer sees and
    how many are curated (a status change with no file change), the viewer and the rules' version."""
    states = svc.index.file_states(svc.project)
    seen = svc.view.count(svc.filters(include_superseded=True))
    curated = svc.view.count(svc.filters(status="curated", include_superseded=True))
    h = hashlib.sha256(f"{CACHE_VERSION}\0{svc.project}\0{svc.viewer}\0{seen}\0{curated}".encode())
    for path in sorted(states):
        h.update(f"\0{path}\0{states[path].hash}".encode())
    return h.hexdigest()


def _cache_path(svc: Service) -> Any:
    return svc.vault.dir / "local" / CACHE_NAME


def cached(svc: Service, key: str | None = None) -> list[Suggestion] | None:
    """The stored suggestions if they were computed from the index as it is now, else None."""
    import json

    try:
        data = json.loads(_cache_path(svc).read_text(encoding="utf-8"))
        if data.get("key") != (key or state_key(svc)):
            return None
        return [Suggestion(**item) for item in data["suggestions"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # absent, torn by hand, or from another version: recompute


def refresh(svc: Service) -> list[Suggestion]:
    """Compute the suggestions and store them with the index state they were computed from (the
    key is taken first: an index changing meanwhile leaves the stored result stale, never wrong)."""
    import contextlib
    import json
    from dataclasses import asdict

    from ccmemory.core.atomic import atomic_write

    key = state_key(svc)
    found = compute(svc)
    data = {"key": key, "suggestions": [asdict(s) for s in found]}
    with contextlib.suppress(OSError):  # a read-only .ccmemory/local/: the answer is right, only not kept
        atomic_write(_cache_path(svc), json.dumps(data).encode(), overwrite=True)
    return found


def current(svc: Service) -> list[Suggestion]:
    """Every suggestion (dismissed ones included): from the cache when fresh, else computed."""
    key = state_key(svc)
    hit = cached(svc, key)
    return hit if hit is not None else refresh(svc)


def suggestions(svc: Service, *, include_dismissed: bool = False) -> list[Suggestion]:
    """Every current suggestion (dismissed and accepted ones left out unless asked)."""
    found = current(svc)
    if include_dismissed:
        return found
    store = _store(svc)
    try:
        gone = store.dismissed()
    finally:
        store.close()
    return [s for s in found if DISMISS_PREFIX + s.key not in gone]


def _store(svc: Service) -> Any:
    from ccmemory.core import telemetry

    return telemetry.open_store(svc.vault.dir, svc.config.raw)


def find(svc: Service, key: str) -> Suggestion | None:
    return next((s for s in suggestions(svc, include_dismissed=True) if s.key == key), None)


def accept(svc: Service, suggestion: Suggestion) -> Any:
    """Write the proposed memory (the one builder: redacted, validated), related to its evidence,
    and remember the suggestion as done. Returns the service's Recorded."""
    from ccmemory.core.model import Relation

    why = ("basis: " if suggestion.relation == "CITES" else "evidence for: ") + suggestion.why
    memory = svc.draft(
        suggestion.type,
        suggestion.title,
        body=suggestion.body,
        topics=suggestion.topics,
        files=suggestion.files,
        fields=suggestion.fields,
        source="rules",
        relations=[Relation(suggestion.relation, i, why[:200]) for i in suggestion.evidence],
    )
    rec = svc.record(memory)
    dismiss(svc, suggestion.key)
    return rec


def dismiss(svc: Service, key: str) -> None:
    store = _store(svc)
    try:
        store.dismiss(DISMISS_PREFIX + key)
    finally:
        store.close()
