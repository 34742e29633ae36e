"""Git hooks that keep the index level with the files after merges, pulls, switches and rebases,
and a pre-commit hook that adds `id` and `created` to hand-written memory files.

`install(root)` writes post-merge, post-checkout, post-rewrite and post-commit (only when the
commit touched `.ccmemory/`) into the repository's hooks
folder (`git rev-parse --git-path hooks`, so `core.hooksPath` is honoured). A hook that is already
there and is not ours is kept as `<name>.pre-ccmemory` and called first, with the same arguments
and stdin; its exit status is passed on (for post-checkout it becomes `git checkout`'s status,
exactly as before). Our part never fails and never slows git: it starts
`python -m ccmemory.features.lifecycle.background` detached (stdin/stdout/stderr on /dev/null) and exits.
It does nothing when the repository has no `.ccmemory/` or ccmemory is not installed any more.
post-checkout reacts only to branch switches (its third argument is 1), not to file checkouts.
Installing again is idempotent (it only refreshes our own scripts).

The scripts in the repository's `hooks/` folder are the same scripts without a pinned interpreter
(they find `ccmemory` on PATH), for people who manage hooks themselves.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from ccmemory.core import gitstate

HOOK_NAMES = ("post-merge", "post-checkout", "post-rewrite", "post-commit", "pre-commit")
MARKER = "# ccmemory-managed-hook"
CHAIN_SUFFIX = ".pre-ccmemory"

_CONDITIONS = {
    "post-merge": "",
    # $1 old HEAD, $2 new HEAD, $3 = 1 for a branch checkout, 0 for a file checkout
    "post-checkout": '[ "$3" = "1" ] || exit $rc\n',
    # $1 = amend | rebase; the rewritten commits arrive on stdin (left to the chained hook)
    "post-rewrite": "",
    # only when the commit touched .ccmemory/: a memory committed on main becomes curated, a
    # hand-written one gets its id (issue 33: no stale [developmental] after a plain commit)
    "post-commit": "git diff-tree --root --no-commit-id --name-only -r HEAD -- .ccmemory/ 2>/dev/null"
    " | grep -q . || exit $rc\n",
}

_TEMPLATE = """\
#!/bin/sh
{marker} ({name})
# Installed by `ccmemory init` (skip with --no-git-hooks). Starts an incremental reindex of
# .ccmemory/ in the background; it never slows down or fails git. A hook that was here before
# is kept as {name}{chain} and runs first; its exit status is passed on.
CCMEMORY_PYTHON={python}
rc=0
if [ -x "$0{chain}" ]; then
    "$0{chain}" "$@"
    rc=$?
fi
{condition}top=$(git rev-parse --show-toplevel 2>/dev/null) || exit $rc
[ -d "$top/.ccmemory" ] || exit $rc
py=$CCMEMORY_PYTHON
if [ -z "$py" ] || [ ! -x "$py" ]; then
    cmd=$(command -v ccmemory 2>/dev/null) || exit $rc
    py=$(sed -n '1s/^#![[:space:]]*//p' "$cmd" 2>/dev/null)
    [ -n "$py" ] && [ -x "$py" ] || exit $rc
fi
(
    unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX
    cd "$top" && exec "$py" -m ccmemory.features.lifecycle.background "$top"
) </dev/null >/dev/null 2>&1 &
exit $rc
"""


# pre-commit: the formatter step for hand-written memories. It runs in the foreground (it changes
# what is committed) and only when a staged memory file is added or modified: it writes `id` and
# `created` into staged files that lack them and stages the result (`ccmemory.features.lifecycle.precommit`).
# It refuses a commit only when a staged memory file holds a secret (the module exits 3); a
# chained hook's refusal is passed on; anything else (a crash, a missing install) lets it through.
_PRE_COMMIT = """\
#!/bin/sh
{marker} (pre-commit)
# Installed by `ccmemory init` (skip with --no-git-hooks). Adds `id:` and `created:` to staged
# memory files that lack them (hand-written ones), like a formatter, and stages the result. It
# refuses the commit only when a staged memory file holds a secret (`ccmemory check` lists
# them). A hook that was here before is kept as pre-commit{chain} and runs first; if it refuses
# the commit, that is passed on.
CCMEMORY_PYTHON={python}
if [ -x "$0{chain}" ]; then
    "$0{chain}" "$@" || exit $?
