"""The index contract. Every caller talks to this; SQLite and Neo4j both implement it.

The index is a cache of the files: `sync.reindex` feeds it FileRecords (one per memory file, with
the parsed memory or the parse error) and it derives everything else. Derivation rules that both
backends must follow exactly (the conformance suite checks them):

- A memory is served from the valid file with its id whose path sorts first; other files with the
  same id are reported as duplicates (`duplicate_ids`).
- A shared backend may scope file records per indexing user (Neo4j keys them by the user's id, so
  each clone's reindex owns its own records and never removes another clone's); `file_states`,
  `apply`, `clear` and `file_problems` then see only their scope, and a memory is served from
  the winning file across all scopes (within one scope, the rule above).
- Relations are stored on their source memory only; reverse edges are derived at query time.
- A memory is *superseded* when another memory visible to the viewer has a SUPERSEDES edge to it,
  except a self-edge and an edge on a cycle (its target also supersedes its source, directly or
  through others): a hand-written cycle would otherwise hide all its members (`derive.superseded`).
- Visibility (team rule): with `Filters.viewer` set, a memory is visible when it is curated or its
  effective author (frontmatter author, else the git author who added it) equals the viewer.
- Topic/file neighbours (`related_by_topic_or_file`) ignore a topic or file shared by more than
  MAX_SHARED memories of the project: it connects nothing in particular and would make one-hop
  expansion cost grow with the vault.
- Ordering: `query` sorts by created descending, then id descending; text and vector searches
  sort by score descending, then id ascending.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from ccmemory.core.errors import IndexUnavailable as IndexUnavailable  # defined low: see core/errors.py
from ccmemory.core.model import Memory, Relation

MAX_SHARED = 50


def file_filter(files: Iterable[str]) -> tuple[list[str], list[str]]:
    """A file filter (`Filters.files`) split into exact paths and folder prefixes (a trailing '/')."""
    files = list(files)
    return [x for x in files if not x.endswith("/")], [x for x in files if x.endswith("/")]


@dataclass
class FileRecord:
    path: str  # repo-relative POSIX path
    mtime_ns: int
    size: int
    hash: str  # sha256 of the bytes
    memory: Memory | None = None  # None when the file is invalid
    error: str | None = None
    error_line: int | None = None


#: The list and dict fields both backends store as JSON text, in their column order.
JSON_COLUMNS = ("fields", "topics", "files", "supersedes", "relations")


def json_columns(im: IndexedMemory) -> dict[str, str]:
    """The JSON text of each of JSON_COLUMNS (keys in that order), as both backends store it."""
    return {
        "fields": json.dumps(im.fields, default=str, ensure_ascii=False, sort_keys=True),
        "topics": json.dumps(im.topics, ensure_ascii=False),
        "files": json.dumps(im.files, ensure_ascii=False),
        "supersedes": json.dumps(im.supersedes),
        "relations": json.dumps([r.to_dict() for r in im.relations], ensure_ascii=False),
    }


def loads_column(text: str) -> Any:
    """json.loads, minus the parser for the empty lists and objects most rows hold."""
    if text == "[]":
        return []
    if text == "{}":
        return {}
    return json.loads(text)


@dataclass
class IndexedMemory:
    """A memory as the index serves it: the file's content plus derived facts."""

    id: str
    type: str
    title: str
    body: str
    created: str  # ISO-8601 UTC 'YYYY-MM-DDTHH:MM:SSZ', sortable as text
    path: str
    status: str  # curated | developmental
    project: str
    author: str | None = None  # effective author (frontmatter, else git adder)
    session: str | None = None
    branch: str | None = None
    topics: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    confidence: float | None = None
    source: str | None = None
    supersedes: list[str] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)
    hash: str = ""

    @property
    def uri(self) -> str:
        return f"ccmemory://memory/{self.id}"

    @classmethod
    def from_columns(cls, row: Mapping[str, Any]) -> IndexedMemory:
        """From an index row by column name, whose JSON_COLUMNS hold JSON text (both backends)."""
        d = {**row, **{k: loads_column(row[k]) for k in JSON_COLUMNS}}
        return cls.from_payload(
            d, path=row["path"], status=row["status"], project=row["project"], hash=row["hash"]
        )

    @classmethod
    def from_payload(
        cls, d: Mapping[str, Any], *, path: str, status: str, project: str, hash: str
    ) -> IndexedMemory:
        """From the JSON payload a file record stores (`derive.payload`)."""
        return cls(
            id=d["id"],
            type=d["type"],
            title=d["title"],
            body=d["body"],
            created=d["created"],
            path=path,
            status=status,
            project=project,
            author=d.get("author"),
            session=d.get("session"),
            branch=d.get("branch"),
            topics=d.get("topics") or [],
            files=d.get("files") or [],
            confidence=d.get("confidence"),
            source=d.get("source"),
            supersedes=d.get("supersedes") or [],
            relations=[Relation(r["type"], r["target"], r.get("reason")) for r in d.get("relations") or []],
            fields=d.get("fields") or {},
            hash=hash,
        )


