"""What changed since the last reindex, asked of git (issue 29): a reindex proportional to the
change, not to the vault.

A reindex stores a `State` with the index: HEAD's commit, the main branch's commit and every
path `git status` listed then (modified, staged, untracked, ignored). The next reindex asks git
again and only looks at

- the paths that differ between the indexed HEAD and HEAD now (`git diff`),
- the paths `git status` lists now, and those it listed last time (a hand edit since reverted),

and refreshes status (curated/developmental) only where the main branch's tree changed. Why that
is enough: a path in none of these sets was equal to the indexed HEAD's blob at the last reindex,
that blob is unchanged in HEAD now, and the file is equal to HEAD now, so its content is what was
indexed. Each of those paths is then treated exactly as the full walk treats it (stat compared
with the file record, read again when different), so the index ends as a full walk would leave it.

The shortcut is not taken (`plan` returns None, the caller walks the vault) whenever it cannot be
trusted: the last reindex overlapped a git operation that rewrote the working tree (`settled`),
no git or the vault not at the top of its working tree, no state stored (an older index,
a backend without it, a reindex cut short, `reindex --full`, a cleared index), a state from another
ccmemory version, folder, main branch or local author (a config change), a commit that no longer
exists, the first commit, the last walk found symlinks or special files, or more than `MAX_PATHS`
paths to look at. Within the checked paths, anything the walker would report or follow (a symlink,
a folder, a special file, a name nested too deep) also sends the caller back to the walk.

On Neo4j the state belongs to the indexing user's scope: two clones of one user in different
folders store different roots, so each walks after the other has indexed (correct, not faster).

Known limits: a file changed and changed back (to HEAD's content) while a reindex is running, or
indexed meanwhile by an older ccmemory (which neither reads nor forgets the state), can keep the
changed text in the index until the next full walk (`reindex --full`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ccmemory.core import gitstate
from ccmemory.core.layout import VAULT_DIR
from ccmemory.core.vault import FOLDER_TO_TYPE, Vault
from ccmemory.core.walk import MAX_DEPTH

#: paths worth checking one by one; beyond this, walking the vault is as cheap and simpler
MAX_PATHS = 5000
VERSION = 1
PATHSPECS = [f"{VAULT_DIR}/{folder}" for folder in sorted(FOLDER_TO_TYPE)]


@dataclass
class State:
    """What a reindex saw of git, stored with the index (`Index.sync_state`)."""

    root: str
    head: str | None
    main_branch: str
    main: str | None
    local_author: str | None
    dirty: list[str]
    files: int = 0  # memory files on disk after that reindex (for the report's counts)
    version: str = ""
    format: int = VERSION
    #: False: git rewrote the working tree while that reindex read it (`settled`): the files it
    #: read may match no commit, so the next reindex walks the vault instead of trusting `head`
    settled: bool = True
    #: git's index file when captured (`settled` compares it); not stored
    stamp: tuple[str, tuple[int, int, int] | None] | None = field(default=None, compare=False, repr=False)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["stamp"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> State | None:
        try:
            state = cls(**data)
        except TypeError:
            return None
        return state if state.format == VERSION else None


def with_path(stored: dict[str, Any], rel: str) -> dict[str, Any]:
    """The stored state once `rel` was indexed outside a reindex (`Service.record`): the next
    reindex looks at it again. Without this, a memory recorded and then deleted (or changed back)
    before any reindex is in neither `git status` listing, and its record stays in the index."""
    dirty = list(stored.get("dirty") or [])
    if rel in dirty:
        return stored
    files = stored.get("files") or 0
    return {**stored, "dirty": sorted([*dirty, rel]), "files": files + 1}


@dataclass
class Delta:
    """The paths a reindex must look at, and where status may have changed."""

    paths: list[str]  # vault-relative paths to stat (and read when changed)
    status_paths: list[str] = field(default_factory=list)  # the main branch's tree changed here
    head_moved: bool = False  # git authors (`adders`) may have changed


def _version() -> str:
    from ccmemory import __version__

    return str(__version__)


def capture(root: Path, main_branch: str, local_author: str | None) -> State | None:
    """Git's view now (four git calls); None when the shortcut cannot work here at all."""
    top = gitstate.toplevel(root)
    if top is None or os.path.realpath(top) != os.path.realpath(root):
        return None  # outside git, or the vault in a subfolder (git prints repo-relative paths)
    dirty = gitstate.dirty_paths(root, PATHSPECS)
    if dirty is None or len(dirty) > MAX_PATHS:
        return None
    stamp = _index_stamp(root)  # after `git status`, which may itself rewrite the index
    return State(
        root=os.path.realpath(root),
        head=gitstate.head_commit(root),
        main_branch=main_branch,
        main=gitstate.main_commit(root, main_branch),
        local_author=local_author,
        dirty=sorted(dirty),
        version=_version(),
        stamp=stamp,
    )


