"""Web page -> clean markdown: readability-lxml finds the main content, markdownify writes it.

Chosen over trafilatura after a side-by-side run on saved pages (bench/RESULTS-reference.md):
both dropped menus, ads and footers and kept tables and lists, but trafilatura lost a ``<pre>``
block without ``<code>`` (printed as escaped text), blank lines inside code and block quotes,
and brings a larger dependency tree. Imported lazily: only ``ccmemory cache`` loads it.
"""

from __future__ import annotations

import re
from typing import Any

_STRIP = ["img", "script", "style", "iframe", "form", "input", "button", "noscript", "svg", "video", "audio"]


def _code_language(el: Any) -> str:
    """The ``language-xxx`` class of a <pre> or its <code> child, for the fence."""
    for node in (el, el.find("code") if hasattr(el, "find") else None):
        if node is None:
            continue
        for cls in node.get("class") or []:
            if cls.startswith(("language-", "lang-")):
                return str(cls.split("-", 1)[1])
    return ""


# class/id words of page furniture that readability keeps when it sits inside the article
_FURNITURE = re.compile(
    r"(^|[\s_-])(breadcrumbs?|byline|share|social|cookie|newsletter|subscribe|related|comments?|"
    r"advert|ads?|promo|sponsor(ed)?)($|[\s_-])",
    re.I,
)


def _drop_furniture(html: str) -> str:
    """Remove elements whose class or id names page furniture (breadcrumbs, bylines, share bars)."""
    import lxml.html

    try:
        root = lxml.html.document_fromstring(html)
    except Exception:  # lxml refuses some inputs (empty, encoding declarations): keep as is
        return html
    for el in list(root.iter()):
        if not isinstance(el.tag, str) or el.tag in ("html", "body", "main", "article"):
            continue
        names = f"{el.get('class') or ''} {el.get('id') or ''}"
        if names.strip() and _FURNITURE.search(names):
            el.drop_tree()
    return str(lxml.html.tostring(root, encoding="unicode"))


def html_to_markdown(html: str, url: str | None = None) -> tuple[str | None, str]:
    """(title, markdown body) of the main content of an HTML page."""
    from markdownify import markdownify
    from readability import Document

    doc = Document(_drop_furniture(html), url=url)
    title = (doc.short_title() or doc.title() or "").strip() or None
    main = doc.summary(html_partial=True)
    md = markdownify(
        main,
        heading_style="ATX",
        bullets="-",
        strip=_STRIP,
        code_language_callback=_code_language,
        escape_underscores=False,
        escape_asterisks=False,
    )
    md = re.sub(r"[ \t]+\n", "\n", md)
    md = re.sub(r"\n{3,}", "\n\n", md).strip()
    if title and not re.match(r"#\s", md):
        md = f"# {title}\n\n{md}"
    return title, md + "\n"


def text_title(text: str) -> str | None:
    m = re.search(r"^#\s+(.+)$", text, re.M)
    return m.group(1).strip() if m else None
