"""Capture settings: `.ccmemory/config.yaml` key `capture:`, then environment overrides.

```yaml
capture:
  enabled: true
  provider: auto              # auto | anthropic | claude-cli | rules | test | none
  model: claude-sonnet-5-5    # extraction model (Anthropic API and claude CLI)
  signal_model: claude-haiku-5-5   # small fast model for signal classification / superseding
  max_llm_calls_per_session: 20
  max_tokens_per_session: 200000
  max_memories_per_segment: 5
  batch_segments: 6           # import: segments of a session that share one extraction call
  batch_chars: 24000          # ... as long as their text stays under this many characters
  min_confidence:             # per memory type (or `default`): an automatic capture (llm, rules)
    default: 0.0              # whose confidence is below is not written (docs/configuration.md);
    decision: 0.7             # `ccmemory doctor` shows each type's false-positive rate beside it
  worker:
    idle_seconds: 20
    max_attempts: 3
    settle_seconds: 1.0
context:                      # shared with config.py: ccmemory.core.settings.context_settings
  enabled: true               # (capture.context overrides it)
  budget_tokens: 600
sessions:                     # session history (ccmemory.features.sessions, docs/sessions.md)
  enabled: true
  max_kb: 50                  # cap per session record (a `truncated` flag marks a cut record)
  at_start: 3                 # last sessions of this branch shown at SessionStart
  at_start_tokens: 150
```
The environment overrides (CCMEMORY_CAPTURE, CCMEMORY_PROVIDER, CCMEMORY_MODEL, ...) are read
through `ccmemory.core.settings`, which documents each one (docs/configuration.md). The file is read
with config.py's reader; here an unreadable file means the defaults (a hook never fails on it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ccmemory.core import settings as env_settings
from ccmemory.core.config_schema import PROVIDERS  # one list, also the schema's

_T = TypeVar("_T")


@dataclass
class CaptureSettings:
    enabled: bool = True
    provider: str = "auto"
    model: str = "claude-sonnet-5-5"
    signal_model: str = "claude-haiku-5-5"
    max_llm_calls_per_session: int = 20
    max_tokens_per_session: int = 200_000
    max_memories_per_segment: int = 5
    batch_segments: int = 6
    batch_chars: int = 24_000
    context_enabled: bool = True
    context_budget_tokens: int = 600
    worker_idle_seconds: float = 20.0
    worker_max_attempts: int = 3
    worker_settle_seconds: float = 1.0
    claude_bin: str = "claude"
    sessions_enabled: bool = True
    sessions_max_kb: int = 50
    sessions_at_start: int = 3
    sessions_at_start_tokens: int = 150
    sessions_publish: bool = False
    sessions_publish_prompts: int = 0
    min_confidence: dict[str, float] = field(default_factory=dict)  # type (or "default") -> floor

    def floor(self, mtype: str) -> float:
        """The confidence an automatic capture of `mtype` needs (`capture.min_confidence`)."""
        return self.min_confidence.get(mtype, self.min_confidence.get("default", 0.0))


def _bool(value: Any, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() not in ("0", "false", "no", "off", "")
    return default


def _num(value: Any, default: float) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _read_yaml(root: Path) -> dict[str, Any]:
    """`.ccmemory/config.yaml` as a mapping; {} when missing or unreadable."""
    if not (root / ".ccmemory" / "config.yaml").is_file():
        return {}
    from ccmemory.core.config import read_config_file

    try:  # never follows a symlink, never blocks on a FIFO, bounded YAML (docs/security.md)
        return read_config_file(root / ".ccmemory")
    except ValueError:  # ConfigError: the CLI reports it; capture keeps its defaults
        return {}


def load(root: Path | None, env: dict[str, str] | None = None) -> CaptureSettings:
    env = dict(os.environ) if env is None else env
    s = CaptureSettings()
    data = _read_yaml(root) if root is not None else {}
    capture = data.get("capture")
    raw: dict[str, Any] = capture if isinstance(capture, dict) else {}
    ctx = env_settings.context_settings(data, env)  # top-level `context:`, capture.context, env
    wrk_raw = raw.get("worker")
    wrk: dict[str, Any] = wrk_raw if isinstance(wrk_raw, dict) else {}
    s.enabled = _bool(raw.get("enabled", True), True)
    if str(raw.get("provider", "auto")) in PROVIDERS:
        s.provider = str(raw.get("provider", "auto"))
    s.model = str(raw.get("model") or s.model)
    s.signal_model = str(raw.get("signal_model") or s.signal_model)
    s.max_llm_calls_per_session = int(_num(raw.get("max_llm_calls_per_session"), 20))
    s.max_tokens_per_session = int(_num(raw.get("max_tokens_per_session"), 200_000))
    s.max_memories_per_segment = max(0, min(5, int(_num(raw.get("max_memories_per_segment"), 5))))
    s.batch_segments = max(1, int(_num(raw.get("batch_segments"), 6)))
    s.batch_chars = max(1000, int(_num(raw.get("batch_chars"), 24_000)))
    s.context_enabled = ctx.enabled
    s.context_budget_tokens = ctx.budget_tokens
    s.worker_idle_seconds = _num(wrk.get("idle_seconds"), 20.0)
    s.worker_max_attempts = int(_num(wrk.get("max_attempts"), 3))
    s.worker_settle_seconds = _num(wrk.get("settle_seconds"), 1.0)
    s.min_confidence = min_confidence(raw.get("min_confidence"))
    _sessions(s, data.get("sessions"))
    # environment wins (each variable: ccmemory.core.settings)
    e = env_settings
    enabled = e.CAPTURE.get(env)
    s.enabled = s.enabled if enabled is None else enabled
    provider = e.PROVIDER.get(env)
    s.provider = provider if provider in PROVIDERS else s.provider
    s.model = e.MODEL.get(env) or s.model
    s.signal_model = e.SIGNAL_MODEL.get(env) or s.signal_model
    s.max_llm_calls_per_session = _first(e.MAX_LLM_CALLS.get(env), s.max_llm_calls_per_session)
    s.max_tokens_per_session = _first(e.MAX_TOKENS.get(env), s.max_tokens_per_session)
    s.worker_idle_seconds = _first(e.WORKER_IDLE.get(env), s.worker_idle_seconds)
    s.worker_max_attempts = _first(e.MAX_ATTEMPTS.get(env), s.worker_max_attempts)
    s.worker_settle_seconds = _first(e.WORKER_SETTLE.get(env), s.worker_settle_seconds)
    s.claude_bin = e.CLAUDE_BIN.get(env) or s.claude_bin
    return s


def _sessions(s: CaptureSettings, raw: Any) -> None:
    sec: dict[str, Any] = raw if isinstance(raw, dict) else {}
    s.sessions_enabled = _bool(sec.get("enabled", True), True)
    s.sessions_max_kb = max(1, int(_num(sec.get("max_kb"), 50)))
    s.sessions_at_start = max(0, int(_num(sec.get("at_start"), 3)))
    s.sessions_at_start_tokens = max(0, int(_num(sec.get("at_start_tokens"), 150)))
    s.sessions_publish = _bool(sec.get("publish", False), False)
    s.sessions_publish_prompts = min(20, max(0, int(_num(sec.get("publish_prompts"), 0))))


def min_confidence(raw: Any) -> dict[str, float]:
    """`capture.min_confidence` read forgivingly: numbers 0..1 by key (a memory type or
    `default`); anything else is left out here and reported by `check`/`doctor` (config_schema)."""
    out: dict[str, float] = {}
    if not isinstance(raw, dict):
        return out
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if 0.0 <= float(value) <= 1.0:
            out[str(key)] = float(value)
    return out


def _first(value: _T | None, default: _T) -> _T:
    return default if value is None else value