@dataclass(frozen=True)
class Edge:
    src: str
    type: str  # one of model.RELATION_TYPES (stored direction: src -> dst)
    dst: str
    reason: str | None = None


@dataclass
class Filters:
    """Every filter the product uses; each works on both backends. Empty = no restriction."""

    project: str
    types: Sequence[str] | None = None
    status: str | None = None  # curated | developmental
    viewer: str | None = None  # team rule: curated, or authored by this user
    since: datetime | None = None
    until: datetime | None = None
    topics: Sequence[str] | None = None  # any of (normalised topics)
    files: Sequence[str] | None = None  # any of; a trailing '/' matches a folder prefix
    include_superseded: bool = False
    ids: Sequence[str] | None = None


@dataclass(frozen=True)
class FileState:
    path: str
    mtime_ns: int
    size: int
    hash: str


@dataclass(frozen=True)
class FileProblem:
    path: str
    line: int | None
    reason: str


class Index(Protocol):
    backend: str
    location: str  # db path or URI, for messages

    # --- writing (sync only) ----------------------------------------------------------------
    def file_states(self, project: str, paths: Collection[str] | None = None) -> dict[str, FileState]:
        """The stored stat data of every file record, or of those at `paths`."""
        ...

    def sync_state(self, project: str) -> dict[str, Any] | None:
        """What the last reindex saw of git (`ccmemory.app.gitdelta.State`), stored with the
        index so the next reindex asks git what changed instead of walking the vault. None: not
        stored (a backend without it, an older index, a reindex cut short): walk everything."""
        ...

    def set_sync_state(self, project: str, state: dict[str, Any] | None) -> None:
        """Store (None: forget) the sync state; `clear` forgets it too."""
        ...

    def apply(
        self,
        project: str,
        upserts: Sequence[FileRecord],
        removed: Iterable[str],
        status_of: Any,  # Callable[[str], str]: status for a path
        adders: dict[str, str] | None = None,
    ) -> None:
        """Apply file changes atomically where the backend allows; derive memory rows."""
        ...

    def refresh_status(
        self,
        project: str,
        status_of: Any,
        adders: Mapping[str, str] | None = None,
        only: Collection[str] | None = None,
        git_authors: bool = False,
    ) -> int:
        """Recompute status (and git authors) of every memory; return how many changed. With
        `only`: just the memories at those paths, plus (`git_authors`) every memory whose author
        comes from git (no `author:` in the file); a backend may check more, never fewer."""
        ...

    def clear(self, project: str) -> None: ...

    # --- reading ------------------------------------------------------------------------------
    def get(self, project: str, ids: Sequence[str]) -> list[IndexedMemory]: ...

    def resolve(self, project: str, ref: str) -> list[str]:
        """Ids matching a full id, an id prefix (≥ 4 chars) or a repo-relative path."""
        ...

    def query(self, f: Filters, limit: int = 50, offset: int = 0) -> list[IndexedMemory]: ...

    def count(self, f: Filters) -> int: ...

    def file_links(self, f: Filters, matching: Callable[[str], bool] | None = None) -> list[tuple[str, str]]:
        """(memory id, file path/folder/glob as the memory wrote it) of the memories passing ``f``,
        ordered by id then file; with ``matching``, only the files (as written) it accepts."""
        ...

    def text_search(
        self, text: str, f: Filters, limit: int = 50, *, groups: Sequence[Sequence[str]] | None = None
    ) -> list[tuple[str, float]]:
        """Full-text candidates (id, score; higher is better). `text` is plain words, never syntax.
        With ``groups`` (analysed terms, `ccmemory.text.morelike.like_groups`) the candidates are
        the memories holding every term of at least one group instead of any term of `text`;
        they are scored on `text`'s terms all the same (a bounded "more like this" search)."""
        ...

    def doc_freqs(self, project: str, terms: Sequence[str]) -> dict[str, int]:
        """How many of the project's memories hold each analysed term (the statistics text search
        scores with; 0 for a term none holds). Also prompt recall's: a prompt whose words the vault
        mostly does not know is seldom about the project."""
        ...

    def edges(self, project: str, ids: Sequence[str]) -> list[Edge]:
        """Every stored edge touching `ids`, in either direction, whose endpoints both exist."""
        ...

    def dangling(self, project: str) -> list[Edge]:
        """Edges whose target id is not in the index (a warning, not an error)."""
        ...

    def superseded_ids(self, f: Filters) -> set[str]: ...

    def related_by_topic_or_file(
        self, f: Filters, ids: Sequence[str], limit: int = 20
    ) -> list[tuple[str, str, int]]:
        """(other id, via id, shared count) for memories sharing topics or files with `ids`."""
        ...

    def file_problems(self, project: str) -> list[FileProblem]:
        """Invalid files and duplicate-id files, sorted by path."""
        ...

    def invalid_files(self, project: str, limit: int) -> tuple[int, list[str]]:
        """How many of this project's memory files are invalid (not indexed), and the first
        ``limit`` of their paths in path order: cheap enough for every search (an index of the
        invalid files only)."""
        ...

    def stats(self, project: str) -> dict[str, Any]: ...

    def dump(self, project: str) -> dict[str, Any]:
        """A canonical, comparable dump of everything derived (for rebuild==incremental tests)."""
        ...

    # --- embeddings (optional capability; see embed.py) ------------------------------------------
    def missing_vectors(self, project: str, embedder: str) -> list[tuple[str, str]]:
        """(hash, text) of memories whose content has no vector for `embedder` yet."""
        ...

    def store_vectors(self, embedder: str, dim: int, items: Sequence[tuple[str, Any]]) -> None: ...

    def vector_search(
        self, embedder: str, vector: Any, f: Filters, limit: int = 50
    ) -> list[tuple[str, float]]: ...

    # --- projects (the cross-project capability; see crossproject.py) ----------------------------
    def projects(self) -> list[str]:
        """Names of the projects this index holds memories or links of, sorted."""
        ...

    def link_projects(self, project: str, links: Sequence[tuple[str, str]]) -> None:
        """Replace `project`'s RELATED_TO links by (other project, relation) pairs (from config)."""
        ...

    def related_projects(self, project: str) -> list[tuple[str, str]]:
        """(other project, relation) linked with `project` in either direction, sorted by name."""
        ...

    def applying_to(self, target: str, f: Filters, limit: int = 50) -> list[IndexedMemory]:
        """Memories of `f.project` (under `f`) whose `applies_to` names project `target`,
        ordered like `query` (the APPLIES_TO edge on Neo4j)."""
        ...

    def projects_applying_to(self, target: str) -> list[str]:
        """Other projects holding a memory whose `applies_to` names `target`, sorted (one query
        instead of one `applying_to` per project)."""
        ...

    def close(self) -> None: ...

    # --- optional capabilities ----------------------------------------------------------------
    # Every backend has each member below; one without the capability gives the documented
    # "absent" answer (None, or True for `healthy`), so callers test the answer, never probe
    # with getattr. SQLite: fresh_beside/swap_in/discard, healthy/reset_corrupt, moved_aside.
    # Neo4j: server_info, scope, parse_ahead, concurrent_reads.

    @property
    def scope(self) -> str | None:
        """The indexing user's scope of file records on a shared index ("" for an unknown user);
        None: records are not scoped (an embedded index)."""
        ...

    @property
    def parse_ahead(self) -> bool:
        """True when `apply` mostly waits on a server (Neo4j): `sync.reindex` then reads and
        parses the next batch in a helper thread meanwhile. False for an embedded index, whose
        `apply` runs in this process (a parsing thread would only contend for the GIL)."""
        ...

    @property
    def concurrent_reads(self) -> bool:
        """True when reads mostly wait on a server and two threads may read at once (Neo4j: each
        read takes its own session from the driver's pool): a hybrid search then runs its text
        half while the query is embedded and the vector half runs. False for an embedded index
        (one connection, and the work is in this process)."""
        ...

    @property
    def moved_aside(self) -> str | None:
        """Where a corrupt local index file was moved when opened (refill it from the files);
        None: nothing was moved, or the index has no local file."""
        ...

    def server_info(self) -> dict[str, Any] | None:
        """Version, edition and schema state of an index server, for `ccmemory doctor`:
        {"version", "edition", "indexes": {name: {"type", "state"}}, "constraints": [names]}.
        None: an embedded index, no server."""
        ...

    def healthy(self) -> bool:
        """A full integrity check of local storage (`reindex --full` runs it); True when the
        backend has no such check (a server checks its own store)."""
        ...

    def reset_corrupt(self) -> str | None:
        """Move a corrupt local index aside and reopen empty; where it went, or None when there
        is no local file to move."""
        ...

    def fresh_beside(self, project: str) -> Index | None:
        """An empty index to rebuild `project` into while readers keep using this one (then
        `swap_in`, or `discard` on failure); None when the backend cannot (Neo4j) or not now."""
        ...

    def swap_in(self, fresh: Index) -> None:
        """Replace this index's content with `fresh` (from `fresh_beside`) atomically."""
        ...

    def discard(self, fresh: Index) -> None:
        """Close and delete an index `fresh_beside` gave that will not be swapped in."""
        ...


