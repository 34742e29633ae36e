"""Memory-only promotion: put a branch's `.ccmemory/` changes on the main branch, nothing else.

Everything is git plumbing on a temporary index file (`GIT_INDEX_FILE`): `read-tree` of main,
`update-index --index-info` with the branch's memory blobs, `write-tree`, `commit-tree`, then
`update-ref` with the expected old value (so a concurrent change to main makes it fail instead of
being lost). The working tree, the real index and the current branch are never touched.

The commit has ONE parent (main). It is deliberately not a merge commit with the branch as second
parent: that would tell git the branch's code is already merged, and a later `git merge` of the
branch would silently drop its code changes. A later full merge of the branch is clean, because
the memory files are identical on both sides. The commit message names the branch and its commit
in a `Ccmemory-Promoted-From:` trailer.

Conflicts (a path the branch changed that main also changed differently since the merge base) make
promotion refuse, listing the paths; nothing is written in that case.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ccmemory.core import gitstate
from ccmemory.core.errors import CcmemoryError
from ccmemory.core.gitstate import GitError
from ccmemory.core.layout import LOCAL_DIR, VAULT_DIR
from ccmemory.features.lifecycle.gitread import is_memory_rel, merge_base, resolve_commit

ZERO = "0" * 40


class PromoteError(CcmemoryError):
    pass


@dataclass
class PromoteResult:
    branch: str
    main: str
    old_main: str
    new_main: str | None  # None: nothing promoted (or dry run)
    changes: list[tuple[str, str]] = field(default_factory=list)  # (A|M|D, path)
    dry_run: bool = False

    @property
    def memories(self) -> int:
        return sum(1 for _, p in self.changes if is_memory_rel(p))


def _run(root: Path, args: list[str], env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=root,
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, **(env or {})},
        timeout=60,
    )
    if proc.returncode != 0:
        raise GitError(f"git {' '.join(args[:2])}: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout


def _tree_entries(root: Path, rev: str) -> dict[str, tuple[str, str]]:
    out = _run(root, ["ls-tree", "-r", "-z", "--full-tree", rev, "--", VAULT_DIR + "/"])
    entries: dict[str, tuple[str, str]] = {}
    for item in out.split("\0"):
        if item:
            meta, _, path = item.partition("\t")
            mode, _kind, oid = meta.split()
            entries[path] = (mode, oid)
    return entries


def _checked_out_in(root: Path, branch: str) -> str | None:
    out = gitstate.git(root, "worktree", "list", "--porcelain", check=False)
    current = None
    for line in out.splitlines():
        if line.startswith("worktree "):
            current = line[len("worktree ") :]
        elif line == f"branch refs/heads/{branch}":
            return current or "?"
    return None


def promote(
    root: Path, branch: str | None = None, *, configured_main: str | None = None, dry_run: bool = False
) -> PromoteResult:
    main, src = _branches(root, branch, configured_main)
    main_ref = f"refs/heads/{main}"
    old_main = gitstate.git(root, "rev-parse", "--verify", "--quiet", main_ref, check=False).strip()
    if not old_main:
        raise PromoteError(
            f"there is no local branch {main!r}; create it first (e.g. `git branch {main} origin/{main}`)"
        )
    try:
        src_commit = resolve_commit(root, src)
    except GitError as exc:
        raise PromoteError(str(exc)) from None
    where = _checked_out_in(root, main)
    if where is not None and not dry_run:
        raise PromoteError(
            f"{main} is checked out in {where}; promotion only moves a branch that is not checked out "
            f"(there, run `git merge {src}` or `git checkout {src} -- {VAULT_DIR}` and commit)"
        )
    base = merge_base(root, old_main, src_commit)
    if base is None:
        raise PromoteError(f"{src} and {main} have no common history")

    result = PromoteResult(src, main, old_main, None, dry_run=dry_run)
    info_lines = _plan(root, result, _branch_changes(root, base, src_commit), base)
    if not result.changes or dry_run:
        return result

    tree = _write_tree(root, old_main, info_lines)
    message = _message(result, src_commit, base)
    commit = _run(root, ["commit-tree", tree, "-p", old_main], stdin=message).strip()
    _run(root, ["update-ref", "-m", f"ccmemory promote {src}", main_ref, commit, old_main])
    result.new_main = commit
    return result


def _branches(root: Path, branch: str | None, configured_main: str | None) -> tuple[str, str]:
    """(main branch, branch to promote), refusing what cannot be promoted."""
    if not gitstate.is_repo(root):
        raise PromoteError("promotion needs a git repository")
    main = gitstate.main_branch(root, configured_main)
    src = branch or gitstate.current_branch(root)
    if not src:
        raise PromoteError("HEAD is detached: name the branch to promote with --branch")
    if src in (main, f"refs/heads/{main}"):
        raise PromoteError(f"{src} is the main branch already; name a feature branch with --branch")
    return main, src


def _branch_changes(root: Path, base: str, src_commit: str) -> list[tuple[str, str, str, str]]:
    """(status, path, new mode, new oid) of each vault file the branch changed since `base`,
    machine-local files left out."""
    raw = _run(
        root, ["diff", "--raw", "-z", "--no-renames", "--no-abbrev", base, src_commit, "--", VAULT_DIR + "/"]
    )
    fields = raw.split("\0")
    branch_changes: list[tuple[str, str, str, str]] = []
    for i in range(0, len(fields) - 1, 2):
        meta, path = fields[i], fields[i + 1]
        if not meta.startswith(":"):
            continue
        _om, nm, _oo, no, status = meta[1:].split()
        if path.startswith(f"{VAULT_DIR}/{LOCAL_DIR}/"):
            continue
        branch_changes.append((status[0], path, nm, no))
    return branch_changes


def _plan(
    root: Path, result: PromoteResult, branch_changes: list[tuple[str, str, str, str]], base: str
) -> list[str]:
    """Fill `result.changes` and return the `update-index --index-info` lines; PromoteError listing
    the paths main also changed, differently, since `base`."""
    base_tree = _tree_entries(root, base)
    main_tree = _tree_entries(root, result.old_main)
    conflicts: list[str] = []
    info_lines: list[str] = []
    for status, path, nm, no in branch_changes:
        want = None if status == "D" else (nm, no)
        have = main_tree.get(path)
        if have == want:
            continue  # main already has exactly this
        if have != base_tree.get(path):
            conflicts.append(path)
            continue
        result.changes.append(("D" if want is None else ("M" if have else "A"), path))
        info_lines.append(f"0 {ZERO}\t{path}" if want is None else f"{nm} {no}\t{path}")
    if conflicts:
        src, main = result.branch, result.main
        raise PromoteError(
            f"cannot promote {src}: {len(conflicts)} memory file(s) were also changed on {main} "
            "since the branch forked, differently:\n  "
            + "\n  ".join(conflicts)
            + f"\nnothing was changed; merge {main} into {src} and resolve them, then promote again"
        )
    return info_lines


def _write_tree(root: Path, old_main: str, info_lines: list[str]) -> str:
    """Main's tree with the index lines applied, through a temporary index file."""
    fd, tmp_index = tempfile.mkstemp(prefix="ccmemory-promote-", suffix=".index")
    os.close(fd)
    os.unlink(tmp_index)  # read-tree creates it
    env = {"GIT_INDEX_FILE": tmp_index}
    try:
        _run(root, ["read-tree", old_main], env)
        _run(root, ["update-index", "--index-info"], env, stdin="\n".join(info_lines) + "\n")
        return _run(root, ["write-tree"], env).strip()
    finally:
        if os.path.exists(tmp_index):
            os.unlink(tmp_index)


def _message(result: PromoteResult, src_commit: str, base: str) -> str:
    n, src = result.memories, result.branch
    listing = "\n".join(f"  {s} {p}" for s, p in result.changes[:50])
    more = f"\n  ... and {len(result.changes) - 50} more" if len(result.changes) > 50 else ""
    return (
        f"ccmemory: promote {n} memor{'y' if n == 1 else 'ies'} from {src}\n\n"
        f"Memory files only (.ccmemory/), relative to the merge base {base[:12]}:\n"
        f"{listing}{more}\n\nCcmemory-Promoted-From: {src} {src_commit}\n"
    )
