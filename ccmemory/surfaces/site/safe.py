"""Rendering untrusted memory text to HTML for the published site.

Everything that comes from a memory file (body, title, topics, any frontmatter value) and from
git (commit subjects, author names) is untrusted. The rules:

- Bodies are rendered by mistune with escaping on: raw HTML in a memory is shown as text, never
  passed through. Headings are shifted one level down (the page owns the h1).
- Every link and image URL goes through `safe_href`: only http(s), mailto and same-site relative
  links survive; `javascript:`, `data:`, `vbscript:`, `file:` and anything unknown become inert.
  Relative links to other memory files and `ccmemory://memory/<id>` URIs are rewritten to the
  memory's page; relative links the site cannot serve are rendered as plain text.
- Images are never loaded (no remote requests from the published site): they become links.
- Control characters are removed from all untrusted text before anything else, so text cannot
  smuggle Python-Markdown's stash placeholders (STX/ETX) into the page.
- Every other value is escaped by the Jinja templates (autoescape on).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import mistune
from mistune import HTMLRenderer

from ccmemory.core.plaintext import strip_control

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})

# (url) -> page-relative href of a memory page, or None when the url is not a memory link.
LinkResolver = Callable[[str], "str | None"]


def clean(value: Any) -> str:
    """Untrusted value -> text without control characters (tabs and newlines kept)."""
    if value is None:
        return ""
    return strip_control(str(value))


def escape(value: Any) -> str:
    return html.escape(clean(value), quote=True)


def url_scheme(url: str) -> str | None:
    """The scheme a browser would see, after undoing entity/percent encoding and removing the
    whitespace and control characters browsers ignore inside a scheme (``java\\tscript:``)."""
    text = html.unescape(url)
    for _ in range(3):
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    text = re.sub(r"[\x00-\x20\x7f]+", "", text)
    m = _SCHEME.match(text)
    return m.group(1).lower() if m else None


def safe_href(url: str) -> str | None:
    """The url if it is safe to put in an href on the site, else None."""
    url = clean(url).strip()
    if not url:
        return None
    scheme = url_scheme(url)
    if scheme is None:
        # No scheme: relative path, fragment or query; a leading '//' is another host.
        return None if url.startswith(("//", "\\\\", "/\\", "\\/")) else url
    return url if scheme in SAFE_SCHEMES else None


class SafeRenderer(HTMLRenderer):
    """mistune's HTML renderer with escaping on and a strict link policy."""

    def __init__(self, resolve: LinkResolver | None = None):
        super().__init__(escape=True)
        self.resolve = resolve

    def _target(self, url: str) -> tuple[str | None, bool]:
        """(href, external) for a link; href None means: render as text."""
        if self.resolve is not None:
            page = self.resolve(url)
            if page is not None:
                return page, False
        href = safe_href(url)
        if href is None:
            return None, False
        scheme = url_scheme(href)
        if scheme is None and not href.startswith("#"):
            # A relative link to something that is not a memory (a code file...): the site
            # does not serve it, so show the text without a dead link.
            return None, False
        return href, scheme in ("http", "https")

    def link(self, text: str, url: str, title: str | None = None) -> str:
        href, external = self._target(url)
        if href is None:
            return f'<span class="ccm-inert-link" title="{escape(url)}">{text}</span>'
        attrs: dict[str, object] = {"href": href}
        if title:
            attrs["title"] = clean(title)
        if external:
            attrs["rel"] = "nofollow noopener noreferrer"
        return "<a" + self.render_attrs(attrs) + ">" + text + "</a>"

    def image(self, text: str, url: str, title: str | None = None) -> str:
        label = text or "image"
        href, external = self._target(url)
        if href is None:
            return f'<span class="ccm-inert-link">[{label}]</span>'
        rel = ' rel="nofollow noopener noreferrer"' if external else ""
        return f'<a href="{escape(href)}"{rel}>[image: {label}]</a>'

    def heading(self, text: str, level: int, **attrs: Any) -> str:
        tag = f"h{min(level + 1, 6)}"
        return f"<{tag}>{text}</{tag}>\n"


def markdown_renderer(resolve: LinkResolver | None = None) -> Callable[[str], str]:
    md = mistune.create_markdown(
        escape=True,
        renderer=SafeRenderer(resolve),
        plugins=["strikethrough", "table", "url", "task_lists"],
    )

    def render(text: str) -> str:
        out = md(clean(text))
        assert isinstance(out, str)
        return out

    return render
