"""Every `CCMEMORY_*` environment variable, read in one place (typed, with its default and a
one-line doc), and the shared parse of the `context:` section of `.ccmemory/config.yaml`.

No other module in the package reads a `CCMEMORY_*` variable (tests/test_settings.py checks it);
`docs/configuration.md` carries the table `python -m ccmemory.core.settings` prints (checked too).

The hooks import this module on their fast path: it imports `os` and nothing else (no `typing`,
no `dataclasses`, no `pathlib`), and reading a variable costs a dictionary lookup.

Each variable's `get(env)` returns its typed value, or `None` when it is unset, empty or not
readable as its kind; `value(env)` returns the documented default instead of `None` where the
variable has one. Variables that override `config.yaml` have no default here: `None` means
"the file (or the built-in default named in the doc) decides".
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # `typing` costs milliseconds on the hook path: only for the type checker
if TYPE_CHECKING:
    from collections.abc import Mapping

    Env = Mapping[str, str] | None

OFF = ("0", "false", "no", "off")


class Var:
    """One environment variable. `kind` names the type in the docs table."""

    kind = "text"

    def __init__(self, name: str, doc: str, *, group: str, default: str = "") -> None:
        self.name = name
        self.doc = doc
        self.group = group
        self.default_doc = default  # the effective default, in words, for the docs table

    def raw(self, env: Env = None) -> str | None:
        return (os.environ if env is None else env).get(self.name)

    def is_set(self, env: Env = None) -> bool:
        return self.raw(env) is not None


class Text(Var):
    """A string; empty counts as unset."""

    def get(self, env: Env = None) -> str | None:
        return self.raw(env) or None


class Switch(Var):
    """On only when set to exactly `1` (the hooks' and worker's guard variables)."""

    kind = "`1` to turn on"

    def get(self, env: Env = None) -> bool:
        return self.raw(env) == "1"


class Toggle(Var):
    """On/off: `0`, `false`, `no`, `off` or empty turn it off, anything else on; `None` if unset."""

    kind = "on/off"

    def get(self, env: Env = None) -> bool | None:
        raw = self.raw(env)
        if raw is None:
            return None
        return raw.strip().lower() not in (*OFF, "")


class OffSwitch(Var):
    """Can only turn something off: `0`, `false`, `no` or `off` (any case); else it stays on."""

    kind = "`0` to turn off"

    def get(self, env: Env = None) -> bool:
        raw = self.raw(env)
        return raw is None or raw.strip().lower() not in OFF


class Number(Var):
    """A number (seconds and the like); `None` when unset or not a number."""

    kind = "number"

    def __init__(self, name: str, doc: str, *, group: str, default: float | None = None) -> None:
        super().__init__(name, doc, group=group, default="" if default is None else f"{default:g}")
        self.fallback = default

    def get(self, env: Env = None) -> float | None:
        try:
            return float(self.raw(env) or "")
        except ValueError:
            return None

    def value(self, env: Env = None) -> float:
        got = self.get(env)
        if got is not None:
            return got
        assert self.fallback is not None, f"{self.name} has no default"
        return self.fallback


class Whole(Var):
    """A whole number (read as a number, then truncated: `1e3` is 1000)."""

    kind = "integer"

    def __init__(self, name: str, doc: str, *, group: str, default: int | None = None) -> None:
        super().__init__(name, doc, group=group, default="" if default is None else str(default))
        self.fallback = default

    def get(self, env: Env = None) -> int | None:
        try:
            number = float(self.raw(env) or "")
            return int(number)
        except (ValueError, OverflowError):
            return None

    def value(self, env: Env = None) -> int:
        got = self.get(env)
        if got is not None:
            return got
        assert self.fallback is not None, f"{self.name} has no default"
        return self.fallback


# --- the variables ------------------------------------------------------------------------------
# Groups, in the order of the docs table.
INDEX = "Index and identity"
CAPTURE_G = "Capture (hooks and worker)"
CONTEXT_G = "Session-start context"
SEARCH = "Embeddings"
PATHS = "Folders and telemetry"
SERVER = "MCP server and Neo4j helper"
TESTING = "Test aids"

BACKEND = Text(
    "CCMEMORY_BACKEND",
    "Index backend: `sqlite` (embedded) or `neo4j`; overrides `backend:` in config.yaml.",
    group=INDEX,
    default="config.yaml `backend:`, else `sqlite`",
)
NEO4J_URI = Text(
    "CCMEMORY_NEO4J_URI",
    "Bolt URI of the Neo4j server (`bolt://`, `neo4j://`, `neo4j+s://`).",
    group=INDEX,
    default="config.yaml `neo4j.uri`, else `bolt://127.0.0.1:7687`",
)
NEO4J_USER = Text(
    "CCMEMORY_NEO4J_USER",
    "Neo4j user name.",
    group=INDEX,
    default="config.yaml `neo4j.user`, else `neo4j`",
)
NEO4J_PASSWORD = Text(
    "CCMEMORY_NEO4J_PASSWORD",
    "Neo4j password (never read from config.yaml, which is committed); `ccmemory start` needs 8+ characters.",
    group=INDEX,
    default="none",
)
PROJECT = Text(
    "CCMEMORY_PROJECT",
    "Project name in a shared index; overrides `project:` in config.yaml.",
    group=INDEX,
    default=(
        "config.yaml `project:`, else the repository folder's name"
        " (for a linked worktree, the main checkout's)"
    ),
)
USER_ID = Text(
    "CCMEMORY_USER_ID",
    "Who you are: the team rule shows you your own developmental memories; new memories' author.",
    group=INDEX,
    default="`git config user.email`",
)
DISABLE = Switch(
    "CCMEMORY_DISABLE",
    "Every hook and the capture worker do nothing (set for the `claude` child of the claude-cli provider).",
    group=CAPTURE_G,
    default="off",
)
NO_WORKER = Switch(
    "CCMEMORY_NO_WORKER",
    "Hooks queue extraction jobs but never start the background worker (`ccmemory worker` runs them).",
    group=CAPTURE_G,
    default="off",
)
CAPTURE = Toggle(
    "CCMEMORY_CAPTURE",
    "Automatic capture from sessions on or off; overrides `capture.enabled`.",
    group=CAPTURE_G,
    default="config.yaml, else on",
)
PROVIDER = Text(
    "CCMEMORY_PROVIDER",
    "Extraction provider: auto, anthropic, claude-cli, rules, test or none (other values are ignored).",
    group=CAPTURE_G,
    default="config.yaml `capture.provider`, else `auto`",
)
MODEL = Text(
    "CCMEMORY_MODEL",
    "Extraction model (Anthropic API and claude CLI).",
    group=CAPTURE_G,
    default="config.yaml `capture.model`, else `claude-sonnet-5-5`",
)
SIGNAL_MODEL = Text(
    "CCMEMORY_SIGNAL_MODEL",
    "Small fast model for signal classification and superseding.",
    group=CAPTURE_G,
    default="config.yaml `capture.signal_model`, else `claude-haiku-5-5`",
)
MAX_LLM_CALLS = Whole(
    "CCMEMORY_MAX_LLM_CALLS",
    "LLM calls one session may spend on capture.",
    group=CAPTURE_G,
)
MAX_LLM_CALLS.default_doc = "config.yaml `capture.max_llm_calls_per_session`, else 20"
MAX_TOKENS = Whole(
    "CCMEMORY_MAX_TOKENS",
    "Tokens one session may spend on capture.",
    group=CAPTURE_G,
)
MAX_TOKENS.default_doc = "config.yaml `capture.max_tokens_per_session`, else 200000"
WORKER_IDLE = Number(
    "CCMEMORY_WORKER_IDLE",
    "Seconds the background worker waits for new jobs before it exits.",
    group=CAPTURE_G,
)
WORKER_IDLE.default_doc = "config.yaml `capture.worker.idle_seconds`, else 20"
MAX_ATTEMPTS = Whole(
    "CCMEMORY_MAX_ATTEMPTS",
    "Attempts at one extraction job before it is set aside as failed.",
    group=CAPTURE_G,
)
MAX_ATTEMPTS.default_doc = "config.yaml `capture.worker.max_attempts`, else 3"
WORKER_SETTLE = Number(
    "CCMEMORY_WORKER_SETTLE",
    "Seconds the worker lets a transcript settle before reading it.",
    group=CAPTURE_G,
)
WORKER_SETTLE.default_doc = "config.yaml `capture.worker.settle_seconds`, else 1"
CLAUDE_BIN = Text(
    "CCMEMORY_CLAUDE_BIN",
    "The `claude` executable the claude-cli provider runs.",
    group=CAPTURE_G,
    default="`claude` on PATH",
)
CONTEXT = Toggle(
    "CCMEMORY_CONTEXT",
    "Inject memories at session start on or off; overrides `context.enabled`.",
    group=CONTEXT_G,
    default="config.yaml, else on",
)
CONTEXT_BUDGET = Whole(
    "CCMEMORY_CONTEXT_BUDGET",
    "Token budget of the session-start context (and of `ccmemory context` without --budget).",
    group=CONTEXT_G,
)
CONTEXT_BUDGET.default_doc = "config.yaml `context.budget_tokens`, else 600"
RECALL = Toggle(
    "CCMEMORY_RECALL",
    "Recall at the moment of work (memories injected for a prompt or before a file is touched) "
    "on or off; overrides `recall.enabled`.",
    group=CONTEXT_G,
    default="config.yaml, else on",
)
RECALL_BUDGET = Whole(
    "CCMEMORY_RECALL_BUDGET",
    "Token budget of one prompt's or one tool call's recalled memories; overrides `recall.budget_tokens`.",
    group=CONTEXT_G,
)
RECALL_BUDGET.default_doc = "config.yaml `recall.budget_tokens`, else 300"
EMBEDDER = Text(
    "CCMEMORY_EMBEDDER",
    "Embedder when config.yaml sets no `embedder:`: auto (Voyage when VOYAGE_API_KEY is set and "
    "voyageai installed, else the local MiniLM), local or voyage.",
    group=SEARCH,
    default="`auto`",
)
MODEL_PATH = Text(
    "CCMEMORY_MODEL_PATH",
    "Another MiniLM .onnx file for the local embedder.",
    group=SEARCH,
    default="the packaged model",
)
VECTOR_CACHE = Text(
    "CCMEMORY_VECTOR_CACHE",
    "The per-user vector cache shared by every clone, worktree and branch: a file, or `off`.",
    group=SEARCH,
    default="`vectors.sqlite` in the cache folder",
)
VECTOR_CACHE_MB = Whole(
    "CCMEMORY_VECTOR_CACHE_MB",
    "Size bound of the vector cache; the least recently used vectors go first.",
    group=SEARCH,
    default=256,
)
SEARCH_WARM = OffSwitch(
    "CCMEMORY_SEARCH_WARM",
    "`ccmemory search` asks the running MCP server of the repository (it holds the model and the "
    "vectors) before searching itself; `0` always searches in the CLI process.",
    group=SEARCH,
    default="on",
)
OPTIMIZED_MODEL = OffSwitch(
    "CCMEMORY_OPTIMIZED_MODEL",
    "The local embedding model's graph, as onnxruntime optimizes it for this CPU, is saved in the "
    "cache folder and reopened without optimizing again (a faster first search in each process); "
    "`0` optimizes it in every process.",
    group=SEARCH,
    default="on",
)
HOME = Text(
    "CCMEMORY_HOME",
    "Folder of the personal vault (docs/cross-project.md).",
    group=PATHS,
    default="`$XDG_CONFIG_HOME/ccmemory`, else `~/.config/ccmemory`",
)
CACHE_DIR = Text(
    "CCMEMORY_CACHE_DIR",
    "Cache folder (the rewritten embedding model graph and its optimized form).",
    group=PATHS,
    default="`$XDG_CACHE_HOME/ccmemory`, else `~/.cache/ccmemory`",
)
TELEMETRY = OffSwitch(
    "CCMEMORY_TELEMETRY",
    "`0` (false, no, off) turns local usage telemetry off whatever config.yaml says; it cannot turn it on.",
    group=PATHS,
    default="config.yaml `telemetry.enabled`, else on",
)
REPO = Text(
    "CCMEMORY_REPO",
    "Repository `ccmemory mcp` serves when --repo is not given.",
    group=SERVER,
    default="the current folder",
)
MCP_REFRESH_SECONDS = Number(
    "CCMEMORY_MCP_REFRESH_SECONDS",
    "Seconds between the MCP server's re-reads of changed memory files (negative: never).",
    group=SERVER,
    default=30,
)
MCP_TOOLS = Text(
    "CCMEMORY_MCP_TOOLS",
    "The tools the MCP server lists: `lean` (record, search, get, trace, context) or `full` (every "
    "tool); overrides `mcp.tools` in config.yaml.",
    group=SERVER,
    default="config.yaml, else `lean`",
)
COMPOSE_FILE = Text(
    "CCMEMORY_COMPOSE_FILE",
    "Compose file `ccmemory start` / `stop` use.",
    group=SERVER,
    default="the packaged docker-compose.yml",
)
NEO4J_BOLT_PORT = Whole(
    "CCMEMORY_NEO4J_BOLT_PORT",
    "Bolt port `ccmemory start` reports (set the same one for docker compose).",
    group=SERVER,
    default=7687,
)
WORKER_TEST_PAUSE = Number(
    "CCMEMORY_WORKER_TEST_PAUSE",
    "Test aid: the worker writes one memory at a time with this pause (seconds).",
    group=TESTING,
    default=0,
)

#: Every variable the package reads, in docs-table order.
VARS: tuple[Var, ...] = tuple(v for v in list(globals().values()) if isinstance(v, Var))

#: Variables that are read outside the package (scripts/neo4j-dev, tests, bench), or are not
#: environment variables at all; documented in the same page, never read through this module.
OUTSIDE: dict[str, str] = {
    "CCMEMORY_TEST_NEO4J_URI": "tests and bench: use this Neo4j server instead of starting a throw-away one",
    "CCMEMORY_TEST_NEO4J_USER": "tests and bench: its user (default `neo4j`)",
    "CCMEMORY_TEST_NEO4J_PASSWORD": "tests and bench: its password (default `ccmemory-test`)",
    "CCMEMORY_NEO4J_DEV_CACHE": "scripts/neo4j-dev: cache folder of the downloaded server",
    "CCMEMORY_NEO4J_DEV_STATE": "scripts/neo4j-dev: state folder (default per checkout)",
    "CCMEMORY_NEO4J_DEV_PORT": "scripts/neo4j-dev: Bolt port (default: a free port)",
    "CCMEMORY_NEO4J_DEV_PASSWORD": "scripts/neo4j-dev: password of user neo4j (default `ccmemory-test`)",
    "CCMEMORY_NEO4J_DEV_TIMEOUT": "scripts/neo4j-dev: seconds to wait for Bolt (default 180)",
    "CCMEMORY_NEO4J_DEV_HEAP": "scripts/neo4j-dev: JVM -Xmx (default 1g)",
    "CCMEMORY_NEO4J_DEV_JIT": "scripts/neo4j-dev: `fast-start` (default) or `full` (for benchmarks)",
    "CCMEMORY_NEO4J_DEV_GC": "scripts/neo4j-dev: `serial` (default), `parallel` or `g1`",
    "CCMEMORY_NEO4J_DEV_PAGECACHE": (
        "scripts/neo4j-dev: page cache in MB (default 128; a 100k-memory store is about 500 MB)"
    ),
    "CCMEMORY_PYTHON": "not read from the environment: the interpreter line written into installed git hooks",
    "CCMEMORY_BIN": "plugin/scripts/find.sh: the `ccmemory` command the plugin runs when it is not on PATH",
}


# --- the `context:` section, parsed once (config.py and capture/settings.py both use it) ------------

DEFAULT_CONTEXT_BUDGET = 600  # issue 27: a digest; recall adds what a prompt or file needs


class ContextSettings:
    """`context:` of config.yaml (`capture.context` overrides it), then the environment."""

    __slots__ = ("budget_tokens", "enabled", "reference_sections")

    def __init__(
        self, enabled: bool = True, budget_tokens: int = DEFAULT_CONTEXT_BUDGET, reference_sections: int = 0
    ):
        self.enabled = enabled
        self.budget_tokens = budget_tokens
        self.reference_sections = reference_sections

    def __repr__(self) -> str:
        return f"ContextSettings({self.enabled!r}, {self.budget_tokens!r}, {self.reference_sections!r})"


def _flag(value: object, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() not in (*OFF, "")
    return default


def _whole(value: object, default: int) -> int:
    try:
        return int(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return default


def context_settings(raw: Mapping[str, object] | None, env: Env = None) -> ContextSettings:
    """The session-start context settings from a parsed config.yaml mapping and the environment.

    Top-level `context:` first, `capture.context` over it, then CCMEMORY_CONTEXT and
    CCMEMORY_CONTEXT_BUDGET. Anything unreadable keeps its default (a typo never stops a hook).
    """
    raw = raw or {}
    top = raw.get("context")
    capture = raw.get("capture")
    inner = capture.get("context") if isinstance(capture, dict) else None
    ctx: dict[object, object] = {
        **(top if isinstance(top, dict) else {}),
        **(inner if isinstance(inner, dict) else {}),
    }
    enabled = _flag(ctx.get("enabled", True), True)
    budget = _whole(ctx.get("budget_tokens"), DEFAULT_CONTEXT_BUDGET)
    if budget < 1:  # a digest of 0 or fewer tokens is a typo, not a wish (`check` reports it)
        budget = DEFAULT_CONTEXT_BUDGET
    sections = ctx.get("reference_sections", 0)
    env_enabled = CONTEXT.get(env)
    env_budget = CONTEXT_BUDGET.get(env)
    return ContextSettings(
        enabled if env_enabled is None else env_enabled,
        budget if env_budget is None else env_budget,
        sections if isinstance(sections, int) and sections > 0 else 0,
    )


# --- the docs table -------------------------------------------------------------------------------


def markdown_table() -> str:
    """The table docs/configuration.md carries between its `settings-table` markers."""
    lines = ["| Variable | Kind | Default | What it does |", "|---|---|---|---|"]
    group = ""
    for var in VARS:
        if var.group != group:
            group = var.group
            lines.append(f"| **{group}** | | | |")
        lines.append(f"| `{var.name}` | {var.kind} | {var.default_doc or '—'} | {var.doc} |")
    lines += ["", "Read outside the package (development and tests):", ""]
    lines += ["| Variable | What it does |", "|---|---|"]
    lines += [f"| `{name}` | {doc} |" for name, doc in OUTSIDE.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
