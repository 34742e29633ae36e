"""Segment -> a plan of 0–5 new memories: validated, redacted, deduplicated, with `supersedes`.

Planning is separate from writing: the worker stores the plan in the job file before writing any
memory file, so a job killed half-way is finished from its plan without asking the LLM again and
without writing a memory twice (plan ids are deterministic per job; existing ids are skipped).

Duplicates: a candidate is dropped when an existing memory of the same type has the same
normalised title, or a lexical similarity >= DUPLICATE (0.75) on title or title+body.
Superseding: existing memories of the same type with similarity >= SUPERSEDE_MIN (0.3) are
candidates; an LLM (the small signal model) confirms which ones the new memory replaces. Without an
LLM only strong overlaps (>= SUPERSEDE_RULES, 0.5) of decisions, preferences, facts and
corrections are taken. Only the NEW file gets `supersedes`; old files are never touched.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ccmemory.capture import rules
from ccmemory.capture.ids import stable_ulid
from ccmemory.capture.providers.base import Completion, ProviderError
from ccmemory.capture.providers.choose import Choice
from ccmemory.capture.segment import Segment
from ccmemory.capture.settings import CaptureSettings
from ccmemory.capture.signals import STRONG, classify_all
from ccmemory.capture.store import Store, similarity
from ccmemory.capture.usage import Budget
from ccmemory.model import TYPES, Memory, Relation, format_timestamp, parse_timestamp, validate
from ccmemory.redact import redact

log = logging.getLogger("ccmemory.capture")

DUPLICATE = 0.75
SUPERSEDE_MIN = 0.3
SUPERSEDE_RULES = 0.5
MAX_TITLE = 120
MAX_BODY = 4000
_DECISIONISH = re.compile(
    r"(?i)\b(decid\w*|chose|choose|instead of|trade-?off|went with|root cause|turns out|"
    r"workaround|gotcha|because)\b"
)

SYSTEM_PROMPT = """You extract durable project memory from a Claude Code work segment.
Return ONLY a JSON object: {"memories": [ ... ]} with 0 to MAXN items. An empty list is normal:
most segments contain nothing a teammate would need in a future session. Never invent facts.
Never copy secrets, tokens, passwords or personal data.

