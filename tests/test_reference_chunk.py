"""The chunker: sections by heading, stable ids, a size cap that never cuts code or tables."""

from __future__ import annotations

from ccmemory.core.reftree.chunk import resolve_link, slug, split
from ccmemory.core.reftree.record import parse

DOC = """Intro before any heading, with a [memory link](../../decisions/use-wal.md).

# Guide

Opening paragraph.

## Setup

Install it.

## Setup

Second setup section (a duplicate heading).

## Empty parent
### Child

Child text with [a sibling](other.md#part-two).
"""


def test_sections_ids_heading_paths_and_order() -> None:
    chunks = split(DOC, "concepts/guide.md", title="The guide")
    assert [c.id for c in chunks] == [
        "concepts/guide.md#_intro",
        "concepts/guide.md#guide",
        "concepts/guide.md#setup",
        "concepts/guide.md#setup-2",
        "concepts/guide.md#child",
    ]
    assert [c.order for c in chunks] == [0, 1, 2, 3, 4]
    assert chunks[0].heading_path == ["The guide"]
    assert chunks[2].heading_path == ["Guide", "Setup"]
    assert chunks[4].heading_path == ["Guide", "Empty parent", "Child"]
    assert chunks[3].text.startswith("## Setup\n\nSecond setup")
    assert chunks[0].links == ["../../decisions/use-wal.md"]
    assert chunks[4].links == ["other.md#part-two"]
    # same input, same ids (stable), and a heading-only section makes no chunk of its own
    assert [c.id for c in split(DOC, "concepts/guide.md", title="The guide")] == [c.id for c in chunks]
    assert not any(c.id.endswith("#empty-parent") for c in chunks)


def test_title_heads_the_path_only_without_an_h1() -> None:
    chunks = split("## A\n\ntext\n", "x.md", title="Doc title")
    assert chunks[0].heading_path == ["Doc title", "A"]


def test_size_cap_splits_between_blocks_never_inside_code_or_tables() -> None:
    code = "```python\n" + "\n".join(f"line_{i} = {i}" for i in range(60)) + "\n\n# not a heading\n```"
    table = "| k | v |\n|---|---|\n" + "\n".join(f"| key{i} | value {i} |" for i in range(40))
    paras = "\n\n".join(f"Paragraph {i} " + "words " * 30 for i in range(6))
    text = f"# Big\n\n{paras}\n\n{code}\n\n{table}\n\nAfter the table.\n"
    chunks = split(text, "big.md", max_chars=600)
    assert len(chunks) > 4
    assert chunks[0].id == "big.md#big" and chunks[1].id == "big.md#big~2"
    for c in chunks:
        assert c.text.count("```") % 2 == 0, c.text  # a fence is never left open
        assert c.text.startswith("# Big"), "each part repeats the heading line"
    whole_code = [c for c in chunks if "```python" in c.text]
    assert (
        len(whole_code) == 1
        and "line_59 = 59" in whole_code[0].text
        and "# not a heading" in whole_code[0].text
    )
    with_table = [c for c in chunks if "| key0 |" in c.text]
    assert len(with_table) == 1 and "| key39 | value 39 |" in with_table[0].text
    assert all(len(c.text) <= 600 for c in chunks if "```" not in c.text and "| key" not in c.text)


def test_slug_and_link_resolution() -> None:
    assert slug("Cookie flags & SameSite!") == "cookie-flags-samesite"
    assert slug("Über_größe") == "übergröße"
    assert slug("***") == "section"
    src = ".ccmemory/reference/concepts/auth/jwt.md"
    assert resolve_link("sessions.md#logout", src) == (
        ".ccmemory/reference/concepts/auth/sessions.md",
        "logout",
    )
    assert resolve_link("../../../decisions/x.md", src) == (".ccmemory/decisions/x.md", "")
    assert resolve_link("https://example.com/a.md", src) is None
    assert resolve_link("#local", src) is None
    assert resolve_link("../../../../../../etc/passwd", src) is None


def test_record_frontmatter_and_warnings() -> None:
    rec = parse(
        "---\ntitle: T\ntags: [a, b]\ntype: decision\ncolor: red\n---\n# H\n\nx\n", ".ccmemory/reference/t.md"
    )
    assert rec.error is None and rec.title == "T" and rec.tags == ["a", "b"]
    msgs = " ".join(m for _, m in rec.warnings)
    assert "not memories" in msgs and "unknown frontmatter key 'color'" in msgs
    bad = parse("---\ntitle: [unclosed\n---\nbody\n", ".ccmemory/reference/bad.md")
    assert bad.error and "not valid YAML" in bad.error
    assert (
        parse("---\n- a list\n---\n", ".ccmemory/reference/l.md").error
        == "frontmatter must be a mapping of keys to values"
    )