fi
top=$(git rev-parse --show-toplevel 2>/dev/null) || exit 0
[ -d "$top/.ccmemory" ] || exit 0
# quotePath off: git would quote a non-ASCII name ("…/cl\\303\\251.md"), which the .md test missed;
# a name git still quotes (a quote, a tab, a newline in it) ends in .md" and is matched too
git -c core.quotePath=false diff --cached --name-only --diff-filter=AM -- "$top/.ccmemory/" 2>/dev/null |
    grep -q '[.]md"\\{{0,1\\}}$' || exit 0
py=$CCMEMORY_PYTHON
if [ -z "$py" ] || [ ! -x "$py" ]; then
    cmd=$(command -v ccmemory 2>/dev/null) || exit 0
    py=$(sed -n '1s/^#![[:space:]]*//p' "$cmd" 2>/dev/null)
    [ -n "$py" ] && [ -x "$py" ] || exit 0
fi
(cd "$top" && "$py" -m ccmemory.features.lifecycle.precommit "$top" </dev/null)
[ $? -eq 3 ] && exit 1
exit 0
"""


def _sh_quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def render(name: str, python: str | None) -> str:
    if name == "pre-commit":
        return _PRE_COMMIT.format(
            marker=MARKER, chain=CHAIN_SUFFIX, python=_sh_quote(python) if python else ""
        )
    return _TEMPLATE.format(
        marker=MARKER,
        name=name,
        chain=CHAIN_SUFFIX,
        python=_sh_quote(python) if python else "",
        condition=_CONDITIONS[name],
    )


def hooks_dir(root: Path) -> Path:
    out = gitstate.git(root, "rev-parse", "--git-path", "hooks").strip()
    path = Path(out)
    return path if path.is_absolute() else (root / path)


def _is_ours(path: Path) -> bool:
    try:
        return MARKER.encode() in path.read_bytes()[:4096]
    except OSError:
        return False


def _write_executable(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.ccmemory-tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRUSR)
    os.replace(tmp, path)


def install(root: Path, python: str | None = None) -> list[str]:
    """Install (or refresh) the hooks. Returns one line per action taken."""
    if not gitstate.is_repo(root):
        return []
    python = python if python is not None else sys.executable
    folder = hooks_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    done: list[str] = []
    for name in HOOK_NAMES:
        path = folder / name
        text = render(name, python)
        if path.is_symlink() or path.exists():
            if _is_ours(path) and not path.is_symlink():
                if path.read_text(encoding="utf-8", errors="replace") != text:
                    _write_executable(path, text)
                    done.append(f"updated git hook {path}")
                continue
            kept = path.with_name(name + CHAIN_SUFFIX)
            if kept.exists() or kept.is_symlink():
                done.append(
                    f"skipped git hook {path}: it is not ccmemory's and {kept.name} exists too "
                    "(merge them by hand)"
                )
                continue
            os.rename(path, kept)
            _write_executable(path, text)
            done.append(f"installed git hook {path} (the existing hook is kept as {kept.name} and chained)")
        else:
            _write_executable(path, text)
            done.append(f"installed git hook {path}")
    return done


def uninstall(root: Path) -> list[str]:
    """Remove our hooks and put chained ones back."""
    folder = hooks_dir(root)
    done: list[str] = []
    for name in HOOK_NAMES:
        path = folder / name
        if path.exists() and _is_ours(path):
            path.unlink()
            kept = path.with_name(name + CHAIN_SUFFIX)
            if kept.exists() or kept.is_symlink():
                os.rename(kept, path)
                done.append(f"restored {path}")
            else:
                done.append(f"removed {path}")
    return done
