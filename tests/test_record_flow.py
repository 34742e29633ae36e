"""Recording a memory indexes the bytes it wrote (issue 26: data flows one way, no read back
through sync), and what it indexes is what a reindex of the file gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccmemory.app import sync
from ccmemory.app.service import Service
from ccmemory.core.model import Relation
from ccmemory.index.sqlite import SQLiteIndex
from tests.conftest import make_memory
from tests.test_index_conformance import comparable_dump


def test_record_indexes_what_it_wrote_without_reading_it_back(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_read_back(*_: object, **__: object) -> bytes:
        raise AssertionError("Service.record read the file back")

    svc = Service.open(repo)
    try:
        monkeypatch.setattr(sync, "read_bytes_checked", no_read_back)
        first = svc.record(
            make_memory("decision", "Keep sessions in Redis", topics=["auth"], files=["src/a.py"])
        )
        second = make_memory(
            "correction",
            "Sessions are not lost on deploy",
            fields={"wrong_belief": "a deploy logs everyone out", "right_belief": "sessions survive"},
            relations=[Relation("RELATES_TO", first.memory.id, "same subject")],
        )
        rec = svc.record(second)
        assert first.indexed and rec.indexed, rec.notice
        monkeypatch.undo()
        recorded = svc.index.dump(svc.project)
    finally:
        svc.close()
    fresh = SQLiteIndex(repo / "fresh.db")
    try:
        sync.reindex(svc.vault, fresh, svc.project)
        rebuilt = fresh.dump(svc.project)
    finally:
        fresh.close()
    mine, theirs = comparable_dump(recorded), comparable_dump(rebuilt)
    mine.pop("file_rows"), theirs.pop("file_rows")  # mtimes differ: recorded ones are "racy" (-1)
    assert mine == theirs
