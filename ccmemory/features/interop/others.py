"""Other memory tools' stores in (issue 30), written from each format's public description:

- the official MCP memory server's `memory.json` (JSON lines: `{"type": "entity", "name",
  "entityType", "observations": [...]}` and `{"type": "relation", "from", "to", "relationType"}`):
  one fact per entity (its observations as the body, its entity type as topic), each relation a
  RELATES_TO between the two (the relation type as the reason);
- Basic Memory notes (a folder of markdown with front matter `title`, `type`, `permalink`, `tags`;
  `- [category] text #tag` observations; `- relation_type [[Other note]]` relations): one memory
  per note (a fact unless its `type` is one of ours), plus one memory per observation whose
  category is one of our types (`[decision]`, `[gotcha]`, ...), related to its note; `[[links]]`
  between notes become RELATES_TO;
- a mem0 export (a JSON list, or `{"results": [...]}` / `{"memories": [...]}`, of items with
  `memory`, and optionally `id`, `created_at`, `categories`, `metadata`): one memory each, a fact
  unless a category or `metadata.type` names one of our types.

Every memory records `imported_from` (source and item) and is written through the vault's writer
(validated, redacted); an item already imported (same `imported_from`) is skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ccmemory.app.service import Service
    from ccmemory.core.model import Memory

MAX_BYTES = 16 * 1024 * 1024
MAX_ITEMS = 50_000
_OBSERVATION = re.compile(r"^\s*[-*]\s+\[([\w -]+)\]\s+(.+?)\s*$")
_RELATION = re.compile(r"^\s*[-*]\s+([\w -]+?)\s+\[\[([^\]]+)\]\]")
_TAG = re.compile(r"(?<!\S)#([\w-]+)")


@dataclass
class Item:
    key: str  # imported_from
    type: str
    title: str
    body: str = ""
    topics: list[str] = field(default_factory=list)
    created: datetime | None = None
    links: list[tuple[str, str]] = field(default_factory=list)  # (key of the other item, reason)


@dataclass
class OtherReport:
    written: list[str] = field(default_factory=list)
    already_there: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    planned: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "written": self.written,
            "already_there": self.already_there,
            "errors": self.errors,
        }
        if self.planned:
            out["would_write"] = self.planned
        return out


def _our_type(*names: Any) -> str | None:
    from ccmemory.core.model import TYPES

    for name in names:
        key = str(name or "").strip().lower().replace("-", "_").replace(" ", "_")
        if key in TYPES:
            return key
    return None


def _when(value: Any) -> datetime | None:
    from ccmemory.core.model import parse_timestamp

    try:
        return parse_timestamp(value) if value else None
    except (ValueError, TypeError):
        return None


def _title(text: str) -> str:
    first = " ".join(str(text).split())
    return first if len(first) <= 150 else first[:147].rstrip() + "…"


# --- the formats ------------------------------------------------------------------------------


def sniff_json_lines(path: Path) -> bool:
    """A memory.json of the MCP memory server (its first line is an entity or a relation)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            first = next((ln for ln in fh if ln.strip()), "")
        data = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("type") in ("entity", "relation")


def is_mem0(data: Any) -> bool:
    items = data.get("results", data.get("memories")) if isinstance(data, dict) else data
    return (
        isinstance(items, list)
        and bool(items)
        and all(isinstance(i, dict) and "memory" in i for i in items[:5])
    )


def is_basic_memory_folder(path: Path) -> bool:
    if not path.is_dir():
        return False
    for md in list(path.rglob("*.md"))[:20]:
        head = md.read_text(encoding="utf-8", errors="replace")[:4000]
        if "permalink:" in head or "## Observations" in head or _OBSERVATION.search(head):
            return True
    return False


def mcp_memory_items(text: str, rel: str) -> tuple[list[Item], list[dict[str, Any]]]:
    items: dict[str, Item] = {}
    relations: list[tuple[str, str, str]] = []
    errors: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines()[:MAX_ITEMS], 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as exc:
            errors.append({"entry": n, "reason": f"not JSON: {exc}"[:200]})
            continue
        if not isinstance(data, dict):
            errors.append({"entry": n, "reason": "not an object"})
        elif data.get("type") == "entity" and str(data.get("name") or "").strip():
            name = str(data["name"]).strip()
            obs = [str(o) for o in data.get("observations") or [] if isinstance(o, str | int | float)]
            kind = str(data.get("entityType") or "").strip()
            items[name] = Item(
                f"{rel}#entity:{name}"[:300],
                _our_type(kind) or "fact",
                _title(f"{name} ({kind})" if kind else name),
                "\n".join(f"- {o}" for o in obs),
                [kind] if kind else [],
            )
        elif data.get("type") == "relation":
            relations.append(
                (str(data.get("from") or ""), str(data.get("to") or ""), str(data.get("relationType") or ""))
            )
        else:
            errors.append({"entry": n, "reason": "neither an entity with a name nor a relation"})
    for src, dst, kind in relations:
        if src in items and dst in items:
            items[src].links.append((items[dst].key, kind.replace("_", " ") or "related"))
    return list(items.values()), errors


