"""Argument types the tools share (pydantic `Annotated` types): their limits and descriptions
show in every tool's input schema. Memory types and relation types come from `ccmemory.core.model`,
never re-listed here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ccmemory.core.model import RELATION_TYPES, TYPES
from ccmemory.surfaces.mcp.common import MAX_LIMIT

if TYPE_CHECKING:  # mypy sees plain strings; pydantic (at run time) sees the enums below
    RelationType = str
    MemoryType = str
else:
    # SUPERSEDES is not offered as a relation: `supersedes` (or memory_supersede) says it
    RelationType = Literal[tuple(r for r in RELATION_TYPES if r != "SUPERSEDES")]
    MemoryType = Literal[tuple(TYPES)]
Status = Literal["curated", "developmental"]


class RelationIn(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelled key is an error, not ignored

    type: RelationType = Field(description="Relation from the new memory to the target.")
    target: str = Field(
        min_length=4,
        max_length=300,
        description="An existing memory: id, 4+ character id prefix, file path or slug.",
    )
    reason: str | None = Field(default=None, max_length=500, description="Why they are related (optional).")


Title = Annotated[
    str, Field(min_length=3, max_length=200, description="One-line title a teammate understands.")
]
Body = Annotated[
    str, Field(max_length=20_000, description="Markdown description, understandable without this session.")
]
Topics = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=60)]] | None,
    Field(max_length=20, description="Topics, e.g. ['auth', 'security'].", default=None),
]
Files = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=300)]] | None,
    Field(max_length=50, description="Repo-relative code paths it concerns.", default=None),
]
Relations = Annotated[
    list[RelationIn] | None,
    Field(max_length=20, description="Typed links to existing memories.", default=None),
]
Supersedes = Annotated[
    list[Annotated[str, Field(min_length=4, max_length=300)]] | None,
    Field(
        max_length=10,
        description="Ids of memories this one replaces (their files stay unchanged).",
        default=None,
    ),
]
Confidence = Annotated[
    float | None, Field(ge=0.0, le=1.0, description="0..1, how sure (optional).", default=None)
]
Session = Annotated[
    str | None, Field(max_length=100, description="Claude Code session id, if known.", default=None)
]
Text = Annotated[str | None, Field(max_length=5000, default=None)]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description=f"Results per page (max {MAX_LIMIT}).")]
Offset = Annotated[
    int, Field(ge=0, le=10_000, description="Skip this many results (pagination: use next_offset).")
]
MemoryRef = Annotated[
    str,
    Field(min_length=4, max_length=300, description="Memory id, 4+ character id prefix, file path or slug."),
]
Query = Annotated[str, Field(min_length=1, max_length=1000, description="Plain words; no query syntax.")]
Types = Annotated[
    list[MemoryType] | None,
    Field(max_length=len(TYPES), description="Only these memory types.", default=None),
]
When = Annotated[
    str | None,
    Field(
        max_length=40,
        description="A date (2026-11-20), ISO timestamp, or age such as 7d / 3w / 12h.",
        default=None,
    ),
]
