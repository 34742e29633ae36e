"""The `.ccmemory/` folder: memory files <-> Memory objects, file names, atomic writes, path safety.

Files are the source of truth. Nothing here ever deletes a memory file, and creating a memory never
overwrites an existing file.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ccmemory.core.atomic import UMASK, atomic_write
from ccmemory.core.errors import CcmemoryError
from ccmemory.core.layout import LOCAL_DIR, VAULT_DIR
from ccmemory.core.model import (
    FOLDER_TO_TYPE,
    TYPES,
    Memory,
    Problem,
    from_frontmatter,
    validate,
)
from ccmemory.core.walk import MAX_FILE_BYTES, Entry, Skipped, UnsafeFile, read_regular, walk

# The vault's public YAML API (ccmemory.core.yamlio), imported when first used: the YAML library
# costs 11-15 ms, and a hook that only reads the index never parses a memory file.


def dump_yaml(meta: dict[str, Any]) -> str:
    from ccmemory.core import yamlio

    return yamlio.dump_yaml(meta)


def load_yaml(src: str) -> Any:
    from ccmemory.core import yamlio

    return yamlio.load_yaml(src)


def __getattr__(name: str) -> Any:
    if name == "YAMLLimit":
        from ccmemory.core.yamlio import YAMLLimit

        return YAMLLimit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SLUG_MAX = 60
_WINDOWS_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(1, 10)),
    *(f"lpt{i}" for i in range(1, 10)),
}
_CONFLICT_RE = re.compile(r"^(<{7}|>{7})( |$)|^={7}$", re.MULTILINE)
_FM_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?^---[ \t]*\r?$\n?", re.DOTALL | re.MULTILINE)


class MemoryFileError(CcmemoryError):
    """A memory file that cannot be used. `line` is 1-based, or None when not known."""

    hint = "fix the file (`ccmemory check` lists every problem); the index skips it until then"

    def __init__(self, path: Path | str, line: int | None, reason: str):
        super().__init__(f"{path}:{line or 1}: {reason}")
        self.path = str(path)
        self.line = line
        self.reason = reason


class VaultNotFound(CcmemoryError):
    pass


def _frontmatter_handler() -> Any:
    import frontmatter

    class Handler(frontmatter.YAMLHandler):
        def export(self, metadata: dict[str, object], **kwargs: object) -> str:
            return dump_yaml(metadata).strip()

    return Handler()


def render(memory: Memory) -> str:
    """The file text for a memory: YAML frontmatter, a blank line, the body (via python-frontmatter)."""
    import frontmatter

    post = frontmatter.Post(memory.body.strip("\n"), **memory.to_frontmatter())
    return frontmatter.dumps(post, handler=_frontmatter_handler()).rstrip("\n") + "\n"


# --- names and paths ----------------------------------------------------------------------------


def slugify(title: str, max_len: int = SLUG_MAX) -> str:
    """A file-name-safe slug: unicode letters kept (NFC, casefolded), everything else a hyphen.

    No path separators, no dots at the ends, bounded length, never a Windows reserved name.
    """
    text = unicodedata.normalize("NFKC", title).casefold()
    text = re.sub(r"[^\w]+", "-", text, flags=re.UNICODE).replace("_", "-")
    text = re.sub(r"-{2,}", "-", text).strip("-")
    if len(text) > max_len:
        cut = text[:max_len]
        text = cut.rsplit("-", 1)[0] if "-" in cut[max_len // 2 :] else cut
        text = text.strip("-")
    text = unicodedata.normalize("NFC", text)
    if not text:
        text = "memory"
    if text in _WINDOWS_RESERVED or (text.split("-")[0] in _WINDOWS_RESERVED and len(text) <= 4):
        text = f"{text}-memory"
    return text


def find_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above `start` that holds `.ccmemory/`."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / VAULT_DIR).is_dir():
            return folder
    return None


@dataclass(frozen=True)
class ParsedFile:
    memory: Memory
    warnings: list[Problem]
    supplied: tuple[str, ...] = ()  # keys a hand-written file left out: id, created, title


_COMMENT_RE = re.compile(r"<!--.*?-->[ \t]*\n?", re.DOTALL)
_FENCE_RE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.MULTILINE)
_HEADING_RE = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def strip_comments(body: str) -> str:
    """The body without HTML comments (template guidance, notes to reviewers), outside fenced
    code blocks: what is indexed, searched and published."""
    if "<!--" not in body:
        return body
    out: list[str] = []
    pos = 0
    fences = list(_FENCE_RE.finditer(body))
    spans: list[tuple[int, int]] = []  # fenced code blocks, kept verbatim
    i = 0
    while i < len(fences):
        opening = fences[i]
        closing = next(
            (
                f
                for f in fences[i + 1 :]
                if f.group(1)[0] == opening.group(1)[0] and len(f.group(1)) >= len(opening.group(1))
            ),
            None,
        )
        end = closing.end() if closing else len(body)
        spans.append((opening.start(), end))
        i = fences.index(closing) + 1 if closing else len(fences)
    for start, end in [*spans, (len(body), len(body))]:
        out.append(_COMMENT_RE.sub("", body[pos:start]))
        out.append(body[start:end])
        pos = end
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip("\n")


def title_from(body: str, path: str) -> str:
    """A missing title: the body's first markdown heading, else the file name without its date
    prefix and id suffix (`2026-11-20-adopt-ruff-7k2q.md` -> 'Adopt ruff')."""
    m = _HEADING_RE.search(body)
    if m and m.group(1).strip():
        return m.group(1).strip()[:200]
    stem = Path(path).stem
    dated = re.sub(r"^\d{4}-\d{2}-\d{2}-", "", stem)
    if dated != stem:  # ccmemory's own name: its last part is the id suffix (a digit in it, so
        # that "2026-11-20-use-redis-fast.md" keeps "fast"; a suffix of four letters stays)
        dated = re.sub(r"-(?=[0-9a-z]{0,3}[0-9])[0-9a-hjkmnp-tv-z]{4}$", "", dated)
    words = dated.replace("_", "-").split("-")
    text = " ".join(w for w in words if w) or "Untitled"
    return text[:1].upper() + text[1:]


def _supply(meta: dict[str, Any], body: str, path: str, created_fallback: datetime | None) -> list[str]:
    """Fill what a hand-written file left out (after `validate(draft=True)` warned about it)."""
    from datetime import UTC

    from ccmemory.core.model import provisional_id

    supplied: list[str] = []
    if meta.get("id") in (None, ""):
        meta["id"] = provisional_id(path)
        supplied.append("id")
    if meta.get("created") in (None, ""):
        meta["created"] = created_fallback or datetime.now(UTC).replace(microsecond=0)
        supplied.append("created")
    title = meta.get("title")
    if title in (None, "") or (isinstance(title, str) and not title.strip()):
        meta["title"] = title_from(body, path)
        supplied.append("title")
    return supplied


def key_line(text: str, key: str | None) -> int | None:
    """1-based line of a top-level frontmatter key, for `path:line` messages."""
    if key is None:
        return 1
    pattern = re.compile(rf"^{re.escape(key)}\s*:", re.MULTILINE)
    m = pattern.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else 1


def parse_text(text: str, path: str, *, created_fallback: datetime | None = None) -> ParsedFile:
    """Parse one memory file's text. Raises MemoryFileError with a line number.

    A hand-written file may leave out `id`, `created` and `title` (see `model.validate`):
    they are supplied (a provisional id from `path`, `created_fallback` or now, a title from
    the body or the file name) and listed in `ParsedFile.supplied`. HTML comments in the body
    are not part of the memory (`strip_comments`)."""
    conflict = _CONFLICT_RE.search(text)
    if conflict:
        line = text.count("\n", 0, conflict.start()) + 1
        raise MemoryFileError(path, line, "git conflict markers: resolve the merge conflict first")
    m = _FM_RE.match(text)
    if not m:
        if text.lstrip("\ufeff").startswith("---"):
            raise MemoryFileError(path, 1, "the YAML frontmatter is never closed: add a '---' line after it")
        raise MemoryFileError(path, 1, "no YAML frontmatter (the file must start with a '---' line)")
    import yaml

    from ccmemory.core.yamlio import YAMLLimit, load_yaml

    try:
        meta = load_yaml(m.group(1))
    except YAMLLimit as exc:
        raise MemoryFileError(path, exc.line + 1, f"frontmatter refused: {exc.reason}") from None
    except (RecursionError, OverflowError, MemoryError) as exc:
        raise MemoryFileError(path, 2, f"frontmatter refused: {type(exc).__name__}") from None
    except (ValueError, TypeError) as exc:  # yaml's constructors: e.g. `2026-13-45` as a date
        raise MemoryFileError(path, 2, f"malformed YAML frontmatter: {str(exc)[:200]}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise MemoryFileError(path, line, f"malformed YAML frontmatter: {problem}") from None
    if not isinstance(meta, dict):
        raise MemoryFileError(path, 2, "frontmatter must be a YAML mapping of key: value")
    meta = {str(k): v for k, v in meta.items()}
    problems = validate(meta, draft=True)
    errors = [p for p in problems if p.level == "error"]
    if errors:
        first = errors[0]
        raise MemoryFileError(path, key_line(text, first.key), first.message)
    body = strip_comments(text[m.end() :].strip("\n"))
    supplied = _supply(meta, body, path, created_fallback)
    memory = from_frontmatter(meta, body)
    return ParsedFile(memory, [p for p in problems if p.level == "warning"], tuple(supplied))


def check_text(text: str) -> list[tuple[int, Problem]]:
    """Every problem of a file's text with its line (check reports them all, not just the first)."""
    m = _FM_RE.match(text)
    if _CONFLICT_RE.search(text) or not m:
        return []
    import yaml

    try:
        meta = load_yaml(m.group(1))
    except (yaml.YAMLError, ValueError, TypeError, RecursionError, OverflowError, MemoryError):
        return []
    if not isinstance(meta, dict):
        return []
    meta = {str(k): v for k, v in meta.items()}
    return [(key_line(text, p.key) or 1, p) for p in validate(meta, draft=True)] + twice_written(text)


