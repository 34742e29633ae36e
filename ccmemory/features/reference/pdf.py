"""PDF -> markdown with page markers, headings from bookmarks or font sizes (pypdf, BSD-3-Clause).

pypdf is pure Python (no AGPL PyMuPDF). Headings: the PDF's bookmarks (outline) when it has
them, at their nesting level; otherwise a short line set clearly larger than the body text
(largest size -> ``#``, next -> ``##``, then ``###``). Paragraphs:
a line much shorter than the typical line that ends a sentence closes a paragraph. A PDF with
no text layer (a scan) is refused with a clear message: ccmemory does no OCR.

Bounded (issue 32, a PDF can be a bomb): at most ``MAX_PAGES`` pages, ``MAX_CONTENT`` bytes of
decompressed page content in all (a small file can inflate a shared stream on every page) and
``MAX_SECONDS`` of text extraction; past any of them the PDF is refused with a message naming the
limit, and nothing is cached. pypdf's own limits (stream sizes, page-tree depth) are one error line too.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccmemory.core.errors import CcmemoryError

MAX_PAGES = 5000
MAX_CONTENT = 32 * 1024 * 1024  # decompressed content-stream bytes, all pages together
MAX_SECONDS = 120.0


class PdfError(CcmemoryError):
    """The PDF cannot be turned into text; the message names the file and the cause."""


@dataclass
class PdfText:
    title: str | None
    markdown: str
    pages: int


class _TooSlow(CcmemoryError):
    """Internal: the time limit ran out inside pypdf's text visitor (caught in this module)."""


def _page_lines(page: Any, deadline: float = float("inf")) -> list[tuple[str, float]]:
    lines: list[tuple[str, float]] = []
    cur: list[str] = []
    size = 0.0

    def flush() -> None:
        nonlocal cur, size
        text = " ".join("".join(cur).split())
        if text:
            lines.append((text, round(size, 1)))
        cur, size = [], 0.0

    def visit(text: str, cm: Any, tm: Any, font: Any, font_size: float) -> None:
        nonlocal size
        if time.monotonic() > deadline:
            raise _TooSlow
        scale = (abs(tm[3]) or 1.0) * (abs(cm[3]) or 1.0) if tm and cm else 1.0
        parts = text.split("\n")
        for i, part in enumerate(parts):
            if i:
                flush()
            if part.strip():
                cur.append(part)
                size = max(size, float(font_size or 0) * scale)
            elif part:
                cur.append(part)

    page.extract_text(visitor_text=visit)
    flush()
    return lines


def pdf_to_markdown(path: Path, *, name: str | None = None) -> PdfText:
    label = name or path.name
    reader, pages = _read(path, label)
    if not any(text.strip() for lines in pages for text, _ in lines):
        raise PdfError(
            f"{label} has no text layer ({len(pages)} page(s), no extractable text): it looks like a scanned"
            " PDF. ccmemory does not run OCR; run an OCR tool first (for example ocrmypdf)"
            " and cache its output."
        )
    level, typical = _font_levels(pages)
    title = _meta_title(reader)
    marks = _outline(reader)
    out: list[str] = []
    for n, lines in enumerate(pages, 1):
        blocks, first_h1 = _page_markdown(n, lines, marks, level, typical)
        out.extend(blocks)
        title = first_h1 if title is None else title
    md = "\n\n".join(out) + "\n"
    return PdfText(title, md, len(pages))


