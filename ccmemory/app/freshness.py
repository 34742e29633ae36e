"""A cheap check on read: has git moved since the last reindex?

The git hooks `init` installs reindex after commit, merge, checkout and rebase. A fresh clone has
no hooks, `init --no-git-hooks` installs none, and `git reset` runs none: then the index still
holds the old status (a memory merged to main still shown as developmental, a reset-away memory
still found). Before a CLI command reads the index, `moved(svc)` compares the HEAD and main-branch
commits stored by the last reindex (`gitdelta.State`) with git's (two `git rev-parse` calls, a few
ms); when they differ the command reindexes first (incremental: it asks git what changed).

Not covered: working-tree changes that move no commit (`git stash pop`, an editor saving a memory
file): `ccmemory watch` and the next hook or `reindex` see those. Except for the files the index
left out as invalid: a change to one of those (`git merge --abort` after a conflict in a memory
file, a hand fix) is caught by comparing their content with the index's record (a handful of
files, usually none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ccmemory.app.service import Service


#: `moved`'s answer for an index no reindex has finished here yet (a new clone or worktree)
NOT_BUILT = "the index was not built yet"


def moved(svc: Service) -> str | None:
    """Why the index is behind git ("HEAD moved", "main moved"), or None (or when unknown)."""
    from ccmemory.app.gitdelta import State
    from ccmemory.core import gitstate

    try:
        stored = svc.index.sync_state(svc.project)
    except Exception:  # an index that cannot answer: the command reports it when it reads
        return None
    before = State.from_dict(stored) if stored else None
    if before is None:
        # never built here (a new worktree: its post-checkout reindex may be running, and a read
        # answered from the half-built index with nothing); else an older index or a reindex cut
        # short: nothing to compare with
        return NOT_BUILT if svc.never_built() else None
    if not before.settled:  # git rewrote files while the last reindex read them
        return "the working tree changed"
    root = svc.vault.root
    if gitstate.head_commit(root) != before.head:
        return "HEAD moved"
    if gitstate.main_commit(root, before.main_branch) != before.main:
        return f"{before.main_branch} moved"
    return _invalid_file_changed(svc)


#: invalid files looked at by `moved` (usually none; a merge conflict leaves a few), and the most
#: of each that is read
_INVALID_CHECKED = 20
_MAX_READ = 1024 * 1024


def _invalid_file_changed(svc: Service) -> str | None:
    """A memory file the index left out as invalid has other content on disk now (no commit
    moved: `git merge --abort` put back the version without conflict markers, a hand fix was
    saved), so the index still leaves the memory out until a reindex. By content, not stat: a
    record the git shortcut wrote has no stat (-1), and a checkout rewrites the stat alone."""
    import hashlib
    import os

    try:
        count, paths = svc.index.invalid_files(svc.project, limit=_INVALID_CHECKED)
        if not count:
            return None
        states = svc.index.file_states(svc.project, paths)
    except Exception:  # an index that cannot answer: the command reports it when it reads
        return None
    from ccmemory.core.walk import UnsafeFile, read_regular

    for path, state in states.items():
        full = svc.vault.abs(path)
        if not os.path.lexists(full):
            return "an invalid memory file was removed"
        try:  # never follows a symlink nor blocks on a FIFO (a file from a pull request)
            data = read_regular(full, _MAX_READ)
        except (UnsafeFile, OSError, ValueError):
            continue  # still not readable as a memory file: nothing a reindex would change
        if hashlib.sha256(data).hexdigest() != state.hash:
            return "an invalid memory file changed"
    return None
