"""The user's own `claude` CLI in print mode (`claude -p --output-format json`): no extra key.

The child must not re-trigger ccmemory's hooks: it runs with `CCMEMORY_DISABLE=1` (our hook turns
into a no-op; Claude Code passes its environment to hooks) from a scratch working directory, so
the project's own settings, CLAUDE.md and transcripts folder are not involved either.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

from ccmemory.core.settings import DISABLE
from ccmemory.features.capture.providers.base import Completion, ProviderError


class ClaudeCliProvider:
    name = "claude-cli"

    def __init__(self, binary: str = "claude", *, timeout: float = 180.0):
        found = shutil.which(binary)
        if found is None:
            raise ProviderError(f"`{binary}` not found on PATH")
        self.binary = found
        self.timeout = timeout

    def complete(self, system: str, prompt: str, *, model: str, max_tokens: int) -> Completion:
        env = dict(os.environ)
        env[DISABLE.name] = "1"
        env.pop("CLAUDECODE", None)  # allow running from inside a Claude Code session
        args = [
            self.binary,
            "-p",
            "--output-format",
            "json",
            "--model",
            model,
            "--max-turns",
            "1",
            "--append-system-prompt",
            system,
        ]
        with tempfile.TemporaryDirectory(prefix="ccmemory-cli-") as scratch:
            try:
                proc = subprocess.run(
                    args,
                    input=prompt,
                    capture_output=True,
                    text=True,
                    timeout=self.timeout,
                    env=env,
                    cwd=scratch,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise ProviderError(f"claude CLI timed out after {self.timeout:.0f}s") from None
            except OSError as exc:
                raise ProviderError(f"claude CLI could not start: {exc}") from None
        if proc.returncode != 0 and not proc.stdout.strip():
            raise ProviderError(f"claude CLI exited {proc.returncode}: {proc.stderr.strip()[:300]}")
        try:
            envelope = json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise ProviderError("claude CLI printed no JSON envelope") from None
        if not isinstance(envelope, dict) or envelope.get("is_error"):
            detail = envelope.get("result") if isinstance(envelope, dict) else envelope
            raise ProviderError(f"claude CLI reported an error: {str(detail)[:300]}")
        usage = envelope.get("usage") or {}
        return Completion(
            text=str(envelope.get("result") or ""),
            input_tokens=int(usage.get("input_tokens") or 0)
            + int(usage.get("cache_read_input_tokens") or 0)
            + int(usage.get("cache_creation_input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            model=model,
        )
