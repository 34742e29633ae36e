"""The site's Reference section: the reference tree as pages, one section per chunk.

Pages: ``reference/index.md`` (the tree, file by file) and ``reference/files/<path in tree>``
(one per reference file, each chunk in a ``<section id="<anchor>">`` so citations
``ccmemory://reference/<path>#<anchor>`` have a place on the site). Cached pages are untrusted:
their text goes through the same escaping renderer as memory bodies (ccmemory/site/safe.py):
raw HTML shown as text, images never loaded, only http(s)/mailto and resolvable relative links.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ccmemory.surfaces.site.pages import Renderer, memory_page, relative
from ccmemory.surfaces.site.safe import clean, markdown_renderer, safe_href

if TYPE_CHECKING:
    from ccmemory.app.service import Service

INDEX = "reference/index.md"


def file_page(tree_path: str) -> str:
    return f"reference/files/{tree_path}"


def render_reference(r: Renderer, svc: Service) -> dict[str, str]:
    """Reference pages for the site; empty when the tree is empty or the index has no chunks."""
    from ccmemory.app.refsync import supports
    from ccmemory.core.reftree import REF_ROOT, tree_path
    from ccmemory.core.reftree.chunk import resolve_link

    idx: Any = svc.index
    if not supports(idx):
        return {}
    files = [f for f in idx.ref_files(svc.project) if not f.get("error")]
    if not files:
        return {}
    pages: dict[str, str] = {}
    known = {f["path"]: file_page(tree_path(f["path"])) for f in files}

    def resolver(from_rel: str, page: str) -> Callable[[str], str | None]:
        def resolve(url: str) -> str | None:
            u = clean(url).strip()
            if u.lower().startswith("ccmemory://reference/"):
                ref, _, anchor = u[len("ccmemory://reference/") :].partition("#")
                target_page = known.get(f"{REF_ROOT}/{ref}")
                return relative(page, target_page, anchor) if target_page else None
            if u.lower().startswith("ccmemory://memory/"):
                mid = u[len("ccmemory://memory/") :].strip("/")
                return relative(page, memory_page(mid)) if mid in r.data.by_id else None
            target = resolve_link(u, from_rel)
            if target is None:
                return None
            path, frag = target
            if path in known:
                return relative(page, known[path], frag)
            owner = r.by_path.get(path)
            return relative(page, memory_page(owner)) if owner else None

        return resolve

    rows = []
    for f in files:
        page = known[f["path"]]
        chunks = idx.ref_file_chunks(svc.project, f["path"])
        render = markdown_renderer(resolver(f["path"], page))
        sections = [
            {
                "anchor": c.anchor,
                "heading_path": c.heading_path,
                "html": _markup(render(c.text)),
                "uri": c.uri,
            }
            for c in chunks
        ]
        title = clean(f.get("title")) or (
            chunks[0].heading_path[-1] if chunks and chunks[0].heading_path else ""
        )
        title = title or tree_path(f["path"])
        source = clean(f.get("source"))
        pages[page] = r._page(
            page,
            title,
            "reference_file.html",
            searchable=True,
            f=f,
            tree=tree_path(f["path"]),
            sections=sections,
            source=source,
            source_href=safe_href(source) if source.startswith(("http://", "https://")) else None,
        )
        rows.append({"tree": tree_path(f["path"]), "page": page, "title": title, "file": f})
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(posixpath.dirname(row["tree"]) or ".", []).append(row)
    pages[INDEX] = r._page(INDEX, "Reference", "reference.html", groups=sorted(groups.items()))
    return pages


def _markup(html: str) -> Any:
    from markupsafe import Markup

    return Markup(html)  # produced by the escaping renderer in safe.py