_TOP_KEY_RE = re.compile(r"^([^\s#:-][^:\n]*):", re.MULTILINE)


def twice_written(text: str) -> list[tuple[int, Problem]]:
    """Frontmatter keys written twice (YAML keeps the last, silently: a second `title:` pasted
    below the first), as warnings at the file's line of the one kept. `check` asks; a reindex
    does not (composing every file's YAML again would cost it). Only top-level keys are looked
    for, and the YAML is composed only when one repeats."""
    m = _FM_RE.match(text)
    if not m:
        return []
    keys = _TOP_KEY_RE.findall(m.group(1))
    if len(keys) == len(set(keys)):
        return []
    from ccmemory.core.yamlkeys import duplicate_keys, key_lines

    return [
        (line + 1, Problem("warning", key, f"'{key}' written twice: the one on line {was + 1} is ignored"))
        for key, line, was in duplicate_keys(key_lines(m.group(1)))
    ]


def read_bytes_checked(path: Path | str, rel: str) -> bytes:
    """Read a memory file, refusing symlinks, special files, huge or binary files before parsing
    (a non-blocking, no-follow open: see `ccmemory.core.walk.read_regular`)."""
    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except UnsafeFile as exc:
        raise MemoryFileError(rel, None, str(exc)) from None
    if b"\x00" in data[:8192]:
        raise MemoryFileError(rel, None, "binary file (NUL bytes), not a markdown memory")
    return data


