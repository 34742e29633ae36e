"""Graph analysis over the index contract: stale decisions, patterns, issues, suggestions, metrics.

Service-level and backend-neutral: everything here reads through `Service` / the `Index` protocol,
so the MCP server, the CLI and the site share one set of rules. Nothing here writes a file.

The rules are deliberately simple and stated in each function's docstring (and echoed in the
results) so a reader can tell why a memory was flagged.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ccmemory.core.model import normalise_topic
from ccmemory.index.base import Edge, IndexedMemory
from ccmemory.text.opposition import norm_text as _norm_text
from ccmemory.text.opposition import opposition as _opposition

if TYPE_CHECKING:
    from ccmemory.app.service import Service

SCAN_CAP = 50_000  # memories loaded at most for a whole-project analysis
EDGE_CHUNK = 400


# --- loading -------------------------------------------------------------------------------------


def all_memories(
    svc: Service, *, types: Sequence[str] | None = None, include_superseded: bool = True
) -> list[IndexedMemory]:
    """Every memory visible to the viewer (newest first), up to SCAN_CAP."""
    out: list[IndexedMemory] = []
    f = svc.filters(types=list(types) if types else None, include_superseded=include_superseded)
    page = 5000
    while len(out) < SCAN_CAP:
        batch = svc.view.query(f, limit=page, offset=len(out))
        out.extend(batch)
        if len(batch) < page:
            break
    return out


def all_edges(svc: Service, ids: Iterable[str]) -> list[Edge]:
    """Every stored edge touching `ids` (deduplicated, stored direction)."""
    id_list = list(ids)
    seen: dict[tuple[str, str, str], Edge] = {}
    for start in range(0, len(id_list), EDGE_CHUNK):
        for e in svc.view.edges(id_list[start : start + EDGE_CHUNK]):
            seen.setdefault((e.src, e.type, e.dst), e)
    return sorted(seen.values(), key=lambda e: (e.src, e.type, e.dst))


def _parse_created(value: str) -> datetime:
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return datetime.fromtimestamp(0, tz=UTC)


# --- stale decisions -----------------------------------------------------------------------------

STALE_RULES = (
    "A current (not superseded) decision is stale when at least one holds: "
    "(1) it has a revisit_trigger, so someone must check whether the trigger happened; "
    "(2) it is still developmental (not merged into the main branch) more than N days after it "
    "was created; (3) a file it lists under `files:` has a git commit newer than the decision."
)


@dataclass
class StaleDecision:
    memory: IndexedMemory
    reasons: list[str] = field(default_factory=list)


def files_last_changed(svc: Service, paths: Sequence[str], cap: int = 500) -> dict[str, datetime]:
    """Last commit time of each repo-relative path (one `git log` call; missing paths left out)."""
    from ccmemory.core import gitstate

    wanted = sorted({p for p in paths if p and not p.startswith("/") and ".." not in p.split("/")})[:cap]
    if not wanted or not gitstate.is_repo(svc.vault.root):
        return {}
    try:
        out = gitstate.git(
            svc.vault.root, "log", "--format=@@%cI", "--name-only", "--no-renames", "--", *wanted, check=False
        )
    except gitstate.GitError:
        return {}
    result: dict[str, datetime] = {}
    folders = [w for w in wanted if w.endswith("/")]
    when: datetime | None = None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("@@"):
            try:
                when = datetime.fromisoformat(line[2:]).astimezone(UTC)
            except ValueError:
                when = None
            continue
        if not line or when is None:
            continue
        keys = [line] + [f for f in folders if line.startswith(f)]
        for key in keys:
            if key not in result:  # git log is newest first
                result[key] = when
    return result


def stale_decisions(
    svc: Service, *, developmental_days: int = 30, check_files: bool = True, now: datetime | None = None
) -> list[StaleDecision]:
    """Current decisions flagged by the rules in STALE_RULES, oldest first."""
    now = now or datetime.now(UTC)
    decisions = all_memories(svc, types=["decision"], include_superseded=False)
    changed: dict[str, datetime] = {}
    if check_files:
        changed = files_last_changed(svc, [p for m in decisions for p in m.files])
    out: list[StaleDecision] = []
    for m in decisions:
        reasons: list[str] = []
        trigger = m.fields.get("revisit_trigger")
        if trigger not in (None, "", []):
            reasons.append(f"revisit_trigger: {trigger}")
        created = _parse_created(m.created)
        age = (now - created).days
        if m.status == "developmental" and age > developmental_days:
            reasons.append(f"developmental for {age} days (not merged into the main branch)")
        for path in m.files:
            when = changed.get(path)
            if when is not None and when > created:
                reasons.append(f"{path} changed on {when.strftime('%Y-%m-%d')}, after the decision")
        if reasons:
            out.append(StaleDecision(m, reasons))
    out.sort(key=lambda s: (s.memory.created, s.memory.id))
    return out


# --- patterns ------------------------------------------------------------------------------------


def exception_clusters(mems: Sequence[IndexedMemory], min_size: int = 2) -> list[dict[str, Any]]:
    """Exceptions grouped by the rule they break (normalised wording) and by shared topic.

    A rule broken `min_size` times or more is a candidate for a new decision or precedent.
    """
    by_rule: dict[str, list[IndexedMemory]] = defaultdict(list)
    by_topic: dict[str, list[IndexedMemory]] = defaultdict(list)
    for m in mems:
        if m.type != "exception":
            continue
        rule = _norm_text(m.fields.get("rule_broken"))
        if rule:
            by_rule[rule].append(m)
        for t in m.topics:
            by_topic[normalise_topic(t)].append(m)
    out: list[dict[str, Any]] = []
    for key, group in by_rule.items():
        if len(group) >= min_size:
            out.append({"by": "rule_broken", "key": key, "members": group})
    for key, group in by_topic.items():
        if len(group) >= min_size:
            out.append({"by": "topic", "key": key, "members": group})
    out.sort(key=lambda c: (-len(c["members"]), c["by"], c["key"]))
    return out


def supersession_chains(
    mems: Sequence[IndexedMemory], edges: Sequence[Edge], min_length: int = 3
) -> list[list[IndexedMemory]]:
    """Chains A <- B <- C ... (oldest first) of at least `min_length` memories.

    Each chain ends at a memory nothing supersedes and follows the longest way back; cycles are
    cut (they are reported by `dependency_cycles`).
    """
    by_id = {m.id: m for m in mems}
    older: dict[str, list[str]] = defaultdict(list)  # newer -> older
    superseded: set[str] = set()
    for e in edges:
        if e.type == "SUPERSEDES" and e.src in by_id and e.dst in by_id and e.src != e.dst:
            older[e.src].append(e.dst)
            superseded.add(e.dst)
    memo: dict[str, list[str]] = {}

    def longest(node: str, path: frozenset[str]) -> list[str]:
        if node in memo:
            return memo[node]
        best: list[str] = []
        for prev in sorted(older.get(node, [])):
            if prev in path:
                continue
            cand = longest(prev, path | {prev})
            if len(cand) > len(best):
                best = cand
        memo[node] = [*best, node]
        return memo[node]

    chains = []
    for head in sorted(older):
        if head in superseded:
            continue
        chain = longest(head, frozenset({head}))
        if len(chain) >= min_length:
            chains.append([by_id[i] for i in chain])
    chains.sort(key=lambda c: (-len(c), c[-1].id))
    return chains


def correction_hotspots(mems: Sequence[IndexedMemory], min_count: int = 2) -> list[dict[str, Any]]:
    """Topics (and files) with `min_count` or more corrections: where Claude keeps getting it wrong."""
    by_key: dict[tuple[str, str], list[IndexedMemory]] = defaultdict(list)
    for m in mems:
        if m.type != "correction":
            continue
        for t in {normalise_topic(t) for t in m.topics}:
            by_key[("topic", t)].append(m)
        for f in set(m.files):
            by_key[("file", f)].append(m)
    out: list[dict[str, Any]] = [
        {"by": kind, "key": key, "count": len(group), "members": group}
        for (kind, key), group in by_key.items()
        if len(group) >= min_count
    ]
    out.sort(key=lambda h: (-len(h["members"]), h["by"] != "topic", h["key"]))
    return out


# --- issues --------------------------------------------------------------------------------------


def dependency_cycles(
    edges: Sequence[Edge], types: Sequence[str] = ("DEPENDS_ON", "SUPERSEDES")
) -> list[dict[str, Any]]:
    """Strongly connected components (size >= 2, or a self-loop) per relation type (Tarjan)."""
    out: list[dict[str, Any]] = []
    for rtype in types:
        graph: dict[str, list[str]] = defaultdict(list)
        for e in edges:
            if e.type == rtype:
                graph[e.src].append(e.dst)
                graph.setdefault(e.dst, [])
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        on_stack: set[str] = set()
        stack: list[str] = []
        counter = 0
        for start in sorted(graph):
            if start in index:
                continue
            # iterative Tarjan
            work: list[tuple[str, int]] = [(start, 0)]
            while work:
                node, i = work.pop()
                if i == 0:
                    index[node] = low[node] = counter
                    counter += 1
                    stack.append(node)
                    on_stack.add(node)
                succ = sorted(graph[node])
                recurse = False
                for j in range(i, len(succ)):
                    nxt = succ[j]
                    if nxt not in index:
                        work.append((node, j + 1))
                        work.append((nxt, 0))
                        recurse = True
                        break
                    if nxt in on_stack:
                        low[node] = min(low[node], index[nxt])
                if recurse:
                    continue
                if low[node] == index[node]:
                    comp: list[str] = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1 or node in graph[node]:
                        out.append({"relation": rtype, "ids": sorted(comp)})
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return out


def contradictions(
    mems: Sequence[IndexedMemory], edges: Sequence[Edge], superseded: set[str]
) -> list[dict[str, Any]]:
    """(1) CONFLICTS_WITH edges between two current memories (neither superseded): unresolved.
    (2) Heuristic: two current decisions sharing a topic whose titles read "use X" and
    "don't/never/avoid X". Each item says which rule found it."""
    by_id = {m.id: m for m in mems}
    out: list[dict[str, Any]] = []
    for e in edges:
        if e.type != "CONFLICTS_WITH" or e.src not in by_id or e.dst not in by_id:
            continue
        if e.src in superseded or e.dst in superseded:
            continue
        out.append(
            {
                "rule": "CONFLICTS_WITH edge between two current memories",
                "members": [by_id[e.src], by_id[e.dst]],
                "reason": e.reason,
            }
        )
    decisions = [m for m in mems if m.type == "decision" and m.id not in superseded]
    by_topic: dict[str, list[IndexedMemory]] = defaultdict(list)
    for m in decisions:
        for t in {normalise_topic(t) for t in m.topics}:
            by_topic[t].append(m)
    linked = {frozenset((e.src, e.dst)) for e in edges if e.type == "CONFLICTS_WITH"}
    seen: set[frozenset[str]] = set()
    for topic in sorted(by_topic):
        group = by_topic[topic][:200]
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                pair = frozenset((a.id, b.id))
                if pair in seen or pair in linked:
                    continue
                phrase = _opposition(a.title, b.title)
                if phrase:
                    seen.add(pair)
                    out.append(
                        {
                            "rule": f"heuristic: opposing decision titles on topic '{topic}'",
                            "members": [a, b],
                            "reason": f"one says to do '{phrase}', the other not to",
                        }
                    )
    return out


CROSS_RULE = (
    "current decisions of this project and of a related one (related_to) that contradict each other: "
    "one names the other CONFLICTS_WITH, or they share a topic and their titles read 'use X' / "
    "'don't use X'"
)


def cross_contradictions(
    home: Sequence[IndexedMemory], theirs: Sequence[IndexedMemory]
) -> list[dict[str, Any]]:
    """The same topic decided differently in two projects (CROSS_RULE). Pure: `home` and `theirs`
    are the two projects' current decisions. Each item: rule, reason, topic, members (home, theirs)."""
    out: list[dict[str, Any]] = []
    their_ids = {m.id: m for m in theirs}
    home_ids = {m.id: m for m in home}
    seen: set[tuple[str, str]] = set()
    for a in home:
        for r in a.relations:
            if r.type == "CONFLICTS_WITH" and r.target in their_ids:
                seen.add((a.id, r.target))
                out.append(
                    {
                        "rule": "CONFLICTS_WITH across projects",
                        "reason": r.reason,
                        "topic": None,
                        "members": [a, their_ids[r.target]],
                    }
                )
    for b in theirs:
        for r in b.relations:
            if r.type == "CONFLICTS_WITH" and r.target in home_ids and (r.target, b.id) not in seen:
                seen.add((r.target, b.id))
                out.append(
                    {
                        "rule": "CONFLICTS_WITH across projects",
                        "reason": r.reason,
                        "topic": None,
                        "members": [home_ids[r.target], b],
                    }
                )
    by_topic: dict[str, list[IndexedMemory]] = defaultdict(list)
    for b in theirs:
        for t in {normalise_topic(t) for t in b.topics}:
            by_topic[t].append(b)
    for a in home:
        for topic in sorted({normalise_topic(t) for t in a.topics}):
            for b in by_topic.get(topic, [])[:200]:
                if (a.id, b.id) in seen:
                    continue
                phrase = _opposition(a.title, b.title)
                if phrase:
                    seen.add((a.id, b.id))
                    out.append(
                        {
                            "rule": f"heuristic: opposing decision titles on topic '{topic}'",
                            "reason": f"one project says to do '{phrase}', the other not to",
                            "topic": topic,
                            "members": [a, b],
                        }
                    )
    return out


