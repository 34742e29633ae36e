"""Memory types, fields and validation. Pure: no I/O, no heavy imports.

The frontmatter layout and the fourteen types are described in docs/file-format.md. Status is
never part of a memory: it is derived from git by the index.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

# --- types -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldSpec:
    """One type-specific field: what it holds and its limits. The MCP `record_*` tools are built
    from these (ccmemory/mcp/tools/record.py), so a field is described in one place."""

    name: str
    description: str
    kind: str = "text"  # "text" | "list" (of short texts) | "bool" | "enum"
    choices: tuple[str, ...] = ()  # the allowed values of an "enum" field
    max_length: int = 5000  # characters for text, items for a list
    min_length: int = 0  # > 0: the record tool requires it (characters)
    prose: bool = False  # indexed for full-text search

    @property
    def required(self) -> bool:
        return self.min_length > 0


@dataclass(frozen=True)
class TypeSpec:
    name: str
    folder: str
    own: tuple[FieldSpec, ...] = ()  # the type's own fields, in frontmatter order
    summary: str = ""  # what a memory of this type records (the record tool's description)
    title_from: str | None = None  # a field the title defaults to (question: the question)
    # the full MCP set has a `record_<type>` tool for it; the co-thinker types are recorded with
    # the generic `record` tool instead (each per-type tool costs ~3.4k characters of tool list)
    record_tool: bool = True

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.own)

    @property
    def text_fields(self) -> tuple[str, ...]:
        """Own fields that hold prose, indexed for full-text search."""
        return tuple(f.name for f in self.own if f.prose)

    @property
    def enums(self) -> dict[str, tuple[str, ...]]:
        return {f.name: f.choices for f in self.own if f.kind == "enum"}


def _enum(name: str, description: str, *choices: str) -> FieldSpec:
    return FieldSpec(name, description, "enum", choices)


def _prose(name: str, description: str, max_length: int = 5000, min_length: int = 0) -> FieldSpec:
    return FieldSpec(name, description, "text", (), max_length, min_length, prose=True)


_SEVERITY = ("minor", "significant", "critical")
#: a hypothesis without a status is open; supported/refuted need evidence (SUPPORTS/REFUTES edges)
HYPOTHESIS_STATUSES = ("open", "supported", "refuted")

TYPES: dict[str, TypeSpec] = {
    t.name: t
    for t in (
        TypeSpec(
            "decision",
            "decisions",
            (
                _prose("rationale", "Why this was chosen."),
                FieldSpec(
                    "options_considered", "The alternatives that were weighed.", "list", (), 20, prose=True
                ),
                _prose("revisit_trigger", "When to reconsider.", 500),
                FieldSpec("sets_precedent", "Whether later decisions should follow this one.", "bool"),
            ),
            "Record a decision (what was chosen and why).",
        ),
        TypeSpec(
            "correction",
            "corrections",
            (
                _prose("wrong_belief", "What was believed and turned out wrong.", 2000, 1),
                _prose("right_belief", "What is right instead.", 2000, 1),
                _enum("severity", "How much harm the wrong belief does.", *_SEVERITY),
            ),
            "Record a correction: something Claude (or the team) believed that turned out wrong, and what "
            "is right. Corrections rank first in search and session context.",
        ),
        TypeSpec(
            "preference",
            "preferences",
            (
                _enum(
                    "scope",
                    "global: applies in every project (written to your personal vault).",
                    "project",
                    "global",
                ),
            ),
            "Record a preference of the user or team (how they like things done).",
        ),
        TypeSpec(
            "exception",
            "exceptions",
            (
                _prose("rule_broken", "The rule or convention that was broken.", 1000, 1),
                _prose("justification", "Why breaking it was right here.", 2000, 1),
                _enum("scope", "How far the exception reaches.", "one-time", "conditional", "new-precedent"),
            ),
            "Record an exception: a rule that was deliberately broken, and why.",
        ),
        TypeSpec(
            "insight",
            "insights",
            (
                _enum(
                    "category",
                    "The kind of insight.",
                    "realization",
                    "analysis",
                    "strategy",
                    "personal",
                    "synthesis",
                ),
                _prose("implications", "What follows from it."),
            ),
            "Record an insight: a realization, analysis, strategy or synthesis worth keeping.",
        ),
        TypeSpec(
            "question",
            "questions",
            (
                _prose("question", "The question, as a teammate would ask it.", 2000, 3),
                _prose("answer", "The answer; leave empty while the question is open."),
            ),
            "Record a question. Leave `answer` empty for an open question (listed by "
            "query_open_questions); answer it later by superseding it with memory_supersede.",
            title_from="question",
        ),
        TypeSpec(
            "failed_approach",
            "failed-approaches",
            (
                _prose("approach", "What was tried.", 2000, 1),
                _prose("outcome", "What happened.", 2000, 1),
                _prose("lesson", "What to do instead, or what to watch for."),
            ),
            "Record a failed approach so nobody repeats it: what was tried, what happened, the lesson.",
        ),
        TypeSpec(
            "fact",
            "facts",
            (
                _enum(
                    "category",
                    "The kind of fact.",
                    "convention",
                    "constraint",
                    "architecture",
                    "command",
                    "environment",
                ),
            ),
            "Record a project fact: a convention, constraint, architecture note, command or environment "
            "detail.",
        ),
        TypeSpec(
            "gotcha",
            "gotchas",
            (_enum("severity", "How badly it bites.", *_SEVERITY),),
            "Record a gotcha: a trap in the code, tools or environment that bites whoever does not know "
            "it (describe the symptom and the way around it in the body).",
        ),
        TypeSpec(
            "pattern",
            "patterns",
            (),
            "Record a pattern: a recurring way this project solves a kind of problem, worth following "
            "(describe it and where it is used in the body).",
        ),
        TypeSpec(
            "reference",
            "references",
            (
                _prose("uri", "URL, path or document name.", 2000, 1),
                _enum("ref_type", "What the uri points at.", "url", "file", "doc"),
            ),
            "Record a reference: a URL, file or document worth coming back to, and why.",
        ),
        # the co-thinker types (issue 31): a concept the team uses, a hypothesis under test, and
        # what is not known yet
        TypeSpec(
            "concept",
            "concepts",
            (
                _prose("name", "The concept's name, as the team says it.", 200, 1),
                _prose("definition", "What it means here, in a sentence or two.", 2000, 1),
                _prose("domain", "The field it belongs to (e.g. software, billing, security).", 100),
            ),
            "Record a concept: a term the team uses, what it means here and its domain.",
            title_from="name",
            record_tool=False,
        ),
        TypeSpec(
            "hypothesis",
            "hypotheses",
            (
                _prose("statement", "What is believed to be true but not yet shown.", 2000, 3),
                _prose("prediction", "A testable prediction: what would be observed if it holds.", 2000),
                _enum("status", "open (default), supported or refuted.", *HYPOTHESIS_STATUSES),
            ),
            "Record a hypothesis with a testable prediction. Evidence links to it with a SUPPORTS or "
            "REFUTES relation; change its status by superseding it (memory_supersede).",
            title_from="statement",
            record_tool=False,
        ),
        TypeSpec(
            "knowledge_gap",
            "knowledge-gaps",
            (
                _prose("question", "What is not known yet.", 2000, 3),
                _prose("would_close", "What would close the gap: the source, test or observation.", 2000),
                _prose("answer", "The answer; leave empty while the gap is open."),
            ),
            "Record a knowledge gap: what is not known yet and what would close it. Close it by "
            "superseding it with one that has an answer.",
            title_from="question",
            record_tool=False,
        ),
    )
}
FOLDER_TO_TYPE: dict[str, str] = {spec.folder: name for name, spec in TYPES.items()}

RELATION_TYPES: tuple[str, ...] = (
    "SUPERSEDES",
    "DEPENDS_ON",
    "CONSTRAINS",
    "CONFLICTS_WITH",
    "IMPACTS",
    "CITES",
    "RELATES_TO",
    "SUPPORTS",
    "REFUTES",
)
# Reverse names used when an edge is read from its target's side. Never written to files.
REVERSE_NAMES: dict[str, str] = {
    "SUPERSEDES": "SUPERSEDED_BY",
    "DEPENDS_ON": "DEPENDED_ON_BY",
    "CONSTRAINS": "CONSTRAINED_BY",
    "CONFLICTS_WITH": "CONFLICTS_WITH",
    "IMPACTS": "IMPACTED_BY",
    "CITES": "CITED_BY",
    "RELATES_TO": "RELATES_TO",
    "SUPPORTS": "SUPPORTED_BY",
    "REFUTES": "REFUTED_BY",
}
#: evidence relations: the source memory (an observation: fact, correction, insight, ...) is
#: evidence for or against the target (a hypothesis, usually). Written on the evidence.
EVIDENCE_RELATIONS: tuple[str, ...] = ("SUPPORTS", "REFUTES")
SOURCES: tuple[str, ...] = ("llm", "rules", "explicit", "manual", "import")
COMMON_FIELDS: tuple[str, ...] = (
    "id",
    "type",
    "title",
    "created",
    "author",
    "session",
    "branch",
    "topics",
    "files",
    "confidence",
    "source",
    "supersedes",
    "relations",
    "applies_to",
)
LIST_FIELDS = frozenset({"topics", "files", "supersedes", "options_considered", "applies_to"})
# The index keeps `applies_to` (names of other projects a memory also applies to) inside a
# memory's fields, so both backends carry it without a schema change (docs/cross-project.md).
APPLIES_TO = "applies_to"


# --- ids -----------------------------------------------------------------------------------------

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_ULID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
_ulid_lock = threading.Lock()
_ulid_last: tuple[int, int] = (0, 0)


def new_id(now_ms: int | None = None) -> str:
    """A ULID: 48-bit millisecond time + 80 random bits, Crockford base32.

    Unique across machines without coordination, and lexicographically sortable by creation time.
    Within one process ids are strictly increasing even inside the same millisecond.
    """
    global _ulid_last
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    with _ulid_lock:
        last_ms, last_rand = _ulid_last
        if ms <= last_ms and now_ms is None:
            ms, rand = last_ms, (last_rand + 1) & ((1 << 80) - 1)
        else:
            rand = int.from_bytes(os.urandom(10), "big")
        if now_ms is None:  # an explicit time (e.g. from git history) never moves the process clock
            _ulid_last = (ms, rand)
    value = (ms << 80) | rand
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def is_ulid(value: str) -> bool:
    return bool(_ULID_RE.match(value))


#: Prefix of provisional ids: never a ULID (a ULID has no '-'), safe in paths, URLs and queries.
PROVISIONAL_PREFIX = "DRAFT-"


def provisional_id(rel_path: str) -> str:
    """The stable id a memory file without `id:` is indexed under until `check --fix` writes a
    ULID into it: `DRAFT-` + 20 Crockford characters of sha256(repo-relative path). The same
    path gives the same id on every machine; a rename gives a new one (it is only provisional)."""
    import hashlib

    value = int.from_bytes(hashlib.sha256(rel_path.encode("utf-8")).digest()[:13], "big") >> 4
    chars = []
    for _ in range(20):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return PROVISIONAL_PREFIX + "".join(reversed(chars))


def is_provisional(value: str) -> bool:
    return value.startswith(PROVISIONAL_PREFIX)


def id_time(ulid: str) -> datetime:
    value = 0
    for ch in ulid[:10]:
        value = value * 32 + _CROCKFORD.index(ch)
    return datetime.fromtimestamp(value / 1000, tz=UTC)


# --- memory --------------------------------------------------------------------------------------


@dataclass
class Relation:
    type: str
    target: str
    reason: str | None = None

    def to_dict(self) -> dict[str, str]:
        out = {"type": self.type, "target": self.target}
        if self.reason:
            out["reason"] = self.reason
        return out


def merge_relations(supersedes: Iterable[str], relations: Iterable[Relation]) -> list[Relation]:
    """`supersedes` as SUPERSEDES relations plus `relations`, one per (type, target), sorted by
    them; a reason given anywhere is kept (the last one given wins). The index stores these."""
    merged: dict[tuple[str, str], str | None] = {}
    for target in supersedes:
        merged.setdefault(("SUPERSEDES", target), None)
    for rel in relations:
        if (rel.type, rel.target) not in merged or rel.reason:
            merged[(rel.type, rel.target)] = rel.reason
    return [Relation(t, target, reason) for (t, target), reason in sorted(merged.items())]


@dataclass
class Memory:
    id: str
    type: str
    title: str
    created: datetime
    body: str = ""
    author: str | None = None
    session: str | None = None
    branch: str | None = None
    topics: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    confidence: float | None = None
    source: str | None = None
    supersedes: list[str] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)  # the type's own fields
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, kept on round-trip
    applies_to: list[str] = field(default_factory=list)  # other projects it also applies to

    @property
    def spec(self) -> TypeSpec:
        return TYPES[self.type]

    def retargeted(self, new: Callable[[str], str | None]) -> Memory:
        """This memory with each link target `t` (`supersedes` and relations) replaced by `new(t)`:
        one `new` maps to None is dropped, and each (type, target) is kept once, in order."""
        from dataclasses import replace

        relations: dict[tuple[str, str], Relation] = {}
        for r in self.relations:
            target = new(r.target)
            if target and (r.type, target) not in relations:
                relations[(r.type, target)] = Relation(r.type, target, r.reason)
        supersedes = list(dict.fromkeys(t for t in map(new, self.supersedes) if t))
        return replace(self, supersedes=supersedes, relations=list(relations.values()))

    def all_relations(self) -> list[Relation]:
        """Relations including `supersedes` entries as SUPERSEDES edges (`merge_relations`)."""
        return merge_relations(self.supersedes, self.relations)

    def text_fields(self) -> str:
        """The type's prose fields joined, for full-text indexing."""
        return fields_text(self.type, self.fields)

    def to_frontmatter(self) -> dict[str, Any]:
        """Frontmatter in the canonical key order; empty optional values are left out."""
        meta: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "created": self.created,
        }
        optional: list[tuple[str, Any]] = [
            ("author", self.author),
            ("session", self.session),
            ("branch", self.branch),
            ("topics", list(self.topics)),
            ("files", list(self.files)),
            ("confidence", self.confidence),
            ("source", self.source),
            ("supersedes", list(self.supersedes)),
            ("relations", [r.to_dict() for r in self.relations]),
        ]
        optional += [(name, self.fields.get(name)) for name in self.spec.fields]
        optional.append((APPLIES_TO, list(self.applies_to)))
        for key, value in optional:
            if value is None or value == [] or value == "":
                continue
            meta[key] = value
        for key, value in self.extra.items():
            meta.setdefault(key, value)
        return meta

    def to_dict(self) -> dict[str, Any]:
        """Every attribute as JSON-able values (`created` as an ISO-8601 UTC string to the
        second): the one serialised form of a memory (capture plans; the index payload,
        `index_payload`). `Memory.from_dict(m.to_dict()) == m` for a memory created to the second."""
        return {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "created": format_timestamp(self.created),
            "body": self.body,
            "author": self.author,
            "session": self.session,
            "branch": self.branch,
            "topics": list(self.topics),
            "files": list(self.files),
            "confidence": self.confidence,
            "source": self.source,
            "supersedes": list(self.supersedes),
            "relations": [r.to_dict() for r in self.relations],
            "fields": dict(self.fields),
            "extra": dict(self.extra),
            APPLIES_TO: list(self.applies_to),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Memory:
        """The inverse of `to_dict`, for data read back from disk (untrusted): checked by the same
        `validate` a memory file passes (a provisional id is accepted), so a bad value is a
        `ValueError` naming it, never a half-built memory."""
        body, own, extra = _dict_parts(data)
        wanted = _own_fields(data.get("type"), own)
        meta = {str(k): v for k, v in extra.items()}
        meta.update({k: v for k, v in data.items() if k in COMMON_FIELDS})
        meta.update(own)
        errors = _errors_but_provisional_id(meta)
        if errors:
            raise ValueError("; ".join(errors))
        memory = from_frontmatter(meta, body)
        memory.extra = {str(k): v for k, v in extra.items() if k not in COMMON_FIELDS and k not in wanted}
        return memory


def _dict_parts(data: Any) -> tuple[str, dict[Any, Any], dict[Any, Any]]:
    """(body, fields, extra) of a serialised memory, each of the right kind, or ValueError."""
    if not isinstance(data, dict):
        raise ValueError(f"a memory must be a mapping, got {type(data).__name__}")
    body = data.get("body") or ""
    if not isinstance(body, str):
        raise ValueError(f"'body' must be text, got {type(body).__name__}")
    own, extra = data.get("fields") or {}, data.get("extra") or {}
    if not isinstance(own, dict) or not isinstance(extra, dict):
        raise ValueError("'fields' and 'extra' must be mappings")
    return body, own, extra


def _own_fields(mtype: Any, own: dict[Any, Any]) -> tuple[str, ...]:
    """The fields of type `mtype` (none for an unknown type); ValueError naming any other in `own`."""
    known_type = isinstance(mtype, str) and mtype in TYPES
    wanted = TYPES[str(mtype)].fields if known_type else ()
    stray = sorted(str(k) for k in own if k not in wanted)
    if stray and known_type:  # an unknown type is reported by validate
        raise ValueError(f"{', '.join(stray)} not a field of {mtype!r}")
    return wanted


def _errors_but_provisional_id(meta: dict[str, Any]) -> list[str]:
    mid = meta.get("id")
    return [
        p.message
        for p in validate(meta)
        if p.level == "error" and not (p.key == "id" and isinstance(mid, str) and is_provisional(mid))
    ]


def prose_values(mtype: str, fields: dict[str, Any]) -> list[list[str]]:
    """The values of a type's prose fields, one list per field that has one (a scalar is a
    one-item list, an empty scalar is left out)."""
    out: list[list[str]] = []
    for name in TYPES[mtype].text_fields:
        value = fields.get(name)
        if isinstance(value, list):
            out.append([str(v) for v in value])
        elif value not in (None, ""):
            out.append([str(value)])
    return out


def fields_text(mtype: str, fields: dict[str, Any]) -> str:
    """The type's prose fields as one text, a line per value (the full-text 'fields' column)."""
    return "\n".join(v for values in prose_values(mtype, fields) for v in values)


# --- validation ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    level: str  # "error" | "warning"
    key: str | None  # the frontmatter key it concerns, for line lookup
    message: str


def parse_timestamp(value: Any) -> datetime | None:
    """Accept a YAML timestamp, a date, or an ISO-8601 string; return an aware UTC datetime."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return None
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    return None


_AGE_UNITS = {"h": 3600, "d": 86400, "w": 7 * 86400, "m": 30 * 86400, "y": 365 * 86400}


def parse_when(text: str) -> datetime | None:
    """A date, an ISO timestamp, or a relative age (12h / 7d / 3w / 6m / 1y ago); None if neither."""
    from datetime import timedelta

    v = text.strip()
    if len(v) > 1 and v[:-1].isdigit() and v[-1] in _AGE_UNITS:
        try:
            return datetime.now(UTC) - timedelta(seconds=int(v[:-1]) * _AGE_UNITS[v[-1]])
        except (OverflowError, ValueError):  # older than year 1: the beginning of time
            return datetime.min.replace(tzinfo=UTC)
    return parse_timestamp(v)


def format_timestamp(value: datetime) -> str:
    """'YYYY-MM-DDTHH:MM:SSZ', four-digit year always (strftime writes year 885 as '885', which
    sorts after '2026' as text: a `--since` a millennium ago matched nothing)."""
    v = value.astimezone(UTC) if value.year > 1 else value.replace(tzinfo=UTC)
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}Z"


def _as_str_list(value: Any) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return [str(v) for v in value]
    return None


def validate(meta: dict[str, Any], *, draft: bool = False) -> list[Problem]:
    """Check a frontmatter mapping. Errors make the memory unusable; warnings do not.

    `draft=True` is how a file on disk is read: a hand-written file may leave out `id`,
    `created` and `title` (warnings; the reader supplies a provisional id, a creation time and a
    title from the first heading or the file name, and `ccmemory check --fix` writes id and
    created in). A memory being written (`draft=False`) must have all three."""
    problems: list[Problem] = []
    for check in (_check_type, _check_id, _check_title, _check_created):
        problems += check(meta, draft)
    for check_meta in (_check_scalars, _check_relations, _check_enums):
        problems += check_meta(meta)
    return problems


def _error(key: str | None, message: str) -> list[Problem]:
    return [Problem("error", key, message)]


def _warning(message: str) -> list[Problem]:
    return [Problem("warning", None, message)]


def _check_type(meta: dict[str, Any], draft: bool) -> list[Problem]:
    mtype = meta.get("type")
    if mtype is None:
        return _error(None, "missing 'type'")
    if mtype not in TYPES:
        return _error("type", f"unknown type {mtype!r} (expected one of: {', '.join(TYPES)})")
    return []


def _check_id(meta: dict[str, Any], draft: bool) -> list[Problem]:
    mid = meta.get("id")
    if mid in (None, ""):
        if draft:
            return _warning("no 'id' yet: indexed under a provisional id; `ccmemory check --fix` adds one")
        return _error(None, "missing 'id'")
    if not isinstance(mid, str):
        return _error("id", f"'id' must be a string, got {type(mid).__name__}")
    if not is_ulid(mid):
        # an error, not a warning: ids become page names, index keys and MCP references, so
        # anything but the ULID form (e.g. `../../tmp/x`) is refused (docs/security.md)
        return _error("id", f"id {mid[:80]!r} is not a ULID (26 Crockford base32 characters)")
    return []


def _check_title(meta: dict[str, Any], draft: bool) -> list[Problem]:
    title = meta.get("title")
    if title in (None, "") or (isinstance(title, str) and not title.strip()):
        if draft:
            return _warning("no 'title': the first '# heading' of the body or the file name is used")
        return _error(None, "missing 'title'")
    if not isinstance(title, str):
        return _error("title", "'title' must be text")
    return []


def _check_created(meta: dict[str, Any], draft: bool) -> list[Problem]:
    if meta.get("created") in (None, "") and draft:
        return _warning("no 'created' yet: `ccmemory check --fix` adds it (from git history when committed)")
    if "created" not in meta:
        return _error(None, "missing 'created'")
    if parse_timestamp(meta["created"]) is None:
        return _error(
            "created", f"bad timestamp {meta['created']!r} (use ISO-8601, e.g. 2026-11-20T14:03:11Z)"
        )
    return []


def _check_scalars(meta: dict[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    conf = meta.get("confidence")
    if conf is not None:
        if isinstance(conf, bool) or not isinstance(conf, int | float):
            problems += _error("confidence", f"confidence must be a number between 0 and 1, got {conf!r}")
        elif not 0.0 <= float(conf) <= 1.0:
            problems += _error("confidence", f"confidence {conf} is outside 0..1")
    source = meta.get("source")
    if source is not None and source not in SOURCES:
        problems += _error("source", f"unknown source {source!r} (expected one of: {', '.join(SOURCES)})")
    for key in ("topics", "files", "supersedes", APPLIES_TO):
        if key in meta and _as_str_list(meta[key]) is None:
            problems += _error(key, f"'{key}' must be a list of strings")
    return problems


def _check_relations(meta: dict[str, Any]) -> list[Problem]:
    rels = meta.get("relations")
    if rels is None:
        return []
    if not isinstance(rels, list):
        return _error("relations", "'relations' must be a list of {type, target, reason}")
    problems: list[Problem] = []
    for i, rel in enumerate(rels):
        if not isinstance(rel, dict):
            problems += _error("relations", f"relation #{i + 1} must be a mapping with type and target")
            continue
        rtype = rel.get("type")
        if rtype not in RELATION_TYPES:
            problems += _error(
                "relations",
                f"unknown relation type {rtype!r} in relation #{i + 1} "
                f"(expected one of: {', '.join(RELATION_TYPES)})",
            )
        if not isinstance(rel.get("target"), str) or not rel.get("target"):
            problems += _error("relations", f"relation #{i + 1} has no target id")
    return problems


def _check_enums(meta: dict[str, Any]) -> list[Problem]:
    mtype = meta.get("type")
    if not isinstance(mtype, str) or mtype not in TYPES:
        return []
    problems: list[Problem] = []
    for key, allowed in TYPES[mtype].enums.items():
        value = meta.get(key)
        if value not in (None, "") and value not in allowed:
            problems += _error(key, f"{key} {value!r} is not one of: {', '.join(allowed)}")
    return problems


def from_frontmatter(meta: dict[str, Any], body: str) -> Memory:
    """Build a Memory from a mapping that `validate` found free of errors (a draft's missing
    id, created and title already supplied: `vault.parse_text`)."""
    mtype = meta["type"]
    spec = TYPES[mtype]
    created = parse_timestamp(meta["created"])
    assert created is not None
    known = set(COMMON_FIELDS) | set(spec.fields)
    relations = [
        Relation(str(r["type"]), str(r["target"]), (str(r["reason"]) if r.get("reason") else None))
        for r in (meta.get("relations") or [])
    ]
    conf = meta.get("confidence")

    def opt_str(key: str) -> str | None:
        value = meta.get(key)
        return None if value in (None, "") else str(value)

    return Memory(
        id=str(meta["id"]),
        type=mtype,
        title=str(meta["title"]).strip(),
        created=created,
        body=body,
        author=opt_str("author"),
        session=opt_str("session"),
        branch=opt_str("branch"),
        topics=_as_str_list(meta.get("topics")) or [],
        files=_as_str_list(meta.get("files")) or [],
        confidence=None if conf is None else float(conf),
        source=opt_str("source"),
        supersedes=_as_str_list(meta.get("supersedes")) or [],
        relations=relations,
        fields={k: meta[k] for k in spec.fields if k in meta},
        extra={k: v for k, v in meta.items() if k not in known},
        applies_to=[p.strip() for p in _as_str_list(meta.get(APPLIES_TO)) or [] if p.strip()],
    )


def index_payload(memory: Memory) -> dict[str, Any]:
    """What the index stores of a memory (`Memory.to_dict` without unknown keys, `applies_to`
    carried inside `fields`: `index_fields`); read back by `IndexedMemory.from_payload`."""
    data = memory.to_dict()
    del data["extra"], data[APPLIES_TO]
    data["fields"] = index_fields(memory)
    return data


def index_fields(memory: Memory) -> dict[str, Any]:
    """The fields the index stores for a memory: its type's own, plus `applies_to` when set."""
    if not memory.applies_to:
        return dict(memory.fields)
    return {**memory.fields, APPLIES_TO: list(memory.applies_to)}


def normalise_topic(topic: str) -> str:
    """Topics compare case-insensitively with runs of spaces/underscores as one hyphen."""
    return re.sub(r"[\s_]+", "-", topic.strip().casefold())
