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
from ccmemory.core.layout import VAULT_DIR

CURATED = "curated"
DEVELOPMENTAL = "developmental"


class GitError(CcmemoryError):
    pass


def git(
    root: Path, *args: str, check: bool = True, timeout: float = 30, pass_fds: tuple[int, ...] = ()
) -> str:
    try:
        proc = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=timeout, pass_fds=pass_fds
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args)} timed out") from None
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout


#: Work trees this process found to be inside a git repository. Only "yes" is remembered (a
#: folder can become a repository while a server runs; the reverse needs .git deleted): a
#: SessionStart asked three times, one git process each.
_INSIDE: set[str] = set()


def is_repo(root: Path) -> bool:
    key = str(root)
    if key in _INSIDE:
        return True
    try:
        out = git(root, "rev-parse", "--is-inside-work-tree", check=False, timeout=10)
    except GitError:
        return False
    inside = out.strip() == "true"
    if inside:
        _INSIDE.add(key)
    return inside


def main_branch(root: Path, configured: str | None = None) -> str:
    """The main branch: configured, else init.defaultBranch, origin's HEAD, main, master.

    A candidate is taken only if such a branch exists (locally or on origin); if none exists yet
    (a repository without commits) the first named candidate is returned.
    """
    # one listing gives the branches and where origin's HEAD points (its symref)
    refs: set[str] = set()
    origin_head = ""
    listing = git(
        root,
        "for-each-ref",
        "--format=%(refname) %(symref)",
        "refs/heads",
        "refs/remotes/origin",
        check=False,
    )
    for line in listing.splitlines():
        name, _, target = line.partition(" ")
        refs.add(name)
        if name == "refs/remotes/origin/HEAD":
            origin_head = target.strip()

    def exists(name: str) -> bool:
        return f"refs/heads/{name}" in refs or f"refs/remotes/origin/{name}" in refs

    if configured and exists(configured):  # the usual case: no second git call
        return configured
    candidates = [configured] if configured else []
    default = git(root, "config", "--get", "init.defaultBranch", check=False).strip()
    if default:
        candidates.append(default)
    if origin_head.startswith("refs/remotes/origin/"):
        candidates.append(origin_head.removeprefix("refs/remotes/origin/"))
    candidates += ["main", "master"]
    for name in candidates:
        if exists(name):
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


def curated_among(root: Path, rev: str, paths: list[str]) -> set[str]:
    """Which of these repo-relative paths are in `rev`'s tree (one `ls-tree` of just them;
    names taken literally, never as patterns)."""
    if not paths:
        return set()
    out = git(
        root, "--literal-pathspecs", "ls-tree", "-r", "-z", "--name-only", rev, "--", *paths, check=False
    )
    wanted = set(paths)
    return {p for p in out.split("\0") if p in wanted}


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


# --- what changed (issue 29: a reindex proportional to the change) ---------------------------


def toplevel(root: Path) -> str | None:
    """The working tree's top folder as git prints it; None outside a repository."""
    try:
        out = git(root, "rev-parse", "--show-toplevel", check=False, timeout=10)
    except GitError:
        return None
    return out.strip() or None


def head_commit(root: Path) -> str | None:
    """HEAD's commit id; None before the first commit."""
    return git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False).strip() or None


def main_commit(root: Path, branch: str) -> str | None:
    """The commit the curated set is read from (`curated_paths`); None when the branch has none."""
    return _main_ref(root, branch)


def changed_between(root: Path, old: str, new: str, pathspecs: list[str]) -> list[str] | None:
    """Repo-relative paths that differ between two commits (one `git diff`); None when git
    cannot tell (a commit no longer exists)."""
    try:
        out = git(root, "diff", "--name-only", "-z", "--no-renames", old, new, "--", *pathspecs, check=True)
    except GitError:
        return None
    return [p for p in out.split("\0") if p]


def dirty_paths(root: Path, pathspecs: list[str]) -> list[str] | None:
    """Every path git reports as not equal to HEAD (staged, modified, deleted, conflicted),
    untracked or ignored, each file listed on its own (one `git status`); None on failure."""
    try:
        out = git(
            root,
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignored=traditional",
            "--no-renames",
            "--",
            *pathspecs,
            check=True,
            timeout=60,
        )
    except GitError:
        return None
    # "XY path" entries; with --no-renames no entry carries a second path
    return [entry[3:] for entry in out.split("\0") if len(entry) > 3]
