"""Anthropic Messages API through the official `anthropic` SDK (imported lazily: ~1.5 s)."""

from __future__ import annotations

from typing import Any

from ccmemory.features.capture.providers.base import Completion, ProviderError


class AnthropicProvider:
    name = "anthropic"

    def __init__(
        self,
        api_key: str | None = None,
        *,
        http_client: Any = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
    ):
        import anthropic

        self._anthropic = anthropic
        kwargs: dict[str, Any] = {"timeout": timeout, "max_retries": max_retries}
        if api_key is not None:
            kwargs["api_key"] = api_key
        if http_client is not None:
            kwargs["http_client"] = http_client
        if base_url is not None:
            kwargs["base_url"] = base_url
        self.client = anthropic.Anthropic(**kwargs)

    def complete(self, system: str, prompt: str, *, model: str, max_tokens: int) -> Completion:
        try:
            resp = self.client.messages.create(
                model=model,
                max_tokens=max_tokens,
                system=system,
                messages=[{"role": "user", "content": prompt}],
            )
        except self._anthropic.APIError as exc:
            raise ProviderError(f"anthropic API: {type(exc).__name__}: {exc}") from None
        content = getattr(resp, "content", None)
        if not isinstance(content, list):  # a proxy answering HTML/text with status 200
            raise ProviderError(f"anthropic API: unexpected response ({type(resp).__name__})")
        text = "".join(
            str(getattr(block, "text", "")) for block in content if getattr(block, "type", None) == "text"
        )
        usage = getattr(resp, "usage", None)
        return Completion(
            text=text,
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            model=str(getattr(resp, "model", model)),
        )
