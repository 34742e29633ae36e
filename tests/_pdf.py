"""A tiny PDF writer for tests: real PDF syntax (xref, fonts, text operators), no dependency.

``make_pdf(pages)`` where each page is a list of (font size, text line); lines are laid out
top-down with Helvetica. ``make_scanned_pdf`` draws only shapes (no text), like a scan.
"""

from __future__ import annotations


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _build(
    streams: list[bytes], title: str | None = None, outline: list[tuple[str, int]] | None = None
) -> bytes:
    objs: list[bytes] = []
    n_pages = len(streams)
    # 1 catalog, 2 pages, 3 font, then per page: page obj, content obj; then info
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(n_pages))
    objs.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objs.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for i, stream in enumerate(streams):
        content = 5 + 2 * i
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
            f" /Contents {content} 0 R >>".encode()
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    outline_ref = ""
    if outline:
        root = len(objs) + 1
        first = root + 1
        last = root + len(outline)
        objs.append(
            f"<< /Type /Outlines /First {first} 0 R /Last {last} 0 R /Count {len(outline)} >>".encode()
        )
        for i, (text, page) in enumerate(outline):
            n = first + i
            links = (f" /Prev {n - 1} 0 R" if i else "") + (f" /Next {n + 1} 0 R" if n < last else "")
            objs.append(
                f"<< /Title ({_esc(text)}) /Parent {root} 0 R /Dest [{4 + 2 * page} 0 R /XYZ null null null]{links} >>".encode()
            )
        outline_ref = f" /Outlines {root} 0 R"
        objs[0] = f"<< /Type /Catalog /Pages 2 0 R{outline_ref} >>".encode()
    info_ref = ""
    if title:
        objs.append(f"<< /Title ({_esc(title)}) /Producer (ccmemory tests) >>".encode())
        info_ref = f" /Info {len(objs)} 0 R"
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R{info_ref} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def make_pdf(
    pages: list[list[tuple[float, str]]],
    title: str | None = None,
    outline: list[tuple[str, int]] | None = None,
) -> bytes:
    streams = []
    for lines in pages:
        y = 740.0
        ops = []
        for size, text in lines:
            y -= size * 1.5
            ops.append(f"BT /F1 {size:g} Tf 72 {y:.1f} Td ({_esc(text)}) Tj ET")
        streams.append("\n".join(ops).encode("latin-1"))
    return _build(streams, title, outline)


def make_scanned_pdf(n_pages: int = 2) -> bytes:
    """Pages with only filled rectangles (what a scan without OCR looks like to a text extractor)."""
    streams = [b"0.2 g 72 100 468 600 re f 0.9 g 100 150 400 20 re f" for _ in range(n_pages)]
    return _build(streams)