def _read(path: Path, label: str) -> tuple[Any, list[list[tuple[str, float]]]]:
    """The reader and each page's (line, font size); PdfError when pypdf cannot read the file or
    the PDF is past a limit (`MAX_PAGES`, `MAX_CONTENT`, `MAX_SECONDS`)."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError, PyPdfError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            try:
                reader.decrypt("")
            except Exception:
                raise PdfError(f"{label} is encrypted with a password; decrypt it first") from None
        return reader, _bounded_pages(reader, label)
    except PdfError:
        raise
    except (PdfReadError, PyPdfError, ValueError, KeyError, OSError, RecursionError) as exc:
        raise PdfError(f"{label} is not a readable PDF ({type(exc).__name__}: {exc})") from None


def _bounded_pages(reader: Any, label: str) -> list[list[tuple[str, float]]]:
    n = len(reader.pages)
    if n > MAX_PAGES:
        raise PdfError(
            f"{label} has {n} pages; the cache reads at most {MAX_PAGES} (split it first); not cached"
        )
    deadline = time.monotonic() + MAX_SECONDS
    content = 0
    for i, page in enumerate(reader.pages, 1):  # sizes first (decompressing is fast; parsing is not)
        stream = page.get_contents()
        content += len(stream.get_data()) if stream is not None else 0
        if content > MAX_CONTENT:
            raise PdfError(
                f"{label}: its page content passes {MAX_CONTENT // 2**20} MB at page {i} of {n}"
                " (a compressed bomb?); not cached"
            )
        if time.monotonic() > deadline:
            raise PdfError(
                f"{label}: reading it took longer than {MAX_SECONDS:.0f} s (page {i} of {n}); not cached"
            )
    pages = []
    for i, page in enumerate(reader.pages, 1):
        try:
            pages.append(_page_lines(page, deadline))
        except _TooSlow:
            raise PdfError(
                f"{label}: reading its text took longer than {MAX_SECONDS:.0f} s (page {i} of {n});"
                " not cached"
            ) from None
    return pages


def _font_levels(pages: list[list[tuple[str, float]]]) -> tuple[dict[float, int], int]:
    """Heading level per font size (up to three sizes clearly above the body's) and the median
    line length."""
    weights: Counter[float] = Counter()
    lengths: list[int] = []
    for lines in pages:
        for text, size in lines:
            weights[size] += len(text)
            lengths.append(len(text))
    body = weights.most_common(1)[0][0]
    typical = sorted(lengths)[len(lengths) // 2] if lengths else 80
    heading_sizes = sorted({s for s in weights if body > 0 and s >= body * 1.15}, reverse=True)[:3]
    return {s: i + 1 for i, s in enumerate(heading_sizes)}, typical


def _meta_title(reader: Any) -> str | None:
    meta_title: Any = None
    try:
        meta_title = reader.metadata.get("/Title") if reader.metadata else None
    except Exception:
        meta_title = None
    return str(meta_title).strip() if meta_title and str(meta_title).strip() else None


def _page_markdown(
    n: int,
    lines: list[tuple[str, float]],
    marks: dict[int, list[tuple[int, str]]],
    level: dict[float, int],
    typical: int,
) -> tuple[list[str], str | None]:
    """Page `n`'s blocks (marker, headings, paragraphs) and the text of its first `#` heading."""
    out = [f"*(page {n})*"]
    para: list[str] = []
    first_h1: str | None = None
    todo = list(marks.get(n - 1, []))
    matched = {i for i, (_, t) in enumerate(todo) if any(_same(t, text) for text, _ in lines)}
    for i, (lvl, t) in enumerate(todo):
        if i not in matched:  # a bookmark whose text is not on the page: at the page's top
            out.append("#" * lvl + " " + _escape_heading(t))
    for text, size in lines:
        depth = _bookmark_depth(text, todo, matched) if marks else _font_depth(text, size, level)
        if depth and para:
            out.append(" ".join(para))
            para = []
        if depth:
            out.append("#" * depth + " " + _escape_heading(text))
            if first_h1 is None and depth == 1:
                first_h1 = text
            continue
        para.append(text)
        if text.endswith((".", ":", "?", "!")) and len(text) < typical * 0.6:
            out.append(" ".join(para))
            para = []
    if para:
        out.append(" ".join(para))
    return out, first_h1


def _bookmark_depth(text: str, todo: list[tuple[int, str]], matched: set[int]) -> int:
    """The level of the first bookmark on this page still unused that names this line (0: none);
    a bookmark is used once."""
    hit = next((i for i in sorted(matched) if _same(todo[i][1], text)), None)
    if hit is None:
        return 0
    matched.discard(hit)
    return todo[hit][0]


def _font_depth(text: str, size: float, level: dict[float, int]) -> int:
    """The heading level of a short line set in a heading size that does not end a clause (0: body)."""
    ok = size in level and len(text) <= 120 and not text.endswith((".", ",", ";"))
    return level[size] if ok else 0


def _outline(reader: Any) -> dict[int, list[tuple[int, str]]]:
    """Page index -> [(heading level, title)] from the PDF's bookmarks; {} when it has none.
    When a PDF has bookmarks they are its headings (font sizes are not consulted then)."""
    out: dict[int, list[tuple[int, str]]] = {}

    def walk(items: Any, depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
            except Exception:
                continue
            text = " ".join(str(getattr(item, "title", "") or "").split())
            if page is not None and text:
                out.setdefault(page, []).append((min(depth, 4), text))

    try:
        walk(reader.outline, 1)
    except Exception:
        return {}
    return out


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def _escape_heading(text: str) -> str:
    return re.sub(r"^([#>*+-])", r"\\\1", text)
