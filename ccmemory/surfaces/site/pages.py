"""The site's pages: a view of every memory and the Jinja templates (autoescape on) that render
each page as a raw-HTML block inside a markdown file MkDocs then wraps in the theme.

Page paths (inside the MkDocs docs folder; the site uses `.html` URLs, not directory URLs):
index.md, log/<folder>.md, memories/<id>.md, topics/index.md, topics/<slug>.md, timeline.md,
questions.md.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ccmemory.core.model import REVERSE_NAMES, TYPES
from ccmemory.index.base import Edge, IndexedMemory
from ccmemory.surfaces.site.history import Change
from ccmemory.surfaces.site.safe import clean, escape, markdown_renderer

TYPE_LABELS: dict[str, str] = {
    "decision": "Decisions",
    "correction": "Corrections",
    "preference": "Preferences",
    "exception": "Exceptions",
    "insight": "Insights",
    "question": "Questions",
    "failed_approach": "Failed approaches",
    "fact": "Facts",
    "gotcha": "Gotchas",
    "pattern": "Patterns",
    "reference": "References",
    "concept": "Concepts",
    "hypothesis": "Hypotheses",
    "knowledge_gap": "Knowledge gaps",
}
RECENT = 15
REVIEW_CONFIDENCE = 0.6


def memory_page(mid: str) -> str:
    return f"memories/{mid}.md"


def log_page(mtype: str) -> str:
    return f"log/{TYPES[mtype].folder}.md"


def page_url(page: str) -> str:
    return page[: -len(".md")] + ".html" if page.endswith(".md") else page


def relative(from_page: str, to_page: str, anchor: str = "") -> str:
    """The href from one page to another (both docs-relative .md paths)."""
    target = page_url(to_page)
    base = posixpath.dirname(from_page) or "."
    return posixpath.relpath(target, base) + (f"#{anchor}" if anchor else "")


def topic_slugs(topics: list[str]) -> dict[str, str]:
    """topic -> file-safe slug, unique; a short hash keeps unlike topics apart."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for t in sorted(topics):
        base = re.sub(r"[^a-z0-9]+", "-", t.lower()).strip("-")[:60] or "topic"
        slug = base
        if slug in used or base != t:
            slug = f"{base}-{hashlib.sha1(t.encode()).hexdigest()[:6]}"
        used.add(slug)
        out[t] = slug
    return out


@dataclass
class Link:
    label: str  # relation name as read from this memory's side
    other: str  # the other memory's id
    reason: str | None
    direction: str  # "out" | "in"


@dataclass
class SiteData:
    project: str
    memories: list[IndexedMemory]  # newest first
    by_id: dict[str, IndexedMemory]
    edges: list[Edge]
    superseded: set[str]
    history: dict[str, list[Change]]  # by path
    related: dict[str, list[IndexedMemory]]  # by id
    dangling: dict[str, list[Edge]] = field(default_factory=dict)  # by src id
    in_repo: bool = True