def stats_summary(
    backend: str,
    location: str,
    by_type: dict[str, int],
    by_status: dict[str, int],
    *,
    relations: int,
    invalid_files: int,
    vectors: int,
) -> dict[str, Any]:
    """The shape of `Index.stats`, the same from both backends."""
    return {
        "backend": backend,
        "location": location,
        "memories": sum(by_type.values()),
        "by_type": by_type,
        "by_status": by_status,
        "relations": relations,
        "invalid_files": invalid_files,
        "vectors": vectors,
    }


def embed_text(m: IndexedMemory) -> str:
    """The text embedded for a memory (title, body and prose fields)."""
    from ccmemory.core.model import prose_values

    parts = [m.title, m.body, *(", ".join(values) for values in prose_values(m.type, m.fields))]
    return "\n".join(p for p in parts if p).strip()


def text_hash(m: IndexedMemory) -> str:
    """The key under which a memory's vector is cached: sha256 of its embedded text."""
    import hashlib

    return hashlib.sha256(embed_text(m).encode("utf-8")).hexdigest()


# --- reference knowledge (Domain 2): chunks of .ccmemory/reference/**.md -----------------------


@dataclass
class IndexedChunk:
    """One section of a reference file, as the index serves it."""

    id: str  # "<path in tree>#<anchor>", e.g. "concepts/jwt.md#claims"
    path: str  # repo-relative file path
    order: int
    heading_path: list[str]
    text: str
    status: str
    title: str | None = None
    source: str | None = None
    cached_at: str | None = None
    tags: list[str] = field(default_factory=list)
    text_hash: str = ""

    @property
    def uri(self) -> str:
        return f"ccmemory://reference/{self.id}"

    @property
    def anchor(self) -> str:
        return self.id.split("#", 1)[1]


