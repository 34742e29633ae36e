"""Capture's view of the memory store: record, find similar, list ids, session-start context.

Uses the application's Service when the caller hands its class in (`Store(vault, service=Service)`:
writes the file, then indexes it; search through the index; a feature does not import the layer
that wires it, issue 26). Without it (or if it fails) capture still works on the files alone:
`Vault.write_new` and a lexical scan of the vault. Files stay the source of truth either way.
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccmemory.core.model import TYPES, Memory
from ccmemory.core.vault import MemoryFileError, Vault
from ccmemory.text.overlap import similarity, tokens

if TYPE_CHECKING:
    from ccmemory.app.service import Service

log = logging.getLogger("ccmemory.features.capture")

_ID_LINE = re.compile(rb"^id:\s*['\"]?([0-9A-Za-z]+)['\"]?\s*$", re.MULTILINE)
SCAN_LIMIT = 3000
NEAR = 0.3  # lexical overlap from which a scanned file counts as near (same subject)


@dataclass
class Existing:
    id: str
    type: str
    title: str
    body: str
    path: Path
    topics: list[str]
    files: list[str]
    session: str | None = None
    source: str | None = None
    supersedes: tuple[str, ...] = ()


class Store:
    def __init__(self, vault: Vault, *, service: type[Service] | None = None):
        """`service`: the Service class to open the vault's index with; None: files only."""
        self.vault = vault
        self._service_cls = service
        self._service: Any = None
        self._service_failed = service is None
        self._cache: list[Existing] | None = None

    # --- service (lazy) ---------------------------------------------------------------------------
    def service(self) -> Any:
        if self._service is None and not self._service_failed:
            try:
                assert self._service_cls is not None
                self._service = self._service_cls.open(self.vault.root)
            except Exception as exc:  # the index is a cache: files-only mode still works
                log.info("service unavailable, files-only mode: %s", exc)
                self._service_failed = True
        return self._service

    def close(self) -> None:
        if self._service is not None:
            with contextlib.suppress(Exception):
                self._service.close()
            self._service = None

    # --- reading ----------------------------------------------------------------------------------
    def existing_ids(self) -> set[str]:
        """Ids of every memory file, read from the frontmatter's `id:` line (no YAML parse)."""
        ids: set[str] = set()
        for path in self.vault.iter_paths():
            try:
                with open(path, "rb") as fh:
                    head = fh.read(2048)
            except OSError:
                continue
            m = _ID_LINE.search(head)
            if m:
                ids.add(m.group(1).decode("ascii", "replace"))
        return ids

    def all_memories(self) -> list[Existing]:
        if self._cache is None:
            out: list[Existing] = []
            paths = list(self.vault.iter_paths())[-SCAN_LIMIT:]
            for path in paths:
                try:
                    mem = self.vault.read(path)
                except (MemoryFileError, OSError, ValueError):
                    continue
                out.append(_existing(mem, path))
            self._cache = out
        return self._cache

    def replayed(self, memory: Memory) -> str | None:
        """The id of an explicit memory of the same session with the same type, title and text:
        the same command seen again (a re-run of the session's capture or an import after live
        capture), not a new one."""
        if not memory.session:
            return None
        key = (memory.session, memory.type, memory.title, memory.body + "\n" + memory.text_fields())
        for e in self.all_memories():
            if e.source in ("explicit", "import") and (e.session, e.type, e.title, e.body) == key:
                return e.id
        return None

    def nearest(self, memory: Memory, limit: int = 4) -> list[Existing]:
        """The existing memories closest to `memory`: the index's own hybrid search first (what it
        means, not only its words; superseded memories are left out by the search), then the
        best lexical matches from a scan of the files. At most 2 x `limit`."""
        query = f"{memory.title}\n{memory.body}"[:500]
        out: dict[str, Existing] = {}
        svc = self.service()
        if svc is not None:
            try:
                resp = svc.search(query, limit=limit, mode="hybrid", expand=False)
                for hit in getattr(resp, "hits", []) or []:
                    found = getattr(hit, "memory", hit)
                    if found.id != memory.id and found.id not in out:
                        out[found.id] = _from_indexed(found, self.vault)
            except Exception as exc:
                log.info("service search failed, using files only: %s", exc)
        query_text = f"{query}\n{memory.text_fields()}"
        scored = []
        for e in in_force(self.all_memories()):  # compare with what is current
            if e.id == memory.id or e.id in out:
                continue
            score = max(similarity(memory.title, e.title), similarity(query_text, f"{e.title}\n{e.body}"))
            if score >= NEAR:
                scored.append((score, e))
        scored.sort(key=lambda t: -t[0])
        for _, e in scored[:limit]:
            out[e.id] = e
        return list(out.values())[: 2 * limit]

    # --- writing ----------------------------------------------------------------------------------
    def record(self, memory: Memory) -> Path:
        from ccmemory.features.personal import route_captured  # a rule about the user, not this repo

        routed = None
        if self._service_cls is not None:  # files-only capture writes everything to the project
            routed = route_captured(memory, service=self._service_cls, project=self.vault.root)
        if routed is not None:
            return routed
        svc = self.service()
        path: Path | None = None
        if svc is not None:
            try:
                recorded = svc.record(memory)
                path = Path(recorded.path)
                if not path.is_absolute():
                    path = self.vault.abs(str(recorded.path))
            except Exception as exc:
                # the file may or may not exist now: check before writing it ourselves
                log.warning("service.record failed (%s); writing the file directly", exc)
                if memory.id in self.existing_ids():
                    return next(p for p in self.vault.iter_paths() if _has_id(p, memory.id))
        if path is None:
            path = self.vault.write_new(memory)
        if self._cache is not None:
            self._cache.append(_existing(memory, path))
        return path