def basic_memory_items(folder: Path, rel: str) -> tuple[list[Item], list[dict[str, Any]]]:
    import frontmatter

    from ccmemory.core.walk import read_regular

    notes: dict[str, Item] = {}
    out: list[Item] = []
    errors: list[dict[str, Any]] = []
    pending: list[tuple[Item, str, str]] = []  # (note, relation type, other title)
    for md in sorted(folder.rglob("*.md"))[:MAX_ITEMS]:
        name = md.relative_to(folder).as_posix()
        try:
            post = frontmatter.loads(read_regular(md, MAX_BYTES).decode("utf-8", "replace"))
        except Exception as exc:  # a broken note: reported, the others go on
            errors.append({"entry": name, "reason": f"cannot read: {exc}"[:200]})
            continue
        meta = post.metadata
        title = str(meta.get("title") or md.stem).strip()
        raw_tags = meta.get("tags")
        tags: list[Any] = list(raw_tags) if isinstance(raw_tags, list) else []
        note = Item(
            f"{rel}/{name}",
            _our_type(meta.get("type")) or "fact",
            _title(title),
            post.content.strip(),
            [str(t) for t in tags][:8],
            _when(meta.get("created") or meta.get("date")),
        )
        notes[title.casefold()] = note
        out.append(note)
        for n, line in enumerate(post.content.splitlines(), 1):
            if m := _OBSERVATION.match(line):
                mtype = _our_type(m.group(1))
                if mtype:
                    text = _TAG.sub("", m.group(2)).strip()
                    obs = Item(f"{rel}/{name}#L{n}", mtype, _title(text), text, _TAG.findall(m.group(2))[:8])
                    obs.links.append((note.key, f"observation of {title}"[:200]))
                    out.append(obs)
            elif m := _RELATION.match(line):
                pending.append((note, m.group(1).strip().replace("_", " "), m.group(2).strip()))
    for note, kind, other in pending:
        target = notes.get(other.casefold())
        if target is not None and target is not note:
            note.links.append((target.key, kind))
    return out, errors


def mem0_items(data: Any, rel: str) -> tuple[list[Item], list[dict[str, Any]]]:
    raw = data.get("results", data.get("memories")) if isinstance(data, dict) else data
    out: list[Item] = []
    errors: list[dict[str, Any]] = []
    for n, entry in enumerate(raw[:MAX_ITEMS] if isinstance(raw, list) else [], 1):
        text = str(entry.get("memory") or "").strip() if isinstance(entry, dict) else ""
        if not text:
            errors.append({"entry": n, "reason": "no memory text"})
            continue
        meta = entry.get("metadata") if isinstance(entry.get("metadata"), dict) else {}
        cats = entry.get("categories") if isinstance(entry.get("categories"), list) else []
        out.append(
            Item(
                f"{rel}#{entry.get('id') or n}"[:300],
                _our_type(meta.get("type"), *cats) or "fact",
                _title(text),
                text,
                [str(c) for c in cats][:8],
                _when(entry.get("created_at")),
            )
        )
    return out, errors


# --- writing ----------------------------------------------------------------------------------


def write_items(svc: Service, items: list[Item], report: OtherReport, *, dry_run: bool) -> None:
    """Write the items not imported yet, with their links (ids decided before anything is written)."""
    from ccmemory.app.draft import DraftError, build_memory
    from ccmemory.core import gitstate
    from ccmemory.core.model import Relation, new_id
    from ccmemory.features.interop.rulesin import imported_memories

    known = {k: m.id for k, m in imported_memories(svc).items()}
    fresh = [i for i in items if i.key not in known]
    report.already_there = len(items) - len(fresh)
    if dry_run:
        report.planned = [{"type": i.type, "title": i.title, "from": i.key} for i in fresh]
        return
    ids = {**known, **{i.key: new_id() for i in fresh}}
    branch = gitstate.current_branch(svc.vault.root) if gitstate.is_repo(svc.vault.root) else None
    for item in fresh:
        rels = [Relation("RELATES_TO", ids[k], reason[:200] or None) for k, reason in item.links if k in ids]
        try:
            memory: Memory = build_memory(
                item.type,
                item.title,
                body=item.body,
                topics=item.topics,
                relations=rels,
                source="import",
                author=svc.config.user_id,
                branch=branch,
                created=item.created,
                mid=ids[item.key],
                extra={"imported_from": item.key},
            )
            report.written.append(svc.vault.rel(svc.vault.write_new(memory)))
        except (DraftError, ValueError) as exc:
            report.errors.append({"entry": item.key, "reason": str(exc)[:300]})


def import_other(svc: Service, path: Path, rel: str, kind: str, *, dry_run: bool) -> OtherReport:
    from ccmemory.core.walk import read_regular

    report = OtherReport()
    if kind == "basic-memory":
        items, report.errors = basic_memory_items(path, rel)
    else:
        text = read_regular(path, MAX_BYTES).decode("utf-8", "replace")
        if kind == "mcp-memory":
            items, report.errors = mcp_memory_items(text, rel)
        else:
            try:
                data = json.loads(text)
            except (ValueError, RecursionError) as exc:
                report.errors.append({"entry": 0, "reason": f"not JSON: {exc}"[:200]})
                return report
            items, report.errors = mem0_items(data, rel)
    write_items(svc, items, report, dry_run=dry_run)
    return report