def chunk_embed_text(heading_path: Sequence[str], text: str) -> str:
    """The text embedded (and hashed) for a chunk: its heading path, then its markdown."""
    return (" > ".join(heading_path) + "\n" + text).strip()


def chunk_text_hash(heading_path: Sequence[str], text: str) -> str:
    import hashlib

    return hashlib.sha256(chunk_embed_text(heading_path, text).encode("utf-8")).hexdigest()


def cited_reference(target: str) -> str | None:
    """A CITES target naming a reference file -> its path in the tree ("concepts/jwt.md"), with
    any "#section" kept. Accepts ccmemory://reference/..., .ccmemory/reference/... and
    reference/...; anything else (a memory id) gives None."""
    for prefix in ("ccmemory://reference/", ".ccmemory/reference/", "reference/"):
        if target.startswith(prefix):
            rest = target[len(prefix) :]
            return rest if rest.split("#", 1)[0].endswith(".md") else None
    return None


def supports_reference(index: Any) -> bool:
    """Whether a backend stores reference chunks (implements ReferenceIndex)."""
    return hasattr(index, "ref_apply")


class ReferenceIndex(Protocol):
    """The chunk side of the index (both backends). Fed by ccmemory.app.refsync only."""

    def ref_file_states(self, project: str) -> dict[str, FileState]: ...

    def ref_apply(self, project: str, upserts: Sequence[Any], removed: Iterable[str], status_of: Any) -> None:
        """Store RefRecords (ccmemory.core.reftree.record) and their chunks/links; drop removed paths."""
        ...

    def ref_refresh_status(self, project: str, status_of: Any) -> int: ...

    def ref_clear(self, project: str) -> None: ...

    def ref_files(self, project: str) -> list[dict[str, Any]]: ...

    def ref_problems(self, project: str) -> list[FileProblem]: ...

    def ref_chunks(self, project: str, ids: Sequence[str]) -> list[IndexedChunk]: ...

    def ref_file_chunks(self, project: str, path: str) -> list[IndexedChunk]: ...

    def ref_text_search(self, text: str, project: str, limit: int = 50) -> list[tuple[str, float]]: ...

    def ref_missing_vectors(self, project: str, embedder: str) -> list[tuple[str, str]]: ...

    def ref_vector_search(
        self, embedder: str, vector: Any, project: str, limit: int = 50
    ) -> list[tuple[str, float]]: ...

    def ref_links(self, project: str, chunk_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """(chunk id, "chunk" | "memory", target chunk id or memory id) for links that resolve."""
        ...

    def ref_citing(self, project: str, chunk_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(memory id, chunk id): memories whose CITES names the chunk's file (or the chunk)."""
        ...

    def ref_dump(self, project: str) -> dict[str, Any]: ...
