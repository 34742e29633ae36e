"""Setting up `.ccmemory/` in a repository (`ccmemory init`, the demo, tests): the committed README
and config.yaml, the git-ignored `local/` folder and its `.gitignore` line. Idempotent."""

from __future__ import annotations

from pathlib import Path

GITIGNORE_LINE = ".ccmemory/local/"
VAULT_README = """\
# Project memory (ccmemory)

Each file in these folders is one memory from work with Claude Code: a decision, correction,
exception, insight, question, failed approach, fact, gotcha, pattern, preference or reference.
They are plain markdown with YAML frontmatter: review them in pull requests and edit them by hand.
A memory on a feature branch is *developmental*; once merged into the main branch it is *curated*.

`local/` holds this machine's index and logs; it is git-ignored and rebuilt by `ccmemory reindex`.
"""


def _ensure_gitignore(root: Path) -> bool:
    path = root / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if any(line.strip() in (GITIGNORE_LINE, "/" + GITIGNORE_LINE) for line in text.splitlines()):
        return False
    import stat

    from ccmemory.core.atomic import UMASK, atomic_write

    new = text + ("" if not text or text.endswith("\n") else "\n") + GITIGNORE_LINE + "\n"
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else UMASK  # a file the user owns
    atomic_write(path, new.encode("utf-8"), overwrite=True, mode=mode)
    return True


def init_vault(root: Path) -> list[str]:
    """Create .ccmemory/ (README, config, local/) and the .gitignore entry. Idempotent."""
    from ccmemory.core.atomic import UMASK, atomic_write
    from ccmemory.core.config import CONFIG_FILE, DEFAULT_CONFIG

    done: list[str] = []
    vdir = root / ".ccmemory"
    (vdir / "local").mkdir(parents=True, exist_ok=True)
    for name, content in (("README.md", VAULT_README), (CONFIG_FILE, DEFAULT_CONFIG)):
        path = vdir / name
        if not path.exists():
            atomic_write(path, content.encode("utf-8"), overwrite=False, mode=UMASK)  # committed, shared
            done.append(f"created .ccmemory/{name}")
    if _ensure_gitignore(root):
        done.append(f"added {GITIGNORE_LINE} to .gitignore")
    return done
