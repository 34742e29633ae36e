"""Optional index capabilities are declared on the Index protocol: every backend has every
member, and one without a capability gives the documented "absent" answer (no getattr probing)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from ccmemory.app.sync import reindex
from ccmemory.core.vault import Vault
from ccmemory.index.base import Index
from ccmemory.index.sqlite import SQLiteIndex
from tests.conftest import init_git, make_memory
from tests.neo4j_server import Neo4jServer


def protocol_members() -> set[str]:
    names: set[str] = set()
    for klass in Index.__mro__:
        if klass is object:
            continue
        names |= {n for n in vars(klass) if not n.startswith("_")}
        names |= set(getattr(klass, "__annotations__", {}))
    return names - {"copy_with"}


def assert_declares_everything(idx: Any) -> None:
    missing = sorted(n for n in protocol_members() if not hasattr(idx, n))
    assert not missing, f"{type(idx).__name__} lacks {missing}"


def vault_with_memories(root: Path, n: int = 3) -> Vault:
    init_git(root)
    (root / ".ccmemory").mkdir()
    vault = Vault(root)
    for k in range(n):
        vault.write_new(make_memory("fact", f"Fact {k} about the cache"))
    return vault


def test_protocol_lists_the_optional_capabilities() -> None:
    members = protocol_members()
    for name in (
        "scope",
        "moved_aside",
        "parse_ahead",
        "concurrent_reads",
        "server_info",
        "healthy",
        "reset_corrupt",
        "fresh_beside",
        "swap_in",
    ):
        assert name in members


def test_sqlite_declares_every_capability(tmp_path: Path) -> None:
    idx = SQLiteIndex(tmp_path / "index.db")
    try:
        assert_declares_everything(idx)
        assert idx.server_info() is None  # no server
        assert idx.scope is None  # records are not scoped per user
        assert idx.moved_aside is None
        assert idx.parse_ahead is False  # apply runs in-process: no parsing thread
        assert idx.concurrent_reads is False  # one connection: a search's halves run in turn
        assert idx.healthy() is True
        vault = vault_with_memories(tmp_path / "repo")
        reindex(vault, idx, "p")
        fresh = idx.fresh_beside("p")
        assert fresh is not None  # it has the rebuild-beside capability
        reindex(vault, fresh, "p")
        idx.swap_in(fresh)
        assert idx.stats("p")["memories"] == 3
        other = idx.fresh_beside("p")
        assert other is not None
        idx.discard(other)
        assert not Path(other.location).exists()
    finally:
        idx.close()
    # a read-only view (cross-project search) has the same members
    ro = SQLiteIndex.open_readonly(tmp_path / "index.db")
    try:
        assert_declares_everything(ro)
        assert ro.moved_aside is None and ro.scope is None
    finally:
        ro.close()


@pytest.mark.neo4j
def test_neo4j_declares_every_capability(neo4j_server: Neo4jServer, tmp_path: Path) -> None:
    from ccmemory.index.neo4j import Neo4jIndex

    idx = Neo4jIndex(neo4j_server.uri, neo4j_server.user, neo4j_server.password, scope="alice@example.com")
    project = "cap-" + uuid.uuid4().hex[:8]
    try:
        assert_declares_everything(idx)
        info = idx.server_info()
        assert info is not None and info["version"].startswith("5.")
        assert "memory_id" in info["indexes"] and "ident_key" in info["constraints"]
        assert idx.scope == "alice@example.com"
        assert idx.parse_ahead is True  # apply waits on the server
        assert idx.concurrent_reads is True  # a hybrid search's text half runs aside
        assert idx.moved_aside is None and idx.reset_corrupt() is None and idx.healthy() is True
        vault = vault_with_memories(tmp_path / "repo")
        reindex(vault, idx, project)
        assert idx.fresh_beside(project) is None  # no rebuild beside: --full clears and refills
        rep = reindex(vault, idx, project, full=True)
        assert not rep.errors and idx.stats(project)["memories"] == 3
    finally:
        idx.clear(project)
        idx.close()
