"""The provider seam: one method, text in, text out, with token usage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ccmemory.core.errors import CcmemoryError


class ProviderError(CcmemoryError):
    """The provider could not answer (network, auth, CLI failure). Retryable by the job queue."""


@dataclass
class Completion:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""


class Provider(Protocol):
    name: str

    def complete(self, system: str, prompt: str, *, model: str, max_tokens: int) -> Completion: ...
