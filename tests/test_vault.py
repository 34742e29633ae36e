from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from ccmemory.core.model import Relation, provisional_id
from ccmemory.core.vault import MemoryFileError, Vault, atomic_write, parse_text, render, slugify
from tests.conftest import make_memory


def test_round_trip_keeps_key_order_and_friendly_yaml(repo: Path) -> None:
    m = make_memory(
        topics=["auth", "security"],
        files=["src/auth/token.ts"],
        confidence=0.95,
        source="llm",
        relations=[Relation("DEPENDS_ON", "01JC7AAAAAAAAAAAAAAAAAAAAA", "needs the cookie")],
        fields={"rationale": "XSS can read localStorage.", "options_considered": ["localStorage", "cookie"]},
    )
    text = render(m)
    keys = [
        line.split(":")[0]
        for line in text.split("---")[1].strip().splitlines()
        if not line.startswith((" ", "-"))
    ]
    assert keys == [
        "id",
        "type",
        "title",
        "created",
        "topics",
        "files",
        "confidence",
        "source",
        "relations",
        "rationale",
        "options_considered",
    ]
    assert "created: 2026-11-20T14:03:11Z" in text  # unquoted ISO timestamp
    assert "topics: [auth, security]" in text
    assert "- {type: DEPENDS_ON, target: 01JC7AAAAAAAAAAAAAAAAAAAAA, reason: needs the cookie}" in text
    assert parse_text(text, "x.md").memory == m


def test_write_new_never_overwrites(repo: Path) -> None:
    vault = Vault(repo)
    a = vault.write_new(make_memory(title="Same title"))
    b = vault.write_new(make_memory(title="Same title"))
    assert a != b and a.exists() and b.exists()  # different ids: different suffixes
    # the same id suffix (same last four characters) still never overwrites: a counter is added
    c = vault.write_new(make_memory(title="Same title", id="01JD3K8X9QF2B7M4R6T0VWZZZZ"))
    d = vault.write_new(make_memory(title="Same title", id="01JD3K8X9QF2B7M4R6T0VAZZZZ"))
    assert c.name == "2026-11-20-same-title-zzzz.md"
    assert d.name == "2026-11-20-same-title-zzzz-2.md"
    assert a.parent == repo / ".ccmemory" / "decisions"


def test_write_new_stores_a_provisional_target_as_its_path_once(repo: Path) -> None:
    """A provisional id changes when its file gets a ULID: the file written names the path; a
    provisional id of no file here is dropped, and a target given twice is written once."""
    vault = Vault(repo)
    hand = repo / ".ccmemory" / "decisions" / "hand.md"
    hand.parent.mkdir(parents=True, exist_ok=True)
    hand.write_text("---\ntype: decision\ntitle: By hand\n---\nBody.\n")
    rel = ".ccmemory/decisions/hand.md"
    draft, gone = provisional_id(rel), provisional_id(".ccmemory/decisions/gone.md")
    m = make_memory(
        supersedes=[rel, draft, gone],
        relations=[Relation("RELATES_TO", draft, "same subject"), Relation("RELATES_TO", rel)],
    )
    written = vault.read(vault.write_new(m))
    assert written.supersedes == [rel]
    assert written.relations == [Relation("RELATES_TO", rel, "same subject")]
    assert "DRAFT-" not in render(written)


def test_atomic_write_exclusive_under_races(tmp_path: Path) -> None:
    target = tmp_path / "x.md"
    wins: list[int] = []
    errors: list[int] = []

    def writer(i: int) -> None:
        try:
            atomic_write(target, f"writer {i}\n".encode(), overwrite=False)
            wins.append(i)
        except FileExistsError:
            errors.append(i)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1 and len(errors) == 15
    assert target.read_text() == f"writer {wins[0]}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.md"]  # no temp files left behind


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("../../etc/passwd", "etc-passwd"),
        ("CON", "con-memory"),
        ("   ", "memory"),
        ("Ünïcödé Straße — 日本語", "ünïcödé-strasse-日本語"),
        ('a/b\\c:d*e?f"g<h>i|j', "a-b-c-d-e-f-g-h-i-j"),
        (".hidden", "hidden"),
    ],
)
def test_slugs_are_safe(title: str, expected: str) -> None:
    assert slugify(title) == expected


def test_slug_length_bounded() -> None:
    s = slugify("word " * 100)
    assert len(s) <= 60 and not s.endswith("-")
    assert "/" not in slugify("a" * 500) and len(slugify("a" * 500)) == 60


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("no frontmatter here\n", 1, "no YAML frontmatter"),
        ("---\ntype: fact\ntitle: x\nthe body, and no closing line\n", 1, "never closed"),
        ("---\nid: [unclosed\ntitle: x\n---\nbody\n", 3, "malformed YAML"),
        ("---\n- a list\n---\n", 2, "must be a YAML mapping"),
        (
            "---\nid: 01JD3K8X9QF2B7M4R6T0VWYZAC\ntype: decision\ntitle: t\ncreated: nope\n---\n",
            5,
            "bad timestamp",
        ),
        (
            "---\nid: x\n<<<<<<< HEAD\ntitle: a\n=======\ntitle: b\n>>>>>>> feature\n---\n",
            3,
            "conflict markers",
        ),
    ],
)
def test_bad_files_name_line_and_reason(text: str, line: int, reason: str) -> None:
    with pytest.raises(MemoryFileError) as err:
        parse_text(text, ".ccmemory/decisions/x.md")
    assert err.value.line == line
    assert reason in err.value.reason
    assert str(err.value).startswith(f".ccmemory/decisions/x.md:{line}:")


def test_binary_and_huge_files_refused(repo: Path) -> None:
    vault = Vault(repo)
    folder = repo / ".ccmemory" / "facts"
    folder.mkdir(parents=True)
    (folder / "bin.md").write_bytes(b"---\x00\x01binary")
    (folder / "huge.md").write_bytes(b"---\n" + b"x" * (1024 * 1024 + 10))
    with pytest.raises(MemoryFileError, match="binary"):
        vault.read(folder / "bin.md")
    with pytest.raises(MemoryFileError, match="1 MB"):
        vault.read(folder / "huge.md")


def test_safe_path_refuses_escape(repo: Path) -> None:
    vault = Vault(repo)
    with pytest.raises(ValueError):
        vault.safe_path("../../etc/passwd")
    with pytest.raises(ValueError):
        vault.safe_path("/etc/passwd")
    os.chdir(repo)
    assert vault.safe_path(".ccmemory/decisions/x.md") == repo / ".ccmemory" / "decisions" / "x.md"


def test_scalar_only_frontmatter_is_block_style() -> None:
    text = render(make_memory(author="a@b.c", branch="main", source="manual"))
    assert text.splitlines()[1:5] == [
        f"id: {parse_text(text, 'x.md').memory.id}",
        "type: decision",
        "title: Use httpOnly cookies for tokens",
        "created: 2026-11-20T14:03:11Z",
    ]
    assert "!!" not in text and "{" not in text
