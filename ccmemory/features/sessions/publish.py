"""Publish session summaries as markdown under `.ccmemory/sessions/` (issue 28, `sessions.publish`).

One file per session, `.ccmemory/sessions/<YYYY-MM-DD>-<first 8 characters of the id>.md`, so a
team reviews them in pull requests and the site lists them (Sessions page). What is written:

- the facts in YAML frontmatter (session, branch, start, end, commits at start and end, summary,
  memory ids, files changed, command counts, and the first prompts only when
  `sessions.publish_prompts` asks for N > 0, each cut at 300 characters); every string redacted
  (`ccmemory.core.redact`, the memories' rule) and stripped of control characters; dumped by the
  vault's safe YAML dumper;
- a body of one heading and the summary on one line, every character that starts markup
  backslash-escaped, so hostile text (HTML, links, images, emphasis, headings, lists) renders as
  plain text on GitHub and in MkDocs.

A file is never overwritten blindly: ccmemory remembers (in the local record, `published`) the
path and the SHA-256 of the bytes it wrote, and rewrites the file only while it still holds
exactly those bytes. A file edited by hand is left alone, a file deleted by hand is not written
again, a file at that path that ccmemory did not write is not touched; each case says so.
Symlinks on the way are refused. The index and `check` never read this folder (it is not a memory
folder).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccmemory.core.layout import VAULT_DIR
from ccmemory.core.plaintext import strip_control
from ccmemory.core.redact import redact
from ccmemory.features.sessions.store import safe_name

FOLDER = "sessions"
MAX_FILES = 50
MAX_PROMPT_CHARS = 300
MAX_PROMPTS = 20
_INLINE = re.compile(r"([\\`*_\[\]<>&!|~#{}])")  # what starts markup inside a line
_LEAD = re.compile(r"\A(?:([-+=>])|(\d+)([.)]))")  # what starts a block at the line's start
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}\Z")


@dataclass
class Published:
    status: str  # written | updated | unchanged | edited | deleted | taken | refused
    rel: str
    message: str


def _text(value: Any, limit: int = 2000) -> str:
    """Redacted, without control characters, cut at `limit`."""
    out = strip_control(redact(str(value or "")))
    return out if len(out) <= limit else out[: limit - 1] + "…"


def md_escape(value: Any) -> str:
    """One line of plain text that markdown renders literally: no HTML, link, image, emphasis,
    code or heading (CommonMark and GitHub's extensions); whitespace runs become one space."""
    out = _INLINE.sub(r"\\\1", " ".join(_text(value).split()))
    return _LEAD.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3), out)


def _day_short(rec: dict[str, Any]) -> tuple[str, str]:
    day = str(rec.get("start") or rec.get("end") or rec.get("updated") or "")[:10]
    short = safe_name(str(rec["id"]))[:8].strip("._") or "unknown"
    return (day if _DAY.match(day) else "undated"), short


def rel_path(rec: dict[str, Any]) -> str:
    day, short = _day_short(rec)
    return f"{VAULT_DIR}/{FOLDER}/{day}-{short}.md"


def render(rec: dict[str, Any], *, prompts: int = 0) -> str:
    """The published file's text for one record."""
    from ccmemory.core.vault import dump_yaml

    cmds = rec.get("commands") or []
    failed = sum(1 for c in cmds if isinstance(c.get("exit"), int) and c["exit"] != 0)
    meta: dict[str, Any] = {
        "session": _text(rec["id"], 200),
        "branch": _text(rec.get("branch"), 200) or None,
        "start": _text(rec.get("start"), 40) or None,
        "end": _text(rec.get("end"), 40) or None,
        "commit_start": _text(rec.get("commit_start"), 64) or None,
        "commit_end": _text(rec.get("commit_end"), 64) or None,
        "summary": _text(rec.get("summary"), 1000),
        "memories": [_text(m, 100) for m in (rec.get("memories") or [])[:MAX_FILES]],
        "files_changed": [_text(f, 300) for f in (rec.get("files_changed") or [])[:MAX_FILES]],
        "commands": len(cmds),
        "failed_commands": failed,
    }
    if prompts > 0:
        meta["prompts"] = [_text(p, MAX_PROMPT_CHARS) for p in (rec.get("prompts") or [])[:prompts]]
    day, short = _day_short(rec)
    body = f"# Session {md_escape(day)} {md_escape(short)}\n\n{md_escape(rec.get('summary'))}\n"
    return f"---\n{dump_yaml(meta)}---\n\n{body}"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _symlink_on_the_way(root: Path, rel: str) -> bool:
    probe = root
    for part in rel.split("/"):
        probe = probe / part
        if probe.is_symlink():
            return True
    return False


