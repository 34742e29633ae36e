"""Settings: `.ccmemory/config.yaml` plus environment overrides (environment wins).

The environment variables (CCMEMORY_BACKEND, CCMEMORY_NEO4J_*, CCMEMORY_USER_ID, CCMEMORY_PROJECT,
CCMEMORY_HOME, ...) are read through `ccmemory.core.settings`, which documents every one of them
(docs/configuration.md); the `context:` section is parsed there too, once for this module and
the hooks' capture settings.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccmemory.core import settings
from ccmemory.core.errors import ConfigError
from ccmemory.core.projectname import default_project
from ccmemory.core.settings import ContextSettings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ccmemory.core.config_schema import ConfigProblem

CONFIG_FILE = "config.yaml"
DEFAULT_CONFIG = """\
# ccmemory settings for this repository (committed; the environment overrides them).
# project: my-project          # name used in a shared index (default: the repository folder name;
#                               # a linked worktree's is its main checkout's)
# main_branch: main            # the branch whose files are "curated" (default: detected)
backend: sqlite                # sqlite (embedded, default) or neo4j (CCMEMORY_NEO4J_URI ...)
context:
  enabled: true                # inject a digest of memories at session start
  budget_tokens: 600
recall:
  enabled: true                # inject the memories a prompt or a file needs, when it comes up
  budget_tokens: 300           # per prompt / per tool call
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
    context: ContextSettings = field(default_factory=ContextSettings)
    embedder: str | None = None  # `embedder:` (auto | local | voyage); else CCMEMORY_EMBEDDER
    raw: dict[str, Any] = field(default_factory=dict)  # sections other modules own (telemetry, ...)
    related: list[RelatedProject] = field(default_factory=list)  # `related_to`, the valid entries
    related_problems: list[str] = field(default_factory=list)  # why other entries were left out

    @property
    def context_enabled(self) -> bool:
        return self.context.enabled

    @property
    def context_budget(self) -> int:
        return self.context.budget_tokens


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
    home = settings.HOME.get(env)
    if home:
        return Path(os.path.expanduser(home)).resolve()
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
    from ccmemory.core.walk import read_regular

    path = vault_dir / CONFIG_FILE
    if not os.path.lexists(path):
        return {}
    try:  # a hostile config (FIFO, symlink, YAML bomb) is an error, never a hang (docs/security.md)
        text = read_regular(path, 256 * 1024).decode("utf-8")
        st = os.lstat(path)
    except (ValueError, OSError) as exc:
        raise ConfigError(f"{path}: cannot read settings: {exc}", "fix or remove the file") from None
    text_id = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, text]
    kept = _parsed_get(vault_dir, text_id)
    if kept is not None:
        return kept
    import yaml

    from ccmemory.core.yamlio import YAMLLimit, load_yaml

    try:
        data = load_yaml(text) or {}
    except (yaml.YAMLError, YAMLLimit, ValueError, TypeError, OSError) as exc:
        raise ConfigError(f"{path}: cannot read settings: {exc}", "fix or remove the file") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: settings must be a YAML mapping", "see docs/configuration.md")
    _parsed_put(vault_dir, text_id, data)
    return data


# The parsed settings are kept in .ccmemory/local/ with the exact text they were parsed from:
# importing the YAML library costs 11-15 ms of every hook (and the vault needs it only to read or
# write memory files). Used only when the file's text is the same, character for character, and
# the file is the same file on this machine (device, inode, size, mtime and ctime: a copy that
# came with a checkout, committed by someone else, never matches), and only for settings that
# JSON carries unchanged (same types, same keys: a date or a number used as a key is parsed from
# the file every time). A missing, odd or unreadable copy is a miss.
_PARSED_FILE = "config-parsed.json"


def _parsed_path(vault_dir: Path) -> Path | None:
    from ccmemory.core.layout import LOCAL_DIR

    local = vault_dir / LOCAL_DIR
    if os.path.islink(local) or not local.is_dir():
        return None
    return local / _PARSED_FILE


def _parsed_get(vault_dir: Path, text_id: list[object]) -> dict[str, Any] | None:
    import json

    from ccmemory.core.walk import read_regular

    path = _parsed_path(vault_dir)
    if path is None or not os.path.lexists(path):
        return None
    try:
        kept = json.loads(read_regular(path, 1 << 20))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("text") != text_id or not isinstance(kept.get("data"), dict):
        return None
    data: dict[str, Any] = kept["data"]
    return data


def _parsed_put(vault_dir: Path, text_id: list[object], data: dict[str, Any]) -> None:
    import contextlib
    import json

    path = _parsed_path(vault_dir)
    if path is None:
        return
    try:
        raw = json.dumps({"text": text_id, "data": data})
    except (TypeError, ValueError):  # a date, a set of non-string keys...: not kept
        return
    if repr(json.loads(raw)["data"]) != repr(data):  # an int key, a float key: not the same
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:  # a private temp file renamed into place; a read-only folder or a full disk: not kept
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw.encode("utf-8"))
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def config_problems(root: Path) -> list[ConfigProblem]:
    """Every problem of `.ccmemory/config.yaml` against the schema (core/config_schema.py), with
    line numbers; [] when there is no file. Raises ConfigError when the file cannot be read."""
    from ccmemory.core.config_schema import validate
    from ccmemory.core.walk import read_regular

    path = root / ".ccmemory" / CONFIG_FILE
    if not os.path.lexists(path):
        return []
    raw = read_config_file(root / ".ccmemory")
    text = read_regular(path, 256 * 1024).decode("utf-8", "replace")
    return validate(raw, text)


def load_config(root: Path, *, env: dict[str, str] | None = None) -> Config:
    """Settings for the repository at `root` (the folder holding `.ccmemory/`)."""
    env = dict(os.environ) if env is None else env
    raw = read_config_file(root / ".ccmemory")
    neo = raw.get("neo4j") if isinstance(raw.get("neo4j"), dict) else {}
    assert isinstance(neo, dict)
    embedder = raw.get("embedder")
    cfg = Config(
        project=str(settings.PROJECT.get(env) or raw.get("project") or default_project(root)),
        backend=str(settings.BACKEND.get(env) or raw.get("backend") or "sqlite").lower(),
        main_branch=(str(raw["main_branch"]) if raw.get("main_branch") else None),
        neo4j_uri=str(settings.NEO4J_URI.get(env) or neo.get("uri") or "bolt://127.0.0.1:7687"),
        neo4j_user=str(settings.NEO4J_USER.get(env) or neo.get("user") or "neo4j"),
        neo4j_password=settings.NEO4J_PASSWORD.get(env),
        user_id=settings.USER_ID.get(env),
        context=settings.context_settings(raw, env),
        embedder=str(embedder) if embedder else None,
        raw=raw,
    )
    if cfg.backend not in ("sqlite", "neo4j"):
        raise ConfigError(
            f"unknown backend {cfg.backend!r}: use sqlite or neo4j",
            "set `backend:` in .ccmemory/config.yaml or CCMEMORY_BACKEND to sqlite or neo4j",
        )
    if cfg.user_id is None:
        cfg.user_id = _git_email(root)
    cfg.related, cfg.related_problems = parse_related(
        raw.get("related_to"), root, str(root / ".ccmemory" / CONFIG_FILE)
    )
    return cfg
