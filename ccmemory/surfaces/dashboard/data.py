"""What each dashboard page shows, as JSON-able dicts (the `/api/...` answers; docs/dashboard.md).

Everything reads through the service layer: `Service` for memories, search and traces,
`analysis` for patterns, `lifecycle.review` / `lifecycle.staleness` for the review findings
(the same rules as `ccmemory check --base`), `lifecycle.promote` for promotion, and the telemetry
store. A `Dash` holds one open Service and caches the whole-project snapshot until the index or
the telemetry changes.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ccmemory.app.service import Service
from ccmemory.core import telemetry
from ccmemory.index.base import Edge, IndexedMemory
from ccmemory.surfaces.dashboard import metrics as mx
from ccmemory.surfaces.dashboard import seed

REFRESH_SECONDS = 30.0
POLL_SECONDS = 30.0  # the overview page re-reads /api/overview this often (the seed's 30 s)
MEMBERS = 50  # members listed per pattern (the size says how many there are)
GRAPH_MAX = 5000  # nodes the graph page draws at most (canvas, no DOM per node)


def card(m: IndexedMemory, **extra: Any) -> dict[str, Any]:
    """A memory as the lists show it: ids, no body."""
    return {
        "id": m.id,
        "type": m.type,
        "title": m.title,
        "status": m.status,
        "created": m.created,
        "author": m.author,
        "branch": m.branch,
        "topics": m.topics,
        "path": m.path,
        "uri": m.uri,
        **extra,
    }


def _graph_seed(mems: list[IndexedMemory], topic: str | None, file: str | None) -> set[str]:
    """The ids the graph page starts from: a topic's memories, a file's (or folder's), or all."""
    from ccmemory.core.model import normalise_topic

    if topic:
        t = normalise_topic(topic)
        return {m.id for m in mems if t in {normalise_topic(x) for x in m.topics}}
    if file:
        return {m.id for m in mems if any(f == file or f.startswith(file.rstrip("/") + "/") for f in m.files)}
    return {m.id for m in mems}


def _one_hop(seed: set[str], edges: list[Edge]) -> set[str]:
    """The seed plus every memory one edge away from it (the neighbourhood)."""
    keep = set(seed)
    for e in edges:
        if e.src in seed or e.dst in seed:
            keep.update((e.src, e.dst))
    return keep


def _graph_node(m: IndexedMemory, xy: tuple[float, float], superseded: bool) -> dict[str, Any]:
    return {
        "id": m.id,
        "type": m.type,
        "title": m.title,
        "status": m.status,
        "topic": m.topics[0] if m.topics else "",
        "x": xy[0],
        "y": xy[1],
        "superseded": superseded,
    }


class Dash:
    """One project's dashboard state: a Service, the telemetry store and caches."""

    def __init__(self, svc: Service, refresh_seconds: float = REFRESH_SECONDS):
        self.svc = svc
        self.root: Path = svc.vault.root
        self.store = telemetry.open_store(svc.vault.dir, svc.config.raw)
        self.refresh_seconds = refresh_seconds
        self.poll_seconds = POLL_SECONDS
        self.lock = threading.RLock()
        self._refreshed = 0.0
        self._snap: mx.Snapshot | None = None
        self._cache: dict[str, tuple[Any, Any]] = {}
        self._reexplain: tuple[Any, dict[str, bool] | None, str | None] | None = None
        self._findings: tuple[Any, list[dict[str, Any]]] | None = None
        self._prompts: tuple[int, Any] | None = None  # (sessions folder stamp, the seed's prompt flags)

    @property
    def project(self) -> str:
        return self.svc.project

    def close(self) -> None:
        self.store.close()
        self.svc.close()

    # --- freshness -------------------------------------------------------------------------------
    def refresh(self, force: bool = False) -> None:
        """Reindex changed files and ingest telemetry at most every `refresh_seconds`."""
        if not force and time.monotonic() - self._refreshed < self.refresh_seconds:
            return
        rep = self.svc.reindex()
        if rep.added or rep.updated or rep.removed or rep.status_changed or self._snap is None:
            self._snap = None
            self._cache.clear()
        if self.store.ingest():
            self._cache.clear()
        self._refreshed = time.monotonic()

    def snapshot(self) -> mx.Snapshot:
        self.refresh()
        if self._snap is None:
            self._snap = mx.load_snapshot(self.svc)
        return self._snap

    def cached(self, key: str, build: Any) -> Any:
        snap = self.snapshot()
        from ccmemory.surfaces.dashboard.gather import sessions_stamp

        # a new session record changes the seed's re-explanation rate
        stamp = (id(snap), self.store.stamp(), len(self.store.dismissed()), sessions_stamp(self.svc))
        hit = self._cache.get(key)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        out = build()
        self._cache[key] = (stamp, out)
        return out

    # --- metrics ---------------------------------------------------------------------------------
    def inputs(self) -> mx.Inputs:
        from ccmemory.surfaces.dashboard import gather

        snap = self.snapshot()
        if self._reexplain is None or self._reexplain[0] is not snap:
            flags, problem, new = mx.reexplained_flags(self.svc, snap, self.store.derived("reexplained"))
            self.store.set_derived("reexplained", new)  # only embedded once per memory version
            self._reexplain = (snap, flags, problem)
        stamp = gather.sessions_stamp(self.svc)
        if self._prompts is None or self._prompts[0] != stamp:
            self._prompts = (stamp, gather.prompt_flags(self.svc))
        return gather.inputs(
            self.svc, self.store, snap, (self._reexplain[1], self._reexplain[2]), self._prompts[1]
        )

    def warm(self) -> None:
        """Compute the overview once (loads the embedder) so the first page view is quick."""
        with self.lock:
            self.overview()

    def stats(self) -> dict[str, Any]:
        """The same numbers as `ccmemory stats --json` (index stats) plus the superseded count."""
        data = dict(self.svc.view.stats())
        data["project"] = self.project
        return data

    # --- pages -----------------------------------------------------------------------------------
    def overview(self) -> dict[str, Any]:
        def build() -> dict[str, Any]:
            inp = self.inputs()
            snap = inp.snap
            stats = self.stats()
            return {
                "project": self.project,
                "stats": stats,
                "superseded": len(snap.superseded),
                "metrics": mx.compute(inp),
                "seed_metrics": seed.compute(inp),
                "hours_saved": seed.hours_saved(inp, self.svc.config.raw),
                "weekly": mx.weekly(inp),
                "telemetry": {
                    "enabled": self.store.config.enabled,
                    "retention_days": self.store.config.retention_days,
                    "events": self.store.stamp()[0],
                    "sessions": len(inp.sessions),
                },
            }

        out = dict(self.cached("overview", build))
        last = self.store.last_visit()
        snap = self.snapshot()
        new = [m for m in snap.mems if last and m.created > last] if last else []
        new.sort(key=lambda m: m.created, reverse=True)
        out["since_last_visit"] = {
            "last_visit": last,
            "new_memories": len(new),
            "new_by_type": dict(Counter(m.type for m in new)),
            "newest": [card(m) for m in new[:10]],
        }
        return out

    def review(self, limit: int = 50) -> dict[str, Any]:
        def build() -> dict[str, Any]:
            from ccmemory.core import gitstate
            from ccmemory.features.lifecycle.staleness import for_indexed

            snap = self.snapshot()
            current = [m for m in snap.mems if m.id not in snap.superseded]
            dev = [m for m in current if m.status == "developmental"]
            by_branch: dict[str, list[dict[str, Any]]] = defaultdict(list)
            branch_now = gitstate.current_branch(self.root) if gitstate.is_repo(self.root) else None
            for m in dev:
                by_branch[m.branch or branch_now or "(unknown branch)"].append(card(m))
            low = [
                card(m, confidence=m.confidence)
                for m in current
                if m.confidence is not None and m.confidence < 0.6
            ]
            stale = for_indexed(self.root, current, self.svc.config.raw)
            stale_items = [
                card(snap.by_id[i], reason=s.reason()) for i, s in stale.items() if i in snap.by_id
            ]
            findings = self._findings_for(dev)
            questions = [
                card(m) for m in current if m.type == "question" and m.fields.get("answer") in (None, "", [])
            ]
            conflicts = self._reference_conflicts(current)
            return {
                "current_branch": branch_now,
                "main_branch": gitstate.main_branch(self.root, self.svc.config.main_branch)
                if gitstate.is_repo(self.root)
                else None,
                "developmental": {"count": len(dev), "by_branch": dict(by_branch)},
                "by_author": dict(Counter(m.author or "unknown" for m in dev)),
                "low_confidence": low,
                "stale": stale_items,
                "findings": findings,
                "open_questions": questions,
                "reference_conflicts": conflicts,
            }

        data = self.cached("review", build)
        dismissed = self.store.dismissed()

        def keep(items: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
            out = []
            for it in items:
                key = it.get("key") or f"{kind}:{it['id']}"
                if key not in dismissed:
                    out.append({**it, "key": key})
            return out[:limit]

        out = dict(data)
        out["low_confidence"] = keep(data["low_confidence"], "low_confidence")
        out["stale"] = keep(data["stale"], "stale")
        out["findings"] = keep(data["findings"], "finding")
        out["open_questions"] = keep(data["open_questions"], "question")
        out["reference_conflicts"] = keep(data["reference_conflicts"], "refconflict")
        out["developmental"] = {
            **data["developmental"],
            "by_branch": {  # every one (not cut at `limit`), each with its dismissal key
                b: [{**m, "key": f"capture:{m['id']}"} for m in ms if f"capture:{m['id']}" not in dismissed]
                for b, ms in data["developmental"]["by_branch"].items()
            },
        }
        out["dismissed"] = len(dismissed)
        out["precision"] = self._precision(dismissed)
        return out

    def _reference_conflicts(self, current: list[IndexedMemory]) -> list[dict[str, Any]]:
        """Reference sections that contradict a current memory (as `ccmemory check` reports them,
        ccmemory.features.reference.contradict), each with its dismissal key."""
        from ccmemory.features.reference.contradict import find, load_refs

        refs, texts = load_refs(self.svc.vault)
        if not refs:
            return []
        out = []
        for c in find([(m.path, m) for m in current], refs, texts):
            item = c.as_dict()
            item["key"] = f"refconflict:{c.ref}:{c.line}:{c.memory_id}"
            out.append(item)
        return out

    def _precision(self, dismissed: set[str]) -> dict[str, Any]:
        """The false-positive rate of automatic capture per type beside its threshold
        (ccmemory.features.capture.precision)."""
        from ccmemory.features.capture import settings as capture_settings
        from ccmemory.features.capture.precision import rates

        floors = capture_settings.load(self.root).min_confidence
        return rates(self.snapshot().mems, dismissed, floors)

    def _findings_for(self, dev: list[IndexedMemory]) -> list[dict[str, Any]]:
        """`_check_findings`, recomputed only when main moved or a developmental memory changed:
        it parses the whole working tree and main's tree (seconds at 10k memories)."""
        from ccmemory.core import gitstate

        main = (
            gitstate.main_branch(self.root, self.svc.config.main_branch)
            if gitstate.is_repo(self.root)
            else ""
        )
        head = (
            gitstate.git(self.root, "rev-parse", "--verify", "--quiet", main, check=False).strip()
            if main
            else ""
        )
        key = (head, frozenset((m.id, m.hash) for m in dev))
        if self._findings is None or self._findings[0] != key:
            self._findings = (key, self._check_findings())
        return self._findings[1]

    def _check_findings(self) -> list[dict[str, Any]]:
        """`ccmemory check --base <main>` duplicate / contradiction findings for the working tree."""
        from ccmemory.core import gitstate
        from ccmemory.features.lifecycle.review import base_findings

        if not gitstate.is_repo(self.root):
            return []
        main = gitstate.main_branch(self.root, self.svc.config.main_branch)
        try:
            found = base_findings(self.svc.vault, main)
        except Exception as exc:  # no main branch yet, unreadable history...
            return [{"key": "error", "kind": "error", "message": f"check --base {main}: {exc}", "path": ""}]
        by_path = {m.path: m for m in self.snapshot().mems}
        out = []
        for f in found:
            kind = (
                "duplicate"
                if "duplicates" in f.message
                else "contradiction"
                if "contradicts" in f.message
                else "other"
            )
            if kind == "other" and "secret" not in f.message.lower():
                continue
            key = "finding:" + hashlib.sha1(f"{f.path}\0{f.message}".encode()).hexdigest()[:16]
            m = by_path.get(f.path)
            out.append(
                {
                    "key": key,
                    "kind": kind,
                    "path": f.path,
                    "line": f.line,
                    "message": f.message,
                    "id": m.id if m else None,
                    "title": m.title if m else f.path,
                }
            )
        return out

    def memories(
        self,
        *,
        q: str | None = None,
        types: list[str] | None = None,
        status: str | None = None,
        topics: list[str] | None = None,
        files: list[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        include_superseded: bool = False,
        mode: str = "hybrid",
        limit: int = 50,
        offset: int = 0,
    ) -> dict[str, Any]:
        from ccmemory.core.model import parse_when

        self.refresh()
        when = {k: parse_when(v) if v else None for k, v in (("since", since), ("until", until))}
        for k, v in (("since", since), ("until", until)):
            if v and when[k] is None:
                raise ValueError(f"{k}: {v!r} is not a date, a timestamp or an age like 7d")
        f = self.svc.filters(
            types=types or None,
            status=status or None,
            topics=topics or None,
            files=files or None,
            since=when["since"],
            until=when["until"],
            include_superseded=include_superseded,
        )
        if q and q.strip():
            from ccmemory.text.timewords import apply as time_words

            words, span = time_words(q, f)  # "decisions from last week": a date range (issue 30)
            resp = self.svc.search(words, f, limit=min(limit + offset, 200), mode=mode)
            hits = resp.hits[offset : offset + limit]
            notices = list(resp.notices)
            if span is not None:
                d = span.as_dict()
                notices.insert(
                    0, f"{span.phrase!r}: since {d['since'] or 'the start'}, before {d['until'] or 'now'}"
                )
            return {
                "query": q,
                "mode_used": resp.mode,
                "notices": notices,
                "results": [card(h.memory, score=round(h.score, 4)) for h in hits],
                "total": None,
            }
        found = self.svc.view.query(f, limit=limit, offset=offset)
        return {
            "query": None,
            "results": [card(m) for m in found],
            "total": self.svc.view.count(f),
            "offset": offset,
            "limit": limit,
        }

    def memory(self, ref: str) -> dict[str, Any] | None:
        self.refresh()
        t = self.svc.trace(ref, depth=1)
        if t is None:
            return None
        m = t.root
        sup = self.svc.superseded_by([x.id for x in t.chain])
        uses = Counter(
            k for _, k, _, mid, _ in self.store.events(["surfaced", "searched", "retrieved"]) if mid == m.id
        )
        return {
            "memory": card(
                m, body=m.body, fields=m.fields, files=m.files, confidence=m.confidence, source=m.source
            )
            | {"superseded": m.id in self.snapshot().superseded},
            "relations": [
                {
                    "relation": s.label,
                    "direction": s.direction,
                    "other": card(t.nodes[s.edge.dst if s.direction == "out" else s.edge.src]),
                    "reason": s.edge.reason,
                }
                for s in t.steps
            ],
            "chain": [card(x, superseded=x.id in sup) for x in t.chain],
            "usage": dict(uses),
        }

    def retrievals(self, limit: int = 50) -> dict[str, Any]:
        def build() -> dict[str, Any]:
            snap = self.snapshot()
            evs = self.store.events(["surfaced", "searched", "retrieved"])
            sessions: dict[str, dict[str, Any]] = {}
            count: Counter[str] = Counter()
            for ts, kind, session, mid, _n in evs:
                s = sessions.setdefault(
                    session or "(no session)",
                    {
                        "session": session or "(no session)",
                        "first": ts,
                        "last": ts,
                        "surfaced": 0,
                        "searched": 0,
                        "retrieved": 0,
                        "memories": set(),
                    },
                )
                s["first"] = min(s["first"], ts)
                s["last"] = max(s["last"], ts)
                s[kind] += 1
                if mid:
                    s["memories"].add(mid)
                    if kind in ("surfaced", "retrieved"):
                        count[mid] += 1
            rows = sorted(sessions.values(), key=lambda s: s["last"], reverse=True)
            for r in rows:
                r["memories"] = len(r["memories"])
            current = [m for m in snap.mems if m.id not in snap.superseded]
            seen = {e[3] for e in evs}
            never = [card(m) for m in current if m.id not in seen]
            most = [card(snap.by_id[i], uses=c) for i, c in count.most_common(50) if i in snap.by_id]
            from ccmemory.features.recall.usage import USAGE_KINDS, summarise

            recall = summarise(self.store.events(list(USAGE_KINDS))).as_dict()
            return {
                "telemetry_enabled": self.store.config.enabled,
                "recall": recall,
                "events": len(evs),
                "sessions": rows,
                "never_retrieved": {"count": len(never), "items": never},
                "most_retrieved": most,
            }

        data = dict(self.cached("retrievals", build))
        data["sessions"] = data["sessions"][:limit]
        data["never_retrieved"] = {
            **data["never_retrieved"],
            "items": data["never_retrieved"]["items"][:limit],
        }
        data["most_retrieved"] = data["most_retrieved"][:limit]
        return data

    def patterns(self, limit: int = 50) -> dict[str, Any]:
        def build() -> dict[str, Any]:
            from ccmemory.features import analysis

            snap = self.snapshot()
            return {
                "exception_clusters": [
                    {
                        "by": c["by"],
                        "key": c["key"],
                        "size": len(c["members"]),
                        "members": [card(m) for m in c["members"][:MEMBERS]],
                    }
                    for c in analysis.exception_clusters(snap.mems, 2)
                ],
                "supersession_chains": [
                    [card(m) for m in chain]
                    for chain in analysis.supersession_chains(snap.mems, snap.edges, 3)
                ],
                "correction_hotspots": [
                    {
                        "by": h["by"],
                        "key": h["key"],
                        "count": h["count"],
                        "members": [card(m) for m in h["members"][:MEMBERS]],
                    }
                    for h in analysis.correction_hotspots(snap.mems, 2)
                ],
            }

        data = self.cached("patterns", build)
        return {k: v[:limit] for k, v in data.items()}

    def graph(
        self, *, topic: str | None = None, file: str | None = None, limit: int = 3000
    ) -> dict[str, Any]:
        from ccmemory.surfaces.dashboard.layout import layout

        def build() -> dict[str, Any]:
            snap = self.snapshot()
            mems = snap.mems
            seed = _graph_seed(mems, topic, file)
            keep = _one_hop(seed, snap.edges) if topic or file else set(seed)
            chosen = [m for m in mems if m.id in keep][: max(1, min(limit or 3000, GRAPH_MAX))]
            ids = {m.id for m in chosen}
            edges = [
                (e.src, e.dst, e.type) for e in snap.edges if e.src in ids and e.dst in ids and e.src != e.dst
            ]
            pos = layout(chosen, edges)
            return {
                "nodes": [_graph_node(m, pos[m.id], m.id in snap.superseded) for m in chosen],
                "edges": [{"src": s, "dst": d, "type": t} for s, d, t in edges],
                "total_memories": len(mems),
                "truncated": len(keep) > len(chosen),
            }

        out: dict[str, Any] = self.cached(f"graph:{topic}:{file}:{limit}", build)
        return out

    def team(self, limit: int = 50) -> dict[str, Any]:
        def build() -> dict[str, Any]:
            snap = self.snapshot()
            now = datetime.now(UTC)
            weeks = [(now - timedelta(days=7 * (w + 1))) for w in range(7, -1, -1)]
            bounds = [(mx.iso(w), mx.iso(w + timedelta(days=7))) for w in weeks]
            authors: dict[str, dict[str, Any]] = {}
            for m in snap.mems:
                a = m.author or "unknown"
                row = authors.setdefault(
                    a,
                    {
                        "author": a,
                        "memories": 0,
                        "curated": 0,
                        "developmental": 0,
                        "per_week": [0] * len(weeks),
                        "topics": Counter(),
                    },
                )
                row["memories"] += 1
                row[m.status] = row.get(m.status, 0) + 1
                for i, (lo, hi) in enumerate(bounds):
                    if lo <= m.created < hi:
                        row["per_week"][i] += 1
                for t in m.topics:
                    row["topics"][t] += 1
            by_topic: dict[str, Counter[str]] = defaultdict(Counter)
            for m in snap.mems:
                for t in m.topics:
                    by_topic[t][m.author or "unknown"] += 1
            single: list[dict[str, Any]] = [
                {"topic": t, "author": next(iter(c)), "memories": sum(c.values())}
                for t, c in by_topic.items()
                if len(c) == 1 and sum(c.values()) >= 3
            ]
            single.sort(key=lambda r: (-r["memories"], r["topic"]))
            rows = sorted(authors.values(), key=lambda r: -r["memories"])
            for r in rows:
                r["top_topics"] = [t for t, _ in r.pop("topics").most_common(5)]
            return {
                "source": "neo4j (shared index)"
                if self.svc.config.backend == "neo4j"
                else "git authorship / frontmatter author",
                "weeks": [w.strftime("%Y-%m-%d") for w in weeks],
                "authors": rows,
                "single_holder_topics": single,
                "rule": "a topic with 3+ memories, all by one author",
            }

        data = dict(self.cached("team", build))
        data["authors"] = data["authors"][:limit]
        data["single_holder_topics"] = data["single_holder_topics"][:limit]
        return data

    # --- actions ---------------------------------------------------------------------------------
    def promote(self, branch: str | None) -> dict[str, Any]:
        from ccmemory.features.lifecycle.gitread import is_memory_rel
        from ccmemory.features.lifecycle.promote import promote

        res = promote(self.root, branch or None, configured_main=self.svc.config.main_branch)
        self.refresh(force=True)
        promoted = []
        if res.new_main:
            paths = {p for c, p in res.changes if c != "D" and is_memory_rel(p)}
            promoted = [m.id for m in self.snapshot().mems if m.path in paths]
            self.store.add("promoted", promoted, source="dashboard")
        return {
            "branch": res.branch,
            "main": res.main,
            "new_main": res.new_main,
            "changes": [{"change": c, "path": p} for c, p in res.changes],
            "promoted_ids": promoted,
        }

    def dismiss(self, key: str) -> None:
        self.store.dismiss(key)
        self._cache.pop("review", None)

    # --- suggestions (issue 31) --------------------------------------------------------------------
    def suggestions(self, limit: int = 50) -> dict[str, Any]:
        """The current suggestions (features.suggest, dismissed and accepted ones left out), each
        with its evidence as memory cards (links to their pages)."""

        def build() -> dict[str, Any]:
            from ccmemory.features import suggest

            snap = self.snapshot()
            by_id = {m.id: m for m in snap.mems}
            items = []
            for s in suggest.suggestions(self.svc):
                evidence = []
                for i in s.evidence:
                    m = by_id.get(i) or self.svc.get(i)
                    evidence.append(card(m) if m is not None else {"id": i, "missing": True})
                items.append({**s.as_dict(), "evidence_memories": evidence})
            return {"suggestions": items, "count": len(items)}

        data = dict(self.cached("suggestions", build))
        data["suggestions"] = data["suggestions"][:limit]
        return data

    def accept_suggestion(self, key: str) -> dict[str, Any] | None:
        """Write the memory suggestion `key` proposes (features.suggest.accept: the one builder,
        redacted and validated; a new file, uncommitted). None: no such current suggestion (an
        accepted or dismissed one is not current, so a second click never writes it twice)."""
        from ccmemory.features import suggest

        found = next((s for s in suggest.suggestions(self.svc) if s.key == key), None)
        if found is None:
            return None
        rec = suggest.accept(self.svc, found)
        self.refresh(force=True)
        self._cache.clear()
        return {
            "key": found.key,
            "accepted": True,
            "id": rec.memory.id,
            "path": rec.path,
            "status": rec.status,
            "notice": rec.notice,
        }

    def dismiss_suggestion(self, key: str) -> bool:
        """Never show suggestion `key` again (features.suggest.dismiss). False: no such suggestion."""
        from ccmemory.features import suggest

        if not any(s.key == key for s in suggest.suggestions(self.svc)):
            return False
        suggest.dismiss(self.svc, key)
        self._cache.pop("suggestions", None)
        return True
