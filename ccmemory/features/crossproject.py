"""Related projects: search and context across projects (docs/cross-project.md).

A project names its related projects in `.ccmemory/config.yaml` (`related_to`). Where their
memories come from depends on the backend, behind one contract (the `projects` capability of
`index.base.Index`):

- Neo4j: every project lives in the shared index; `related_to` becomes `(:Project)-[:RELATED_TO]->
  (:Project)` edges (either direction counts), and each related project is searched there.
- SQLite: each related repository on this machine has its own index (`<path>/.ccmemory/local/
  index.db`); it is opened read-only, searched in place and closed (nothing is copied). A missing,
  unreadable or stale index is reported as a notice, never fatal.

Visibility holds per project: another project's memories are shown when curated or authored by
the viewer (developmental memories stay private to their author), whatever the backend.
A memory whose `applies_to` names this project is surfaced here too (the APPLIES_TO edge on Neo4j;
on SQLite, among the related projects' indexes).
Cross-project search also reads the personal vault's index (read-only): its memories apply everywhere.

Scores are normalised within each project's own candidates, so they compare roughly, not exactly;
at equal score the home project's hit ranks first.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccmemory.index.base import Filters, Index, IndexedMemory, IndexUnavailable

if TYPE_CHECKING:
    from ccmemory.app.service import Service
    from ccmemory.retrieval.search import Hit, SearchResponse

APPLIES = "applies_to"  # the relation label of a project reached only through applies_to
PERSONAL = "personal vault"  # the relation label of the personal vault's hits


@dataclass
class Source:
    """One other project, as reachable from here."""

    name: str  # the project's name in its index
    relation: str  # business | technical | shared_resource | applies_to
    index: Index
    where: str  # the repository folder (SQLite) or the shared index's URI (Neo4j)
    root: Path | None = None  # its repository, when on this machine
    owned: bool = False  # opened here (SQLite, read-only): closed after use

    def label(self) -> dict[str, Any]:
        return {"project": self.name, "relation": self.relation, "source": self.where}


@dataclass
class CrossHit:
    hit: Hit
    source: Source | None  # None: the home project

    @property
    def project(self) -> str | None:
        return None if self.source is None else self.source.name

    def citation(self) -> dict[str, Any]:
        """Where to read the memory: its project, file and id (its uri resolves in that project)."""
        m = self.hit.memory
        out: dict[str, Any] = {"project": m.project, "id": m.id, "path": m.path}
        if self.source is not None and self.source.root is not None:
            out["file"] = str(self.source.root / m.path)
        return out

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        d = self.hit.to_dict(explain)
        if self.source is not None:
            d.update(self.source.label())
            d["citation"] = self.citation()
        return d


@dataclass
class CrossResponse:
    hits: list[CrossHit]
    mode: str
    sources: list[Source] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def viewer_for_others(svc: Service) -> str:
    """Another project's developmental memories are private to their author: the viewer is the
    user's id, or "" (curated only) when the user is unknown."""
    return svc.config.user_id or ""


def stale_files(root: Path, index: Index, project: str) -> int:
    """How many memory files of the repository at `root` differ from what its index holds (by
    mtime and size; a file indexed within its racy window, stored with mtime -1, by content hash)."""
    import hashlib

    from ccmemory.core.vault import Vault

    entries, _skipped = Vault(root).walk()  # the one vault walker, as reindex's scan uses it
    files = {e.rel: (e.path, e.mtime_ns, e.size) for e in entries}
    states = index.file_states(project)

    def differs(rel: str, path: str, mtime: int, size: int) -> bool:
        st = states.get(rel)
        if st is None or st.size != size:
            return True
        if st.mtime_ns == mtime:
            return False
        if st.mtime_ns != -1:
            return True
        try:
            return hashlib.sha256(Path(path).read_bytes()).hexdigest() != st.hash
        except OSError:
            return True

    changed = sum(1 for rel, (path, mtime, size) in files.items() if differs(rel, path, mtime, size))
    return changed + len(set(states) - set(files))