def publish(root: Path, rec: dict[str, Any], *, prompts: int = 0) -> Published:
    """Write (or refresh) the record's published file; sets `rec["published"]` when it writes."""
    from ccmemory.core.atomic import UMASK, atomic_write
    from ccmemory.core.walk import UnsafeFile, read_regular

    found = rec.get("published")
    state: dict[str, Any] = found if isinstance(found, dict) else {}
    rel = str(state.get("path") or rel_path(rec))
    if not rel.startswith(f"{VAULT_DIR}/{FOLDER}/") or ".." in rel.split("/"):
        rel = rel_path(rec)
    if _symlink_on_the_way(root, rel):
        return Published("refused", rel, f"{rel}: a symlink is on the way; not written")
    path = root / rel
    data = render(rec, prompts=prompts).encode("utf-8")
    old: bytes | None = None
    if path.exists():
        try:
            old = read_regular(path)
        except UnsafeFile as exc:
            return Published("refused", rel, f"{rel}: {exc}; not written")
    if old is None and state.get("sha256"):
        return Published("deleted", rel, f"{rel} was deleted since ccmemory wrote it; not written again")
    if old is not None and old == data:
        rec["published"] = {"path": rel, "sha256": _sha(data)}
        return Published("unchanged", rel, f"{rel} is up to date")
    if old is not None and not state.get("sha256"):
        return Published("taken", rel, f"{rel} exists and was not written for this record; left alone")
    if old is not None and _sha(old) != state.get("sha256"):
        return Published("edited", rel, f"{rel} was edited since ccmemory wrote it; left alone")
    atomic_write(path, data, overwrite=old is not None, mode=UMASK)
    rec["published"] = {"path": rel, "sha256": _sha(data)}
    return Published(
        "updated" if old is not None else "written", rel, f"{rel} {'updated' if old else 'written'}"
    )


@dataclass
class PublishedFile:
    rel: str
    meta: dict[str, Any]
    body: str


def load_all(root: Path) -> tuple[list[PublishedFile], list[str]]:
    """Every published session file (hostile input: walked without following links, read with the
    size cap, frontmatter through the bounded YAML loader), newest first; (files, problems)."""
    from ccmemory.core.vault import _FM_RE, load_yaml
    from ccmemory.core.walk import read_regular, walk

    entries, skipped = walk(root / VAULT_DIR, VAULT_DIR, roots=[FOLDER])
    problems = [f"{s.rel}: {s.reason}" for s in skipped]
    out: list[PublishedFile] = []
    for e in entries:
        try:
            text = read_regular(e.path).decode("utf-8")
            m = _FM_RE.match(text)
            meta = load_yaml(m.group(1)) if m else {}
        except Exception as exc:  # UnsafeFile, not UTF-8, a YAML limit or error: hostile input
            problems.append(f"{e.rel}: skipped ({type(exc).__name__})")
            continue
        meta = {str(k): v for k, v in meta.items()} if isinstance(meta, dict) else {}
        out.append(PublishedFile(e.rel, meta, text[m.end() :] if m else text))
    out.sort(key=lambda f: (str(f.meta.get("start") or ""), f.rel), reverse=True)
    return out, problems
