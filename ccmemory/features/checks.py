"""`ccmemory check`: every problem of every memory file, with path and line. Reads files only,
except `--fix` (`fix_file`), which writes a missing `id` and `created` into hand-written files."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ccmemory.app.resolve import target_ids
from ccmemory.core.model import FOLDER_TO_TYPE, Memory, format_timestamp
from ccmemory.core.vault import (
    MemoryFileError,
    ParsedFile,
    Vault,
    check_text,
    decode,
    key_line,
    parse_text,
    read_bytes_checked,
    twice_written,
)
from ccmemory.features.findings import Finding
from ccmemory.index.base import cited_reference


def check_vault(
    vault: Vault, parsed_files: dict[str, tuple[str, str, Memory]] | None = None
) -> list[Finding]:
    """Every problem of every memory file. `parsed_files`, when given, receives rel -> (text,
    sha256 of the bytes, memory) of every file that parsed: what the lifecycle rules read
    (`lifecycle.review.load_worktree`), so `ccmemory check` reads and parses each file once
    (the YAML parse is most of its time)."""
    findings: list[Finding] = []
    ids: dict[str, str] = {}
    paths: dict[str, str] = {}  # rel -> id, to resolve targets written as a path or prefix
    targets: list[tuple[str, int, str]] = []
    loaded_mems: list[tuple[str, str, Memory]] = []  # (rel, text, memory): the co-thinker checks
    entries, skipped = vault.walk()
    findings += [Finding(s.rel, 1, s.level, s.reason) for s in skipped]
    if os.path.islink(vault.local):  # git ignores `local/` folders, not a symlink named `local`
        why = "symlink: .ccmemory/local must be a real, git-ignored folder"
        findings.append(Finding(".ccmemory/local", 1, "error", why))
    for entry in entries:
        path, rel = Path(entry.path), entry.rel
        loaded = _load(path, rel, findings)
        if loaded is None:
            continue
        text, parsed, digest = loaded
        m = parsed.memory
        if parsed_files is not None:
            parsed_files[rel] = (text, digest, m)
        findings += [Finding(rel, key_line(text, w.key) or 1, "warning", w.message) for w in parsed.warnings]
        findings += [Finding(rel, line, p.level, p.message) for line, p in twice_written(text)]
        paths[rel] = m.id
        findings += _placement(vault, path, rel, text, m, ids)
        targets += _targets(rel, text, m)
        findings += _file_entries(vault.root, rel, text, m)
        loaded_mems.append((rel, text, m))
    known = target_ids([t for _, _, t in targets if t not in ids], paths)
    for rel, line, target in targets:
        if target not in ids and target not in known and cited_reference(target) is None:
            findings.append(Finding(rel, line, "warning", f"links to unknown memory id {target}"))
    findings += _cothinker(loaded_mems, lambda t: t if t in ids else known.get(t))
    findings += _supersession(loaded_mems, lambda t: t if t in ids else known.get(t))
    from ccmemory.features.reference.check import reference_findings

    findings += reference_findings(vault)
    from ccmemory.features.reference.contradict import findings as contradictions

    # reference sections that contradict a memory
    findings += contradictions(vault, [(rel, m) for rel, _, m in loaded_mems])
    return sorted(findings, key=lambda f: (f.path, f.line, f.level, f.message))


def _load(path: Path, rel: str, findings: list[Finding]) -> tuple[str, ParsedFile, str] | None:
    """The file's text, parse and sha256, or None with its problems added to `findings`."""
    try:
        data = read_bytes_checked(path, rel)
        text = decode(data, rel)
    except MemoryFileError as exc:
        findings.append(Finding(rel, exc.line or 1, "error", exc.reason))
        return None
    try:
        return text, parse_text(text, rel), hashlib.sha256(data).hexdigest()
    except MemoryFileError as exc:
        problems = check_text(text)
        if problems:
            findings += [Finding(rel, line, p.level, p.message) for line, p in problems]
        else:
            findings.append(Finding(rel, exc.line or 1, "error", exc.reason))
        return None


def _placement(
    vault: Vault, path: Path, rel: str, text: str, m: Memory, ids: dict[str, str]
) -> list[Finding]:
    """A memory in another type's folder, or an id used before (else the id is recorded in `ids`)."""
    out = []
    folder = path.relative_to(vault.dir).parts[0]
    if FOLDER_TO_TYPE.get(folder) != m.type:
        out.append(
            Finding(rel, key_line(text, "type") or 1, "warning", f"a {m.type} in the {folder}/ folder")
        )
    if m.id in ids:
        out.append(
            Finding(rel, key_line(text, "id") or 1, "error", f"duplicate id {m.id}: also used by {ids[m.id]}")
        )
    else:
        ids[m.id] = rel
    return out


