"""The rebuildable index: one contract (base.py), two backends (sqlite.py, the neo4j/ package)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ccmemory.core.config import Config
    from ccmemory.index.base import Index


def open_index(config: Config, vault_dir: Path) -> Index:
    """The configured backend. Neo4j is imported only when chosen (the driver is not light)."""
    if config.backend == "neo4j":
        from ccmemory.core import extras

        if extras.missing("neo4j"):  # the driver is an extra: an unusable index, named as such
            from ccmemory.index.base import IndexUnavailable

            raise IndexUnavailable(
                extras.message("neo4j", extras.missing("neo4j")), extras.install_command("neo4j")
            )
        from ccmemory.index.neo4j.index import Neo4jIndex  # type: ignore[import-not-found,unused-ignore]

        index: Index = Neo4jIndex.connect(config)
        return index
    import os

    from ccmemory.index.base import IndexUnavailable
    from ccmemory.index.sqlite import SQLiteIndex

    if os.path.islink(vault_dir / "local"):  # a link committed in a pull request: never write through it
        raise IndexUnavailable(
            f"{vault_dir / 'local'} is a symlink: the index cache must be a real, git-ignored folder "
            "(remove the link; `ccmemory check` reports it)"
        )
    return SQLiteIndex(vault_dir / "local" / "index.db")
