"""Time travel: answer from the memories as they stood at a revision (a tag, a commit, a branch).

A throwaway in-memory SQLite index is built from the files at REV, read from git objects
(`ls-tree` + one `cat-file --batch`); the working tree, the current branch and the on-disk index
are never touched.

Status at REV: a memory counts as *curated* when its path is in the main branch's tree at the point
where REV's history meets the main branch, i.e. the tree of `merge-base(main, REV)`. For a commit on
the main branch (a release tag) that is REV itself, so everything at the tag is curated; for a
commit on a feature branch it is the fork point, so memories the branch added are developmental.
Without a main branch everything counts as curated.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ccmemory.core import gitstate
from ccmemory.core.config import Config
from ccmemory.features.lifecycle.gitread import merge_base, records_at, resolve_commit
from ccmemory.index.sqlite import SQLiteIndex

if TYPE_CHECKING:
    from ccmemory.app.service import Service


@dataclass
class Snapshot:
    rev: str
    commit: str
    index: SQLiteIndex
    status_base: str | None  # the commit whose tree decides curated, None = all curated
    count: int


def main_commit(root: Path, configured: str | None) -> str | None:
    branch = gitstate.main_branch(root, configured)
    for ref in (f"refs/heads/{branch}", f"refs/remotes/origin/{branch}"):
        out = gitstate.git(root, "rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False).strip()
        if out:
            return out
    return None


def build_snapshot(root: Path, rev: str, config: Config) -> Snapshot:
    """An in-memory index of the memories at `rev`. Raises GitError for an unknown revision."""
    commit = resolve_commit(root, rev)
    records = records_at(root, commit)
    main = main_commit(root, config.main_branch)
    base = merge_base(root, main, commit) if main else None
    curated = gitstate.curated_paths(root, "", rev=base) if base else None

    def status_of(rel: str) -> str:
        if curated is None:
            return gitstate.CURATED
        return gitstate.CURATED if rel in curated else gitstate.DEVELOPMENTAL

    index = SQLiteIndex(":memory:")
    index.apply(config.project, list(records.values()), [], status_of, None)
    _reuse_vectors(index, root / ".ccmemory" / "local" / "index.db")
    return Snapshot(rev, commit, index, base, len(records))


def _reuse_vectors(index: SQLiteIndex, live_db: Path) -> None:
    """Copy cached embeddings (keyed by embedder and content hash) from the live SQLite index, so
    hybrid search at REV embeds only texts the live index has never seen. Read only; best effort."""
    if not live_db.exists():
        return
    try:
        index.db.execute("ATTACH DATABASE ? AS live", (str(live_db),))
    except Exception:
        return
    try:
        index.db.execute(
            "INSERT OR IGNORE INTO main.vectors(embedder, text_hash, dim, vec)"
            " SELECT v.embedder, v.text_hash, v.dim, v.vec FROM live.vectors v"
            " WHERE v.text_hash IN (SELECT text_hash FROM main.memories)"
        )
    except Exception:
        pass
    finally:
        with contextlib.suppress(Exception):
            index.db.execute("DETACH DATABASE live")


def open_service_at(start: Path | None, rev: str) -> tuple[Service, Snapshot]:
    """A Service over the vault whose index is the snapshot at `rev` (nothing written to disk)."""
    from ccmemory.app.service import Service
    from ccmemory.core.config import load_config
    from ccmemory.core.vault import Vault

    vault = Vault.open(start)
    if not gitstate.is_repo(vault.root):
        raise gitstate.GitError("--at needs a git repository")
    config = load_config(vault.root)
    snap = build_snapshot(vault.root, rev, config)
    return Service(vault, config, snap.index, snapshot=True), snap
