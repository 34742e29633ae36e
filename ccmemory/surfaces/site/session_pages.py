"""The site's Sessions page (issue 28): the session summaries published under `.ccmemory/sessions/`
(`sessions.publish`, `ccmemory sessions publish`), newest first.

Published files arrive through pull requests, so they are hostile input like memory files: read by
the safe walker and reader with the bounded YAML loader (ccmemory.features.sessions.publish), every
frontmatter value escaped by the templates, bodies through the escaping renderer (safe.py), memory
ids linked only when they name a memory of the site.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ccmemory.surfaces.site.pages import Renderer, memory_page, relative
from ccmemory.surfaces.site.safe import clean, markdown_renderer

PAGE = "sessions.md"
MAX_LIST = 50


def _strings(value: Any) -> list[str]:
    items = value if isinstance(value, list) else []
    return [clean(v) for v in items[:MAX_LIST] if isinstance(v, str | int | float)]


def render_sessions(r: Renderer, root: Path) -> tuple[dict[str, str], list[str]]:
    """({page: text} — empty when nothing is published; problems with published files)."""
    from markupsafe import Markup

    from ccmemory.features.sessions.publish import load_all

    files, problems = load_all(root)
    if not files:
        return {}, problems

    def resolve(url: str) -> str | None:
        u = clean(url).strip()
        if u.lower().startswith("ccmemory://memory/"):
            mid = u[len("ccmemory://memory/") :].strip("/")
            return relative(PAGE, memory_page(mid)) if mid in r.data.by_id else None
        return None

    render = markdown_renderer(resolve)
    rows = []
    for f in files:
        meta = f.meta
        mems = []
        for mid in _strings(meta.get("memories")):
            m = r.data.by_id.get(mid)
            mems.append({"id": mid, "title": m.title if m else None, "page": memory_page(mid) if m else None})
        rows.append(
            {
                "rel": clean(f.rel),
                "session": clean(meta.get("session")),
                "branch": clean(meta.get("branch")),
                "start": clean(meta.get("start")),
                "end": clean(meta.get("end")),
                "commit_start": clean(meta.get("commit_start"))[:12],
                "commit_end": clean(meta.get("commit_end"))[:12],
                "files": _strings(meta.get("files_changed")),
                "prompts": _strings(meta.get("prompts")),
                "memories": mems,
                "body": Markup(render(f.body[:20_000])),  # produced by the escaping renderer
            }
        )
    page = r._page(PAGE, "Sessions", "sessions.html", searchable=True, rows=rows)
    return {PAGE: page}, problems