def orphans(mems: Sequence[IndexedMemory], edges: Sequence[Edge]) -> list[IndexedMemory]:
    """Memories with no topics, no files and no relation in either direction."""
    linked = {e.src for e in edges} | {e.dst for e in edges}
    return [m for m in mems if not m.topics and not m.files and m.id not in linked]


# --- suggestions ---------------------------------------------------------------------------------


def suggest_connections(
    svc: Service, memory: IndexedMemory, limit: int = 5
) -> tuple[list[dict[str, Any]], list[str]]:
    """Memories similar to `memory` (same hybrid search, no expansion) that it is not linked to.

    Returns (suggestions, search notices)."""
    mine = svc.view.edges([memory.id])
    linked = {e.src for e in mine} | {e.dst for e in mine}
    query = " ".join([memory.title, *memory.topics, memory.body[:400]])
    resp = svc.search(query, limit=limit + 25, expand=False)
    out: list[dict[str, Any]] = []
    my_topics = {normalise_topic(t) for t in memory.topics}
    for hit in resp.hits:
        other = hit.memory
        if hit.weak or other.id == memory.id or other.id in linked:  # far: no suggestion
            continue
        shared_topics = sorted(my_topics & {normalise_topic(t) for t in other.topics})
        shared_files = sorted(set(memory.files) & set(other.files))
        if memory.type == other.type == "decision" or other.type in ("correction", "preference", "fact"):
            relation = "DEPENDS_ON" if other.created < memory.created else "RELATES_TO"
        else:
            relation = "RELATES_TO"
        if {memory.type, other.type} == {"exception", "decision"}:
            relation = "CITES"
        out.append(
            {
                "memory": other,
                "score": hit.score,
                "shared_topics": shared_topics,
                "shared_files": shared_files,
                "suggested_relation": relation,
            }
        )
        if len(out) >= limit:
            break
    return out, resp.notices