def _local_sources(svc: Service, *, check_stale: bool = True) -> tuple[list[Source], list[str]]:
    from ccmemory.core.config import read_config_file
    from ccmemory.index.sqlite import SQLiteIndex

    sources: list[Source] = []
    notices: list[str] = []
    for r in svc.config.related:
        if r.path is None:
            notices.append(
                f"related project {r.name}: no path in related_to; with the embedded index a related "
                "project is reached through its repository on this machine"
            )
            continue
        if r.path == svc.vault.root:
            notices.append(f"related project {r.name}: its path is this repository; left out")
            continue
        db = r.path / ".ccmemory" / "local" / "index.db"
        if not db.is_file():
            notices.append(f"related project {r.name}: no index at {db}; run `ccmemory reindex` in {r.path}")
            continue
        try:  # its own settings name it (not this process's CCMEMORY_PROJECT; no git call)
            name = str(read_config_file(r.path / ".ccmemory").get("project") or r.path.name)
        except ValueError as exc:
            notices.append(f"related project {r.name}: {exc}")
            continue
        try:
            idx = SQLiteIndex.open_readonly(db)
        except IndexUnavailable as exc:
            notices.append(f"related project {r.name}: {exc}; run `ccmemory reindex` in {r.path}")
            continue
        try:
            if name not in idx.projects():
                notices.append(
                    f"related project {r.name}: its index at {db} holds no project {name!r}; "
                    f"run `ccmemory reindex` in {r.path}"
                )
                idx.close()
                continue
            changed = stale_files(r.path, idx, name) if check_stale else 0
        except Exception as exc:  # a corrupt related index is reported, never fatal
            notices.append(f"related project {r.name}: index at {db} not readable: {exc}")
            idx.close()
            continue
        if changed:
            notices.append(
                f"related project {r.name}: its index is stale ({changed} memory file(s) changed since "
                f"it was built); results may be out of date until `ccmemory reindex` runs in {r.path}"
            )
        sources.append(Source(name, r.relation, idx, str(r.path), r.path, owned=True))
    return sources, notices


def _shared_sources(svc: Service, *, applies: bool) -> tuple[list[Source], list[str]]:
    notices: list[str] = []
    try:
        svc.link_projects()
    except IndexUnavailable as exc:  # e.g. a read-only account: the links stored earlier still count
        notices.append(f"related_to not stored as RELATED_TO links: {exc}")
    known = set(svc.index.projects())
    related = dict(svc.index.related_projects(svc.project))
    for r in svc.config.related:
        related.setdefault(r.name, r.relation)
    sources: list[Source] = []
    for name, rel in sorted(related.items()):
        if name == svc.project:
            continue
        if name not in known:
            notices.append(
                f"related project {name}: not in the shared index at {svc.index.location} yet "
                "(run `ccmemory reindex` in its repository)"
            )
            continue
        sources.append(Source(name, rel, svc.index, svc.index.location))
    if applies:  # any other project of the shared index may hold memories that apply here
        for name in svc.index.projects_applying_to(svc.project):
            if name not in related:
                sources.append(Source(name, APPLIES, svc.index, svc.index.location))
    return sources, notices


@contextlib.contextmanager
def related_sources(
    svc: Service, *, applies: bool = False, check_stale: bool = True
) -> Iterator[tuple[list[Source], list[str]]]:
    """The related projects reachable from `svc` and notices about the ones that are not. With
    `applies`, on a shared index, also every other project (as APPLIES sources: only their
    memories whose applies_to names this project are used). Indexes opened here are closed on exit."""
    notices = list(svc.config.related_problems)
    if svc.config.backend == "neo4j":
        sources, more = _shared_sources(svc, applies=applies)
    else:
        sources, more = _local_sources(svc, check_stale=check_stale)
    try:
        yield sources, notices + more
    finally:
        for s in sources:
            if s.owned:
                with contextlib.suppress(Exception):
                    s.index.close()


def _foreign_filters(svc: Service, f: Filters, src: Source, ids: Sequence[str] | None = None) -> Filters:
    return dataclasses.replace(f, project=src.name, viewer=viewer_for_others(svc), ids=ids)


def applying_here(
    svc: Service, src: Source, f: Filters | None = None, limit: int = 50
) -> list[IndexedMemory]:
    """Memories of `src` (visible to the user) whose applies_to names this project."""
    base = f or Filters(project=src.name)
    return src.index.applying_to(svc.project, _foreign_filters(svc, base, src), limit)


