"""One builder of a new memory: CLI `new`, MCP `record_*`/`memory_supersede` (through
`Service.draft`) and capture (`capture.extract.to_memory`) all build their `Memory` here.

What it guarantees, the same for every surface:

- **Redaction first.** Title, body, topics, files, relation reasons and the type's own fields
  are redacted (`ccmemory.core.redact`) before anything else sees them: the search that links a new
  memory, an embedder, a log line. `Vault.write_new` redacts once more as the last line.
- **Files are repository paths**: with the repository `root` given (every writer but capture, which
  drops what is outside), each `files` entry is stored repository-relative with `/` separators
  (`core.repopath.repo_path`: absolute paths and paths relative to `cwd` converted, `./` and `..`
  resolved, globs and folders kept), because file recall compares repository paths. An entry
  outside the repository is refused, naming it, and nothing is written: it could never match, and
  it would put a machine-local path into a committed file.
- **Only the type's own fields**, non-empty values only; an unknown field name is refused.
- **Link targets must resolve** (the one policy for unknown targets): every `supersedes` entry
  and relation target is looked up with the one resolver (id, 4+ character prefix, path or
  slug) and written in its full form. A target that names no memory, or more than one, is
  refused with the resolver's message and nothing is written: a typo would otherwise become a
  silent broken link. A memory that exists only on another branch is linked by writing the
  relation into the file by hand; `ccmemory check` reports it until the target exists.
- **Valid as a file**: the result passes `model.validate` (enums, confidence, ...), or the
  builder refuses it, naming the problem.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ccmemory.core.errors import CcmemoryError
from ccmemory.core.model import RELATION_TYPES, TYPES, Memory, Relation, new_id, validate
from ccmemory.core.redact import redact, redact_obj

#: Resolves a reference to the form a file writes (full id, or path of a provisional memory);
#: raises `ccmemory.app.resolve.RefError` when it names no memory or several.
Resolver = Callable[[str], str]


class DraftError(CcmemoryError, ValueError):
    """A memory that cannot be built; `code` is an MCP error code (invalid_argument,
    not_found, ambiguous), `message` says what and `hint` what to do."""

    def __init__(self, code: str, message: str, hint: str | None = None):
        super().__init__(message, hint)
        self.code = code


def _texts(values: Iterable[str] | None) -> list[str]:
    """Redacted, stripped, non-empty, first occurrence kept."""
    return list(dict.fromkeys(v for v in (redact(str(x)).strip() for x in values or ()) if v))


def _files(values: Iterable[str] | None, root: str | Path | None, cwd: str | Path | None) -> list[str]:
    """The `files` entries redacted and, with a `root`, as repository paths (the module docstring)."""
    texts = _texts(values)
    if root is None:
        return texts
    from ccmemory.core.repopath import repo_paths

    kept, outside = repo_paths(texts, root, cwd)
    if outside:
        names = ", ".join(repr(o) for o in outside)
        what = "file" if len(outside) == 1 else "files"
        raise DraftError(
            "invalid_argument",
            f"{what} not inside the repository {os.fspath(root)}: {names}",
            "give paths inside the repository (relative to its root, or absolute), globs "
            "(src/**/*.tsx) or folders (infra/); leave a file out when it lives elsewhere",
        )
    return kept


def _own_fields(mtype: str, fields: Mapping[str, Any] | None) -> dict[str, Any]:
    spec = TYPES[mtype]
    own = {str(k): redact_obj(v) for k, v in (fields or {}).items() if v not in (None, "", [])}
    unknown = set(own) - set(spec.fields)
    if unknown:
        raise DraftError(
            "invalid_argument",
            f"{', '.join(sorted(unknown))} not a field of {mtype} "
            f"(fields: {', '.join(spec.fields) or 'none'})",
        )
    return own


def _target(ref: str, resolve: Resolver | None) -> str:
    if resolve is None:  # a caller without an index (capture) passes targets it took from one
        return ref
    from ccmemory.app.resolve import RefError

    try:
        return resolve(ref)
    except RefError as exc:
        raise DraftError(exc.code, exc.message, exc.hint) from None


def _links(
    relations: Sequence[Relation | Mapping[str, Any]] | None,
    supersedes: Sequence[str] | None,
    resolve: Resolver | None,
) -> tuple[list[str], list[Relation]]:
    sup = [_target(str(s).strip(), resolve) for s in supersedes or ()]
    rels: list[Relation] = []
    for r in relations or ():
        rtype, target, reason = (
            (r.type, r.target, r.reason)
            if isinstance(r, Relation)
            else (str(r.get("type", "")), str(r.get("target", "")), r.get("reason"))
        )
        rtype = rtype.strip().upper()
        if rtype not in RELATION_TYPES:
            raise DraftError(
                "invalid_argument",
                f"unknown relation type {rtype!r} (use one of: {', '.join(RELATION_TYPES)})",
            )
        full = _target(target.strip(), resolve)
        if rtype == "SUPERSEDES":  # written as `supersedes:`, the one form of that edge
            sup.append(full)
            continue
        note = redact(str(reason)).strip() if reason else ""
        rels.append(Relation(rtype, full, note or None))
    return list(dict.fromkeys(sup)), rels


def build_memory(
    mtype: str,
    title: str,
    *,
    body: str = "",
    topics: Iterable[str] | None = None,
    files: Iterable[str] | None = None,
    relations: Sequence[Relation | Mapping[str, Any]] | None = None,
    supersedes: Sequence[str] | None = None,
    confidence: float | None = None,
    session: str | None = None,
    source: str | None = "explicit",
    fields: Mapping[str, Any] | None = None,
    applies_to: Iterable[str] | None = None,
    author: str | None = None,
    branch: str | None = None,
    created: datetime | None = None,
    mid: str | None = None,
    extra: Mapping[str, Any] | None = None,
    resolve: Resolver | None = None,
    root: str | Path | None = None,
    cwd: str | Path | None = None,
) -> Memory:
    """A new, redacted, validated memory (see the module docstring); `DraftError` if it cannot be."""
    mtype = mtype.strip().lower()
    if mtype not in TYPES:
        raise DraftError("invalid_argument", f"unknown type {mtype!r}; use one of: {', '.join(TYPES)}")
    clean_title = " ".join(redact(title or "").split())
    if not clean_title:
        raise DraftError("invalid_argument", "title is empty", "give a one-line title")
    own = _own_fields(mtype, fields)
    paths = _files(files, root, cwd)
    sup, rels = _links(relations, supersedes, resolve)
    memory = Memory(
        id=mid or new_id(),
        type=mtype,
        title=clean_title,
        created=created or datetime.now(UTC).replace(microsecond=0),
        body=redact(body or "").strip(),
        author=author or None,
        session=session or None,
        branch=branch or None,
        topics=_texts(topics),
        files=paths,
        confidence=confidence,
        source=source,
        supersedes=sup,
        relations=rels,
        fields=own,
        extra=dict(redact_obj(dict(extra or {}))),  # type: ignore[call-overload]
        applies_to=list(dict.fromkeys(p.strip() for p in applies_to or () if p and p.strip())),
    )
    problems = [p.message for p in validate(memory.to_frontmatter()) if p.level == "error"]
    if problems:
        raise DraftError("invalid_argument", f"memory not written: {'; '.join(problems)}")
    return memory