def _cothinker(mems: list[tuple[str, str, Memory]], resolve: Callable[[str], str | None]) -> list[Finding]:
    """A co-thinker memory without a required field; a hypothesis whose status its evidence does
    not bear out (features/cothinker.py)."""
    from ccmemory.features.cothinker import COTHINKER_TYPES, evidence, status_of, status_problem

    out: list[Finding] = []
    edges: list[tuple[str, str, str]] = []
    for rel, text, m in mems:
        if m.type in COTHINKER_TYPES:
            for f in m.spec.own:  # the field the title stands for (a concept's name) may be left out
                if f.required and f.name != m.spec.title_from and not str(m.fields.get(f.name) or "").strip():
                    where = key_line(text, f.name) or key_line(text, "type") or 1
                    out.append(Finding(rel, where, "warning", f"no '{f.name}' ({f.description})"))
        for r in m.all_relations():
            dst = resolve(r.target)
            if dst is not None:
                edges.append((m.id, r.type, dst))
    hyps = {m.id: (rel, text, m) for rel, text, m in mems if m.type == "hypothesis"}
    for hid, ev in evidence(hyps, edges).items():
        rel, text, m = hyps[hid]
        why = status_problem(status_of(m.fields), ev)
        if why:
            out.append(Finding(rel, key_line(text, "status") or 1, "warning", why))
    return out


def _file_entries(root: Path, rel: str, text: str, m: Memory) -> list[Finding]:
    """A `files:` entry file recall can never match: absolute, or leaving the repository
    (`core.repopath`; `ccmemory new` and MCP store repository paths, a hand-written file may not)."""
    from ccmemory.core.repopath import entry_problem, repo_path

    out = []
    for entry in m.files:
        why = entry_problem(entry)
        if why is None:
            continue
        inside = repo_path(entry, root) if why == "is an absolute path" else None
        fix = f"write {inside!r}" if inside else "remove it, or name a path inside the repository"
        msg = f"files: {entry!r} {why}; file recall compares repository paths, so it never matches ({fix})"
        out.append(Finding(rel, key_line(text, "files") or 1, "warning", msg))
    return out


def _supersession(mems: list[tuple[str, str, Memory]], resolve: Callable[[str], str | None]) -> list[Finding]:
    """A memory that supersedes itself (a warning: the index ignores that edge), and rings of
    memories that supersede each other (an error, naming every file of the ring: the index ignores
    the ring's edges, `ccmemory.index.derive.superseded`, so none of them is hidden, but which one
    is in force is for a person to say)."""
    from ccmemory.index.derive import supersession_cycles

    out: list[Finding] = []
    edges: list[tuple[str, str]] = []
    where: dict[str, tuple[str, int]] = {}
    for rel, text, m in mems:
        line = key_line(text, "supersedes") or key_line(text, "relations") or 1
        where.setdefault(m.id, (rel, line))
        for r in m.all_relations():
            dst = resolve(r.target) if r.type == "SUPERSEDES" else None
            if dst == m.id:
                out.append(Finding(rel, line, "warning", "supersedes itself (ignored: remove the entry)"))
            elif dst is not None:
                edges.append((m.id, dst))
    for ring in supersession_cycles(edges):
        files = [where[i][0] for i in ring]
        for i in ring:
            rel, line = where[i]
            others = ", ".join(f for f in files if f != rel)
            why = (
                f"supersession cycle with {others}: they supersede each other, so none of them counts "
                "as superseded (all stay in search and context) until one `supersedes` entry is removed"
            )
            out.append(Finding(rel, line, "error", why))
    return out


def _targets(rel: str, text: str, m: Memory) -> list[tuple[str, int, str]]:
    """(file, line, target) of every supersedes and relation target the memory names."""
    out = [(rel, key_line(text, "supersedes") or 1, target) for target in m.supersedes]
    out += [(rel, key_line(text, "relations") or 1, r.target) for r in m.relations]
    return out


# --- check --fix: supply id and created, like a formatter -------------------------------------------


@dataclass(frozen=True)
class Fixed:
    path: str
    added: tuple[tuple[str, str], ...]  # (key, value as written)

    def describe(self) -> str:
        return ", ".join(f"{k}: {v}" for k, v in self.added)


def first_commit(root: Path, rel: str) -> tuple[str, int] | None:
    """(sha, author time in seconds) of the commit that first added `rel` (following renames),
    or None when the file was never committed (or this is not a git repository)."""
    from ccmemory.core.gitstate import GitError, git

    try:
        out = git(root, "log", "--follow", "--diff-filter=A", "--format=%H %at", "--", rel, check=False)
    except GitError:
        return None
    lines = [ln.split() for ln in out.splitlines() if ln.strip()]
    if not lines or len(lines[-1]) != 2:
        return None
    sha, when = lines[-1]
    return sha, int(when)


def _line_end(text: str) -> str:
    first = text.split("\n", 1)[0]
    return "\r\n" if first.endswith("\r") else "\n"


