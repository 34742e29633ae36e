"""Per-session LLM budgets and the usage log (`.ccmemory/local/usage.jsonl`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ccmemory.core import spool
from ccmemory.features.capture.paths import LocalPaths, safe_name
from ccmemory.features.capture.providers.base import Completion
from ccmemory.features.capture.settings import CaptureSettings


class Budget:
    """Counts calls and tokens per session in `state/<session>.usage.json`."""

    def __init__(self, paths: LocalPaths, session: str, settings: CaptureSettings):
        self.paths = paths
        self.session = session
        self.settings = settings
        self.file: Path = paths.state / f"{safe_name(session)}.usage.json"

    def totals(self) -> dict[str, int]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                return {k: int(data.get(k, 0)) for k in ("calls", "input_tokens", "output_tokens")}
        except (OSError, ValueError):
            pass
        return {"calls": 0, "input_tokens": 0, "output_tokens": 0}

    def allows(self, estimated_tokens: int = 0) -> tuple[bool, str]:
        t = self.totals()
        if t["calls"] >= self.settings.max_llm_calls_per_session:
            return False, f"session LLM call budget spent ({t['calls']} calls)"
        used = t["input_tokens"] + t["output_tokens"]
        if used + estimated_tokens > self.settings.max_tokens_per_session:
            return False, f"session token budget spent ({used} tokens used)"
        return True, ""

    def record(
        self, completion: Completion | None, *, provider: str, purpose: str, ok: bool, note: str = ""
    ) -> None:
        t = self.totals()
        t["calls"] += 1
        if completion is not None:
            t["input_tokens"] += completion.input_tokens
            t["output_tokens"] += completion.output_tokens
        from ccmemory.core.atomic import atomic_write

        atomic_write(self.file, json.dumps(t).encode(), overwrite=True)
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "session": self.session,
            "provider": provider,
            "purpose": purpose,
            "model": completion.model if completion else None,
            "input_tokens": completion.input_tokens if completion else 0,
            "output_tokens": completion.output_tokens if completion else 0,
            "ok": ok,
        }
        if note:
            entry["note"] = note[:200]
        spool.append(self.paths.usage, entry, fsync=False)


def budgeted_complete(
    choice: Any,
    budget: Budget | None,
    system: str,
    prompt: str,
    *,
    model: str,
    max_tokens: int,
    purpose: str,
) -> Completion | None:
    """One LLM call through ``choice.provider`` inside the session's budget (None: over budget,
    nothing sent). Both texts are redacted once more on the way out; the call and its tokens are
    recorded, a failed one too. ProviderError propagates (the caller retries or falls back)."""
    import logging

    from ccmemory.core.redact import redact
    from ccmemory.features.capture.providers.base import ProviderError

    system, prompt = redact(system), redact(prompt)  # last line of defence
    if budget is not None:
        ok, why = budget.allows(len(prompt) // 4 + max_tokens)
        if not ok:
            logging.getLogger("ccmemory.features.capture").info("LLM call (%s) skipped: %s", purpose, why)
            return None
    try:
        completion = choice.provider.complete(system, prompt, model=model, max_tokens=max_tokens)
    except ProviderError as exc:
        if budget is not None:
            budget.record(None, provider=choice.name, purpose=purpose, ok=False, note=str(exc))
        raise
    if budget is not None:
        budget.record(completion, provider=choice.name, purpose=purpose, ok=True)
    return completion
