"""The shared derivation (ccmemory.index.derive): pure, so tested without any backend."""

from __future__ import annotations

import json

from ccmemory.core.model import Relation, merge_relations
from ccmemory.index.base import Edge, IndexedMemory, file_filter, json_columns, text_hash
from ccmemory.index.derive import (
    PREFIX_LIMIT,
    PREFIX_MIN,
    derive,
    file_keys,
    payload,
    ref_lookup,
    topic_keys,
)
from tests.conftest import make_memory

SUP = "01JCZ0000000000000000000AA"
DEP = "01JCZ0000000000000000000BB"


def test_relations_merge_once_with_reasons_kept_and_sorted() -> None:
    merged = merge_relations(
        [SUP, SUP],
        [
            Relation("SUPERSEDES", SUP, "replaced by the new cache"),  # the reason is kept
            Relation("DEPENDS_ON", DEP),
            Relation("DEPENDS_ON", DEP, "needs the token"),
            Relation("DEPENDS_ON", DEP),  # a later bare duplicate does not erase the reason
        ],
    )
    assert merged == [
        Relation("DEPENDS_ON", DEP, "needs the token"),
        Relation("SUPERSEDES", SUP, "replaced by the new cache"),
    ]
    m = make_memory(supersedes=[SUP], relations=[Relation("DEPENDS_ON", DEP)])
    assert m.all_relations() == [Relation("DEPENDS_ON", DEP), Relation("SUPERSEDES", SUP)]


def test_topic_and_file_keys() -> None:
    assert topic_keys(["Auth Tokens", "auth_tokens", "  ", "AUTH  tokens", "Caching"]) == [
        "auth-tokens",
        "caching",
    ]
    assert file_keys([" src/a.py", "src/a.py", "", "src/"]) == ["src/a.py", "src/"]
    assert file_filter(["src/a.py", "docs/", "b.md"]) == (["src/a.py", "b.md"], ["docs/"])


def test_ref_lookup_rule() -> None:
    assert ref_lookup("   ") is None
    short = ref_lookup(" 01jc ")
    assert short is not None and short.id == "01JC" and short.path == "01jc" and short.prefix == "01JC"
    too_short = ref_lookup("01j")
    assert too_short is not None and too_short.prefix is None and too_short.id == "01J"
    path = ref_lookup(".ccmemory/decisions/x.md")
    assert path is not None and path.path == ".ccmemory/decisions/x.md"
    assert PREFIX_MIN == 4 and PREFIX_LIMIT == 20


def test_derive_from_payload() -> None:
    m = make_memory(
        "decision",
        "Use httpOnly cookies",
        topics=["Auth Tokens", "auth_tokens", "security"],
        files=[" src/auth.py ", "src/auth.py"],
        supersedes=[SUP],
        relations=[Relation("DEPENDS_ON", DEP, "needs it"), Relation("SUPERSEDES", SUP)],
        applies_to=["other-project", "this-project"],
    )
    text = payload(m)
    d = derive(text, path=".ccmemory/x.md", status="curated", project="this-project", hash="h1", adder="bob")
    assert d.memory.id == m.id and d.memory.status == "curated" and d.memory.hash == "h1"
    assert d.memory.author is None and d.author_git == "bob" and d.author == "bob"
    assert d.topics == ["auth-tokens", "security"]
    assert d.files == ["src/auth.py"]
    assert d.edges == [Edge(m.id, "DEPENDS_ON", DEP, "needs it"), Edge(m.id, "SUPERSEDES", SUP, None)]
    assert d.applies_to == ["other-project"]  # the project itself is not a target
    im = IndexedMemory.from_payload(
        json.loads(text), path=".ccmemory/x.md", status="curated", project="this-project", hash="h1"
    )
    assert d.columns == json_columns(im)
    assert d.text_hash == text_hash(im)
    # the same from the parsed dict as from the text
    assert derive(
        json.loads(text), path=".ccmemory/x.md", status="curated", project="this-project", hash="h1"
    ) == (derive(text, path=".ccmemory/x.md", status="curated", project="this-project", hash="h1"))


def test_frontmatter_author_wins_over_git_adder() -> None:
    m = make_memory(author="alice")
    d = derive(payload(m), path="p.md", status="developmental", project="p", hash="h", adder="bob")
    assert d.memory.author == "alice" and d.author_git is None and d.author == "alice"


def test_fields_text_follows_the_type() -> None:
    m = make_memory("failed_approach", "Tried a global lock", fields={"lesson": "deadlocked under load"})
    d = derive(payload(m), path="p.md", status="curated", project="p", hash="h")
    assert "deadlocked under load" in d.fields_text
