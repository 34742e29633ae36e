"""The pre-commit hook's work (`python -m ccmemory.features.lifecycle.precommit ROOT`): write `id` and
`created` into staged memory files that lack them, and stage the result, like a formatter.

Only files whose staged content is exactly the working-tree content are touched (a partially
staged file is left alone, with a note: staging it again would commit the unstaged part too).
Never fails the commit: any problem is a line on stderr and exit status 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ccmemory.core.gitstate import GitError, git
from ccmemory.features.lifecycle.gitread import is_memory_rel


def _split(out: str) -> list[str]:
    return [p for p in out.split("\0") if p]


def run(root: Path) -> list[str]:
    """Fix the staged memory files; returns one line per file fixed or skipped."""
    from ccmemory.core.vault import Vault
    from ccmemory.features.checks import fix_file

    staged = [
        rel
        for rel in _split(
            git(root, "diff", "--cached", "--name-only", "-z", "--diff-filter=AM", "--", ".ccmemory/")
        )
        if is_memory_rel(rel)
    ]
    if not staged:
        return []
    unstaged = set(_split(git(root, "diff", "--name-only", "-z", "--", *staged)))
    vault = Vault(root)
    lines: list[str] = []
    fixed: list[str] = []
    for rel in staged:
        if rel in unstaged:
            lines.append(f"ccmemory: {rel} is partly staged; run `ccmemory check --fix` and stage it")
            continue
        done = fix_file(vault, root / rel, rel)
        if done is not None:
            fixed.append(rel)
            lines.append(f"ccmemory: {rel}: added {done.describe()}")
    if fixed:
        git(root, "add", "--", *fixed)
    return lines


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else ".").resolve()
    try:
        for line in run(root):
            print(line, file=sys.stderr)
    except (GitError, OSError, ValueError) as exc:
        print(f"ccmemory pre-commit: skipped ({exc})", file=sys.stderr)
    except Exception as exc:  # never block a commit over a bug here
        print(f"ccmemory pre-commit: skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
