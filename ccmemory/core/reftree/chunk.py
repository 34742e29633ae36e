"""Markdown -> heading-sized chunks, with mistune's AST.

A section runs from a heading to the next heading of any level. Each top-level block (paragraph,
list, code block, table, quote) is rendered back to markdown whole, so a chunk boundary can fall
only *between* blocks: a code block or a table is never cut. A section longer than ``max_chars``
is split at block boundaries into parts; a single block longer than the cap stays whole.

Chunk ids are ``<path in tree>#<slug>``: the heading's slug, ``-2``/``-3``... for repeated
headings (in document order), ``~2``/``~3``... for the later parts of a split section and
``_intro`` for text before the first heading. Slugs never contain ``_`` or ``~``, so these
suffixes cannot collide with a real heading.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import unquote, urlsplit

MAX_CHARS = 2000  # about 500 tokens: big enough for a section, small enough to inject a few
INTRO = "_intro"


@dataclass
class Chunk:
    id: str  # "<path in tree>#<anchor>"
    anchor: str
    heading_path: list[str]
    text: str  # markdown of the section (its heading line included)
    order: int  # 0-based position in the document
    links: list[str] = field(default_factory=list)  # raw link targets, in order


def slug(text: str) -> str:
    """GitHub-like anchor: lower-case words joined by '-' (unicode letters kept)."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w\s-]", "", text, flags=re.UNICODE).replace("_", "")
    text = re.sub(r"[\s-]+", "-", text).strip("-")
    return text or "section"


@lru_cache(maxsize=1)
def _parser() -> Any:
    import mistune

    return mistune.create_markdown(renderer=None, plugins=["table", "strikethrough", "footnotes"])


@lru_cache(maxsize=1)
def _renderer() -> Any:
    from mistune.renderers.markdown import MarkdownRenderer

    return MarkdownRenderer()


def _plain(children: list[dict[str, Any]] | None) -> str:
    out: list[str] = []
    for tok in children or []:
        if "raw" in tok and tok.get("type") != "image":
            out.append(str(tok["raw"]))
        elif tok.get("type") in ("linebreak", "softbreak"):
            out.append(" ")
        else:
            out.append(_plain(tok.get("children")))
    return "".join(out)


def _links(tok: dict[str, Any], out: list[str]) -> None:
    if tok.get("type") == "link":
        url = (tok.get("attrs") or {}).get("url")
        if isinstance(url, str):
            out.append(url)
    for child in tok.get("children") or []:
        if isinstance(child, dict):
            _links(child, out)


def _render(tok: dict[str, Any], state: Any) -> str:
    from mistune.core import BlockState

    st = state if state is not None else BlockState()
    return str(_renderer()([tok], st)).strip("\n")


def split(text: str, tree_path: str, *, title: str | None = None, max_chars: int = MAX_CHARS) -> list[Chunk]:
    """Chunks of one markdown body (frontmatter already removed), in document order.

    ``title`` (the file's frontmatter title) heads the heading path when the body has no
    level-1 heading of its own.
    """
    tokens, state = _parser().parse(text)
    sections: list[tuple[list[str], str, list[str], list[str]]] = []  # path, anchor base, blocks, links
    stack: list[tuple[int, str]] = []
    cur_blocks: list[str] = []
    cur_links: list[str] = []
    cur_path: list[str] = [title] if title else []
    cur_anchor = INTRO
    has_h1 = any(t.get("type") == "heading" and (t.get("attrs") or {}).get("level") == 1 for t in tokens)

    def flush() -> None:
        if cur_blocks:
            sections.append((list(cur_path), cur_anchor, list(cur_blocks), list(cur_links)))

    for tok in tokens:
        kind = tok.get("type")
        if kind == "blank_line":
            continue
        if kind == "heading":
            flush()
            level = int((tok.get("attrs") or {}).get("level", 1))
            heading = " ".join(_plain(tok.get("children")).split())
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading))
            cur_path = ([title] if title and not has_h1 else []) + [h for _, h in stack]
            cur_anchor = slug(heading)
            cur_blocks = ["#" * level + " " + heading]
            cur_links = []
            _links(tok, cur_links)
            continue
        cur_blocks.append(_render(tok, state))
        _links(tok, cur_links)
    flush()

    chunks: list[Chunk] = []
    used: set[str] = set()
    for path, base, blocks, links in sections:
        if len(blocks) == 1 and blocks[0].startswith("#") and base != INTRO:
            # a heading directly followed by a sub-heading: it lives on in its children's paths
            continue
        anchor = base
        n = 2
        while anchor in used:
            anchor = f"{base}-{n}"
            n += 1
        used.add(anchor)
        for part_no, part in enumerate(_parts(blocks, max_chars), 1):
            a = anchor if part_no == 1 else f"{anchor}~{part_no}"
            part_text = "\n\n".join(part)
            part_links = [u for u in links if u in part_text]
            chunks.append(Chunk(f"{tree_path}#{a}", a, path, part_text, len(chunks), part_links))
    return chunks


def _parts(blocks: list[str], max_chars: int) -> list[list[str]]:
    """Greedy packing of whole blocks under the cap; a later part repeats the heading line."""
    heading = blocks[0] if blocks and blocks[0].startswith("#") else None
    parts: list[list[str]] = []
    cur: list[str] = []
    size = 0
    for block in blocks:
        extra = len(block) + 2
        if cur and size + extra > max_chars and any(b is not heading for b in cur):
            parts.append(cur)
            cur = [heading] if heading else []
            size = len(heading) + 2 if heading else 0
        cur.append(block)
        size += extra
    if cur:
        parts.append(cur)
    return parts


def resolve_link(url: str, from_rel: str) -> tuple[str, str] | None:
    """A markdown link target -> (repo-relative path, fragment) when it points into the vault.

    ``from_rel`` is the linking file's repo-relative path. External URLs (any scheme or a host),
    links that climb out of the repository and bare fragments give None.
    """
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    target = posixpath.normpath(posixpath.join(posixpath.dirname(from_rel), unquote(parts.path)))
    if target.startswith("../") or target == ".." or target.startswith("/"):
        return None
    return target, parts.fragment
