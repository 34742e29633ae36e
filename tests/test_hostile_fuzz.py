"""Property-based fuzzing of the frontmatter parser (issue 19, docs/security.md).

Whatever bytes a pull request puts in a memory file, `parse_text` either returns a memory or
raises MemoryFileError (one error line); `check_text` never raises; nothing takes long. And any
memory ccmemory writes reads back equal. Time budget: `max_examples` and a per-example
`deadline` below (about 20 s for the module on the 2-core CI machine).
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccmemory.core.model import TYPES, Memory, new_id
from ccmemory.core.vault import MemoryFileError, check_text, parse_text, render

HEAD = "---\nid: 01JD0000000000000000000001\ntype: fact\ntitle: t\ncreated: 2026-11-20T14:03:11Z\n"

# YAML's structural pieces, tags that must stay inert, and text that is awkward for parsers
TOKENS = [
    "[", "]", "{", "}", ",", ": ", "- ", "? ", "&a ", "&b ", "*a", "*b", "!!python/object:os.system ",
    "!!binary ", "!!set ", "!!omap ", "%YAML 1.1\n", "%TAG ! tag:x,2000:\n", "---\n", "...\n", "|\n", ">-\n",
    "'", '"', "\\", "#", "\n", "  ", "\t", "key", "id: ", "type: ", "title: ", "created: ", "relations: ",
    "topics: ", "x" * 50, "\u202e", "\ufeff", "\x00", "\x85", "\u2028", "💥", "2026-13-45T99:99:99Z",
    "0o777", ".inf", "~", "<<: *a\n",
]  # fmt: skip

FUZZ = settings(
    max_examples=400,
    deadline=2000,  # ms per example: a YAML bomb or a deep nest would blow it
    suppress_health_check=[HealthCheck.too_slow],
)


def _assert_one_error(text: str) -> None:
    try:
        parse_text(text, "fuzz.md")
    except MemoryFileError as exc:
        assert exc.path == "fuzz.md" and exc.reason and "\n" not in exc.reason.strip("\n")
    check_text(text)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=200))
def test_token_soup_frontmatter(tokens: list[str]) -> None:
    _assert_one_error(HEAD + "".join(tokens) + "\n---\nbody\n")


@FUZZ
@given(st.text(max_size=2000))
def test_arbitrary_text_after_the_fence(text: str) -> None:
    _assert_one_error("---\n" + text)
    _assert_one_error(HEAD + text + "\n---\n")


@FUZZ
@given(st.integers(1, 60_000), st.sampled_from(["[", "{a: ", "- ", "&x [*x, "]))
def test_deep_nesting_is_bounded(depth: int, opener: str) -> None:
    closer = {"[": "]", "{a: ": "}", "- ": "", "&x [*x, ": "]"}[opener]
    _assert_one_error(HEAD + "x: " + opener * depth + "1" + closer * depth + "\n---\n")


@FUZZ
@given(st.integers(2, 30), st.integers(2, 12))
def test_alias_fanout_is_bounded(fanout: int, levels: int) -> None:
    lines = ["l0: &l0 [" + ", ".join(["lol"] * fanout) + "]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * fanout) + "]")
    _assert_one_error(HEAD + "\n".join(lines) + "\n---\n")


# Round-trip text: no surrogates, control characters or Unicode line/paragraph separators (YAML
# folds U+0085/U+2028 into line breaks: a known limit, listed in docs/security.md)
safe_text = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=200)


@FUZZ
@given(
    st.sampled_from(sorted(TYPES)),
    safe_text.filter(lambda t: t.strip() != ""),
    safe_text,
    st.lists(safe_text.filter(lambda t: t.strip() != ""), max_size=5),
)
def test_what_ccmemory_writes_reads_back(mtype: str, title: str, body: str, topics: list[str]) -> None:
    m = Memory(
        id=new_id(),
        type=mtype,
        title=title,
        created=datetime(2026, 11, 20, 14, 3, 11, tzinfo=UTC),
        body=body,
        topics=topics,
    )
    try:
        back = parse_text(render(m), "rt.md").memory
    except MemoryFileError as exc:  # only a title that is blank after YAML folding may be refused
        assert "title" in exc.reason, exc.reason
        return
    assert (back.id, back.type, back.created) == (m.id, m.type, m.created)
    assert back.title == m.title.strip() and back.topics == m.topics  # titles are stripped on read
    assert back.body.strip() == m.body.strip()


def _true_depth(src: str) -> int | None:
    import yaml

    from ccmemory.core.yamlio import _Loader

    depth = best = 0
    loader = _Loader(src)
    try:
        while loader.check_event():
            ev = loader.get_event()
            if isinstance(ev, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                depth += 1
                best = max(best, depth)
            elif isinstance(ev, yaml.SequenceEndEvent | yaml.MappingEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    return best


BLOCK_TOKENS = [
    "- ",
    "-\n",
    "a:",
    "a: ",
    ": ",
    "\n",
    "  ",
    " ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "? ",
    "x",
    "'q'",
    "#",
]


@FUZZ
@given(st.lists(st.sampled_from(BLOCK_TOKENS), max_size=120))
def test_fast_path_depth_bound_is_sound(tokens: list[str]) -> None:
    """The prescan skips the event walk when `_depth_bound` < the limit: it must never undercount."""
    from ccmemory.core.yamlio import _depth_bound

    src = "".join(tokens)
    depth = _true_depth(src)
    if depth is not None:
        assert depth <= _depth_bound(src), src
