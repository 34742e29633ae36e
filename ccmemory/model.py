"""Memory types, fields and validation. Pure: no I/O, no heavy imports.

The frontmatter layout and the eleven types are described in docs/file-format.md. Status is
never part of a memory: it is derived from git by the index.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

# --- types -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TypeSpec:
    name: str
    folder: str
    fields: tuple[str, ...]
    text_fields: tuple[str, ...]  # own fields that hold prose, indexed for full-text search
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)


TYPES: dict[str, TypeSpec] = {
    t.name: t
    for t in (
        TypeSpec(
            "decision",
            "decisions",
            ("rationale", "options_considered", "revisit_trigger", "sets_precedent"),
            ("rationale", "options_considered", "revisit_trigger"),
        ),
        TypeSpec(
            "correction",
            "corrections",
            ("wrong_belief", "right_belief", "severity"),
            ("wrong_belief", "right_belief"),
            {"severity": ("minor", "significant", "critical")},
        ),
        TypeSpec("preference", "preferences", ("scope",), (), {"scope": ("project", "global")}),
        TypeSpec(
            "exception",
            "exceptions",
            ("rule_broken", "justification", "scope"),
            ("rule_broken", "justification"),
            {"scope": ("one-time", "conditional", "new-precedent")},
        ),
        TypeSpec(
            "insight",
            "insights",
            ("category", "implications"),
            ("implications",),
            {"category": ("realization", "analysis", "strategy", "personal", "synthesis")},
        ),
        TypeSpec("question", "questions", ("question", "answer"), ("question", "answer")),
        TypeSpec(
            "failed_approach",
            "failed-approaches",
            ("approach", "outcome", "lesson"),
            ("approach", "outcome", "lesson"),
        ),
        TypeSpec(
            "fact",
            "facts",
            ("category",),
            (),
            {"category": ("convention", "constraint", "architecture", "command", "environment")},
        ),
        TypeSpec("gotcha", "gotchas", ("severity",), (), {"severity": ("minor", "significant", "critical")}),
        TypeSpec("pattern", "patterns", (), ()),
        TypeSpec(
            "reference", "references", ("uri", "ref_type"), ("uri",), {"ref_type": ("url", "file", "doc")}
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
}
SOURCES: tuple[str, ...] = ("llm", "explicit", "manual", "import")
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
        return datetime.now(UTC) - timedelta(seconds=int(v[:-1]) * _AGE_UNITS[v[-1]])
    return parse_timestamp(v)


def format_timestamp(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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

    def err(key: str | None, msg: str) -> None:
        problems.append(Problem("error", key, msg))

    def warn(key: str | None, msg: str) -> None:
        problems.append(Problem("warning", key, msg))

    mtype = meta.get("type")
    if mtype is None:
        err(None, "missing 'type'")
    elif mtype not in TYPES:
        err("type", f"unknown type {mtype!r} (expected one of: {', '.join(TYPES)})")
    mid = meta.get("id")
    if mid in (None, "") and draft:
        warn(None, "no 'id' yet: indexed under a provisional id; `ccmemory check --fix` adds one")
    elif mid in (None, ""):
        err(None, "missing 'id'")
    elif not isinstance(mid, str):
        err("id", f"'id' must be a string, got {type(mid).__name__}")
    elif not is_ulid(mid):
        # an error, not a warning: ids become page names, index keys and MCP references, so
        # anything but the ULID form (e.g. `../../tmp/x`) is refused (docs/security.md)
        err("id", f"id {mid[:80]!r} is not a ULID (26 Crockford base32 characters)")
    title = meta.get("title")
    if (title in (None, "") or (isinstance(title, str) and not title.strip())) and draft:
        warn(None, "no 'title': the first '# heading' of the body or the file name is used")
    elif title in (None, "") or (isinstance(title, str) and not title.strip()):
        err(None, "missing 'title'")
    elif not isinstance(title, str):
        err("title", "'title' must be text")
    if meta.get("created") in (None, "") and draft:
        warn(None, "no 'created' yet: `ccmemory check --fix` adds it (from git history when committed)")
    elif "created" not in meta:
        err(None, "missing 'created'")
    elif parse_timestamp(meta["created"]) is None:
        err("created", f"bad timestamp {meta['created']!r} (use ISO-8601, e.g. 2026-11-20T14:03:11Z)")
    conf = meta.get("confidence")
    if conf is not None:
        if isinstance(conf, bool) or not isinstance(conf, int | float):
            err("confidence", f"confidence must be a number between 0 and 1, got {conf!r}")
        elif not 0.0 <= float(conf) <= 1.0:
            err("confidence", f"confidence {conf} is outside 0..1")
    source = meta.get("source")
    if source is not None and source not in SOURCES:
        err("source", f"unknown source {source!r} (expected one of: {', '.join(SOURCES)})")
    for key in ("topics", "files", "supersedes", APPLIES_TO):
        if key in meta and _as_str_list(meta[key]) is None:
            err(key, f"'{key}' must be a list of strings")
    rels = meta.get("relations")
    if rels is not None:
        if not isinstance(rels, list):
            err("relations", "'relations' must be a list of {type, target, reason}")
        else:
            for i, rel in enumerate(rels):
                if not isinstance(rel, dict):
                    err("relations", f"relation #{i + 1} must be a mapping with type and target")
                    continue
                rtype = rel.get("type")
                if rtype not in RELATION_TYPES:
                    err(
                        "relations",
                        f"unknown relation type {rtype!r} in relation #{i + 1} "
                        f"(expected one of: {', '.join(RELATION_TYPES)})",
                    )
                if not isinstance(rel.get("target"), str) or not rel.get("target"):
                    err("relations", f"relation #{i + 1} has no target id")
    if isinstance(mtype, str) and mtype in TYPES:
        spec = TYPES[mtype]
        for key, allowed in spec.enums.items():
            value = meta.get(key)
            if value not in (None, "") and value not in allowed:
                err(key, f"{key} {value!r} is not one of: {', '.join(allowed)}")
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


def index_fields(memory: Memory) -> dict[str, Any]:
    """The fields the index stores for a memory: its type's own, plus `applies_to` when set."""
    if not memory.applies_to:
        return dict(memory.fields)
    return {**memory.fields, APPLIES_TO: list(memory.applies_to)}


def normalise_topic(topic: str) -> str:
    """Topics compare case-insensitively with runs of spaces/underscores as one hyphen."""
    return re.sub(r"[\s_]+", "-", topic.strip().casefold())
