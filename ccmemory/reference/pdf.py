"""PDF -> markdown with page markers, headings recovered from font sizes (pypdf, BSD-3-Clause).

pypdf is pure Python (no AGPL PyMuPDF). Headings: a short line set clearly larger than the
body text becomes a heading (largest size -> ``#``, next -> ``##``, then ``###``). Paragraphs:
a line much shorter than the typical line that ends a sentence closes a paragraph. A PDF with
no text layer (a scan) is refused with a clear message: ccmemory does no OCR.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class PdfError(Exception):
    """The PDF cannot be turned into text; the message names the file and the cause."""


@dataclass
class PdfText:
    title: str | None
    markdown: str
    pages: int


def _page_lines(page: Any) -> list[tuple[str, float]]:
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
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    label = name or path.name
    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            try:
                reader.decrypt("")
            except Exception:
                raise PdfError(f"{label} is encrypted with a password; decrypt it first") from None
        pages = [_page_lines(p) for p in reader.pages]
    except PdfError:
        raise
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise PdfError(f"{label} is not a readable PDF ({type(exc).__name__}: {exc})") from None
    if not any(text.strip() for lines in pages for text, _ in lines):
        raise PdfError(
            f"{label} has no text layer ({len(pages)} page(s), no extractable text): it looks like a scanned"
            " PDF. ccmemory does not run OCR; run an OCR tool first (for example ocrmypdf)"
            " and cache its output."
        )
    weights: Counter[float] = Counter()
    lengths: list[int] = []
    for lines in pages:
        for text, size in lines:
            weights[size] += len(text)
            lengths.append(len(text))
    body = weights.most_common(1)[0][0]
    typical = sorted(lengths)[len(lengths) // 2] if lengths else 80
    heading_sizes = sorted({s for s in weights if body > 0 and s >= body * 1.15}, reverse=True)[:3]
    level = {s: i + 1 for i, s in enumerate(heading_sizes)}
    meta_title: Any = None
    try:
        meta_title = reader.metadata.get("/Title") if reader.metadata else None
    except Exception:
        meta_title = None
    title = str(meta_title).strip() if meta_title and str(meta_title).strip() else None

    out: list[str] = []
    for n, lines in enumerate(pages, 1):
        out.append(f"*(page {n})*")
        para: list[str] = []
        for text, size in lines:
            heading = size in level and len(text) <= 120 and not text.endswith((".", ",", ";"))
            if heading and para:
                out.append(" ".join(para))
                para = []
            if heading:
                out.append("#" * level[size] + " " + _escape_heading(text))
                if title is None and level[size] == 1:
                    title = text
                continue
            para.append(text)
            if text.endswith((".", ":", "?", "!")) and len(text) < typical * 0.6:
                out.append(" ".join(para))
                para = []
        if para:
            out.append(" ".join(para))
    md = "\n\n".join(out) + "\n"
    return PdfText(title, md, len(pages))


def _escape_heading(text: str) -> str:
    return re.sub(r"^([#>*+-])", r"\\\1", text)
