"""`ccmemory watch` keeps the reference tree indexed: add, edit and delete a reference file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.lifecycle_util import add_memory, cli, commit_all
from tests.test_lifecycle_watch import WatchProc


def sections(repo: Path, query: str) -> list[str]:
    out = cli(repo, "search", "--reference", "--mode", "text", query, "--json").stdout
    return [h["id"] for h in json.loads(out)]


def test_watch_indexes_reference_edits(repo: Path) -> None:
    add_memory(repo, "A memory so the vault is not empty")
    commit_all(repo, "base")
    w = WatchProc(repo, "--reconcile", "0", "--debounce", "0.3")
    try:
        w.wait_pass(lambda p: p["reason"] == "start")
        ref = repo / ".ccmemory" / "reference" / "concepts"
        ref.mkdir(parents=True)
        (ref / "birds.md").write_text("# Birds\n\n## Kookaburra\n\nLaughs at dawn in the gum trees.\n")
        w.wait_pass(lambda p: (p.get("reference") or {}).get("added") == 1)
        assert sections(repo, "laughs at dawn") == ["concepts/birds.md#kookaburra"]
        (ref / "birds.md").write_text("# Birds\n\n## Lorikeet\n\nRainbow plumage, loud flocks.\n")
        w.wait_pass(lambda p: (p.get("reference") or {}).get("updated") == 1)
        assert sections(repo, "rainbow plumage") == ["concepts/birds.md#lorikeet"]
        assert sections(repo, "laughs at dawn") == []
        (ref / "birds.md").unlink()
        w.wait_pass(lambda p: (p.get("reference") or {}).get("removed") == 1)
        assert sections(repo, "rainbow plumage") == []
    finally:
        w.stop()
