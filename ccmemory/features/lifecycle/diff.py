"""`ccmemory diff`: memory-level changes between two revisions, for review and PR descriptions.

Reads both sides from git objects (`ls-tree` + `cat-file --batch`), never the working tree.
A change is reported per memory id, not per file, so a moved file is "moved", not removed+added:

- added: an id present at HEAD and not at BASE
- edited: an id at both whose file content changed (the changed frontmatter keys are listed)
- moved: an id whose file path changed but whose memory did not
- removed: an id present at BASE and not at HEAD
- newly superseded: an id (at HEAD) that a HEAD memory supersedes, and that was not superseded at BASE
- invalid: a memory file at HEAD that cannot be parsed (e.g. conflict markers), with line and reason
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ccmemory.core import gitstate
from ccmemory.core.model import Memory
from ccmemory.features.lifecycle.gitread import merge_base, records_at, resolve_commit
from ccmemory.index.base import FileRecord


@dataclass
class MemoryRef:
    id: str
    type: str
    title: str
    path: str
    detail: str = ""

    @classmethod
    def of(cls, m: Memory, path: str, detail: str = "") -> MemoryRef:
        return cls(m.id, m.type, m.title, path, detail)


@dataclass
class MemoryDiff:
    base: str
    head: str
    base_commit: str
    head_commit: str
    added: list[MemoryRef] = field(default_factory=list)
    edited: list[MemoryRef] = field(default_factory=list)
    moved: list[MemoryRef] = field(default_factory=list)
    removed: list[MemoryRef] = field(default_factory=list)
    superseded: list[MemoryRef] = field(default_factory=list)
    invalid: list[MemoryRef] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (
            self.added or self.edited or self.moved or self.removed or self.superseded or self.invalid
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_range(root: Path, spec: str | None, configured_main: str | None) -> tuple[str, str, str, str]:
    """(base label, head label, base commit, head commit).

    `A..B` compares A and B directly; `A...B` compares B with its merge base with A; a single `A`
    means `A...HEAD`; nothing means `<main>...HEAD` (what a pull request into main would add).
    """
    if not spec:
        spec = f"{gitstate.main_branch(root, configured_main)}...HEAD"
    if "..." in spec:
        a, b = spec.split("...", 1)
        a, b = a or "HEAD", b or "HEAD"
        ha = resolve_commit(root, a)
        hb = resolve_commit(root, b)
        base = merge_base(root, ha, hb)
        if base is None:
            raise gitstate.GitError(f"{a} and {b} have no common history")
        return f"merge-base({a}, {b})", b, base, hb
    if ".." in spec:
        a, b = spec.split("..", 1)
        a, b = a or "HEAD", b or "HEAD"
        return a, b, resolve_commit(root, a), resolve_commit(root, b)
    return parse_range(root, f"{spec}...HEAD", configured_main)


def _by_id(records: dict[str, FileRecord]) -> dict[str, tuple[Memory, FileRecord]]:
    out: dict[str, tuple[Memory, FileRecord]] = {}
    for rel in sorted(records):
        rec = records[rel]
        if rec.memory is not None and rec.memory.id not in out:  # first path wins, as in the index
            out[rec.memory.id] = (rec.memory, rec)
    return out


def _changed_keys(a: Memory, b: Memory) -> list[str]:
    fa, fb = a.to_frontmatter(), b.to_frontmatter()
    keys = [k for k in dict.fromkeys([*fa, *fb]) if fa.get(k) != fb.get(k)]
    if a.body.strip() != b.body.strip():
        keys.append("body")
    return keys


def _superseded(mems: dict[str, tuple[Memory, FileRecord]]) -> set[str]:
    out: set[str] = set()
    for m, _ in mems.values():
        out.update(m.supersedes)
        out.update(r.target for r in m.relations if r.type == "SUPERSEDES")
    return out


def memory_diff(root: Path, spec: str | None = None, configured_main: str | None = None) -> MemoryDiff:
    base_label, head_label, base, head = parse_range(root, spec, configured_main)
    before = records_at(root, base)
    after = records_at(root, head)
    a, b = _by_id(before), _by_id(after)
    d = MemoryDiff(base_label, head_label, base, head)
    for mid, (m, rec) in sorted(b.items(), key=lambda kv: kv[1][1].path):
        if mid not in a:
            d.added.append(MemoryRef.of(m, rec.path))
            continue
        om, orec = a[mid]
        if orec.hash == rec.hash and orec.path == rec.path:
            continue
        keys = _changed_keys(om, m)
        if orec.path != rec.path:
            d.moved.append(MemoryRef.of(m, rec.path, f"from {orec.path}"))
        if keys:
            d.edited.append(MemoryRef.of(m, rec.path, "changed: " + ", ".join(keys)))
    for mid, (m, rec) in sorted(a.items(), key=lambda kv: kv[1][1].path):
        if mid not in b:
            d.removed.append(MemoryRef.of(m, rec.path))
    newly = _superseded(b) - _superseded(a)
    by_superseder: dict[str, str] = {}
    for m, _ in b.values():
        for t in [*m.supersedes, *(r.target for r in m.relations if r.type == "SUPERSEDES")]:
            by_superseder.setdefault(t, m.id)
    for mid in sorted(newly):
        if mid in b:
            m, rec = b[mid]
            d.superseded.append(MemoryRef.of(m, rec.path, f"by {by_superseder.get(mid, '?')}"))
    for rel, rec in sorted(after.items()):
        if rec.memory is None and (rel not in before or before[rel].hash != rec.hash):
            d.invalid.append(
                MemoryRef("", "", "", rel, f"line {rec.error_line or 1}: {rec.error or 'invalid'}")
            )
    return d


_SECTIONS = (
    ("added", "Added"),
    ("edited", "Edited"),
    ("moved", "Moved"),
    ("removed", "Removed"),
    ("superseded", "Newly superseded"),
    ("invalid", "Invalid files"),
)


def render_text(d: MemoryDiff) -> str:
    lines = [f"memory changes {d.base} ({d.base_commit[:10]}) -> {d.head} ({d.head_commit[:10]})"]
    if d.empty:
        lines.append("no memory changes")
    marks = {"added": "+", "edited": "~", "moved": ">", "removed": "-", "superseded": "x", "invalid": "!"}
    for key, _title in _SECTIONS:
        for r in getattr(d, key):
            if key == "invalid":
                lines.append(f"! {r.path}: {r.detail}")
                continue
            extra = f"  ({r.detail})" if r.detail else ""
            lines.append(f"{marks[key]} [{r.type}] {r.title}  {r.id}  {r.path}{extra}")
    return "\n".join(lines) + "\n"


def render_markdown(d: MemoryDiff) -> str:
    out = ["## Memory changes", ""]
    if d.empty:
        out.append("_No memory changes._")
        return "\n".join(out) + "\n"
    counts = ", ".join(f"{len(getattr(d, k))} {t.lower()}" for k, t in _SECTIONS if getattr(d, k))
    out += [f"{counts} (`{d.base_commit[:10]}..{d.head_commit[:10]}`)", ""]
    for key, title in _SECTIONS:
        items = getattr(d, key)
        if not items:
            continue
        out += [f"### {title}", ""]
        for r in items:
            if key == "invalid":
                out.append(f"- `{r.path}`: {r.detail}")
                continue
            title_md = r.title.replace("*", "\\*").replace("_", "\\_")
            extra = f" — {r.detail}" if r.detail else ""
            out.append(f"- **{r.type}**: {title_md} (`{r.path}`, `{r.id}`){extra}")
        out.append("")
    return "\n".join(out)


def render_json(d: MemoryDiff) -> str:
    return json.dumps(d.as_dict(), indent=2, ensure_ascii=False)