class Renderer:
    def __init__(self, data: SiteData, templates: Path):
        import jinja2

        self.data = data
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(templates)),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.globals.update(TYPE_LABELS=TYPE_LABELS, TYPES=TYPES)
        self.links: dict[str, list[Link]] = defaultdict(list)
        for e in data.edges:
            self.links[e.src].append(Link(e.type, e.dst, e.reason, "out"))
            self.links[e.dst].append(Link(REVERSE_NAMES.get(e.type, e.type), e.src, e.reason, "in"))
        self.superseded_by: dict[str, list[str]] = defaultdict(list)
        self.supersedes: dict[str, list[str]] = defaultdict(list)
        for e in data.edges:
            if e.type == "SUPERSEDES":
                self.superseded_by[e.dst].append(e.src)
                self.supersedes[e.src].append(e.dst)
        from ccmemory.features.cothinker import evidence

        hyps = [m.id for m in data.memories if m.type == "hypothesis"]
        self.evidence = evidence(hyps, [(e.src, e.type, e.dst) for e in data.edges])
        self.by_path = {m.path: m.id for m in data.memories}
        topics = sorted({t for m in data.memories for t in m.topics})
        self.topic_slug = topic_slugs(topics)
        self.topic_members: dict[str, list[IndexedMemory]] = defaultdict(list)
        for m in data.memories:
            for t in m.topics:
                self.topic_members[t].append(m)

    # --- helpers used by templates --------------------------------------------------------------
    def chain(self, mid: str) -> list[str]:
        """The supersession chain through a memory: oldest first (first edge on forks)."""
        out = [mid]
        seen = {mid}
        cur = mid
        while True:
            older = [o for o in sorted(self.supersedes.get(cur, [])) if o not in seen]
            if not older:
                break
            cur = older[0]
            seen.add(cur)
            out.insert(0, cur)
        cur = mid
        while True:
            newer = [n for n in sorted(self.superseded_by.get(cur, [])) if n not in seen]
            if not newer:
                break
            cur = newer[0]
            seen.add(cur)
            out.append(cur)
        return out

    def body_resolver(self, m: IndexedMemory, from_page: str) -> Callable[[str], str | None]:
        """Resolve a link in m's body to another memory's page (relative path or ccmemory:// URI)."""

        def resolve(url: str) -> str | None:
            u = clean(url).strip()
            target: str | None = None
            if u.lower().startswith("ccmemory://memory/"):
                ref = u[len("ccmemory://memory/") :].strip("/")
                target = ref if ref in self.data.by_id else None
            elif u and "://" not in u and not u.startswith(("#", "/", "?")) and ":" not in u.split("/")[0]:
                path = u.partition("#")[0]
                path = path.split("?")[0]
                if path.endswith(".md"):
                    joined = posixpath.normpath(posixpath.join(posixpath.dirname(m.path), path))
                    target = self.by_path.get(joined)
            return relative(from_page, memory_page(target)) if target else None

        return resolve

    def field_items(self, m: IndexedMemory) -> list[tuple[str, str]]:
        items: list[tuple[str, str]] = []
        for name in TYPES[m.type].fields:
            value = m.fields.get(name)
            if value in (None, "", []):
                continue
            if isinstance(value, list):
                text = ", ".join(clean(v) for v in value)
            elif isinstance(value, bool):
                text = "yes" if value else "no"
            else:
                text = clean(value)
            items.append((name.replace("_", " "), text))
        return items

    def is_open_question(self, m: IndexedMemory) -> bool:
        return m.type == "question" and not clean(m.fields.get("answer") or "").strip()

    def is_open_gap(self, m: IndexedMemory) -> bool:
        return m.type == "knowledge_gap" and not clean(m.fields.get("answer") or "").strip()

    def hypothesis_status(self, m: IndexedMemory) -> str:
        from ccmemory.features.cothinker import status_of

        return status_of(m.fields)

    def evidence_of(self, m: IndexedMemory) -> tuple[list[IndexedMemory], list[IndexedMemory]]:
        """(supporting, refuting) memories of a hypothesis, earlier versions' evidence included."""
        ev = self.evidence.get(m.id)
        if ev is None:
            return [], []
        by_id = self.data.by_id
        return [by_id[i] for i in ev.supports if i in by_id], [by_id[i] for i in ev.refutes if i in by_id]

    def needs_review(self, m: IndexedMemory) -> bool:
        return (
            m.type == "decision"
            and m.id not in self.data.superseded
            and (
                m.status == "developmental" or (m.confidence is not None and m.confidence < REVIEW_CONFIDENCE)
            )
        )

    # --- pages ----------------------------------------------------------------------------------
    def _page(self, page: str, title: str, template: str, *, searchable: bool = False, **ctx: Any) -> str:
        tpl = self.env.get_template(template)

        def href(target: str, anchor: str = "") -> str:
            return relative(page, target, anchor)

        html = tpl.render(
            page=page,
            title=title,
            href=href,
            mem_page=memory_page,
            log_page=log_page,
            data=self.data,
            r=self,
            **ctx,
        )
        # The site's hook (site/hooks/ccmemory_pages.py) hands this HTML to the theme without
        # Markdown. Without the hook it is still one raw-HTML block that Markdown passes through
        # untouched: blank lines are dropped outside <pre> so the block cannot be ended early.
        lines = _compact(html)
        fm: dict[str, Any] = {"title": escape(title), "ccmemory": "html"}
        if not searchable:
            fm["search"] = {"exclude": True}  # listings would match every memory they list
        meta = yaml.safe_dump(fm, allow_unicode=True, sort_keys=False)
        return f'---\n{meta}---\n\n<div class="ccm-page">\n{lines}\n</div>\n'

    def render_all(self) -> dict[str, str]:
        d = self.data
        pages: dict[str, str] = {}
        live = [m for m in d.memories if m.id not in d.superseded]
        counts = Counter((m.type, m.status) for m in d.memories)
        pages["index.md"] = self._page(
            "index.md",
            f"{d.project} — memory",
            "home.html",
            counts=counts,
            total=len(d.memories),
            recent=d.memories[:RECENT],
            review=[m for m in d.memories if self.needs_review(m)][:50],
            failed=[m for m in live if m.type == "failed_approach"][:50],
            open_questions=sum(1 for m in live if self.is_open_question(m)),
            topics=len(self.topic_slug),
        )
        for mtype in TYPES:
            mems = [m for m in d.memories if m.type == mtype]
            pages[log_page(mtype)] = self._page(
                log_page(mtype), TYPE_LABELS[mtype], "log.html", mtype=mtype, mems=mems
            )
        months: dict[str, list[IndexedMemory]] = defaultdict(list)
        for m in d.memories:
            months[m.created[:7]].append(m)
        pages["timeline.md"] = self._page("timeline.md", "Timeline", "timeline.html", months=months)
        pages["questions.md"] = self._page(
            "questions.md",
            "Open questions",
            "questions.html",
            mems=[m for m in live if self.is_open_question(m)],
        )
        pages["hypotheses.md"] = self._page(
            "hypotheses.md",
            "Hypotheses and knowledge gaps",
            "hypotheses.html",
            hypotheses=[m for m in live if m.type == "hypothesis"],
            gaps=[m for m in live if self.is_open_gap(m)],
        )
        topic_rows = sorted(self.topic_members.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        pages["topics/index.md"] = self._page("topics/index.md", "Topics", "topics.html", rows=topic_rows)
        for t, mems in self.topic_members.items():
            page = self.topic_page(t)
            pages[page] = self._page(page, f"Topic: {t}", "topic.html", topic=t, mems=mems)
        for m in d.memories:
            page = memory_page(m.id)
            render_body = markdown_renderer(self.body_resolver(m, page))
            history = d.history.get(m.path, [])
            pages[page] = self._page(
                page,
                m.title,
                "memory.html",
                searchable=True,
                m=m,
                body=_markup(render_body(m.body)),
                fields=self.field_items(m),
                links=sorted(self.links.get(m.id, []), key=lambda link: (link.direction, link.label)),
                dangling=d.dangling.get(m.id, []),
                chain=self.chain(m.id),
                history=history,
                related=d.related.get(m.id, []),
            )
        return pages

    def topic_page(self, topic: str) -> str:
        return f"topics/{self.topic_slug[topic]}.md"


def _markup(html: str) -> Any:
    from markupsafe import Markup

    return Markup(html)  # produced by the escaping renderer in safe.py


def _compact(html: str) -> str:
    """Drop blank lines so the raw-HTML block cannot be cut short by Markdown; inside <pre> a
    blank line becomes a newline character reference on the previous line (same rendering)."""
    out: list[str] = []
    depth = 0
    for line in html.splitlines():
        if line.strip():
            out.append(line.rstrip() if depth == 0 else line)
        elif depth > 0 and out:
            out[-1] += "&#10;"
        depth = max(0, depth + line.count("<pre") - line.count("</pre>"))
    return "\n".join(out)