_ORDER = (
    "correction",
    "preference",
    "fact",
    "gotcha",
    "exception",
    "decision",
    "failed_approach",
    "pattern",
    "insight",
    "question",
    "reference",
)
_HEADINGS = {
    "correction": "Corrections (do not repeat these mistakes)",
    "preference": "Preferences",
    "fact": "Project facts",
    "gotcha": "Gotchas (check before acting)",
    "exception": "Exceptions",
    "decision": "Recent decisions",
    "failed_approach": "Tried and failed (don't repeat)",
}


def in_force(memories: list[Existing]) -> list[Existing]:
    """The memories no other one supersedes, as the index would serve them: the digest without an
    index must not list a replaced memory beside its replacement. A target is an id or a path
    (``decisions/use-postgres.md``); which edges hide their target is the index's own rule
    (`ccmemory.index.derive.superseded`: not a self-edge, not an edge on a ring)."""
    from ccmemory.index.derive import superseded

    ids = {e.id.upper(): e.id for e in memories}

    def target(t: str) -> str | None:
        t = t.strip().replace("\\", "/")
        if not t.lower().endswith(".md"):
            return ids.get(t.upper())
        while t.startswith("./"):
            t = t[2:]
        suffix = "/" + t.lstrip("/")
        return next((e.id for e in memories if e.path.as_posix().endswith(suffix)), None)

    hidden = superseded((e.id, dst) for e in memories for t in e.supersedes if (dst := target(t)))
    return [e for e in memories if e.id not in hidden]


def fallback_context(memories: list[Existing], budget_tokens: int) -> tuple[str, list[str]]:
    """Ids and one-liners grouped by type, rules first, newest first, within ~4 chars/token."""
    budget_chars = max(0, budget_tokens) * 4
    header = "ccmemory: project memory (ids and one-liners; use the ccmemory tools for details)\n"
    if not memories or budget_chars <= len(header):
        return "", []
    lines = [header]
    used = len(header)
    ids: list[str] = []
    by_type: dict[str, list[Existing]] = {}
    for e in in_force(memories):
        by_type.setdefault(e.type, []).append(e)
    for mtype in _ORDER:
        group = sorted(by_type.get(mtype, []), key=lambda e: e.id, reverse=True)
        if not group or mtype not in _HEADINGS:
            continue
        heading = f"\n{_HEADINGS[mtype]}:\n"
        if used + len(heading) > budget_chars:
            break
        lines.append(heading)
        used += len(heading)
        for e in group:
            line = f"- [{e.id}] {e.title}\n"
            if used + len(line) > budget_chars:
                break
            lines.append(line)
            used += len(line)
            ids.append(e.id)
    return ("".join(lines) if ids else ""), ids


def _existing(mem: Memory, path: Path) -> Existing:
    return Existing(
        mem.id,
        mem.type,
        mem.title,
        mem.body + "\n" + mem.text_fields(),
        path,
        list(mem.topics),
        list(mem.files),
        mem.session,
        mem.source,
        tuple(r.target for r in mem.all_relations() if r.type == "SUPERSEDES"),
    )


def _from_indexed(found: Any, vault: Vault) -> Existing:
    from ccmemory.core.model import fields_text

    body = f"{found.body}\n{fields_text(found.type, found.fields)}"
    path = vault.abs(str(found.path))
    return Existing(found.id, found.type, found.title, body, path, list(found.topics), list(found.files))


def _has_id(path: Path, mid: str) -> bool:
    try:
        with open(path, "rb") as fh:
            m = _ID_LINE.search(fh.read(2048))
    except OSError:
        return False
    return bool(m and m.group(1).decode("ascii", "replace") == mid)


__all__ = ["TYPES", "Existing", "Store", "fallback_context", "similarity", "tokens"]
