"""Automatic provider choice: Anthropic API, then the `claude` CLI, then rules only.

`describe(start_path)` is what `ccmemory doctor` shows: the active provider and why.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccmemory.core import settings
from ccmemory.features.capture.providers.base import Provider, ProviderError
from ccmemory.features.capture.settings import CaptureSettings


@dataclass
class Choice:
    name: str  # anthropic | claude-cli | rules | test | none
    reason: str
    provider: Provider | None = None  # None for rules-only / none

    @property
    def is_llm(self) -> bool:
        return self.provider is not None


def _anthropic_importable() -> bool:
    import importlib.util

    return importlib.util.find_spec("anthropic") is not None


def choose(
    settings: CaptureSettings, env: dict[str, str] | None = None, *, instantiate: bool = True
) -> Choice:
    env = dict(os.environ) if env is None else env
    wanted = settings.provider
    if wanted == "none":
        return Choice("none", "capture.provider is 'none': nothing is extracted automatically")
    if wanted == "rules":
        return Choice(
            "rules",
            "capture.provider is 'rules' (explicit commands, references, unmistakable corrections; no LLM)",
        )
    if wanted == "test":
        from ccmemory.features.capture.providers.testing import TestProvider

        return Choice("test", "capture.provider is 'test' (deterministic, offline)", TestProvider())
    if wanted in ("auto", "anthropic"):
        key = env.get("ANTHROPIC_API_KEY")
        if key and _anthropic_importable():
            provider: Any = None
            if instantiate:
                from ccmemory.features.capture.providers.anthropic_api import AnthropicProvider

                provider = AnthropicProvider(api_key=key)
            return Choice("anthropic", "ANTHROPIC_API_KEY is set", provider)
        if wanted == "anthropic":
            from ccmemory.core.extras import install_command

            why = (
                f"the anthropic package is not installed ({install_command('llm')})"
                if key
                else "ANTHROPIC_API_KEY is not set"
            )
            return Choice("rules", f"capture.provider is 'anthropic' but {why}: falling back to rules only")
    if wanted in ("auto", "claude-cli"):
        binary = settings.claude_bin
        if shutil.which(binary):
            provider = None
            if instantiate:
                from ccmemory.features.capture.providers.claude_cli import ClaudeCliProvider

                try:
                    provider = ClaudeCliProvider(binary)
                except ProviderError as exc:
                    return Choice("rules", f"claude CLI unusable ({exc}): rules only")
            why = "no ANTHROPIC_API_KEY; " if wanted == "auto" else ""
            return Choice("claude-cli", f"{why}`{binary}` found at {shutil.which(binary)}", provider)
        if wanted == "claude-cli":
            return Choice(
                "rules", f"capture.provider is 'claude-cli' but `{binary}` is not on PATH: rules only"
            )
    return Choice(
        "rules",
        "no ANTHROPIC_API_KEY and no `claude` on PATH: rules only "
        "(explicit commands, references, unmistakable corrections)",
    )


def describe(start_path: Path | None = None) -> dict[str, Any]:
    """For `ccmemory doctor`: {'provider', 'reason', 'model', 'signal_model', 'budgets'}.
    Never instantiates a client (no network, no 1.5 s SDK import)."""
    from ccmemory.features.capture import settings as settings_mod
    from ccmemory.features.capture.paths import find_root

    root = find_root(start_path) if start_path is not None else find_root(None)
    s = settings_mod.load(root)
    choice = choose(s, instantiate=False)
    return {
        "provider": choice.name,
        "reason": choice.reason,
        "model": s.model if choice.name in ("anthropic", "claude-cli") else None,
        "signal_model": s.signal_model if choice.name in ("anthropic", "claude-cli") else None,
        "capture_enabled": s.enabled and not settings.DISABLE.get(),
        "max_llm_calls_per_session": s.max_llm_calls_per_session,
        "max_tokens_per_session": s.max_tokens_per_session,
    }
