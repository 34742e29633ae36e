from __future__ import annotations

import time

import pytest

from ccmemory.core.model import RELATION_TYPES, TYPES, id_time, is_ulid, new_id, validate

BASE = {
    "id": "01JD3K8X9QF2B7M4R6T0VWYZAC",
    "type": "decision",
    "title": "T",
    "created": "2026-11-20T14:03:11Z",
}


def test_fourteen_types_with_their_folders_and_fields() -> None:
    assert len(TYPES) == 14
    assert TYPES["failed_approach"].folder == "failed-approaches"
    assert TYPES["correction"].fields == ("wrong_belief", "right_belief", "severity")
    assert TYPES["reference"].fields == ("uri", "ref_type")
    # the co-thinker types (issue 31), with the seed's fields
    assert TYPES["concept"].folder == "concepts" and TYPES["concept"].fields == (
        "name",
        "definition",
        "domain",
    )
    assert TYPES["hypothesis"].folder == "hypotheses"
    assert TYPES["hypothesis"].fields == ("statement", "prediction", "status")
    assert TYPES["hypothesis"].enums["status"] == ("open", "supported", "refuted")
    assert TYPES["knowledge_gap"].folder == "knowledge-gaps"
    assert TYPES["knowledge_gap"].fields == ("question", "would_close", "answer")
    assert "SUPERSEDES" in RELATION_TYPES and len(RELATION_TYPES) == 9
    assert {"SUPPORTS", "REFUTES"} <= set(RELATION_TYPES)


def test_ids_are_ulids_sortable_by_time_and_unique() -> None:
    ids = [new_id() for _ in range(2000)]
    assert all(is_ulid(i) for i in ids)
    assert len(set(ids)) == 2000
    assert ids == sorted(ids)  # monotonic within a process, even in the same millisecond
    early = new_id(now_ms=1_700_000_000_000)
    assert early < ids[0]
    assert abs(id_time(ids[0]).timestamp() - time.time()) < 60


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"type": "ruling"}, "unknown type 'ruling'"),
        ({"id": None}, "missing 'id'"),
        ({"title": "  "}, "missing 'title'"),
        ({"created": "yesterday-ish"}, "bad timestamp"),
        ({"confidence": 1.5}, "outside 0..1"),
        ({"confidence": "high"}, "must be a number"),
        ({"relations": [{"type": "LIKES", "target": "X"}]}, "unknown relation type 'LIKES'"),
        ({"relations": [{"type": "CITES"}]}, "has no target"),
        (
            {"type": "hypothesis", "status": "proven"},
            "status 'proven' is not one of: open, supported, refuted",
        ),
        ({"topics": {"a": 1}}, "'topics' must be a list"),
        ({"source": "guess"}, "unknown source"),
    ],
)
def test_validation_errors_are_clear(change: dict[str, object], message: str) -> None:
    meta = {**BASE, **change}
    meta = {k: v for k, v in meta.items() if v is not None}
    errors = [p for p in validate(meta) if p.level == "error"]
    assert errors, meta
    assert any(message in p.message for p in errors), [p.message for p in errors]


def test_enum_fields_checked_per_type() -> None:
    meta = {**BASE, "type": "correction", "severity": "apocalyptic"}
    assert any("severity" in p.message for p in validate(meta) if p.level == "error")
    ok = {**BASE, "type": "correction", "severity": "critical"}
    assert not [p for p in validate(ok) if p.level == "error"]


def test_non_ulid_id_is_an_error() -> None:
    # ids become page names and index keys: only the ULID form is accepted (docs/security.md)
    for bad in ("my-hand-written-id", "../../../../tmp/victim/NOTES", "01HZZZZZZZZZZZZZZZZZZZZZZ/"):
        problems = validate({**BASE, "id": bad})
        assert [(p.level, p.key) for p in problems] == [("error", "id")], bad
