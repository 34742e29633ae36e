"""Recording: `record` (any type), the `record_*` tools (one per memory type that has one,
generated from `model.TYPES`) and `memory_supersede`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ccmemory.core.model import TYPES

if TYPE_CHECKING:
    from ccmemory.app.service import Service
    from ccmemory.surfaces.mcp.backend import Backend

import inspect
from collections.abc import Callable
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from ccmemory.core.model import FieldSpec, TypeSpec
from ccmemory.surfaces.mcp.common import REDACTOR, ToolFailure, ref, resolve_one
from ccmemory.surfaces.mcp.tools import Tool
from ccmemory.surfaces.mcp.tools.params import (
    Body,
    Confidence,
    Files,
    MemoryRef,
    MemoryType,
    Relations,
    Session,
    Supersedes,
    Title,
    Topics,
)

# --- recording -----------------------------------------------------------------------------------


def record(
    svc: Service,
    mtype: str,
    *,
    title: str,
    body: str = "",
    topics: Sequence[str] | None = None,
    files: Sequence[str] | None = None,
    relations: Sequence[dict[str, Any]] | None = None,
    supersedes: Sequence[str] | None = None,
    confidence: float | None = None,
    session: str | None = None,
    fields: dict[str, Any] | None = None,
) -> dict[str, Any]:
    from ccmemory.app.draft import DraftError

    try:  # the one builder: redacted, validated, link targets resolved or refused (draft.py)
        memory = svc.draft(
            mtype,
            title,
            body=body,
            topics=topics,
            files=files,
            relations=relations,
            supersedes=supersedes,
            confidence=confidence,
            session=session,
            source="explicit",
            fields=fields,
        )
    except DraftError as exc:
        raise ToolFailure(exc.code, exc.message, exc.hint) from None
    from ccmemory.features import personal
    from ccmemory.features.capture.linking import link_explicit

    to_personal = mtype == "preference" and memory.fields.get("scope") == "global"
    same = None if to_personal else _identical(svc, memory)
    if same is not None:  # a second client (or a retry) recording the same memory: nothing written
        return {
            "id": same.id,
            "type": same.type,
            "title": same.title,
            "path": same.path,
            "status": same.status,
            "uri": f"ccmemory://memory/{same.id}",
            "duplicate": True,
            "note": "an identical memory (same type, title, body and fields) exists: nothing was written",
        }
    linked = [] if to_personal else link_explicit(svc, memory)  # never dropped: close ones linked
    try:
        if to_personal:  # a global preference lives in the personal vault (docs/cross-project.md)
            memory.branch = None
            rec = personal.record_global(memory, service=type(svc), project=svc.vault.root)
            rec.path = str(personal.home() / rec.path)
        else:
            rec = svc.record(memory)
    except ValueError as exc:
        raise ToolFailure("invalid_argument", f"memory not written: {exc}") from None
    out: dict[str, Any] = {
        "id": memory.id,
        "type": mtype,
        "title": memory.title,
        "path": rec.path,
        "status": rec.status,
        "uri": f"ccmemory://memory/{memory.id}",
        "indexed": rec.indexed,
        "redaction": REDACTOR,
    }
    if rec.notice:
        out["notice"] = rec.notice
    if to_personal:
        out["vault"] = "personal"
        out["note"] = "written to your personal vault: shown at session start in every project"
    if memory.supersedes:
        out["supersedes"] = memory.supersedes
    if linked:
        out["linked"] = linked
    return out


def _identical(svc: Service, memory: Any) -> Any:
    """A memory in force with the same type, title, body and fields (whitespace aside), or None.

    Fields count: a record that carries a rationale the other lacks is new information, not a retry.
    """

    def norm(text: str) -> str:
        return " ".join(text.split()).casefold()

    try:
        hits = svc.search(memory.title, svc.filters(types=[memory.type]), limit=10, mode="text", expand=False)
    except Exception:  # the index is a cache: a failed lookup only means no duplicate check
        return None
    for h in hits.hits:
        m = h.memory
        if (
            norm(m.title) == norm(memory.title)
            and norm(m.body) == norm(memory.body)
            and _fields(m.fields) == _fields(memory.fields)
        ):
            return m
    return None


def _fields(fields: dict[str, Any]) -> dict[str, str]:
    """Fields compared as text, whitespace and case aside (a date read back from YAML equals its string)."""
    return {k: " ".join(str(v).split()).casefold() for k, v in fields.items() if v not in (None, "", [])}


def supersede(
    svc: Service,
    old_ref: str,
    *,
    title: str,
    body: str,
    reason: str | None,
    fields: dict[str, Any] | None,
    topics: Sequence[str] | None,
    files: Sequence[str] | None,
    relations: Sequence[dict[str, Any]] | None,
    confidence: float | None,
) -> dict[str, Any]:
    from ccmemory.app.resolve import written_reference

    old = resolve_one(svc, old_ref)
    notices: list[str] = []
    newer = svc.superseded_by([old.id]).get(old.id, [])
    if newer:
        notices.append(
            f"{old.id} is already superseded by {', '.join(newer)}; the new memory starts a second "
            "branch of the chain (supersede the newest one to keep a single chain)"
        )
    text = body.strip()
    link = os.path.relpath(svc.vault.root / old.path, svc.vault.folder_for(old.type)).replace(os.sep, "/")
    text += f"\n\nSupersedes [{old.title}]({link})" + (f": {reason.strip()}" if reason else ".")
    out = record(
        svc,
        old.type,
        title=title,
        body=text,
        topics=topics if topics is not None else old.topics,
        files=files if files is not None else old.files,
        relations=relations,
        supersedes=[written_reference(old)],
        confidence=confidence,
        fields=fields,
    )
    out["superseded"] = ref(old)
    out["note"] = "the old file is unchanged; the index now treats it as superseded"
    if notices:
        out["notices"] = notices
    return out


# --- the record tools, built from the model --------------------------------------------------------

#: the arguments every record tool has besides the type's own fields and title
COMMON_ARGS: tuple[tuple[str, Any, Any], ...] = (
    ("body", Body, ""),
    ("topics", Topics, None),
    ("files", Files, None),
    ("relations", Relations, None),
    ("supersedes", Supersedes, None),
    ("confidence", Confidence, None),
    ("session", Session, None),
)


def field_annotation(f: FieldSpec) -> Any:
    """The pydantic type of one type-specific field, with its limits and description."""
    if f.kind == "enum":
        return Annotated[Literal[f.choices] | None, Field(description=f.description)]
    if f.kind == "bool":
        return Annotated[bool | None, Field(description=f.description)]
    if f.kind == "list":
        return Annotated[list[str] | None, Field(max_length=f.max_length, description=f.description)]
    if f.required:
        limits = Field(min_length=f.min_length, max_length=f.max_length, description=f.description)
        return Annotated[str, limits]
    return Annotated[str | None, Field(max_length=f.max_length, description=f.description)]


def record_parameters(spec: TypeSpec) -> list[inspect.Parameter]:
    """A record tool's parameters. Order: title first, then the type's own fields before `body`
    when one of them is required (they are the point of the memory), else after it; a type whose
    title defaults to a field (question) asks for that field first and the title after it."""

    def param(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)

    own = [param(f.name, field_annotation(f), *(() if f.required else (None,))) for f in spec.own]
    if spec.title_from:
        described = Field(max_length=200, description=f"Defaults to the {spec.title_from}.")
        title = param("title", Annotated[str | None, described], None)
        head = [*own, title]
    elif any(f.required for f in spec.own):
        head = [param("title", Title), *own]
    else:
        head = [param("title", Title)]
    body, *rest = (param(n, a, d) for n, a, d in COMMON_ARGS)
    tail = rest if spec.title_from or any(f.required for f in spec.own) else [*own, *rest]
    return [*head, body, *tail]


def record_tool(spec: TypeSpec, be: Backend) -> Callable[..., dict[str, Any]]:
    """The `record_<type>` tool function: its signature (hence its input schema) from `spec`."""
    own = set(spec.fields)

    def tool_fn(**kw: Any) -> dict[str, Any]:
        fields = {k: kw.pop(k) for k in list(kw) if k in own}
        relations = [r.model_dump() for r in kw.pop("relations", None) or []]
        if spec.title_from and not kw.get("title"):
            kw["title"] = str(fields.get(spec.title_from) or "")[:200]
        with be.service() as svc:
            return record(svc, spec.name, relations=relations, fields=fields, **kw)

    tool_fn.__name__ = tool_fn.__qualname__ = f"record_{spec.name}"
    tool_fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        record_parameters(spec), return_annotation=dict[str, Any]
    )
    return tool_fn


def record_description(spec: TypeSpec) -> str:
    return (
        f"{spec.summary} Writes a new .ccmemory/{spec.folder}/ file for review in the pull request "
        "(secrets redacted first), indexes it, and returns id, path, status and uri."
    )


def types_table() -> str:
    """One line per type: its own fields (required ones marked *)."""
    rows = []
    for name, spec in TYPES.items():
        fields = ", ".join(f"{f.name}{'*' if f.min_length > 0 else ''}" for f in spec.own)
        rows.append(f"{name}: {fields or '-'}")
    return "; ".join(rows)


def check_fields(mtype: str, fields: dict[str, Any] | None) -> None:
    """Refuse a field the type does not have, naming it and the allowed ones (never its value)."""
    allowed = sorted(TYPES[mtype].fields)
    unknown = sorted(k for k in fields or {} if k not in allowed)
    if unknown:
        raise ToolFailure(
            "invalid_argument",
            f"{', '.join(repr(k) for k in unknown)} not a field of {mtype}",
            f"fields of {mtype}: {', '.join(allowed) or 'none'}",
        )


def register_generic(tool: Tool, be: Backend) -> None:
    """The `record` tool: every memory type through one schema (`type` + `fields`). The whole
    lean set's recording, and in the full set the types without a `record_<type>` tool."""

    @tool(
        "Record a memory (writes a reviewable file). fields holds the type's own fields (* = required): "
        f"{types_table()}. Evidence for or against a hypothesis: a relation SUPPORTS or REFUTES to it.",
        read_only=False,
        name="record",
    )
    def record_memory(
        type: MemoryType,
        title: Title,
        body: Body = "",
        fields: Annotated[dict[str, Any] | None, Field(description="The type's own fields.")] = None,
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        supersedes: Supersedes = None,
        confidence: Confidence = None,
    ) -> dict[str, Any]:
        check_fields(type, fields)
        with be.service() as svc:
            return record(
                svc,
                type,
                title=title,
                body=body,
                topics=topics,
                files=files,
                relations=[r.model_dump() for r in relations or []],
                supersedes=supersedes,
                confidence=confidence,
                fields=fields,
            )


def register(tool: Tool, server: MCPServer, be: Backend) -> None:
    """Add `record`, a `record_<type>` tool per memory type that has one (`TypeSpec.record_tool`),
    and `memory_supersede`."""
    register_generic(tool, be)
    for spec in TYPES.values():
        if spec.record_tool:
            tool(record_description(spec), read_only=False)(record_tool(spec, be))

    @tool(
        "Supersede a memory: writes a NEW memory (same type) whose `supersedes` names the old one; the old "
        "file is never rewritten, the index marks it superseded. Topics and files default to the old one's.",
        read_only=False,
    )
    def memory_supersede(
        old_id: MemoryRef,
        title: Title,
        body: Body,
        reason: Annotated[
            str | None, Field(max_length=1000, description="Why the old memory no longer holds.")
        ] = None,
        fields: Annotated[
            dict[str, Any] | None,
            Field(description="The type's own fields, e.g. {'rationale': ...} for a decision.", default=None),
        ] = None,
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        confidence: Confidence = None,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return supersede(
                svc,
                old_id,
                title=title,
                body=body,
                reason=reason,
                fields=fields,
                topics=topics,
                files=files,
                relations=[r.model_dump() for r in relations or []],
                confidence=confidence,
            )