Each memory: {"type": T, "title": "<= 100 chars, specific", "body": "1-5 sentences a teammate
understands without the session", "topics": ["short-tag"], "files": ["repo/relative/path"],
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
Prefer corrections and preferences (the user's own words) over things the assistant did.
The user's signal in this segment: SIGNALS."""

SUPERSEDE_SYSTEM = """SUPERSEDE-CHECK. You decide whether a NEW project memory replaces older ones
(same subject, and the new one changes, reverses or updates what the old one says). Related but
compatible memories are NOT superseded. Return ONLY JSON: {"supersedes": ["<old id>", ...]}."""


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


# --- deciding whether to call an LLM -----------------------------------------------------------


def worth_llm(seg: Segment, signals: list[str]) -> tuple[bool, str]:
    """Skip segments with nothing worth extracting, without calling an LLM."""
    if seg.is_empty():
        return False, "empty segment"
    prompts = [p for p in seg.prompts if not rules.is_explicit_prompt(p)]
    if not prompts and not seg.errors and not seg.compact_summary:
        return False, "only explicit commands"
    if STRONG & set(signals):
        return True, "user signal: " + ",".join(s for s in signals if s in STRONG)
    if seg.errors or any(code not in (None, 0) for _, code in seg.commands):
        return True, "errors or failing commands"
    if seg.compact_summary:
        return True, "compaction summary"
    if seg.files_modified and _DECISIONISH.search(seg.last_assistant):
        return True, "changes with a stated reason"
    return False, "no correction/preference/context signal, no errors, no stated decision"


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


def to_memory(cand: dict[str, Any], ctx: Context, mid: str, extractor: str) -> Memory | None:
    """A validated, redacted Memory from a candidate dict, or None when unusable."""
    mtype = str(cand.get("type", "")).strip().lower().replace("-", "_").replace(" ", "_")
    if mtype not in TYPES:
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
    source = ctx.source or (cand.get("source") if cand.get("source") in ("llm", "explicit") else "llm")
    mem = Memory(
        id=mid,
        type=mtype,
        title=title,
        created=ctx.created,
        body=body,
        author=ctx.author,
        session=ctx.session,
        branch=ctx.branch,
        topics=_str_list(cand.get("topics"), 8),
        files=_str_list(cand.get("files"), 20),
        confidence=confidence,
        source=source,
        fields=fields,
        extra={"extractor": extractor} if source != "explicit" else {},
    )
    if any(p.level == "error" for p in validate(mem.to_frontmatter())):
        return None
    return mem


def memory_to_json(mem: Memory) -> dict[str, Any]:
    return {
        "id": mem.id,
        "type": mem.type,
        "title": mem.title,
        "created": format_timestamp(mem.created),
        "body": mem.body,
        "author": mem.author,
        "session": mem.session,
        "branch": mem.branch,
        "topics": mem.topics,
        "files": mem.files,
        "confidence": mem.confidence,
        "source": mem.source,
        "supersedes": mem.supersedes,
        "relations": [r.to_dict() for r in mem.relations],
        "fields": mem.fields,
        "extra": mem.extra,
    }


def memory_from_json(data: dict[str, Any]) -> Memory:
    created = parse_timestamp(data["created"]) or datetime.now(UTC)
    return Memory(
        id=data["id"],
        type=data["type"],
        title=data["title"],
        created=created,
        body=data.get("body", ""),
        author=data.get("author"),
        session=data.get("session"),
        branch=data.get("branch"),
        topics=list(data.get("topics") or []),
        files=list(data.get("files") or []),
        confidence=data.get("confidence"),
        source=data.get("source"),
        supersedes=list(data.get("supersedes") or []),
        relations=[Relation(r["type"], r["target"], r.get("reason")) for r in data.get("relations") or []],
        fields=dict(data.get("fields") or {}),
        extra=dict(data.get("extra") or {}),
    )


# --- the planner ---------------------------------------------------------------------------------


class Planner:
    def __init__(self, store: Store, choice: Choice, settings: CaptureSettings, budget: Budget | None):
        self.store = store
        self.choice = choice
        self.settings = settings
        self.budget = budget

    def _call(
        self, system: str, prompt: str, *, model: str, max_tokens: int, purpose: str
    ) -> Completion | None:
        """One budgeted LLM call. None when over budget. ProviderError propagates (retry)."""
        assert self.choice.provider is not None
        system, prompt = redact(system), redact(prompt)  # last line of defence
        if self.budget is not None:
            ok, why = self.budget.allows(len(prompt) // 4 + max_tokens)
            if not ok:
                log.info("LLM call skipped: %s", why)
                return None
        try:
            completion = self.choice.provider.complete(system, prompt, model=model, max_tokens=max_tokens)
        except ProviderError as exc:
            if self.budget is not None:
                self.budget.record(None, provider=self.choice.name, purpose=purpose, ok=False, note=str(exc))
            raise
        if self.budget is not None:
            self.budget.record(completion, provider=self.choice.name, purpose=purpose, ok=True)
        return completion

    def plan(self, seg: Segment, ctx: Context) -> Plan:
        plan = Plan(signals=classify_all(seg.prompts))
        cands: list[tuple[dict[str, Any], str]] = [(c, "explicit") for c in rules.explicit(seg)]
        worth, why = worth_llm(seg, plan.signals)
        plan.notes.append(why)
        if self.choice.name == "none":
            pass
        elif self.choice.is_llm and worth:
            llm_cands = self._extract_llm(seg, plan)
            if llm_cands is None:  # over budget: fall back to rules
                cands += [(c, "rules") for c in rules.corrections(seg)]
            else:
                cands += [(c, self.choice.name) for c in llm_cands]
        elif not self.choice.is_llm:
            cands += [(c, "rules") for c in rules.corrections(seg)]
            cands += [(c, "rules") for c in rules.references(seg, ctx.root)]
        limit = self.settings.max_memories_per_segment
        explicit_count = sum(1 for _, how in cands if how == "explicit")
        cands = cands[: max(limit, explicit_count)]
        batch: list[Memory] = []
        for index, (cand, how) in enumerate(cands):
            mid = stable_ulid(f"{ctx.job_key}#{index}", int(ctx.created.timestamp() * 1000))
            mem = to_memory(cand, ctx, mid, how)
            if mem is None:
                plan.skipped.append(
                    {"title": str(cand.get("title", ""))[:100], "reason": "invalid candidate"}
                )
                continue
            dup = self._duplicate_of(mem, batch)
            if dup:
                plan.skipped.append({"title": mem.title, "reason": f"duplicate of {dup}"})
                continue
            mem.supersedes = self._supersedes(mem)
            batch.append(mem)
        plan.memories = [memory_to_json(m) for m in batch]
        return plan

    def _extract_llm(self, seg: Segment, plan: Plan) -> list[dict[str, Any]] | None:
        system = SYSTEM_PROMPT.replace("MAXN", str(self.settings.max_memories_per_segment))
        system = system.replace("SIGNALS", ", ".join(plan.signals) or "task")
        prompt = "Work segment:\n\n" + seg.to_text()
        completion = self._call(system, prompt, model=self.settings.model, max_tokens=2000, purpose="extract")
        if completion is None:
            plan.notes.append("over budget: rules only")
            return None
        plan.llm_called = True
        try:
            return parse_reply(completion.text)
        except ValueError as exc:
            plan.notes.append(f"provider reply unusable: {exc}")
            log.warning("provider reply unusable (%d chars): %s", len(completion.text), exc)
            return []

    def _duplicate_of(self, mem: Memory, batch: list[Memory]) -> str | None:
        norm = _norm_title(mem.title)
        for other in batch:
            if other.type == mem.type and (
                _norm_title(other.title) == norm or similarity(other.title, mem.title) >= DUPLICATE
            ):
                return other.id
        for existing, score in self.store.candidates(mem, limit=10):
            if existing.id == mem.id:
                return existing.id
            if existing.type != mem.type:
                continue
            if _norm_title(existing.title) == norm or score >= DUPLICATE:
                return existing.id
        return None

    def _supersedes(self, mem: Memory) -> list[str]:
        cands = [
            (e, s)
            for e, s in self.store.candidates(mem, limit=10)
            if e.type == mem.type and SUPERSEDE_MIN <= s < DUPLICATE and e.id != mem.id
        ][:5]
        if not cands:
            return []
        if self.choice.is_llm:
            lines = [f"NEW: {mem.title}", f"NEW BODY: {mem.body[:600]}", ""]
            for e, _ in cands:
                lines.append(f"OLD {e.id}: {e.title}")
                lines.append(f"OLD BODY {e.id}: {e.body.strip()[:400]}")
            try:
                completion = self._call(
                    SUPERSEDE_SYSTEM,
                    "\n".join(lines),
                    model=self.settings.signal_model,
                    max_tokens=200,
                    purpose="supersede",
                )
            except ProviderError as exc:
                log.info("supersede check failed, not superseding: %s", exc)
                return []
            if completion is not None:
                try:
                    obj = json.loads(re.sub(r"```(?:json)?", "", completion.text).strip())
                    wanted = obj.get("supersedes") if isinstance(obj, dict) else None
                except ValueError:
                    wanted = None
                allowed = {e.id for e, _ in cands}
                return [i for i in wanted or [] if isinstance(i, str) and i in allowed][:3]
        strong_types = ("decision", "preference", "fact", "correction")
        return [e.id for e, s in cands if s >= SUPERSEDE_RULES and mem.type in strong_types][:3]


def _norm_title(title: str) -> str:
    return re.sub(r"\W+", " ", title.casefold()).strip()


def apply_plan(plan: Plan, store: Store) -> tuple[list[Path], list[str]]:
    """Write the plan's memories that do not exist yet. Returns (paths written, ids skipped)."""
    existing = store.existing_ids()
    written: list[Path] = []
    skipped: list[str] = []
    for data in plan.memories:
        if data["id"] in existing:
            skipped.append(data["id"])
            continue
        written.append(store.record(memory_from_json(data)))
        existing.add(data["id"])
    return written, skipped