def cross_search(
    svc: Service,
    query: str,
    filters: Filters | None = None,
    *,
    limit: int = 10,
    mode: str = "hybrid",
    expand: bool = True,
) -> CrossResponse:
    """The home project's hits and the related projects' (plus, on a shared index, other
    projects' memories that apply here), merged: best score first, the home project first at
    equal score, each foreign hit labelled with its project, relation and citation."""
    f = filters or svc.filters()
    home = svc.search(query, f, limit=limit, mode=mode, expand=expand)
    merged = [CrossHit(h, None) for h in home.hits]
    notices = list(home.notices)
    emb = svc.embedder() if home.mode != "text" and mode != "text" else None
    with related_sources(svc, applies=True) as (sources, more):
        notices += more
        mine = _personal_source()
        if isinstance(mine, str):
            notices.append(mine)
        elif mine is not None:
            sources.append(mine)  # closed with the others on exit
        from ccmemory.retrieval.search import search  # imported here: the digest needs none of it

        for src in sources:
            ids: list[str] | None = None
            if src.relation == APPLIES:
                ids = [m.id for m in applying_here(svc, src, f, limit=200)]
                if not ids:
                    continue
            try:
                resp: SearchResponse = search(
                    src.index,
                    query,
                    _foreign_filters(svc, f, src, ids),
                    limit=limit,
                    mode=home.mode if emb is not None else "text",
                    embedder=emb,
                    expand=expand and ids is None,  # an unrelated project: its applies_to ones only
                )
            except Exception as exc:  # one broken related project must not fail the search
                notices.append(f"related project {src.name}: search failed: {type(exc).__name__}: {exc}")
                continue
            merged += [CrossHit(h, src) for h in resp.hits]
        # equal = equal to the 6 decimals results show (each search reads the clock for recency)
        merged.sort(key=lambda c: (-round(c.hit.score, 6), c.source is not None, c.hit.memory.id))
        return CrossResponse(merged[:limit], home.mode, list(sources), notices)


def _personal_source() -> Source | str | None:
    """The personal vault's index, read-only, as a source of cross-project search (its memories
    apply everywhere); None when there is none, a notice when it cannot be read."""
    from ccmemory.features import personal
    from ccmemory.index.sqlite import SQLiteIndex

    if not personal.exists():
        return None
    home = personal.home()
    db = home / ".ccmemory" / "local" / "index.db"
    if not db.is_file():
        return None  # nothing recorded or indexed there yet
    try:
        idx = SQLiteIndex.open_readonly(db)
    except IndexUnavailable as exc:
        return f"personal vault: {exc}"
    return Source(personal.PROJECT, PERSONAL, idx, str(home), home, owned=True)


def applying_memories(svc: Service, limit: int = 10) -> tuple[list[tuple[IndexedMemory, Source]], list[str]]:
    """Other projects' memories (visible to the user, not superseded) whose applies_to names this
    project: for session-start context. Never raises; problems become notices."""
    out: list[tuple[IndexedMemory, Source]] = []
    try:  # no stale check: context has nowhere to show it (cross-project search does)
        with related_sources(svc, applies=True, check_stale=False) as (sources, notices):
            for src in sources:
                try:
                    out += [(m, src) for m in applying_here(svc, src, limit=limit)]
                except Exception as exc:
                    notices.append(f"related project {src.name}: {type(exc).__name__}: {exc}")
    except Exception as exc:
        return [], [f"related projects not read: {type(exc).__name__}: {exc}"]
    out.sort(key=lambda t: t[0].created, reverse=True)
    return out[:limit], notices


def status_report(svc: Service) -> dict[str, Any]:
    """For `ccmemory doctor`: each related project reached or why not, and the personal vault."""
    from ccmemory.core.vault import Vault
    from ccmemory.features import personal

    out: dict[str, Any] = {"related": [], "notices": []}
    everything = Filters(project=svc.project, include_superseded=True)  # as the user sees them
    try:
        with related_sources(svc) as (sources, notices):
            out["related"] = [
                {**s.label(), "memories": s.index.count(_foreign_filters(svc, everything, s))}
                for s in sources
            ]
            out["notices"] = notices
    except Exception as exc:
        out["notices"].append(f"related projects not read: {type(exc).__name__}: {exc}")
    home = personal.home()
    count = sum(1 for _ in Vault(home).iter_paths()) if personal.exists() else 0
    out["personal_vault"] = {"path": str(home), "exists": personal.exists(), "memory_files": count}
    return out


def cross_project_contradictions(svc: Service) -> tuple[list[dict[str, Any]], list[str]]:
    """`cross_contradictions` between this project and each related one (visibility per project:
    another project's developmental decisions count only when the user wrote them). Each item also
    names the other project and relation. Returns (items, notices about unreachable projects)."""
    from ccmemory.features.analysis import SCAN_CAP, all_memories, cross_contradictions

    home = all_memories(svc, types=["decision"], include_superseded=False)
    out: list[dict[str, Any]] = []
    with related_sources(svc) as (sources, notices):
        for src in sources:
            f = Filters(project=src.name, types=["decision"], viewer=viewer_for_others(svc))
            theirs = src.index.query(f, limit=SCAN_CAP)
            for item in cross_contradictions(home, theirs):
                out.append({**item, "project": src.name, "relation": src.relation, "source": src.where})
    return out, notices
