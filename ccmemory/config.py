"""Settings: `.ccmemory/config.yaml` plus environment overrides (environment wins).

Environment: CCMEMORY_BACKEND=sqlite|neo4j, CCMEMORY_NEO4J_URI, CCMEMORY_NEO4J_USER,
CCMEMORY_NEO4J_PASSWORD, CCMEMORY_USER_ID (default: git user.email), CCMEMORY_PROJECT,
CCMEMORY_HOME (the personal vault, default ~/.config/ccmemory; see docs/cross-project.md).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONFIG_FILE = "config.yaml"
DEFAULT_CONFIG = """\
# ccmemory settings for this repository (committed; the environment overrides them).
# project: my-project          # name used in a shared index (default: the repository folder name)
# main_branch: main            # the branch whose files are "curated" (default: detected)
backend: sqlite                # sqlite (embedded, default) or neo4j (CCMEMORY_NEO4J_URI ...)
context:
  enabled: true                # inject memories at session start
  budget_tokens: 1500
# related_to:                  # other projects cross-project search may show (docs/cross-project.md)
#   - {name: infra, path: ../infra, relation: technical}   # business | technical | shared_resource
"""


@dataclass
class Config:
    project: str
    backend: str = "sqlite"
    main_branch: str | None = None
    neo4j_uri: str = "bolt://127.0.0.1:7687"
    neo4j_user: str = "neo4j"
    neo4j_password: str | None = None
    user_id: str | None = None
    context_enabled: bool = True
    context_budget: int = 1500
    raw: dict[str, Any] = field(default_factory=dict)
    related: list[RelatedProject] = field(default_factory=list)  # `related_to`, the valid entries
    related_problems: list[str] = field(default_factory=list)  # why other entries were left out


RELATIONS = ("business", "technical", "shared_resource")


@dataclass(frozen=True)
class RelatedProject:
    """One `related_to` entry: another project whose memories cross-project search may show."""

    name: str
    relation: str  # one of RELATIONS
    path: Path | None = None  # its repository on this machine (absolute), for the SQLite backend
    remote: str | None = None  # its git remote, for people (a shared Neo4j reaches it by name)


def parse_related(value: Any, root: Path, source: str) -> tuple[list[RelatedProject], list[str]]:
    """The valid `related_to` entries and a message per invalid one (naming `source`).

    Invalid entries are reported, never fatal: a typo in one entry must not stop hooks or search.
    """
    if value is None:
        return [], []
    if not isinstance(value, list):
        return [], [f"{source}: related_to must be a list of {{name, path or remote, relation}}"]
    out: list[RelatedProject] = []
    problems: list[str] = []
    seen: set[str] = set()
    for i, item in enumerate(value, 1):
        where = f"{source}: related_to entry #{i}"
        if not isinstance(item, dict):
            problems.append(f"{where}: must be a mapping with name, path or remote, relation")
            continue
        unknown = sorted(set(map(str, item)) - {"name", "path", "remote", "relation"})
        name = str(item.get("name") or "").strip()
        relation = str(item.get("relation") or "").strip()
        path, remote = item.get("path"), item.get("remote")
        if unknown:
            problems.append(f"{where}: unknown key(s) {', '.join(unknown)}")
        elif not name:
            problems.append(f"{where}: no name (the other project's name)")
        elif relation not in RELATIONS:
            problems.append(
                f"{where} ({name}): relation {relation or '(missing)'!r} "
                f"must be one of {', '.join(RELATIONS)}"
            )
        elif not path and not remote:
            problems.append(f"{where} ({name}): give a path (its repository here) or a remote")
        elif path is not None and not isinstance(path, str):
            problems.append(f"{where} ({name}): path must be text")
        elif name in seen:
            problems.append(f"{where}: {name} is listed twice")
        else:
            seen.add(name)
            resolved = (root / os.path.expanduser(path)).resolve() if path else None
            out.append(RelatedProject(name, relation, resolved, str(remote) if remote else None))
    return out, problems


def personal_home(env: dict[str, str] | None = None) -> Path:
    """The personal vault's folder: $CCMEMORY_HOME, else $XDG_CONFIG_HOME/ccmemory, else
    ~/.config/ccmemory."""
    env = dict(os.environ) if env is None else env
    if env.get("CCMEMORY_HOME"):
        return Path(os.path.expanduser(env["CCMEMORY_HOME"])).resolve()
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return (Path(base) / "ccmemory").resolve()


def _git_email(root: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "config", "--get", "user.email"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def read_config_file(vault_dir: Path) -> dict[str, Any]:
    import yaml

    from ccmemory.vault import YAMLLimit, load_yaml
    from ccmemory.walk import read_regular

    path = vault_dir / CONFIG_FILE
    if not os.path.lexists(path):
        return {}
    try:  # a hostile config (FIFO, symlink, YAML bomb) is an error, never a hang (docs/security.md)
        data = load_yaml(read_regular(path, 256 * 1024).decode("utf-8")) or {}
    except (yaml.YAMLError, YAMLLimit, ValueError, TypeError, OSError) as exc:
        raise ValueError(f"{path}: cannot read settings: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: settings must be a YAML mapping")
    return data


def load_config(root: Path, *, env: dict[str, str] | None = None) -> Config:
    """Settings for the repository at `root` (the folder holding `.ccmemory/`)."""
    env = dict(os.environ) if env is None else env
    raw = read_config_file(root / ".ccmemory")
    ctx = raw.get("context") if isinstance(raw.get("context"), dict) else {}
    assert isinstance(ctx, dict)
    neo = raw.get("neo4j") if isinstance(raw.get("neo4j"), dict) else {}
    assert isinstance(neo, dict)
    cfg = Config(
        project=str(env.get("CCMEMORY_PROJECT") or raw.get("project") or root.name),
        backend=str(env.get("CCMEMORY_BACKEND") or raw.get("backend") or "sqlite").lower(),
        main_branch=(str(raw["main_branch"]) if raw.get("main_branch") else None),
        neo4j_uri=str(env.get("CCMEMORY_NEO4J_URI") or neo.get("uri") or "bolt://127.0.0.1:7687"),
        neo4j_user=str(env.get("CCMEMORY_NEO4J_USER") or neo.get("user") or "neo4j"),
        neo4j_password=env.get("CCMEMORY_NEO4J_PASSWORD") or None,
        user_id=env.get("CCMEMORY_USER_ID") or None,
        context_enabled=bool(ctx.get("enabled", True)),
        context_budget=int(ctx.get("budget_tokens", 1500)),
        raw=raw,
    )
    if cfg.backend not in ("sqlite", "neo4j"):
        raise ValueError(f"unknown backend {cfg.backend!r}: use sqlite or neo4j")
    if cfg.user_id is None:
        cfg.user_id = _git_email(root)
    cfg.related, cfg.related_problems = parse_related(
        raw.get("related_to"), root, str(root / ".ccmemory" / CONFIG_FILE)
    )
    return cfg
