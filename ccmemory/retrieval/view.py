"""The index as one project and one viewer see it (`Service.view`), and the one walk from a
frontier of memories to their visible neighbours.

Surfaces (MCP tools, CLI, site, dashboard, context, analysis) read memories through a
`MemoryView`, which carries the project and the viewer (the team rule on a shared index), so
no call site passes `svc.project` again or forgets the viewer. The raw `Index` stays for
writing (sync) and for what is not about one project's memories (vectors, reference chunks,
related projects).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ccmemory.core.model import REVERSE_NAMES
from ccmemory.index.base import Edge, FileProblem, Filters, Index, IndexedMemory

DIRECTIONS = ("both", "upstream", "downstream")  # upstream: along edges out of the frontier


@dataclass(frozen=True)
class Link:
    """One step from a frontier memory (`here`) to a neighbour (`other`): along a relation
    (`edge`, `direction` "out" = here -> other, "in" = other -> here) or, with `edge` None and
    direction "shared", through `shared` common topics/files."""

    here: str
    other: str
    edge: Edge | None
    direction: str
    shared: int = 0

    @property
    def label(self) -> str:
        """The relation as read from `here`'s side (SUPERSEDED_BY for an incoming SUPERSEDES)."""
        if self.edge is None:
            return "SHARES_TOPIC_OR_FILE"
        name = self.edge.type
        return name if self.direction == "out" else REVERSE_NAMES.get(name, name)


def neighbours(
    index: Index,
    frontier: Iterable[str],
    f: Filters,
    *,
    direction: str = "both",
    shared_limit: int = 0,
    known: Container[str] = (),
) -> tuple[list[Link], dict[str, IndexedMemory]]:
    """The links from `frontier` to its neighbours and the neighbours `f` lets its viewer see.

    Relations are followed in `direction` (both; upstream = edges out of the frontier;
    downstream = edges into it); with `shared_limit` > 0 also memories sharing topics or files
    (at most that many, `Index.related_by_topic_or_file`). A link is kept when its other end is
    in `known` (the caller has it already) or visible under `f` (project, viewer, status,
    superseded...); the second value holds the newly visible memories, in the index's order.
    Links come in index order: relations first, then shared topics/files."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    front = set(frontier)
    links: list[Link] = []
    for e in index.edges(f.project, sorted(front)):
        for here, other, d in ((e.src, e.dst, "out"), (e.dst, e.src, "in")):
            if here in front and (direction == "both" or (direction == "upstream") == (d == "out")):
                links.append(Link(here, other, e, d))
    if shared_limit > 0:
        for other, via, shared in index.related_by_topic_or_file(f, sorted(front), limit=shared_limit):
            links.append(Link(via, other, None, "shared", shared))
    unknown = sorted({link.other for link in links if link.other not in known})
    visible: dict[str, IndexedMemory] = {}
    if unknown:
        visible = {m.id: m for m in index.query(dataclasses.replace(f, ids=unknown), limit=len(unknown))}
    return [link for link in links if link.other in known or link.other in visible], visible


class MemoryView:
    """Reads of one project's memories as one viewer sees them (see the module docstring)."""

    def __init__(self, index: Index, project: str, viewer: str | None):
        self.index = index
        self.project = project
        self.viewer = viewer

    def filters(self, **kw: Any) -> Filters:
        """Filters for this project and viewer (`viewer=` may still be given explicitly)."""
        kw.setdefault("viewer", self.viewer)
        return Filters(project=self.project, **kw)

    def query(self, f: Filters | None = None, *, limit: int = 50, offset: int = 0) -> list[IndexedMemory]:
        return self.index.query(f or self.filters(), limit=limit, offset=offset)

    def count(self, f: Filters | None = None) -> int:
        return self.index.count(f or self.filters())

    def resolve(self, ref: str) -> list[str]:
        """Ids whose full id or (4+ character) prefix is `ref` (the index's part of resolve.py)."""
        return self.index.resolve(self.project, ref)

    def get(self, ids: Sequence[str]) -> list[IndexedMemory]:
        """These memories by id, whatever their status (resolution already decided)."""
        return self.index.get(self.project, list(ids))

    def edges(self, ids: Sequence[str]) -> list[Edge]:
        return self.index.edges(self.project, list(ids))

    def dangling(self) -> list[Edge]:
        return self.index.dangling(self.project)

    def superseded_ids(self, f: Filters | None = None) -> set[str]:
        """Ids superseded by a memory this viewer sees (default: over all memories)."""
        return self.index.superseded_ids(f or self.filters(include_superseded=True))

    def file_problems(self) -> list[FileProblem]:
        return self.index.file_problems(self.project)

    def invalid_files(self, limit: int = 3) -> tuple[int, list[str]]:
        return self.index.invalid_files(self.project, limit)

    def stats(self) -> dict[str, Any]:
        return dict(self.index.stats(self.project))

    def neighbours(
        self,
        frontier: Iterable[str],
        f: Filters | None = None,
        *,
        direction: str = "both",
        shared_limit: int = 0,
        known: Container[str] = (),
    ) -> tuple[list[Link], dict[str, IndexedMemory]]:
        """`neighbours` under `f` (default: this viewer's current memories)."""
        return neighbours(
            self.index,
            frontier,
            f or self.filters(),
            direction=direction,
            shared_limit=shared_limit,
            known=known,
        )
