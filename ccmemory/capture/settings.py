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
  worker:
    idle_seconds: 20
    max_attempts: 3
    settle_seconds: 1.0
context:                      # shared with the lead's config (capture.context overrides)
  enabled: true
  budget_tokens: 1500
```
Env: CCMEMORY_CAPTURE=0, CCMEMORY_PROVIDER, CCMEMORY_MODEL, CCMEMORY_SIGNAL_MODEL,
CCMEMORY_MAX_LLM_CALLS, CCMEMORY_MAX_TOKENS, CCMEMORY_CONTEXT=0, CCMEMORY_CONTEXT_BUDGET,
CCMEMORY_WORKER_IDLE, CCMEMORY_MAX_ATTEMPTS, CCMEMORY_CLAUDE_BIN.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROVIDERS = ("auto", "anthropic", "claude-cli", "rules", "test", "none")


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
    context_budget_tokens: int = 1500
    worker_idle_seconds: float = 20.0
    worker_max_attempts: int = 3
    worker_settle_seconds: float = 1.0
    claude_bin: str = "claude"


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


def _read_yaml(root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(capture section, top-level `context` section) of `.ccmemory/config.yaml`."""
    path = root / ".ccmemory" / "config.yaml"
    if not path.is_file():
        return {}, {}
    import yaml

    from ccmemory.vault import YAMLLimit, load_yaml
    from ccmemory.walk import read_regular

    try:  # never follow a symlink, never block on a FIFO, bounded YAML (docs/security.md)
        data = load_yaml(read_regular(path, 256 * 1024).decode("utf-8")) or {}
    except (OSError, ValueError, TypeError, yaml.YAMLError, YAMLLimit):
        return {}, {}
    if not isinstance(data, dict):
        return {}, {}
    capture = data.get("capture")
    context = data.get("context")
    return (capture if isinstance(capture, dict) else {}, context if isinstance(context, dict) else {})


def load(root: Path | None, env: dict[str, str] | None = None) -> CaptureSettings:
    env = dict(os.environ) if env is None else env
    s = CaptureSettings()
    raw, top_ctx = _read_yaml(root) if root is not None else ({}, {})
    # the lead's top-level `context:` (enabled, budget_tokens) is shared; `capture.context` wins
    cap_ctx = raw.get("context")
    ctx: dict[str, Any] = {**top_ctx, **(cap_ctx if isinstance(cap_ctx, dict) else {})}
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
    s.context_enabled = _bool(ctx.get("enabled", True), True)
    s.context_budget_tokens = int(_num(ctx.get("budget_tokens"), 1500))
    s.worker_idle_seconds = _num(wrk.get("idle_seconds"), 20.0)
    s.worker_max_attempts = int(_num(wrk.get("max_attempts"), 3))
    s.worker_settle_seconds = _num(wrk.get("settle_seconds"), 1.0)
    # environment wins
    if "CCMEMORY_CAPTURE" in env:
        s.enabled = _bool(env["CCMEMORY_CAPTURE"], True)
    if env.get("CCMEMORY_PROVIDER") in PROVIDERS:
        s.provider = env["CCMEMORY_PROVIDER"]
    s.model = env.get("CCMEMORY_MODEL") or s.model
    s.signal_model = env.get("CCMEMORY_SIGNAL_MODEL") or s.signal_model
    s.max_llm_calls_per_session = int(_num(env.get("CCMEMORY_MAX_LLM_CALLS"), s.max_llm_calls_per_session))
    s.max_tokens_per_session = int(_num(env.get("CCMEMORY_MAX_TOKENS"), s.max_tokens_per_session))
    if "CCMEMORY_CONTEXT" in env:
        s.context_enabled = _bool(env["CCMEMORY_CONTEXT"], True)
    s.context_budget_tokens = int(_num(env.get("CCMEMORY_CONTEXT_BUDGET"), s.context_budget_tokens))
    s.worker_idle_seconds = _num(env.get("CCMEMORY_WORKER_IDLE"), s.worker_idle_seconds)
    s.worker_max_attempts = int(_num(env.get("CCMEMORY_MAX_ATTEMPTS"), s.worker_max_attempts))
    s.worker_settle_seconds = _num(env.get("CCMEMORY_WORKER_SETTLE"), s.worker_settle_seconds)
    s.claude_bin = env.get("CCMEMORY_CLAUDE_BIN") or s.claude_bin
    return s