def decode(data: bytes, rel: str) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MemoryFileError(rel, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return text.replace("\r\n", "\n")


def id_suffix(memory_id: str) -> str:
    """The file-name suffix that keeps same-day, same-title memories apart: the last four
    characters of the id (a ULID's random part), lower case."""
    tail = re.sub(r"[^0-9A-Za-z]", "", memory_id)[-4:]
    return tail.lower() or "0000"


def file_time(path: Path) -> datetime | None:
    """A file's modification time (UTC, whole seconds): the provisional `created` of a
    hand-written file that has none yet."""
    from datetime import UTC

    try:
        return datetime.fromtimestamp(int(path.stat().st_mtime), UTC)
    except OSError:
        return None


class Vault:
    """A repository's `.ccmemory/` folder."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.dir = self.root / VAULT_DIR
        self.local = self.dir / LOCAL_DIR

    @classmethod
    def open(cls, start: Path | None = None) -> Vault:
        root = find_root(start)
        if root is None:
            raise VaultNotFound(
                f"no {VAULT_DIR}/ folder at or above {start or Path.cwd()}: run `ccmemory init` first"
            )
        return cls(root)

    def exists(self) -> bool:
        return self.dir.is_dir()

    # paths
    def rel(self, path: Path) -> str:
        """Repo-relative POSIX path (how paths are stored in the index and shown to users).

        Lexical (no symlink resolution, which would follow a hostile link out of the repo); a
        path outside the root is returned as given rather than raising."""
        if not path.is_absolute():
            return path.as_posix()
        p = Path(os.path.abspath(path))
        return p.relative_to(self.root).as_posix() if p.is_relative_to(self.root) else p.as_posix()

    def abs(self, rel: str) -> Path:
        return self.root / rel

    def safe_path(self, user_path: str | Path) -> Path:
        """Resolve a user-supplied path, refusing anything outside `.ccmemory/`."""
        candidate = Path(user_path)
        if not candidate.is_absolute():
            cwd_candidate = (Path.cwd() / candidate).resolve()
            candidate = cwd_candidate if cwd_candidate.exists() else (self.root / candidate).resolve()
        else:
            candidate = candidate.resolve()
        if not candidate.is_relative_to(self.dir):
            raise ValueError(f"{user_path} is outside {self.dir}")
        return candidate

    def folder_for(self, mtype: str) -> Path:
        return self.dir / TYPES[mtype].folder

    def walk(self) -> tuple[list[Entry], list[Skipped]]:
        """Every memory file (`*.md` directly or nested inside a type folder) and every name that
        was not read (symlinks, FIFOs...): the one walker (`ccmemory.core.walk`). Sorted by path."""
        if os.path.islink(self.dir):
            why = "symlink not followed (.ccmemory/ must be a real folder)"
            return [], [Skipped(VAULT_DIR, "error", why)]
        return walk(self.dir, VAULT_DIR, roots=FOLDER_TO_TYPE)

    def iter_paths(self) -> Iterator[Path]:
        """Every memory file's path (regular files only, see `walk`)."""
        for entry in self.walk()[0]:
            yield Path(entry.path)

    def is_memory_path(self, path: Path) -> bool:
        try:
            rel = path.resolve().relative_to(self.dir)
        except ValueError:
            return False
        return (
            len(rel.parts) >= 2
            and rel.parts[0] in FOLDER_TO_TYPE
            and rel.name.endswith(".md")
            and not rel.name.startswith(".")
        )

    # reading
    def read(self, path: Path) -> Memory:
        return self.read_full(path).memory

    def read_full(self, path: Path) -> ParsedFile:
        rel = self.rel(path)
        text = decode(read_bytes_checked(path, rel), rel)
        return parse_text(text, rel, created_fallback=file_time(path))

    # writing
    def path_for(self, memory: Memory) -> Path:
        """`<type folder>/<YYYY-MM-DD>-<slug>-<suffix>.md`, the suffix being the id's last four
        characters (lower case): two branches that record the same title on the same day write
        two different files, so merging them never conflicts (docs/git-lifecycle.md)."""
        name = f"{memory.created.strftime('%Y-%m-%d')}-{slugify(memory.title)}-{id_suffix(memory.id)}.md"
        return self.folder_for(memory.type) / name

    def write_new(self, memory: Memory) -> Path:
        """Create the memory's file; never overwrites (a numeric suffix is added on a name clash).

        Every field is redacted here (`redact_memory`): the one choke point all writers pass."""
        return self.write_new_bytes(memory)[0]

    def stored_links(self, memory: Memory) -> Memory:
        """`memory` with each relation target that is a provisional id (`DRAFT-…`: a file without
        `id:` yet) written as that file's repo-relative path, each target once. The provisional id
        changes when the file gets its ULID (`check --fix`, the pre-commit hook), so it is never
        stored; the index resolves a path to whatever id the file has (docs/file-format.md). A
        provisional id no file here derives from names nothing and is dropped."""
        from ccmemory.core.model import is_provisional, provisional_id

        targets = [*memory.supersedes, *(r.target for r in memory.relations)]
        if not any(is_provisional(t) for t in targets):
            return memory
        paths = {provisional_id(e.rel): e.rel for e in self.walk()[0]}
        return memory.retargeted(lambda t: paths.get(t) if is_provisional(t) else t)

    def write_new_bytes(self, memory: Memory) -> tuple[Path, bytes]:
        """`write_new`, also returning the bytes written, so the caller can index what it wrote
        without reading the file back."""
        from ccmemory.core.redact import redact_memory

        memory = self.stored_links(redact_memory(memory))
        problems = [p for p in validate(memory.to_frontmatter()) if p.level == "error"]
        if problems:
            raise ValueError("; ".join(p.message for p in problems))
        data = render(memory).encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise ValueError("memory is larger than 1 MB; shorten the body")
        base = self.path_for(memory)
        for attempt in range(1, 1000):
            path = base if attempt == 1 else base.with_name(f"{base.stem}-{attempt}.md")
            if path.exists():
                continue
            try:
                atomic_write(path, data, overwrite=False, mode=UMASK)
            except FileExistsError:
                continue
            return path, data
        raise FileExistsError(f"could not find a free file name near {base}")
