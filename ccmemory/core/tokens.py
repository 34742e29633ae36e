"""Token estimates without a tokenizer (hooks cannot afford one)."""

from __future__ import annotations


def estimate_tokens(text: str) -> int:
    """About four characters a token for English prose (no tokenizer import on the hook path)."""
    return (len(text) + 3) // 4