def _index_stamp(root: Path) -> tuple[str, tuple[int, int, int] | None] | None:
    """(path, (inode, mtime_ns, size)) of git's index file; None when git cannot say."""
    try:
        out = gitstate.git(root, "rev-parse", "--git-path", "index", check=False, timeout=10).strip()
    except gitstate.GitError:
        return None
    if not out:
        return None
    path = out if os.path.isabs(out) else os.path.join(root, out)
    return path, _index_stamp_at(path)  # None: no index yet (nothing ever staged)


def settled(state: State) -> bool:
    """True when git has not touched the working tree since `capture` took `state`.

    Git rewrites working-tree files (checkout, merge, rebase, reset, stash) only while it holds
    `index.lock`, and ends by renaming that lock over the index (a new inode). So when the index
    file is the same one as at capture and no lock is held now, no such operation overlapped the
    reindex, and the files it read are those git's captured view describes. Otherwise (a rebase
    under a hook's background reindex, say) a file may have been read in an intermediate state
    that no later `git diff` or `git status` will point back at. Any index write counts (a
    `git add`, a `git status` refreshing stat data): then the next reindex walks, which is
    slower, never wrong."""
    if state.stamp is None:
        return False
    path, before = state.stamp
    if os.path.lexists(path + ".lock"):
        return False
    return _index_stamp_at(path) == before


def _index_stamp_at(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def plan(root: Path, stored: dict[str, Any] | None, now: State) -> Delta | None:
    """The paths to look at since `stored`; None: walk the whole vault instead."""
    before = State.from_dict(stored) if stored else None
    if before is None or not before.settled or before.head is None or now.head is None:
        return None
    same = (before.root, before.main_branch, before.local_author, before.version)
    if same != (now.root, now.main_branch, now.local_author, now.version):
        return None
    paths = {*before.dirty, *now.dirty}
    if before.head != now.head:
        between = gitstate.changed_between(root, before.head, now.head, PATHSPECS)
        if between is None:
            return None
        paths.update(between)
    status_paths: list[str] = []
    if before.main != now.main:
        if before.main is None or now.main is None:
            return None
        moved = gitstate.changed_between(root, before.main, now.main, PATHSPECS)
        if moved is None:
            return None
        status_paths = sorted(moved)
    if len(paths) + len(status_paths) > MAX_PATHS:
        return None
    return Delta(sorted(paths), status_paths, before.head != now.head)


def entries(vault: Vault, paths: list[str]) -> dict[str, tuple[str, int, int]] | None:
    """rel -> (abs path, mtime_ns, size) of the memory files among `paths`, as the walker would
    list them; None when one of them is something the walker reports or enters (a symlink, a
    folder, a special file, nesting too deep): the caller walks the vault then."""
    found: dict[str, tuple[str, int, int]] = {}
    for rel in paths:
        parts = rel.split("/")
        if len(parts) < 3 or parts[0] != VAULT_DIR or parts[1] not in FOLDER_TO_TYPE:
            return None  # a type folder itself (a symlink or a file in its place)
        if any(p.startswith(".") for p in parts[2:]):
            continue  # the walker ignores dot-names
        if rel.endswith("/") or len(parts) - 3 >= MAX_DEPTH:
            return None
        path = vault.root / rel
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue  # deleted: removed from the index if it was there
        except OSError:
            return None
        if stat.S_ISREG(st.st_mode):
            if rel.endswith(".md"):
                found[rel] = (str(path), st.st_mtime_ns, st.st_size)
        else:
            return None
    return found


class LazyView:
    """`gitstate.GitView.status_of` asking git only when first asked: for the paths a shortcut
    reindex looks at, one `ls-tree` of just those paths; for any other path (another file with
    the same id, say), the whole curated set once."""

    def __init__(self, root: Path, main_branch: str, main: str | None, paths: list[str]) -> None:
        self.root, self.main_branch, self.main = root, main_branch, main
        self.paths = frozenset(paths)
        self._some: frozenset[str] | None = None  # curated among self.paths
        self._all: frozenset[str] | None = None

    def status_of(self, rel_path: str) -> str:
        if self.main is None:
            return gitstate.DEVELOPMENTAL
        if rel_path in self.paths and self._all is None:
            if self._some is None:
                self._some = frozenset(gitstate.curated_among(self.root, self.main, sorted(self.paths)))
            curated = rel_path in self._some
        else:
            if self._all is None:
                self._all = frozenset(gitstate.curated_paths(self.root, self.main_branch, self.main))
            curated = rel_path in self._all
        return gitstate.CURATED if curated else gitstate.DEVELOPMENTAL


class Adders(dict[str, str]):
    """`sync._adders` for a shortcut reindex, asked of git (one `git log` of the whole history)
    only when a memory without `author:` needs it: the git adder, else the local author (a file
    git never saw added). Always true, even before it has asked."""

    def __init__(self, root: Path, local_author: str | None) -> None:
        super().__init__()
        self.root, self.local_author = root, local_author
        self._loaded = False

    def get(self, key: str, default: Any = None) -> Any:
        if not self._loaded:
            self.update(gitstate.adders(self.root))
            self._loaded = True
        found = super().get(key)
        if found is not None:
            return found
        return self.local_author or default  # as sync._adders: an empty local author is none

    def __bool__(self) -> bool:
        return True
