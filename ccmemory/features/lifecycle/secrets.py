"""Secret detection for `ccmemory check`.

Uses `ccmemory.core.redact.find_secrets` (the capture pipeline's detector) when it is installed, so
check and capture agree; otherwise this small built-in detector covers the common shapes: AWS
access key ids, GitHub tokens, Slack tokens, OpenAI and Anthropic keys, PEM private keys, JWTs and
passwords inside URLs. Findings carry the kind and span, never the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class SecretHit:
    kind: str
    start: int
    end: int


_BUILTIN: list[tuple[str, re.Pattern[str]]] = [
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b")),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai_key", re.compile(r"\bsk-(?!ant-)(?:proj-)?[A-Za-z0-9_-]{20,}")),
    ("private_key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("url_password", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:([^\s@/]{3,})@[^\s]+", re.IGNORECASE)),
]
# ccmemory's own redaction markers: a memory captured with a redacted password is not a leak
_MARKER = re.compile(r"\[REDACTED:[a-z0-9_]{1,40}\]")
_PLACEHOLDER = re.compile(r"^(?:\*+|x+|\.\.\.|<[^>]*>|\$\{?[A-Z_]+\}?|password|pass|secret|changeme)$", re.I)


def _builtin(text: str) -> list[SecretHit]:
    hits: list[SecretHit] = []
    for kind, pattern in _BUILTIN:
        for m in pattern.finditer(text):
            if kind == "url_password":
                if _PLACEHOLDER.match(m.group(1)):
                    continue
                hits.append(SecretHit(kind, m.start(1), m.end(1)))
            else:
                hits.append(SecretHit(kind, m.start(), m.end()))
    return sorted(hits, key=lambda h: (h.start, h.end))


def _own_markers(text: str, hits: list[SecretHit]) -> list[SecretHit]:
    """`hits` without those that are (inside) one of our `[REDACTED:kind]` markers."""
    if "[REDACTED:" not in text:
        return hits
    spans = [(m.start(), m.end()) for m in _MARKER.finditer(text)]
    out = []
    for h in hits:
        value = text[h.start : h.end].strip("\"'")
        if _MARKER.fullmatch(value) or any(s <= h.start and h.end <= e for s, e in spans):
            continue
        if value and not _MARKER.sub("", value).strip("\"' "):
            continue  # only markers
        out.append(h)
    return out


def detector_name() -> str:
    try:
        from ccmemory.core.redact import find_secrets  # noqa: F401  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return "built-in"
    return "ccmemory.core.redact"


def find_secrets(text: str) -> list[SecretHit]:
    try:
        from ccmemory.core.redact import find_secrets as shared  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return _own_markers(text, _builtin(text))
    out = []
    for f in shared(text):
        if f.kind == "private":  # <private> sections are a capture rule, not a leaked secret
            continue
        out.append(SecretHit(str(f.kind), int(f.start), int(f.end)))
    # the built-in shapes too: a secret either detector knows is reported
    seen = {(h.start, h.end) for h in out}
    out += [h for h in _builtin(text) if not any(s <= h.start < e for s, e in seen)]
    return sorted(_own_markers(text, out), key=lambda h: (h.start, h.end))
