"""Segments -> a plan of new memories: validated, redacted, compared with what exists, linked.

Planning is separate from writing: the worker stores the plan in the job file before writing any
memory file, so a job killed half-way is finished from its plan without asking the LLM again and
without writing a memory twice (plan ids are deterministic per job and extractor; existing ids are
skipped).

What reaches the LLM: every substantive segment (anything but empty segments, explicit commands
and bare acknowledgements). Signals annotate segments for the model; they never veto a call.
Several segments can share one call (`plan_batch`, used by `import`); a per-session budget bounds
the cost, and a segment over budget falls back to the rules.

Comparing with what exists: the nearest memories come from the index's own hybrid search
(`Store.nearest`) plus a lexical scan. With an LLM provider one cheap follow-up call classifies
every close pair (duplicate / supersedes / distinct); without one, `polarity.classify` decides,
stance first. An automatic capture that duplicates a memory is dropped; an explicit command
(`/decision`, `/correction`, `/exception`, `/remember`) is never dropped: it supersedes what it
reverses and is related to what it restates. Only the NEW file gets the links; old files are never
touched. An exact replay (same job, same command) has the same id and is skipped.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ccmemory.app.draft import DraftError, build_memory
from ccmemory.core.ids import stable_ulid
from ccmemory.core.model import TYPES, Memory, Relation
from ccmemory.core.redact import redact
from ccmemory.core.repopath import repo_paths
from ccmemory.features.capture import polarity, rules
from ccmemory.features.capture.providers.base import Completion, ProviderError
from ccmemory.features.capture.providers.choose import Choice
from ccmemory.features.capture.segment import Segment
from ccmemory.features.capture.settings import CaptureSettings
from ccmemory.features.capture.signals import classify_all
from ccmemory.features.capture.store import Existing, Store
from ccmemory.features.capture.usage import Budget, budgeted_complete

log = logging.getLogger("ccmemory.features.capture")

# bump when extraction changes enough that an import should run again (done-markers key on it)
EXTRACTOR_VERSION = 2
MAX_TITLE = 120
MAX_BODY = 4000
MAX_LINKS = 3
_TRIVIAL = re.compile(
    r"(?i)^\s*(?:ok(?:ay)?|k|thanks?(?:\s+you)?|ty|thx|yes|yep|yeah|no|nope|sure|go(?:\s+on|\s+ahead)?|"
    r"continue|proceed|lgtm|perfect|great|nice|cool|done|good|next|y|n)\s*[.!]*\s*$"
)

SYSTEM_PROMPT = """You extract durable project memory from Claude Code work segments.
The input holds one or more numbered segments. Return ONLY a JSON object: {"memories": [ ... ]}
with 0 to MAXN items per segment; give each memory "segment": <its number>. An empty list is
normal: most segments contain nothing a teammate would need in a future session. Never invent
facts. Never copy secrets, tokens, passwords or personal data. Keep the user's stance exactly:
what the user rejected is never what a memory recommends.

Each memory: {"segment": N, "type": T, "title": "<= 100 chars, specific", "body": "1-5 sentences a
teammate understands without the session", "topics": ["short-tag"], "files": ["repo/relative/path"],
"confidence": 0.0-1.0, "fields": {type-specific fields}}.
Types and their fields:
- correction: the user corrected a wrong belief. wrong_belief, right_belief,
  severity (minor|significant|critical)
- preference: how the user wants things done. scope (project|global)
- decision: a choice with a reason. rationale, options_considered (list), revisit_trigger
- exception: a rule deliberately broken. rule_broken, justification,
  scope (one-time|conditional|new-precedent)
