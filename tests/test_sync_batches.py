"""`sync.reindex` over more than one batch, with and without the parse-ahead helper thread
(`sync._ParseAhead`, used when `Index.parse_ahead`: a server-backed index)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ccmemory.app import sync
from ccmemory.app.sync import reindex
from ccmemory.core.model import Relation
from ccmemory.core.vault import Vault
from ccmemory.index.sqlite import SQLiteIndex
from tests.conftest import init_git, make_memory


def _vault(root: Path, n: int) -> Vault:
    init_git(root)
    (root / ".ccmemory").mkdir()
    vault = Vault(root)
    ids: list[str] = []
    for k in range(n):
        rels = [Relation("DEPENDS_ON", ids[-1], "needs it")] if ids and k % 3 == 0 else []
        m = make_memory(
            "decision" if k % 2 else "fact", f"memory number {k}", topics=[f"t{k % 4}"], relations=rels
        )
        vault.write_new(m)
        ids.append(m.id)
    bad = root / ".ccmemory" / "decisions" / "2026-01-01-broken.md"
    bad.write_text("---\nid: [broken\n---\n", encoding="utf-8")
    return vault


def test_small_batches_give_the_same_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path / "r", 11)
    one = SQLiteIndex(tmp_path / "one.db")
    rep_one = reindex(vault, one, "p")
    monkeypatch.setattr(sync, "BATCH", 3)
    many = SQLiteIndex(tmp_path / "many.db")
    many.parse_ahead = True  # as a server-backed index: the helper thread parses ahead
    seen: list[tuple[int, int]] = []
    rep_many = reindex(vault, many, "p", progress=lambda n, total: seen.append((n, total)))
    assert rep_many.as_dict() | {"seconds": 0} == rep_one.as_dict() | {"seconds": 0}
    assert rep_many.added == 12 and len(rep_many.errors) == 1
    assert seen[-1] == (12, 12)
    assert many.dump("p") == one.dump("p")
    # a removal rides with the first batch of the next reindex
    victim = sorted(vault.iter_paths())[0]
    victim.unlink()
    assert reindex(vault, many, "p").removed == 1
    assert reindex(vault, one, "p").removed == 1
    assert many.dump("p") == one.dump("p")
    one.close()
    many.close()


def test_a_parse_failure_is_raised_and_stops_the_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path / "r", 9)
    monkeypatch.setattr(sync, "BATCH", 2)
    real = sync.load_record
    calls: list[str] = []

    def failing(path: Path, rel: str, mtime_ns: int, size: int) -> sync.FileRecord:
        calls.append(rel)
        if len(calls) == 5:
            raise RuntimeError("disk on fire")
        return real(path, rel, mtime_ns, size)

    monkeypatch.setattr(sync, "load_record", failing)
    idx = SQLiteIndex(tmp_path / "x.db")
    idx.parse_ahead = True
    with pytest.raises(RuntimeError, match="disk on fire"):
        reindex(vault, idx, "p")
    for t in threading.enumerate():
        if t.name == "ccmemory-parse":
            t.join(5)
            assert not t.is_alive()
    assert len(calls) == 5  # the helper stopped at the failure
    idx.close()
