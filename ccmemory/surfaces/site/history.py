"""Git history of memory files for the site: who changed each file, when, in which commit.

One bounded `git log` over `.ccmemory/` gives the history of every file at once (a per-file
`git log --follow` would cost one process per memory: about 10 s for 1k memories). Renames are
followed the way `--follow` does: walking from the newest commit back, a rename `old -> new`
makes the older commits of `old` part of the history of the file now at `new`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ccmemory.core.gitstate import GitError, git, is_repo
from ccmemory.core.layout import VAULT_DIR

MAX_COMMITS = 5000  # bound on the one git call
PER_FILE = 25  # history entries shown per memory


@dataclass(frozen=True)
class Change:
    commit: str
    author: str
    email: str
    date: str  # ISO-8601 from git (%aI)
    subject: str
    status: str  # A (added), M (modified), R (renamed), ...
    path: str  # the file's path in that commit

    @property
    def short(self) -> str:
        return self.commit[:10]


def file_histories(
    root: Path, paths: Iterable[str], *, max_commits: int = MAX_COMMITS
) -> dict[str, list[Change]]:
    """Current repo-relative path -> its changes, newest first (empty outside git)."""
    wanted = set(paths)
    result: dict[str, list[Change]] = {p: [] for p in wanted}
    if not wanted or not is_repo(root):
        return result
    try:
        out = git(
            root,
            "log",
            f"--max-count={max_commits}",
            "-M",
            "--no-color",
            "--name-status",
            "-z",
            "--format=%x01%H%x00%an%x00%ae%x00%aI%x00%s%x00",
            "--",
            VAULT_DIR + "/",
            check=False,
            timeout=120,
        )
    except GitError:
        return result
    alias = {p: p for p in wanted}  # path as of the commit being read -> current path
    for block in out.split("\x01")[1:]:
        fields = block.split("\x00")
        if len(fields) < 6:
            continue
        sha, name, email, date, subject = (f.strip("\n") for f in fields[:5])
        rest = [f.strip("\n") for f in fields[5:]]
        rest = [f for f in rest if f]
        i = 0
        while i < len(rest):
            status = rest[i]
            code = status[:1]
            if code in ("R", "C") and i + 2 < len(rest):
                old, new = rest[i + 1], rest[i + 2]
                i += 3
                current = alias.get(new)
                if current is not None:
                    result[current].append(Change(sha, name, email, date, subject, code, new))
                    if code == "R":
                        del alias[new]
                        alias[old] = current
                continue
            if i + 1 >= len(rest):
                break
            path = rest[i + 1]
            i += 2
            current = alias.get(path)
            if current is None:
                continue
            result[current].append(Change(sha, name, email, date, subject, code, path))
            if code == "A":
                del alias[path]  # before its creation the path held a different file (or none)
    return result