# --- metrics -------------------------------------------------------------------------------------


def metrics(svc: Service, now: datetime | None = None) -> dict[str, Any]:
    """Counts and rates computed from the indexed memories and edges only."""
    now = now or datetime.now(UTC)
    mems = all_memories(svc)
    edges = all_edges(svc, [m.id for m in mems])
    superseded = svc.view.superseded_ids()
    total = len(mems)
    by_type = Counter(m.type for m in mems)
    by_status = Counter(m.status for m in mems)
    by_source = Counter(m.source or "unknown" for m in mems)
    rel_by_type = Counter(e.type for e in edges)
    open_questions = sum(1 for m in mems if m.type == "question" and m.fields.get("answer") in (None, "", []))
    chains = supersession_chains(mems, edges, min_length=2)
    weeks = _created_per_week(mems, now)
    authors = Counter(m.author or "unknown" for m in mems)
    stats = svc.view.stats()
    return {
        "project": svc.project,
        "backend": stats.get("backend"),
        "memories": total,
        "by_type": dict(sorted(by_type.items())),
        "by_status": dict(sorted(by_status.items())),
        "curated_ratio": _share(by_status.get("curated", 0), total),
        "capture_sources": dict(sorted(by_source.items())),
        "corrections": _corrections(mems, by_type.get("correction", 0)),
        "supersession": {
            "supersedes_edges": rel_by_type.get("SUPERSEDES", 0),
            "superseded_memories": len(superseded),
            "current_memories": total - len(superseded),
            "longest_chain": max((len(c) for c in chains), default=0),
            "chains_of_3_or_more": sum(1 for c in chains if len(c) >= 3),
        },
        "relations_by_type": dict(sorted(rel_by_type.items())),
        "open_questions": open_questions,
        "failed_approaches": by_type.get("failed_approach", 0),
        "confidence": _confidence(mems),
        "authors": dict(authors.most_common(10)),
        "created_per_week": weeks,
        "invalid_files": stats.get("invalid_files"),
        "dangling_links": len(svc.view.dangling()),
        "not_measured": [
            "retrieval hit rates and injected-context usage need telemetry, which this index does not hold"
        ],
    }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _corrections(mems: list[IndexedMemory], count: int) -> dict[str, Any]:
    sessions = {m.session for m in mems if m.session}
    corrections_in_sessions = sum(1 for m in mems if m.type == "correction" and m.session)
    return {
        "count": count,
        "share_of_memories": _share(count, len(mems)),
        "sessions_with_memories": len(sessions),
        "per_session": round(corrections_in_sessions / len(sessions), 4) if sessions else None,
    }


def _confidence(mems: list[IndexedMemory]) -> dict[str, Any]:
    confidences = [m.confidence for m in mems if m.confidence is not None]
    return {
        "with_confidence": len(confidences),
        "mean": round(sum(confidences) / len(confidences), 4) if confidences else None,
        "below_0_6": sum(1 for c in confidences if c < 0.6),
    }


def _created_per_week(mems: list[IndexedMemory], now: datetime) -> dict[str, int]:
    """Memories created in each of the last 8 seven-day windows, newest first, keyed by start day."""
    weeks: dict[str, int] = {}
    now = now.replace(microsecond=0) + timedelta(seconds=1)  # a memory created this second counts
    for w in range(8):
        start = now - timedelta(days=7 * (w + 1))
        end = now - timedelta(days=7 * w)
        lo, hi = (d.strftime("%Y-%m-%dT%H:%M:%SZ") for d in (start, end))  # ISO text sorts as time
        weeks[start.strftime("%Y-%m-%d")] = sum(1 for m in mems if lo <= m.created < hi)
    return weeks
