"""polarity.classify: stance, not word overlap, decides duplicate / supersedes / related."""

from __future__ import annotations

import pytest

from ccmemory.features.capture.polarity import classify

SCAFFOLD = "What was decided, in words a teammate understands without the session.\n## Why\n## Consequences"


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        ("Use Postgres for the job queue", "Use Postgres for the job queue", "duplicate"),
        ("Do not use Postgres for the job queue", "Use Postgres for the job queue", "supersedes"),
        ("Use Postgres for the job queue", "Never use Postgres for the job queue", "supersedes"),
        ("Use SQS for the job queue instead of Postgres", "Use Postgres for the job queue", "supersedes"),
        ("Use SQS instead of Postgres", "Use SQS instead of Postgres", "duplicate"),
        ("Use Postgres instead of SQS", "Use SQS instead of Postgres", "supersedes"),
        ("Switch the job queue from Postgres to SQS", "Use Postgres for the job queue", "supersedes"),
        ("Use Postgres for analytics", "Use Postgres for the job queue", "related"),
        ("Do not deploy on Fridays", "Use tabs in Makefiles", "distinct"),
    ],
)
def test_classify_decisions(new: str, old: str, expected: str) -> None:
    got = classify("decision", new, f"{new}\n{SCAFFOLD}", "decision", old, f"{old}\n{SCAFFOLD}")
    assert got == expected


def test_other_types_are_never_linked_automatically() -> None:
    assert classify(
        "insight", "Job queue on Postgres is slow", "", "decision", "Use Postgres for the job queue", ""
    ) == ("distinct")


def test_a_corrections_wrong_belief_marks_the_reversal() -> None:
    old = "the default page size is 50"
    new = "the default page size is 20"
    assert classify("correction", new, new, "correction", old, old, new_rejected=old) == "supersedes"
    assert classify("correction", old, old, "correction", old, old, new_rejected="100") == "duplicate"