def _set_key(front: str, key: str, value: str, after: str | None, nl: str) -> str:
    """`front` (frontmatter lines, each ending in `nl`) with `key: value`: an existing empty
    `key:` line is filled in, else the line is inserted after the top-level `after` key's block
    (or first). Every other byte is kept."""
    import re

    empty = re.compile(rf"^{re.escape(key)}[ \t]*:[ \t]*(?:\"\"|''|~|null)?[ \t]*\r?$", re.MULTILINE)
    m = empty.search(front)
    if m:
        return front[: m.start()] + f"{key}: {value}" + ("\r" if nl == "\r\n" else "") + front[m.end() :]
    lines = front.splitlines(keepends=True)
    at = 0
    if after is not None:
        for i, line in enumerate(lines):
            if re.match(rf"^{re.escape(after)}[ \t]*:", line):
                at = i + 1
                while at < len(lines) and lines[at][:1] in (" ", "\t"):
                    at += 1  # a folded or block value continues on indented lines
                break
    lines.insert(at, f"{key}: {value}{nl}")
    return "".join(lines)


def fix_text(text: str, rel: str, root: Path, now: datetime | None = None) -> tuple[str, Fixed] | None:
    """The file text with a missing `id` and/or `created` written in, or None if nothing is
    missing (or the file is invalid for another reason: `check` reports that)."""
    from ccmemory.core.ids import stable_ulid
    from ccmemory.core.vault import _FM_RE

    body_text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    try:
        parsed = parse_text(body_text, rel)
    except MemoryFileError:
        return None
    missing = [k for k in ("id", "created") if k in parsed.supplied]
    if not missing:
        return None
    meta_created = None if "created" in missing else parsed.memory.created
    commit = first_commit(root, rel)
    if meta_created is not None:
        created = meta_created
    elif commit is not None:
        created = datetime.fromtimestamp(commit[1], UTC)
    else:
        created = (now or datetime.now(UTC)).replace(microsecond=0)
    added: list[tuple[str, str]] = []
    if "id" in missing:
        ms = int(created.timestamp() * 1000)
        # committed: derived from the first commit, so two clones fixing the same file write the
        # same bytes (and merge cleanly); otherwise a fresh ULID
        # (not model.new_id: it would make this process's later ids follow `created`'s time)
        key = f"{rel}\0{commit[0]}" if commit else os.urandom(16).hex()
        mid = stable_ulid(key, ms)
        added.append(("id", mid))
    if "created" in missing:
        added.append(("created", format_timestamp(created)))
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    raw = text[len(bom) :]
    nl = _line_end(raw)
    m = _FM_RE.match(raw.replace("\r\n", "\n"))
    if m is None:
        return None
    first_nl = raw.index("\n") + 1  # after the opening '---' line
    # the frontmatter's end in `raw` (CRLF-aware): the closing '---' line
    lines = raw[first_nl:].splitlines(keepends=True)
    n_front = 0
    for line in lines:
        if line.rstrip("\r\n").rstrip() == "---":
            break
        n_front += len(line)
    front = raw[first_nl : first_nl + n_front]
    for key, value in added:
        front = _set_key(front, key, value, None if key == "id" else "title", nl)
    new = bom + raw[:first_nl] + front + raw[first_nl + n_front :]
    check = parse_text(new.removeprefix("\ufeff").replace("\r\n", "\n"), rel)
    if set(check.supplied) & {"id", "created"} or check.memory.title != parsed.memory.title:
        return None  # never write something that does not read back as intended
    return new, Fixed(rel, tuple(added))


def fix_file(vault: Vault, path: Path, rel: str, now: datetime | None = None) -> Fixed | None:
    """Write a missing `id`/`created` into one memory file, atomically, keeping every other
    byte and the file's mode; refuses (None) if the file changed while being fixed."""
    from ccmemory.core.atomic import atomic_write

    try:
        data = read_bytes_checked(path, rel)
        text = data.decode("utf-8")
        st = path.stat()
    except (MemoryFileError, UnicodeDecodeError, OSError):
        return None
    result = fix_text(text, rel, vault.root, now)
    if result is None:
        return None
    new, fixed = result
    try:
        now_st = path.stat()
    except OSError:
        return None
    if (now_st.st_mtime_ns, now_st.st_size) != (st.st_mtime_ns, st.st_size):
        return None  # edited meanwhile: leave it for the next run
    atomic_write(path, new.encode("utf-8"), overwrite=True, mode=st.st_mode & 0o7777)
    return fixed


def fix_vault(vault: Vault, only: set[str] | None = None, now: datetime | None = None) -> list[Fixed]:
    """`ccmemory check --fix`: every memory file (or those in `only`) missing id or created."""
    out: list[Fixed] = []
    for entry in vault.walk()[0]:
        if only is not None and entry.rel not in only:
            continue
        fixed = fix_file(vault, Path(entry.path), entry.rel, now)
        if fixed is not None:
            out.append(fixed)
    return out
