"""The service layer: one object the surfaces (CLI, MCP, hooks, site) use. Files first, then index."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccmemory.core import gitstate
from ccmemory.core.config import Config, load_config
from ccmemory.core.model import Memory
from ccmemory.core.vault import Vault
from ccmemory.index import open_index
from ccmemory.index.base import Edge, FileProblem, Filters, Index, IndexedMemory
from ccmemory.retrieval.view import Link, MemoryView

if TYPE_CHECKING:  # imported where used: a hook that only reads the index (SessionStart's digest)
    # does not pay for the sync, git-delta, search and intent modules (~20-30 ms of imports)
    from ccmemory.app.sync import ReindexReport
    from ccmemory.retrieval.search import Hit, SearchResponse
    from ccmemory.text.fusion import FusionRecipe


@dataclass
class Recorded:
    memory: Memory
    path: str
    status: str
    indexed: bool = True
    notice: str | None = None


@dataclass
class TraceStep:
    depth: int
    edge: Edge
    direction: str  # "out" (this memory -> other) or "in" (other -> this memory)
    label: str  # relation name as read from the root's side, e.g. SUPERSEDED_BY


@dataclass
class Trace:
    root: IndexedMemory
    chain: list[IndexedMemory]  # supersession chain, oldest first, includes root
    steps: list[TraceStep]
    nodes: dict[str, IndexedMemory] = field(default_factory=dict)


class Service:
    def __init__(
        self,
        vault: Vault,
        config: Config | None = None,
        index: Index | None = None,
        *,
        snapshot: bool = False,
    ):
        """``snapshot``: ``index`` holds the memories of another revision (``--at``), not of the
        working tree: a search that finds nothing never builds it from the working tree's files."""
        self.vault = vault
        self.config = config or load_config(vault.root)
        self._index = index
        self.project = self.config.project
        self._embedder: Any = None
        self._embedder_problem: str | None = None
        # (hash, text) of memories known to have no vector, longest first (the shortest are
        # embedded first, popped from the end); None: not scanned since the last write
        self._pending: list[tuple[str, str]] | None = None
        self._scan_stamp: object = None  # the worker's status file when _pending was scanned
        self.vectors_pending = 0  # memories without a vector, as last counted
        self.vectors_from_cache = 0  # vectors taken from the per-user cache by this Service
        self._background_started = False  # a worker was started since the last scan
        # a search found the index empty and built it (once); never for a snapshot
        self._built_on_demand = snapshot

    @classmethod
    def open(cls, start: Path | None = None) -> Service:
        return cls(Vault.open(start))

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = open_index(self.config, self.vault.dir)
            if self._index.moved_aside:
                # a corrupt cache was moved aside (never deleted): refill it from the files now
                from ccmemory.app.reindexlock import exclusive
                from ccmemory.app.sync import reindex

                with exclusive(self.vault.dir / "local"):
                    reindex(self.vault, self._index, self.project, main_branch=self.config.main_branch)
        return self._index

    @property
    def viewer(self) -> str | None:
        """The team rule applies on a shared (Neo4j) index; a local index shows the working tree."""
        return self.config.user_id if self.config.backend == "neo4j" else None

    @property
    def view(self) -> MemoryView:
        """The index as this project and viewer see it: what surfaces read through."""
        return MemoryView(self.index, self.project, self.viewer)

    def filters(self, **kw: Any) -> Filters:
        kw.setdefault("viewer", self.viewer)
        return Filters(project=self.project, **kw)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- embeddings -----------------------------------------------------------------------------
    def embedder(self) -> Any:
        """The configured embedder, loaded once; None (with a reason) when unavailable."""
        if self._embedder is None and self._embedder_problem is None:
            try:
                from ccmemory.retrieval.embed import get_embedder

                self._embedder = get_embedder(choice=self.config.embedder)
            except Exception as exc:
                self._embedder_problem = f"{type(exc).__name__}: {exc}"
        return self._embedder

    def start_embedder_load(self) -> None:
        """Begin loading the embedder's model in a thread (a cold process about to search by
        meaning: its index work runs while onnxruntime builds the session); the first embedding
        waits for it. Nothing happens for an embedder already loaded or without a local model."""
        emb = self.embedder()
        start = getattr(emb, "load_in_background", None)
        if start is not None:
            start()

    def embed_missing(
        self,
        progress: Callable[[int, int], None] | None = None,
        *,
        limit: int | None = None,
    ) -> tuple[int, str | None]:
        """Embed memories whose content has no vector yet (at most ``limit`` of them).
        Returns (count, problem); :attr:`vectors_pending` says how many are still missing.

        Texts are embedded shortest first across the whole set (less padding); that is safe
        because a vector does not depend on its batch (see ``ccmemory.retrieval.int8graph``). Vectors
        are committed every :data:`EMBED_CHUNK` texts, so an interrupted run keeps its work.
        """
        emb = self.embedder()
        if emb is None:
            return 0, self._embedder_problem
        self._scan_missing(emb)
        return self._embed_pending(emb, limit, progress)

    def forget_vector_scan(self) -> None:
        """Scan for missing vectors again before the next search, as a fresh process would: a
        long-lived Service (the MCP server's) answering for another process, which may have
        added memories to the index since (``ccmemory.features.recall.warm``)."""
        self._pending = None

    def _scan_missing(self, emb: Any) -> None:
        """The one O(vault) step: which memories have no vector (once per process, after a
        write, and after a background worker finished)."""
        from ccmemory.retrieval import warming

        self._scan_stamp = warming.stamp(self.vault.root)
        self._background_started = False  # a long-lived process may need another worker later
        todo = self._from_shared_cache(emb, self.index.missing_vectors(self.project, emb.name))
        todo.sort(key=lambda item: len(item[1]), reverse=True)
        self._pending = todo
        self.vectors_pending = len(todo)

    def _from_shared_cache(self, emb: Any, todo: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Store the missing vectors the per-user cache holds (another clone, worktree or branch
        embedded them); return the texts still to embed."""
        if not todo:
            return todo
        from ccmemory.retrieval import vectorcache

        cache = vectorcache.shared()
        if cache is None:
            return todo
        found = cache.get(emb.name, int(emb.dim), [h for h, _ in todo])
        if not found:
            return todo
        self.index.store_vectors(emb.name, int(emb.dim), list(found.items()))
        self.vectors_from_cache += len(found)
        return [(h, t) for h, t in todo if h not in found]

    def _embed_pending(
        self, emb: Any, limit: int | None, progress: Callable[[int, int], None] | None
    ) -> tuple[int, str | None]:
        """Embed the shortest ``limit`` (all: None) of the known missing texts."""
        pending = self._pending or []
        total = len(pending) if limit is None else min(max(limit, 0), len(pending))
        done = 0
        if progress and total:
            progress(0, total)
        while done < total:
            k = min(EMBED_CHUNK, total - done)
            chunk = pending[-k:][::-1]
            try:
                vectors = emb.embed([t for _, t in chunk], kind="document")
            except Exception as exc:
                return done, f"{type(exc).__name__}: {exc}"
            items = list(zip([h for h, _ in chunk], vectors, strict=True))
            self.index.store_vectors(emb.name, int(emb.dim), items)
            _keep_in_shared_cache(emb, items)
            del pending[-k:]
            done += k
            self.vectors_pending = len(pending)
            if progress:
                progress(done, total)
        return done, None

    def _warm_vectors(self, emb: Any) -> str | None:
        """Before a search while vectors are missing: wait on one batch of embedding at most
        (:data:`SEARCH_EMBED_BATCH`) and hand the rest to the background worker (one per
        repository, see lifecycle/background.py). Bookkeeping is O(1) per search: the missing
        set is scanned once (see :meth:`_scan_missing`) and kept here; while a worker runs, this
        search embeds nothing and reads the worker's own count (``ccmemory.retrieval.warming``).
        Returns the problem if embedding failed."""
        from ccmemory.retrieval import warming

        root = self.vault.root
        if warming.worker_running(root):
            left = warming.read_status(root, emb.name)
            if left is None:  # the worker is still in its text phase
                if self._pending is None:
                    self._scan_missing(emb)
                left = len(self._pending or [])
            self.vectors_pending = left
            return None
        if self._pending is None or warming.stamp(root) != self._scan_stamp:
            self._scan_missing(emb)  # first time, after a write, or a worker embedded since
        _, problem = self._embed_pending(emb, SEARCH_EMBED_BATCH, None)
        if problem:
            return problem
        if self._pending and not self._background_started:
            self._background_started = warming.start_background_embedding(root)
        return None

    # --- writing --------------------------------------------------------------------------------
    def reindex(
        self, *, full: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> ReindexReport:
        """Bring the index level with the files. Waits while another reindex of this repository
        runs: one at a time (ccmemory.app.reindexlock says why)."""
        from ccmemory.app.reindexlock import exclusive

        with exclusive(self.vault.dir / "local"):
            return self._reindex(full, progress)

    def never_built(self) -> bool:
        """No reindex has finished here (no stored git state) and the index holds nothing of the
        project while memory files exist: a new clone or worktree, whose first reindex (the
        post-checkout hook's, in the background) may be running right now."""
        try:
            if self.index.sync_state(self.project) or self.index.count(self.filters(include_superseded=True)):
                return False
        except Exception:  # an index that cannot answer: the caller's read reports it
            return False
        return next(self.vault.iter_paths(), None) is not None

    def wait_for_reindex(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a reindex another process runs to finish (without
        running one); False when it still runs."""
        from ccmemory.app.reindexlock import exclusive

        with exclusive(self.vault.dir / "local", timeout=timeout) as held:
            return held

    def reindex_unless_busy(self, *, wait: float) -> ReindexReport | None:
        """:meth:`reindex`, or None when another reindex of this repository still runs after
        ``wait`` seconds (then the index is what that one leaves)."""
        from ccmemory.app.reindexlock import exclusive

        with exclusive(self.vault.dir / "local", timeout=wait) as held:
            return self._reindex(False, None) if held else None

    def _reindex(self, full: bool, progress: Callable[[int, int], None] | None) -> ReindexReport:
        from ccmemory.app.sync import reindex

        report = reindex(
            self.vault,
            self.index,
            self.project,
            main_branch=self.config.main_branch,
            full=full,
            progress=progress,
            local_author=self.config.user_id,
        )
        if full or report.added or report.updated or report.removed:
            self._pending = None  # new texts may lack a vector: scan again at the next search
        report.sessions = self._reindex_sessions(full)
        if self.config.related or self.config.backend == "neo4j":
            try:  # related_to -> RELATED_TO links; a failure here must not fail the reindex
                self.link_projects(force=True)
            except Exception as exc:
                problem = f"related_to not stored in the index: {exc}"
                report.errors.append(FileProblem(".ccmemory/config.yaml", None, problem))
        return report

    def _reindex_sessions(self, full: bool) -> dict[str, Any]:
        """The local session index (ccmemory.index.sessions_sqlite) level with the session records
        under `.ccmemory/local/sessions/`: in the memory index file with SQLite, in a local file of
        its own otherwise (never a shared server). A failure is reported, never raised."""
        from ccmemory.index.sessions_sqlite import open_local

        if not (self.vault.dir / "local" / "sessions").is_dir():
            return {}
        try:
            with open_local(self.vault.dir, self.config.backend) as idx:
                return dict(idx.sync(full=full).as_dict())
        except Exception as exc:
            return {"error": f"session index not updated: {exc}"}

    def link_projects(self, *, force: bool = False) -> None:
        """Store the configured `related_to` as the project's RELATED_TO links (on every reindex
        with `force`, else once per process and configuration)."""
        links = tuple(sorted((r.name, r.relation) for r in self.config.related))
        key = (self.index.location, self.project, links)
        if force or key not in _LINKED:
            self.index.link_projects(self.project, list(links))
            _LINKED.add(key)

    def draft(self, mtype: str, title: str, **kw: Any) -> Memory:
        """A new memory built by the one builder (`ccmemory.app.draft.build_memory`: redacted,
        validated, link targets resolved or refused, `files` made repository paths: relative ones
        taken from `cwd=` when given and inside the repository, else from the root), authored by
        this user on the current branch. Not written: pass it to `record`. Raises `DraftError`."""
        from ccmemory.app.draft import build_memory
        from ccmemory.app.resolve import resolve_one, written_reference

        kw.setdefault("author", self.config.user_id)
        if "branch" not in kw and gitstate.is_repo(self.vault.root):
            kw["branch"] = gitstate.current_branch(self.vault.root)
        kw.setdefault("root", self.vault.root)
        return build_memory(
            mtype,
            title,
            resolve=lambda ref: written_reference(resolve_one(self, ref, "memory to link to")),
            **kw,
        )

    def record(self, memory: Memory) -> Recorded:
        """Write the memory file (the source of truth), then index just that file.

        If the index is unavailable the file is still written and the notice says so.
        """
        path, data = self.vault.write_new_bytes(memory)
        self._pending = None
        rel = self.vault.rel(path)
        view = gitstate.snapshot(self.vault.root, self.config.main_branch)
        status = view.status_of(rel)
        try:
            # index the bytes just written (no read back); the mtime only dates the record, and a
            # fresh one is "racy" (-1), so the next reindex hashes the file again anyway
            from ccmemory.app.sync import record_from_bytes

            rec = record_from_bytes(data, rel, -1)
            if rec.memory is not None:  # a target written as a path is an edge to its id at once
                from ccmemory.app.resolve import with_targets

                rec = dataclasses.replace(rec, memory=with_targets(self.index, self.project, rec.memory))
            self.index.apply(self.project, [rec], [], view.status_of, None)
            stored = self.index.sync_state(self.project)
            if stored is not None:  # the next reindex checks this path even if git never lists it
                from ccmemory.app.gitdelta import with_path

                self.index.set_sync_state(self.project, with_path(stored, rel))
        except Exception as exc:
            return Recorded(
                memory, rel, status, False, f"written, not indexed ({exc}); run `ccmemory reindex`"
            )
        return Recorded(memory, rel, status)

    # --- reading --------------------------------------------------------------------------------
    def resolve(self, ref: str) -> list[str]:
        """Ids `ref` names: full id, unique prefix, path or slug (the one resolver, resolve.py)."""
        from ccmemory.app.resolve import resolve_ids

        return resolve_ids(self, ref)

    def get(self, ref: str) -> IndexedMemory | None:
        ids = self.resolve(ref)
        if len(ids) != 1:
            return None
        found = self.view.query(self.filters(ids=ids, include_superseded=True), limit=1)
        return found[0] if found else None

    def search(
        self,
        query: str,
        filters: Filters | None = None,
        *,
        limit: int = 10,
        mode: str = "hybrid",
        expand: bool = True,
        recipe: FusionRecipe | None = None,
        groups: Sequence[Sequence[str]] | None = None,
        unindexed_notice: bool = True,
    ) -> SearchResponse:
        """The search (``ccmemory.retrieval.search.search``) with this service's embedder, its
        missing vectors filled first; ``recipe`` None is the default fusion; ``groups`` as
        `Index.text_search`'s. ``unindexed_notice`` False: a caller that shows no notices (prompt
        recall, the site's related lists) does not pay the count of invalid files."""
        from ccmemory.retrieval.search import search

        f = filters or self.filters()
        emb = self.embedder() if mode in ("hybrid", "semantic") else None
        if emb is not None:
            self.start_embedder_load()  # overlaps the model load with the index work below
        if emb is not None and (self._pending is None or self._pending):
            problem = self._warm_vectors(emb)
            if problem:
                emb, self._embedder_problem = None, problem
        resp = search(
            self.index,
            query,
            f,
            limit=limit,
            mode=mode,
            embedder=emb,
            embedder_problem=self._embedder_problem,
            expand=expand,
            recipe=recipe,
            groups=groups,
        )
        built = 0 if resp.hits else self._build_if_never_indexed()
        if built:
            resp = self.search(
                query,
                filters,
                limit=limit,
                mode=mode,
                expand=expand,
                recipe=recipe,
                groups=groups,
                unindexed_notice=unindexed_notice,
            )
            note = f"the index held none of this project's memories: built it from {built} files"
            resp.notices.insert(0, note)
            return resp
        if emb is not None and self.vectors_pending:
            resp.vectors_pending = self.vectors_pending
            resp.notices.append(warming_notice(self.vectors_pending))
        unread = self.unindexed_notice() if unindexed_notice else None
        if unread:
            resp.notices.append(unread)
        return resp

    def unindexed_notice(self) -> str | None:
        """A line naming the memory files left out of the index (invalid frontmatter or values),
        or None: a search cannot find them, and without the line it would answer as if they did
        not exist (`reindex` and `check` name each file and its reason)."""
        from ccmemory.core.errors import CcmemoryError

        try:
            count, paths = self.view.invalid_files(limit=3)
        except CcmemoryError as exc:  # a notice never fails the search it follows
            import logging

            logging.getLogger(__name__).info("invalid files not counted: %s", exc)
            return None
        if not count:
            return None
        more = f" and {count - len(paths)} more" if count > len(paths) else ""
        files = "file is" if count == 1 else "files are"
        return (
            f"{count} memory {files} invalid, so not indexed and not searched: {', '.join(paths)}{more};"
            " `ccmemory check` says why"
        )

    def _build_if_never_indexed(self) -> int:
        """A search that found nothing in an index never built for this project, while memory
        files exist (files copied or pulled without the git hooks, `reindex` not run yet):
        build it once, as `reindex` would, instead of answering "no matching memories".
        Only the empty case: a stale index is `reindex`'s and the hooks' job (a walk per
        search would cost O(vault)). Returns how many memories it added."""
        if self._built_on_demand or self.index.count(self.filters(include_superseded=True)):
            return 0
        self._built_on_demand = True
        if self.index.file_states(self.project) or next(self.vault.iter_paths(), None) is None:
            return 0
        return self.reindex().added

    def superseded_by(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """id -> the memories superseding it, for those of `ids` that are superseded (an edge
        from itself or on a ring does not count: `ccmemory.index.derive.superseded`)."""
        out: dict[str, list[str]] = {}
        edges = [
            e for e in self.view.edges(ids) if e.type == "SUPERSEDES" and e.dst in ids and e.src != e.dst
        ]
        if not edges:
            return out
        hidden = self.view.superseded_ids(
            self.filters(ids=sorted({e.dst for e in edges}), include_superseded=True)
        )
        for e in edges:
            if e.dst in hidden:
                out.setdefault(e.dst, []).append(e.src)
        return out

    def trace(self, ref: str, *, direction: str = "both", depth: int = 3) -> Trace | None:
        root = self.get(ref)
        if root is None:
            return None
        visible = self.filters(include_superseded=True)
        nodes: dict[str, IndexedMemory] = {root.id: root}
        steps: list[TraceStep] = []
        seen_edges: set[Edge] = set()
        frontier = {root.id}
        for level in range(1, max(depth, 0) + 1):
            links, allowed = self.view.neighbours(frontier, visible, direction=direction, known=nodes)
            nxt: set[str] = set()
            for link in sorted(links, key=_link_order):
                assert link.edge is not None  # relations only (no shared_limit)
                if link.edge in seen_edges or _self_supersedes(link.edge):
                    continue
                seen_edges.add(link.edge)
                steps.append(TraceStep(level, link.edge, link.direction, link.label))
                if link.other not in nodes:
                    nodes[link.other] = allowed[link.other]
                    nxt.add(link.other)
            frontier = nxt
            if not frontier:
                break
        return Trace(root, self._chain(root, visible), steps, nodes)

    def _chain(self, root: IndexedMemory, visible: Filters) -> list[IndexedMemory]:
        """The supersession chain through root: older memories first, newer last."""
        chain = [root]
        seen = {root.id}
        for forward in (False, True):
            cur = root.id
            while True:
                edges = [e for e in self.view.edges([cur]) if e.type == "SUPERSEDES"]
                nxt = sorted(
                    e.src if forward else e.dst for e in edges if (e.dst if forward else e.src) == cur
                )
                nxt = [n for n in nxt if n not in seen]
                if not nxt:
                    break
                found = self.view.query(dataclasses.replace(visible, ids=nxt[:1]), limit=1)
                if not found:
                    break
                seen.add(found[0].id)
                if forward:
                    chain.append(found[0])
                else:
                    chain.insert(0, found[0])
                cur = found[0].id
        return chain


def _self_supersedes(edge: Edge) -> bool:
    """A memory that names itself in `supersedes`: the index ignores the edge (nothing is hidden,
    `ccmemory check` warns), so a trace does not show it as "SUPERSEDED_BY itself"."""
    return edge.type == "SUPERSEDES" and edge.src == edge.dst


#: (index location, project, links) stored by link_projects in this process
_LINKED: set[tuple[str, str, tuple[tuple[str, str], ...]]] = set()
#: Missing vectors one search call may embed before answering (one model batch or so).
SEARCH_EMBED_BATCH = 32
#: Vectors committed at a time by embed_missing.
EMBED_CHUNK = 128


def warming_notice(pending: int) -> str:
    return (
        f"semantic search is still warming up: {pending} memories have no vector yet "
        "(embedding in the background); these results use full-text search and the vectors "
        "that are ready"
    )


def _link_order(link: Link) -> tuple[str, str, str, str]:
    assert link.edge is not None
    return (link.edge.src, link.edge.type, link.edge.dst, link.direction)


def ranked_hits_to_dicts(hits: list[Hit], explain: bool = False) -> list[dict[str, Any]]:
    return [h.to_dict(explain) for h in hits]


def utcnow() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def _keep_in_shared_cache(emb: Any, items: list[tuple[str, Any]]) -> None:
    from ccmemory.retrieval import vectorcache

    cache = vectorcache.shared()
    if cache is not None:
        cache.put(emb.name, int(emb.dim), items)