- failed_approach: something tried that did not work. approach, outcome, lesson
- fact: a stable project fact. category (convention|constraint|architecture|command|environment)
- gotcha: a trap worth a warning. severity (minor|significant|critical)
- insight: category (realization|analysis|strategy|personal|synthesis), implications
- question: an open or answered question. question, answer
- pattern: a recurring approach. (no fields)
- reference: a useful URL or document. uri, ref_type (url|file|doc)
Prefer corrections, decisions and preferences (the user's own words) over things the assistant
did. Each segment header lists signals a cheap rule saw; they are hints, not filters: judge every
segment yourself."""

PAIR_SYSTEM = """SUPERSEDE-CHECK. For each NEW project memory and each OLD memory listed under it,
decide: "duplicate" (says the same thing with the same stance), "supersedes" (same subject, and
NEW reverses, replaces or updates OLD), or "distinct" (compatible or unrelated). A reversal is
never a duplicate. Return ONLY JSON:
{"pairs": [{"new": <n>, "old": "<old id>", "relation": "duplicate|supersedes|distinct"}]}."""


@dataclass
class Context:
    root: Path
    session: str | None
    branch: str | None
    author: str | None
    job_key: str
    created: datetime
    source: str | None = None  # forced source (e.g. "import")


@dataclass
class Plan:
    memories: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    signals: list[str] = field(default_factory=list)
    llm_called: bool = False
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "memories": self.memories,
            "skipped": self.skipped,
            "signals": self.signals,
            "llm_called": self.llm_called,
            "notes": self.notes,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        return cls(
            list(data.get("memories", [])),
            list(data.get("skipped", [])),
            list(data.get("signals", [])),
            bool(data.get("llm_called")),
            list(data.get("notes", [])),
        )


# --- which segments reach the LLM ---------------------------------------------------------------


def substantive(seg: Segment) -> tuple[bool, str]:
    """Whether a segment goes to the model. Content decides, never a signal: only empty segments,
    explicit commands (handled without an LLM) and bare acknowledgements stay out."""
    if seg.is_empty():
        return False, "empty segment"
    prompts = [p for p in seg.prompts if not rules.is_explicit_prompt(p)]
    if any(not _TRIVIAL.match(p) for p in prompts):
        return True, "user prompt"
    if seg.errors or any(code not in (None, 0) for _, code in seg.commands):
        return True, "errors or failing commands"
    if seg.compact_summary:
        return True, "compaction summary"
    if seg.files_modified or (seg.tool_calls and seg.last_assistant):
        return True, "work done"
    if prompts:
        return False, "only acknowledgements"
    return False, "only explicit commands"


# --- parsing and validating candidates ---------------------------------------------------------


def parse_reply(text: str) -> list[dict[str, Any]]:
    """The memories list from a provider reply. Tolerates code fences and prose around the JSON.
    Raises ValueError on a reply without a usable JSON object."""
    cleaned = re.sub(r"```(?:json)?", "", text).strip()
    decoder = json.JSONDecoder()
    for start in [i for i, ch in enumerate(cleaned) if ch in "{["][:20]:
        try:
            obj, _ = decoder.raw_decode(cleaned[start:])
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("memories"), list):
            return [m for m in obj["memories"] if isinstance(m, dict)]
        if isinstance(obj, list) and all(isinstance(m, dict) for m in obj):
            return list(obj)
    raise ValueError('reply holds no JSON {"memories": [...]}')


def _str_list(value: Any, limit: int = 10) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [redact(str(v)).strip()[:200] for v in value if str(v).strip()][:limit]


#: proposed by the user or accepted from `ccmemory suggest`, never written by capture on its own
NOT_CAPTURED = frozenset({"hypothesis"})


def to_memory(cand: dict[str, Any], ctx: Context, mid: str, extractor: str) -> Memory | None:
    """A validated, redacted Memory from a candidate dict, or None when unusable."""
    mtype = str(cand.get("type", "")).strip().lower().replace("-", "_").replace(" ", "_")
    if mtype not in TYPES or mtype in NOT_CAPTURED:
        return None
    spec = TYPES[mtype]
    title = redact(str(cand.get("title") or "")).strip().replace("\n", " ")
    if not title or (title.startswith("[REDACTED") and len(title) < 30):
        return None
    title = title[:MAX_TITLE]
    body = redact(str(cand.get("body") or "")).strip()[:MAX_BODY]
    given = cand.get("fields")
    raw_fields: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    # accept type fields given at the top level too
    for name in spec.fields:
        if name in cand and name not in raw_fields:
            raw_fields[name] = cand[name]
    fields: dict[str, Any] = {}
    for name in spec.fields:
        value = raw_fields.get(name)
        if value in (None, "", []):
            continue
        if name in spec.enums:
            value = str(value).strip().lower()
            if value not in spec.enums[name]:
                continue
        elif name == "options_considered":
            value = _str_list(value)
        elif name == "sets_precedent":
            value = bool(value)
        else:
            value = redact(str(value)).strip()[:1000]
        fields[name] = value
    conf = cand.get("confidence")
    confidence = None
    if isinstance(conf, int | float) and not isinstance(conf, bool):
        confidence = round(min(1.0, max(0.0, float(conf))), 2)
    source = ctx.source or (
        cand.get("source") if cand.get("source") in ("llm", "rules", "explicit") else "llm"
    )
    try:  # the one builder (ccmemory/draft.py): redacted again, validated
        return build_memory(
            mtype,
            title,
            body=body,
            topics=_str_list(cand.get("topics"), 8),
            files=repo_paths(_str_list(cand.get("files"), 20), ctx.root)[0],  # outside: dropped
            confidence=confidence,
            session=ctx.session,
            source=source,
            fields=fields,
            author=ctx.author,
            branch=ctx.branch,
            created=ctx.created,
            mid=mid,
            extra={"extractor": extractor} if source != "explicit" else {},
        )
    except DraftError:
        return None


# --- the planner ---------------------------------------------------------------------------------


@dataclass
class _Pending:
    plan: int  # index of the plan (segment) it belongs to
    memory: Memory
    explicit: bool
    near: list[Existing] = field(default_factory=list)
    verdicts: dict[str, str] = field(default_factory=dict)  # old id -> relation


class Planner:
    def __init__(self, store: Store, choice: Choice, settings: CaptureSettings, budget: Budget | None):
        self.store = store
        self.choice = choice
        self.settings = settings
        self.budget = budget
        self.calls = 0  # LLM calls made by this planner
        self.input_tokens = 0

    def _call(
        self, system: str, prompt: str, *, model: str, max_tokens: int, purpose: str
    ) -> Completion | None:
        """One budgeted LLM call. None when over budget. ProviderError propagates (retry)."""
        assert self.choice.provider is not None
        completion = budgeted_complete(
            self.choice, self.budget, system, prompt, model=model, max_tokens=max_tokens, purpose=purpose
        )
        if completion is not None:
            self.calls += 1
            self.input_tokens += completion.input_tokens
        return completion

    def plan(self, seg: Segment, ctx: Context) -> Plan:
        return self.plan_batch([(seg, ctx)])[0]

    def plan_batch(self, items: list[tuple[Segment, Context]]) -> list[Plan]:
        """One plan per segment; the substantive segments share one extraction call."""
        plans = [Plan(signals=classify_all(seg.prompts)) for seg, _ in items]
        cands: list[list[tuple[dict[str, Any], str]]] = [
            [(c, "explicit") for c in rules.explicit(seg)] for seg, _ in items
        ]
        send: list[int] = []
        for i, (seg, _) in enumerate(items):
            ok, why = substantive(seg)
            plans[i].notes.append(why)
            if ok:
                send.append(i)
        if self.choice.name == "none":
            pass
        elif self.choice.is_llm:
            if send:
                got = self._extract_llm([items[i][0] for i in send], [plans[i] for i in send])
                for j, i in enumerate(send):
                    if got is None:  # over budget: the rules, precision first
                        cands[i] += self._rules(items[i][0], items[i][1])
                    else:
                        cands[i] += [(c, self.choice.name) for c in got[j]]
        else:
            for i, (seg, ctx) in enumerate(items):
                cands[i] += self._rules(seg, ctx)
        pending: list[_Pending] = []
        for i, (_, ctx) in enumerate(items):
            limit = self.settings.max_memories_per_segment
            explicit_count = sum(1 for _, how in cands[i] if how == "explicit")
            counters: dict[str, int] = {}
            for cand, how in cands[i][: max(limit, explicit_count)]:
                n = counters[how] = counters.get(how, -1) + 1
                key = f"{ctx.job_key}#{n}" if how == "explicit" else f"{ctx.job_key}#{how}#{n}"
                mid = stable_ulid(key, int(ctx.created.timestamp() * 1000))
                mem = to_memory(cand, ctx, mid, how)
                if mem is None:
                    plans[i].skipped.append(
                        {"title": str(cand.get("title", ""))[:100], "reason": "invalid candidate"}
                    )
                    continue
                low = self._below_floor(mem, how)
                if low:
                    plans[i].skipped.append({"title": mem.title[:100], "reason": low})
                    continue
                pending.append(_Pending(i, mem, how == "explicit"))
        self._compare(pending, plans)
        return plans

    def _below_floor(self, mem: Memory, how: str) -> str | None:
        """Why an automatic capture is dropped by `capture.min_confidence` (None: it is kept).
        Explicit captures are what the user asked for; a memory without a confidence passes."""
        floor = self.settings.floor(mem.type)
        if how == "explicit" or not floor or mem.confidence is None or mem.confidence >= floor:
            return None
        return f"confidence {mem.confidence} below capture.min_confidence for {mem.type} ({floor})"

    @staticmethod
    def _rules(seg: Segment, ctx: Context) -> list[tuple[dict[str, Any], str]]:
        return [(c, "rules") for c in rules.corrections(seg) + rules.references(seg, ctx.root)]

    def _extract_llm(self, segs: list[Segment], plans: list[Plan]) -> list[list[dict[str, Any]]] | None:
        """Memories per segment from one call; None when over budget."""
        system = SYSTEM_PROMPT.replace("MAXN", str(self.settings.max_memories_per_segment))
        parts = []
        for n, (seg, plan) in enumerate(zip(segs, plans, strict=True), 1):
            parts.append(f"### Segment {n} (signals: {', '.join(plan.signals) or 'task'})\n\n{seg.to_text()}")
        prompt = "Work segments:\n\n" + "\n\n".join(parts)
        completion = self._call(
            system, prompt, model=self.settings.model, max_tokens=1500 + 500 * len(segs), purpose="extract"
        )
        if completion is None:
            for plan in plans:
                plan.notes.append("over budget: rules only")
            return None
        for plan in plans:
            plan.llm_called = True
        out: list[list[dict[str, Any]]] = [[] for _ in segs]
        try:
            found = parse_reply(completion.text)
        except ValueError as exc:
            for plan in plans:
                plan.notes.append(f"provider reply unusable: {exc}")
            log.warning("provider reply unusable (%d chars): %s", len(completion.text), exc)
            return out
        for cand in found:
            seg_no = cand.get("segment")
            index = seg_no - 1 if isinstance(seg_no, int) and 1 <= seg_no <= len(segs) else len(segs) - 1
            out[index].append(cand)
        return out

    # --- comparing with what exists ----------------------------------------------------------------
    def _compare(self, pending: list[_Pending], plans: list[Plan]) -> None:
        existing_ids = self.store.existing_ids()
        live: list[_Pending] = []
        for p in pending:
            seen = p.memory.id if p.memory.id in existing_ids else None  # a job planned again
            seen = seen or (self.store.replayed(p.memory) if p.explicit else None)
            if seen:  # an exact replay: idempotent
                why = f"already written ({seen})"
                plans[p.plan].skipped.append({"title": p.memory.title, "reason": why})
                continue
            p.near = [e for e in self.store.nearest(p.memory) if e.id != p.memory.id]
            live.append(p)
        asked = self._classify_llm(live) if self.choice.is_llm else False
        batch: list[tuple[_Pending, Existing]] = []
        for p in live:
            mem = p.memory
            for e in p.near:
                if not asked or e.id not in p.verdicts:
                    p.verdicts[e.id] = _rules_verdict(mem, e)
            for earlier, as_existing in batch:  # memories planned just before this one
                if earlier.memory.id != mem.id:
                    p.verdicts.setdefault(as_existing.id, _rules_verdict(mem, as_existing))
            dup = next((i for i, v in p.verdicts.items() if v == "duplicate"), None)
            if dup and not p.explicit:
                plans[p.plan].skipped.append({"title": mem.title, "reason": f"duplicate of {dup}"})
                continue
            mem.supersedes = [i for i, v in p.verdicts.items() if v == "supersedes"][:MAX_LINKS]
            related = [(i, v) for i, v in p.verdicts.items() if v in ("duplicate", "related")]
            mem.relations = [
                Relation("RELATES_TO", i, "restates it" if v == "duplicate" else "same subject")
                for i, v in related[:MAX_LINKS]
            ]
            batch.append((p, _as_existing(mem)))
            plans[p.plan].memories.append(mem.to_dict())

    def _classify_llm(self, live: list[_Pending]) -> bool:
        """One follow-up call for every close pair. False when not asked (nothing to ask, over
        budget, provider error, unusable reply): the rules decide then."""
        asked = [p for p in live if p.near]
        if not asked:
            return False
        try:
            completion = self._call(
                PAIR_SYSTEM,
                _pairs_prompt(asked),
                model=self.settings.signal_model,
                max_tokens=60 + 40 * sum(len(p.near) for p in asked),
                purpose="classify",
            )
        except ProviderError as exc:
            log.info("pair check failed, rules decide: %s", exc)
            return False
        if completion is None:
            return False
        obj = _json_object(completion.text)
        return obj is not None and _take_verdicts(obj, asked)


def _pairs_prompt(asked: list[_Pending]) -> str:
    """Each new memory and its close existing ones, numbered, bodies clipped."""
    lines: list[str] = []
    for n, p in enumerate(asked, 1):
        lines += [f"NEW {n}: {p.memory.title}", f"NEW {n} BODY: {p.memory.body[:600]}"]
        for e in p.near:
            lines += [f"OLD {n} {e.id}: {e.title}", f"OLD {n} {e.id} BODY: {e.body.strip()[:400]}"]
        lines.append("")
    return "\n".join(lines)


def _json_object(text: str) -> dict[str, Any] | None:
    """The reply as a JSON object (code fences ignored), or None."""
    try:
        obj = json.loads(re.sub(r"```(?:json)?", "", text).strip())
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _take_verdicts(obj: dict[str, Any], asked: list[_Pending]) -> bool:
    """Set the verdicts the reply gives: `supersedes` (one new memory) or `pairs`, a pair left out
    being distinct. False when the reply has neither."""
    if isinstance(obj.get("supersedes"), list) and len(asked) == 1:  # the older, shorter answer
        wanted = {str(i) for i in obj["supersedes"]}
        for e in asked[0].near:
            asked[0].verdicts[e.id] = "supersedes" if e.id in wanted else "distinct"
        return True
    pairs = obj.get("pairs")
    if not isinstance(pairs, list):
        return False
    for pair in pairs:
        if not isinstance(pair, dict):
            continue
        num, old, rel = pair.get("new"), str(pair.get("old", "")), str(pair.get("relation", ""))
        if isinstance(num, int) and 1 <= num <= len(asked) and rel in polarity.RELATIONS:
            p = asked[num - 1]
            if any(e.id == old for e in p.near):
                p.verdicts[old] = rel
    for p in asked:  # a pair the model left out: distinct
        for e in p.near:
            p.verdicts.setdefault(e.id, "distinct")
    return True


def _as_existing(mem: Memory) -> Existing:
    return Existing(mem.id, mem.type, mem.title, mem.body + "\n" + mem.text_fields(), Path(), [], [])


def _rules_verdict(mem: Memory, e: Existing) -> str:
    new_text = f"{mem.title}\n{mem.body}\n{mem.text_fields()}"
    wrong = str(mem.fields.get("wrong_belief") or "")
    old_text = f"{e.title}\n{e.body}"
    return polarity.classify(mem.type, mem.title, new_text, e.type, e.title, old_text, new_rejected=wrong)


def _norm_title(title: str) -> str:
    return re.sub(r"\W+", " ", title.casefold()).strip()


def apply_plan(plan: Plan, store: Store) -> tuple[list[Path], list[str]]:
    """Write the plan's memories that do not exist yet. Returns (paths written, ids skipped)."""
    existing = store.existing_ids()
    written: list[Path] = []
    skipped: list[str] = []
    for data in plan.memories:
        try:  # a plan is read back from .ccmemory/local/: checked like a memory file
            memory = Memory.from_dict(data)
        except ValueError as exc:
            where = data.get("id") if isinstance(data, dict) else None
            log.warning("plan entry %s not written: %s", str(where)[:40], exc)
            skipped.append(str(where))
            continue
        if memory.id in existing:
            skipped.append(memory.id)
            continue
        written.append(store.record(memory))
        existing.add(memory.id)
    return written, skipped
