"""The personal vault: memories that apply to every project of one person (docs/cross-project.md).

It is an ordinary vault whose root is the user-level folder (`$CCMEMORY_HOME`, else
`~/.config/ccmemory/`): files under `<home>/.ccmemory/<type folder>/`, its own SQLite index in
`<home>/.ccmemory/local/`, a git repository if the user wants history (`git init` there; the
`.gitignore` keeps the index out). It always uses the embedded index, whatever a project's backend:
it is one person's, never shared.

What goes there: preferences with `scope: global` (`ccmemory new preference … --global`, the MCP
`record_preference` with `scope: "global"`, captured rules a user states about themselves) and
facts about the person's environment. Session-start context shows them in every project, unless a
project memory contradicts one: the project wins there and `ccmemory check` shows the conflict.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccmemory.core.config import Config, personal_home
from ccmemory.core.model import Memory

if TYPE_CHECKING:
    from ccmemory.app.service import Recorded, Service
    from ccmemory.index.base import IndexedMemory

PROJECT = "personal"  # the project name inside the personal vault's own index
CONTEXT_TYPES = ("correction", "preference", "fact")
LABEL = "personal vault"
README = """\
# Personal memory (ccmemory)

Memories that apply to every project you work on: global preferences and facts about your
environment. Session-start context shows them in each project (a project memory that contradicts
one wins in that project). `git init` in the folder above this one keeps their history.
`local/` holds the index; it is rebuilt from these files.
"""


def home(env: dict[str, str] | None = None) -> Path:
    return personal_home(env)


def exists(env: dict[str, str] | None = None) -> bool:
    return (home(env) / ".ccmemory").is_dir()


def init(env: dict[str, str] | None = None) -> Path:
    """Create the personal vault (its README and a .gitignore keeping the index out). Idempotent."""
    from ccmemory.core.atomic import atomic_write

    root = home(env)
    (root / ".ccmemory" / "local").mkdir(parents=True, exist_ok=True)
    for path, text in (
        (root / ".ccmemory" / "README.md", README),
        (root / ".gitignore", ".ccmemory/local/\n"),
    ):
        if not path.exists():
            atomic_write(path, text.encode("utf-8"), overwrite=False)
    return root


def open_service(
    user_id: str | None, env: dict[str, str] | None = None, *, service: type[Service], create: bool = False
) -> Service | None:
    """The personal vault's Service (embedded index), or None when there is no vault yet.
    `service`: the Service class, handed in by the caller (a feature does not import the
    application layer that wires it: issue 26)."""
    from ccmemory.core.vault import Vault

    if not exists(env):
        if not create:
            return None
        init(env)
    root = home(env)
    cfg = Config(project=PROJECT, backend="sqlite", user_id=user_id)
    return service(Vault(root), config=cfg)


def check_outside(project: Path | None, env: dict[str, str] | None = None) -> None:
    """ConfigError when the personal vault's folder is the project's repository or inside it:
    its memories would be committed (and published) with the project (issue 32)."""
    if project is None:
        return
    from ccmemory.core.errors import ConfigError

    root, repo = home(env).resolve(), Path(project).resolve()
    if root == repo or root.is_relative_to(repo):
        raise ConfigError(
            f"the personal vault {home(env)} is inside this repository ({repo}): its memories would be"
            " committed with the project; nothing was written",
            hint="set CCMEMORY_HOME to a folder outside the repository (the default is ~/.config/ccmemory)",
        )


def record_global(
    memory: Memory, env: dict[str, str] | None = None, *, service: type[Service], project: Path | None = None
) -> Recorded:
    """Write a memory to the personal vault (creating it) and index it there. A preference is
    marked `scope: global` (that is what being in the personal vault means). `project`: the
    repository this was asked from; a personal vault inside it is refused (`check_outside`)."""
    check_outside(project, env)
    if memory.type == "preference":
        memory.fields["scope"] = "global"
    svc = open_service(memory.author, env, service=service, create=True)
    assert svc is not None
    with svc:
        return svc.record(memory)


@dataclass
class GlobalMemories:
    memories: list[IndexedMemory]
    notice: str | None = None  # why the personal vault could not be read (never fatal)


def global_memories(
    user_id: str | None, env: dict[str, str] | None = None, *, service: type[Service], limit: int = 40
) -> GlobalMemories:
    """The personal vault's corrections, preferences and facts (reindexed incrementally first:
    the vault is small and edited by hand). Never raises: a problem becomes the notice."""
    try:
        svc = open_service(user_id, env, service=service)
        if svc is None:
            return GlobalMemories([])
        with svc:
            svc.reindex()
            mems = svc.view.query(svc.filters(types=list(CONTEXT_TYPES)), limit=limit)
    except Exception as exc:  # a broken personal vault must never block a session
        return GlobalMemories([], f"personal vault at {home(env)} not read: {type(exc).__name__}: {exc}")
    order = {t: i for i, t in enumerate(CONTEXT_TYPES)}
    mems.sort(key=lambda m: order[m.type])  # stable: newest first within a type
    return GlobalMemories(mems)


# --- conflicts: the project wins in its project ------------------------------------------------------


@dataclass
class Conflict:
    project: Any  # Memory or IndexedMemory of the project
    personal: Any  # the personal vault's memory it overrides
    reason: str


def conflicts(project_mems: Sequence[Any], personal_mems: Sequence[Any]) -> list[Conflict]:
    """Project memories that contradict personal ones. A project memory overrides a personal one
    when it supersedes it or names it CONFLICTS_WITH (explicit), or when their titles oppose
    ("use X" / "don't use X", the heuristic `analysis.contradictions` uses for decisions)."""
    from ccmemory.text.opposition import opposition as _opposition

    out: list[Conflict] = []
    by_id = {m.id: m for m in personal_mems}
    for pm in project_mems:
        explicit = [t for t in pm.supersedes if t in by_id]
        explicit += [r.target for r in pm.relations if r.type == "CONFLICTS_WITH" and r.target in by_id]
        done: set[str] = set()
        for target in explicit:
            if target not in done:
                done.add(target)
                out.append(Conflict(pm, by_id[target], "the project memory supersedes or conflicts with it"))
        for gm in personal_mems:
            if gm.id in done or pm.type not in ("preference", "correction", "decision", "fact"):
                continue
            phrase = _opposition(pm.title, gm.title)
            if phrase:
                done.add(gm.id)
                out.append(Conflict(pm, gm, f"one says to do '{phrase}', the other not to"))
    return out


def check_findings(root: Path, user_id: str | None, env: dict[str, str] | None = None) -> list[Any]:
    """`ccmemory check` warnings: project memories overriding personal-vault ones (read from the
    files, no index needed)."""
    from ccmemory.core.vault import Vault
    from ccmemory.features.findings import Finding

    if not exists(env):
        return []
    pv, proj = Vault(home(env)), Vault(root)

    def load(v: Vault) -> list[tuple[str, Memory]]:
        out = []
        for p in v.iter_paths():
            try:
                out.append((v.rel(p), v.read(p)))
            except Exception:  # check_vault reports unreadable files itself
                continue
        return out

    personal = [m for _, m in load(pv) if m.type in CONTEXT_TYPES]
    if not personal:
        return []
    paths = {}
    project = []
    for rel, m in load(proj):
        paths[m.id] = rel
        project.append(m)
    return [
        Finding(
            paths[c.project.id],
            1,
            "warning",
            f"overrides personal-vault {c.personal.type} {c.personal.title!r} ({c.personal.id}) in this "
            f"project: {c.reason}; the project memory wins here",
        )
        for c in conflicts(project, personal)
    ]


# --- capture: a rule a user states about themselves -----------------------------------------------

_FIRST_PERSON = re.compile(
    r"^\s*(?:i|i'm|i am|my|me)\b|^\s*(?:the )?user (?:prefers|likes|wants|always|never|uses)\b",
    re.IGNORECASE,
)
_EVERYWHERE = re.compile(
    r"\b(?:in|across|for) (?:all|every|any) (?:of )?(?:my )?(?:projects?|repos?|repositories|codebases?)\b"
    r"|\beverywhere\b|\bglobally\b|\bin general\b",
    re.IGNORECASE,
)
_THIS_REPO = re.compile(
    r"\b(?:this|the|our) (?:repo|repository|project|codebase|app|service|module|package|folder|file)\b"
    r"|\bhere\b|\bin this\b",
    re.IGNORECASE,
)


def is_personal_rule(memory: Memory) -> bool:
    """Conservative: a preference that is explicitly global (`scope: global`), or whose title is a
    first-person rule ("I prefer …", "my …") or says it holds everywhere, and that names no file
    and does not point at this repository ("this project", "here", "our codebase")."""
    if memory.type != "preference":
        return False
    if memory.fields.get("scope") == "global":
        return True
    if memory.fields.get("scope") == "project" or memory.files:
        return False
    text = memory.title
    if _THIS_REPO.search(text):
        return False
    return bool(_FIRST_PERSON.search(text) or _EVERYWHERE.search(text))


def route_captured(
    memory: Memory, env: dict[str, str] | None = None, *, service: type[Service], project: Path | None = None
) -> Path | None:
    """Capture's hook point: a captured preference that `is_personal_rule` goes to the personal
    vault (its file's path is returned). None: write it to the project as usual (also when the
    personal vault cannot be written: nothing is lost)."""
    if not is_personal_rule(memory):
        return None
    scope, branch = memory.fields.get("scope"), memory.branch
    try:
        memory.branch = None
        rec = record_global(memory, env, service=service, project=project)
    except Exception as exc:
        memory.branch = branch
        import logging

        logging.getLogger("ccmemory.features.personal").warning(
            "personal vault not written (%s); kept in project", exc
        )
        if scope is None:
            memory.fields.pop("scope", None)
        return None
    return home(env) / rec.path
