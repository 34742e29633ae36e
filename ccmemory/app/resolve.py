"""One way to name a memory, for every command and MCP tool: a full id, a unique id prefix
(4+ characters), a file path, or a slug.

Rules, in order (the first rule that matches anything decides):

1. the full id (any case) or the exact repository-relative path;
2. a path relative to the current folder, the repository root or `.ccmemory/` (`x.md`, `./x.md`,
   `decisions/2026-11-20-adopt-ruff-7k2q.md`);
3. an id prefix of at least 4 characters (`01JD3K8X`), or of a provisional id (`DRAFT-…`);
4. a slug: a file name without `.md` (`2026-11-20-adopt-ruff-7k2q`), without its date and
   suffix (`adopt-ruff`), or a title that slugifies to it (`"Adopt ruff"`).

More than one match is an error that lists every candidate, the same text everywhere
(`AmbiguousRef`). Human output shows ids by their shortest unique prefix, never under
:data:`SHORT_MIN` characters (`short_ids`).

The index answers rules 1-3; rule 4 lists file names under `.ccmemory/` (no file is read).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ccmemory.core.errors import CcmemoryError
from ccmemory.core.model import Memory, is_provisional, is_ulid
from ccmemory.index.base import FileRecord, Index, IndexedMemory

if TYPE_CHECKING:
    from ccmemory.app.service import Service

PREFIX_MIN = 4
SHORT_MIN = 8
MAX_LISTED = 10
_DATED = re.compile(r"^\d{4}-\d{2}-\d{2}-(.+?)(?:-[0-9a-z]{4})?(?:-\d+)?$")
_ID_CHARS = re.compile(r"^[0-9A-Za-z-]+$")


class RefError(CcmemoryError):
    """A reference that does not name exactly one memory. `code` is `not_found` or `ambiguous`
    (the MCP error codes); `str()` is the message shown by the CLI and the MCP tools alike."""

    code = "not_found"

    def __init__(self, ref: str, message: str, hint: str):
        super().__init__(message, hint)
        self.ref = ref


class NoSuchMemory(RefError):
    code = "not_found"


class AmbiguousRef(RefError):
    code = "ambiguous"

    def __init__(self, ref: str, candidates: Sequence[IndexedMemory], shorts: dict[str, str]):
        self.candidates = list(candidates)
        lines = [f"{ref!r} matches {len(candidates)} memories:"]
        for m in candidates[:MAX_LISTED]:
            lines.append(f"  {shorts.get(m.id, m.id)}  [{m.type}] {m.title}  ({m.path})")
        if len(candidates) > MAX_LISTED:
            lines.append(f"  ... and {len(candidates) - MAX_LISTED} more")
        super().__init__(
            ref, "\n".join(lines), "pass more characters of the id, the full id or the file path"
        )


def _exact_or_prefix(svc: Service, ref: str) -> list[str]:
    return sorted(svc.view.resolve(ref))


def _as_path(svc: Service, ref: str) -> list[str]:
    vault = svc.vault
    tries: list[str] = []
    for base in (Path.cwd(), vault.root, vault.dir):
        candidate = Path(ref) if Path(ref).is_absolute() else base / ref
        try:
            rel = vault.rel(vault.safe_path(candidate))
        except (ValueError, OSError):
            continue
        if rel not in tries:
            tries.append(rel)
    for rel in tries:
        ids = svc.view.resolve(rel)
        if ids:
            return sorted(ids)
    return []


def _slug_key(name: str) -> str:
    """`2026-11-20-adopt-ruff-7k2q` -> `adopt-ruff`."""
    m = _DATED.match(name)
    return m.group(1) if m else name


def _as_slug(svc: Service, ref: str) -> list[str]:
    from ccmemory.core.vault import slugify

    text = ref.strip().removesuffix(".md")
    wanted = {text.casefold(), slugify(text)}
    stems: list[str] = []
    for entry in svc.vault.walk()[0]:
        rel = entry.rel
        stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
        if stem.casefold() in wanted:
            return sorted(svc.view.resolve(rel))
        if _slug_key(stem) in wanted:
            stems.append(rel)
    ids: set[str] = set()
    for rel in stems:
        ids.update(svc.view.resolve(rel))
    return sorted(ids)


def resolve_ids(svc: Service, ref: str) -> list[str]:
    """Every id `ref` names under the rules above (usually one; none or several are errors)."""
    ref = (ref or "").strip()
    if not ref:
        return []
    if "/" in ref or ref.endswith(".md"):
        ids = _as_path(svc, ref)
        if ids or "/" in ref:
            return ids
    if len(ref) >= PREFIX_MIN and _ID_CHARS.match(ref):
        ids = _exact_or_prefix(svc, ref)
        if ids:
            return ids
    return _as_slug(svc, ref)


def lookup(svc: Service, ids: Sequence[str]) -> list[IndexedMemory]:
    """The memories for `ids` (superseded ones included), in the order of `ids`."""
    found = {
        m.id: m for m in svc.view.query(svc.filters(ids=list(ids), include_superseded=True), limit=len(ids))
    }
    return [found[i] for i in ids if i in found]


def resolve_one(svc: Service, ref: str, what: str = "memory") -> IndexedMemory:
    """The one memory `ref` names; raises NoSuchMemory or AmbiguousRef."""
    ref = (ref or "").strip()
    ids = resolve_ids(svc, ref)
    mems = lookup(svc, ids) if ids else []
    if len(mems) > 1:
        raise AmbiguousRef(ref, mems, short_ids(svc, [m.id for m in mems]))
    if not mems:
        raise NoSuchMemory(
            ref,
            f"no {what} {ref!r} in project {svc.project}" if ref else f"no {what} id given",
            _invalid_hint(svc, ref)
            or "give an id or a unique id prefix (4+ characters), a file path or a slug; find ids with "
            "search (`ccmemory search`, or the `search` tool); run `ccmemory reindex` if the file is new",
        )
    return mems[0]


def _invalid_hint(svc: Service, ref: str) -> str | None:
    """When `ref` names a file the index left out as invalid, say so and point at `check`."""
    if not ref:
        return None
    try:
        problems = svc.view.file_problems()
    except Exception:  # the hint is a courtesy: a failing index keeps the generic one
        return None
    key = ref.removesuffix(".md").rsplit("/", 1)[-1]
    for p in problems:
        name = p.path.rsplit("/", 1)[-1].removesuffix(".md")
        if p.path == ref or (len(key) >= PREFIX_MIN and key in name):
            where = f"{p.path}:{p.line}" if p.line else p.path
            return (
                f"{where} is invalid and left out of the index ({p.reason}); fix it and run `ccmemory check`"
            )
    return None


def written_reference(m: IndexedMemory) -> str:
    """How a new memory's file names `m` as a relation target: its id, or while `m` has only a
    provisional id (a hand-written file not fixed yet) its path, which the index resolves to
    whatever id the file has later (`relink`)."""
    return m.path if is_provisional(m.id) else m.id


def short_ids(svc: Service, ids: Iterable[str]) -> dict[str, str]:
    """id -> its shortest prefix of at least SHORT_MIN characters that names only it."""
    out: dict[str, str] = {}
    for mid in dict.fromkeys(ids):
        if len(mid) <= SHORT_MIN:
            out[mid] = mid
            continue
        group = [g for g in svc.view.resolve(mid[:SHORT_MIN]) if g != mid]
        k = SHORT_MIN
        while k < len(mid) and any(g[:k] == mid[:k] for g in group):
            k += 1
        if len(group) >= 19:  # the index lists at most 20: make sure nothing beyond shares it
            while k < len(mid) and len(svc.view.resolve(mid[:k])) > 1:
                k += 1
        out[mid] = mid[:k]
    return out


def short_id(svc: Service, mid: str) -> str:
    return short_ids(svc, [mid])[mid]


def target_ids(refs: Iterable[str], known: dict[str, str]) -> dict[str, str]:
    """Resolve relation targets written in files (an id, an id prefix or a path) against one set
    of memories, without an index: `known` maps repo-relative path -> id. Returns ref -> id for
    the refs that name exactly one memory (a full id maps to itself)."""
    id_set = set(known.values())
    all_ids = sorted(id_set)
    out: dict[str, str] = {}
    for ref in refs:
        r = ref.strip()
        if ref in out or not r:
            continue
        if r.upper() in id_set:
            out[ref] = r.upper()
            continue
        path = path_key(r)
        if path in known:
            out[ref] = known[path]
            continue
        if len(r) >= PREFIX_MIN and _ID_CHARS.match(r):
            pre = r.upper()
            hits = [i for i in all_ids if i.startswith(pre)]
            if len(hits) == 1:
                out[ref] = hits[0]
    return out


def path_key(ref: str) -> str:
    """A relation target written as a path, as a repo-relative path: `.ccmemory/...`, relative
    to `.ccmemory/` (`decisions/x.md`), or `../decisions/x.md` as in a markdown link from a
    memory file."""
    r = ref.strip()
    while r.startswith("./"):
        r = r[2:]
    while r.startswith("../"):
        r = r[3:]
    if not r.startswith(".ccmemory/"):
        r = ".ccmemory/" + r
    return r


# --- relation targets at index time ---------------------------------------------------------------


def _loose(m: Memory) -> bool:
    """Whether a memory names a relation target otherwise than by full id (a path or prefix)."""
    return any(not is_ulid(t) for t in [*m.supersedes, *(r.target for r in m.relations)])


def _resolve_target(index: Index, project: str, ref: str) -> str | None:
    r = ref.strip()
    if "/" in r or r.endswith(".md"):
        ids = index.resolve(project, path_key(r))
    elif len(r) >= PREFIX_MIN and _ID_CHARS.match(r):
        ids = index.resolve(project, r)
    else:
        return None
    return ids[0] if len(ids) == 1 else None


def _with_targets(index: Index, project: str, m: Memory) -> Memory:
    def one(t: str) -> str:
        return t if is_ulid(t) else (_resolve_target(index, project, t) or t)

    return m.retargeted(one)


def with_targets(index: Index, project: str, m: Memory) -> Memory:
    """`m` as the index stores it: relation targets written as a path or an id prefix resolved
    to ids (what `relink` does at reindex, for one memory just written by `Service.record`)."""
    return _with_targets(index, project, m) if _loose(m) else m


def relink(
    index: Index,
    project: str,
    records: Sequence[FileRecord],
    reload: Callable[[str], FileRecord | None],
    status_of: Callable[[str], str],
    adders: dict[str, str] | None,
) -> int:
    """After `sync.reindex` applied `records`: resolve relation targets written as a path or an
    id prefix to full ids, and re-apply the memories whose resolved targets differ from what the
    index holds. Memories with edges to ids no longer in the index (a provisional id replaced by
    `check --fix`, a renamed file) are re-read with `reload(path)` and resolved again. Files are
    never changed; returns how many memories were re-applied."""
    todo: dict[str, FileRecord] = {r.path: r for r in records if r.memory is not None and _loose(r.memory)}
    dangling = sorted({e.src for e in index.dangling(project)})
    if dangling:
        for m in index.get(project, dangling):
            if m.path in todo:
                continue
            rec = reload(m.path)
            if rec is not None and rec.memory is not None and _loose(rec.memory):
                todo[rec.path] = rec
    if not todo:
        return 0
    stored = {m.path: m for m in index.get(project, sorted({r.memory.id for r in todo.values() if r.memory}))}
    redo: list[FileRecord] = []
    for path, rec in sorted(todo.items()):
        assert rec.memory is not None
        fixed = _with_targets(index, project, rec.memory)
        old = stored.get(path)
        if old is not None and old.supersedes == fixed.supersedes and old.relations == fixed.relations:
            continue
        redo.append(replace(rec, memory=fixed))
    if redo:
        index.apply(project, redo, [], status_of, adders)
    return len(redo)
