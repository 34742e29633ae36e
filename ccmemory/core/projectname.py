"""The project name a vault gets when its config names none: the repository's folder name.

A linked worktree (`git worktree add ../wt-feature`) is another folder of the same repository:
its `.git` is a file pointing into the main checkout's `.git/worktrees/<name>`. It takes the main
checkout's folder name, so every worktree of one repository is one project (on a shared Neo4j
server, a worktree was a project of its own, and its memories were not the repository's). Read
from the file, without running git: the hooks ask for it on every call.
"""

from __future__ import annotations

import os


def default_project(root: str | os.PathLike[str]) -> str:
    """The main checkout's folder name for a linked worktree, else ``root``'s folder name."""
    root = os.path.normpath(os.fspath(root))
    own = os.path.basename(root)
    dotgit = os.path.join(root, ".git")
    if not os.path.isfile(dotgit):
        return own
    try:
        with open(dotgit, encoding="utf-8") as fh:
            first = fh.readline(4096).strip()
    except (OSError, UnicodeDecodeError):
        return own
    if not first.startswith("gitdir:"):
        return own
    gitdir = first[len("gitdir:") :].strip()
    if not os.path.isabs(gitdir):
        gitdir = os.path.join(root, gitdir)
    worktrees = os.path.dirname(os.path.normpath(gitdir))  # <main>/.git/worktrees
    dot = os.path.dirname(worktrees)  # <main>/.git (a submodule's is <super>/.git/modules/…)
    if os.path.basename(worktrees) != "worktrees" or os.path.basename(dot) != ".git":
        return own
    return os.path.basename(os.path.dirname(dot)) or own
