"""What git says about memory files: the main branch, the curated set, who added a file.

Status is derived, never stored in a file: curated = the path is in the main branch's tree.
These run plain `git` subprocesses (a handful per reindex, never one per file): all of ccmemory
drives git through its CLI (see docs/architecture.md, "Git"), never through a Python binding.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ccmemory.core.errors import CcmemoryError
from ccmemory.core.vault import VAULT_DIR

CURATED = "curated"
DEVELOPMENTAL = "developmental"


class GitError(CcmemoryError):
    pass


def git(root: Path, *args: str, check: bool = True, timeout: float = 30) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args)} timed out") from None
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout


def is_repo(root: Path) -> bool:
    try:
        out = git(root, "rev-parse", "--is-inside-work-tree", check=False, timeout=10)
    except GitError:
        return False
    return out.strip() == "true"


def main_branch(root: Path, configured: str | None = None) -> str:
    """The main branch: configured, else init.defaultBranch, origin's HEAD, main, master.

    A candidate is taken only if such a branch exists (locally or on origin); if none exists yet
    (a repository without commits) the first named candidate is returned.
    """
    refs = set(
        git(
            root, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes/origin", check=False
        ).split()
    )
    candidates: list[str] = []
    if configured:
        candidates.append(configured)
    default = git(root, "config", "--get", "init.defaultBranch", check=False).strip()
    if default:
        candidates.append(default)
    origin_head = git(root, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD", check=False).strip()
    if origin_head.startswith("refs/remotes/origin/"):
        candidates.append(origin_head.removeprefix("refs/remotes/origin/"))
    candidates += ["main", "master"]
    for name in candidates:
        if f"refs/heads/{name}" in refs or f"refs/remotes/origin/{name}" in refs:
            return name
    return candidates[0]


def _main_ref(root: Path, branch: str) -> str | None:
    for ref in (f"refs/heads/{branch}", f"refs/remotes/origin/{branch}"):
        out = git(root, "rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False).strip()
        if out:
            return out
    return None


def curated_paths(root: Path, branch: str, rev: str | None = None) -> set[str]:
    """Repo-relative paths of memory files in the main branch's tree (one git call)."""
    ref = rev or _main_ref(root, branch)
    if ref is None:
        return set()
    out = git(root, "ls-tree", "-r", "-z", "--name-only", ref, "--", VAULT_DIR + "/", check=False)
    return {p for p in out.split("\0") if p.endswith(".md")}


def adders(root: Path) -> dict[str, str]:
    """Path -> email of the commit that added it, for files without an `author:` (one git call)."""
    out = git(
        root,
        "log",
        "--diff-filter=A",
        "--format=%x01%ae",
        "--name-only",
        "-z",
        "--",
        VAULT_DIR + "/",
        check=False,
        timeout=60,
    )
    result: dict[str, str] = {}
    for block in out.split("\x01")[1:]:
        parts = [p.strip("\n") for p in block.split("\0") if p.strip("\n")]
        if not parts:
            continue
        head = parts[0].split("\n")
        email = head[0]
        names = head[1:] + parts[1:]
        for name in names:
            result.setdefault(name, email)  # newest first: keep the latest add (after a re-add)
    return result


def current_branch(root: Path) -> str | None:
    out = git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).strip()
    return out or None


def user_email(root: Path) -> str | None:
    return git(root, "config", "--get", "user.email", check=False).strip() or None


@dataclass(frozen=True)
class GitView:
    """One snapshot of git facts used by a reindex."""

    in_repo: bool
    main_branch: str | None
    curated: frozenset[str] | None  # None: outside git, everything is curated

    def status_of(self, rel_path: str) -> str:
        if self.curated is None:
            return CURATED
        return CURATED if rel_path in self.curated else DEVELOPMENTAL


def snapshot(root: Path, configured_main: str | None = None) -> GitView:
    if not is_repo(root):
        return GitView(False, None, None)
    branch = main_branch(root, configured_main)
    return GitView(True, branch, frozenset(curated_paths(root, branch)))
