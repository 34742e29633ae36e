"""Secret redaction shared by capture, MCP, check and logging.

`redact(text)` replaces every secret with a `[REDACTED:<kind>]` marker and removes
`<private>…</private>` sections entirely. `find_secrets(text)` reports what it found (kind and
span, never the value in clear). Only `re` is imported: hooks call this on every tool event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Finding", "find_secrets", "redact", "redact_obj"]


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int

    def preview(self, text: str) -> str:
        """First 4 characters of the secret and its length: enough to find it, not to use it."""
        value = text[self.start : self.end]
        return f"{value[:4]}…({len(value)} chars)"


# Private sections go first: they are removed, not marked, and may span lines. An unclosed
# <private> removes everything after it (fail closed).
_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)

# A secret-named variable: the name ENDS with one of these words (so `max_tokens`, `author`,
# `password_policy` are not secret names, while `DB_PASSWORD`, `githubToken`, `api-key` are).
_SECRET_NAME = (
    r"[A-Za-z0-9_.-]*?(?:PASSWORD|PASSWD|PWD|SECRET|SECRET_?KEY|TOKEN|API_?KEY|APIKEY|API-KEY|"
    r"ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|SESSION_?KEY|SIGNING_?KEY|AUTH_?KEY|DSN)"
)

# (kind, pattern, group holding the secret: 0 = whole match)
_PATTERNS: list[tuple[str, re.Pattern[str], int]] = [
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        0,
    ),
    ("anthropic_key", re.compile(r"\bsk-ant-(?:api|admin|oat)\d{0,3}-[A-Za-z0-9_\-]{20,}"), 0),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), 0),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"), 0),
    (
        "aws_secret_key",
        re.compile(
            r"(?i)(aws_?secret_?(?:access_?)?key(?:_id)?|secret_?access_?key)"
            r"(\s*[:=]\s*|\"\s*:\s*\"|'\s*:\s*')[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        3,
    ),
    ("github_token", re.compile(r"\b(?:gh[pousr])_[A-Za-z0-9]{36,255}\b"), 0),
    ("github_token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{60,255}\b"), 0),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0),
    (
        "slack_webhook",
        re.compile(r"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+"),
        0,
    ),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), 0),
    ("stripe_key", re.compile(r"\b[sr]k_(?:live|test)_[0-9A-Za-z]{20,}\b"), 0),
    (
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        0,
    ),
    # scheme://user:password@host — keep user and host, hide the password
    (
        "url_password",
        re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.\-]{1,30}://[^\s:/@\"'<>]{1,128}):([^\s@/\"'<>]{1,256})@"),
        2,
    ),
    # Password=...; in ADO/JDBC style connection strings
    (
        "connection_password",
        re.compile(r"(?i)\b(password|pwd)\s*=\s*([^;\s\"']{1,256})(?=;|\s|\"|'|$)"),
        2,
    ),
    ("bearer_token", re.compile(r"(?i)\b(bearer)\s+([A-Za-z0-9_\-.=~+/]{20,})"), 2),
    # .env-style / shell / YAML / JSON assignment of a secret-named variable
    (
        "secret_assignment",
        re.compile(
            rf"(?i)(?:^|(?<=[\s;,{{(\"'`]))(?:export\s+)?[\"']?({_SECRET_NAME})\b[\"']?"
            r"(\s*(?::=|=|:)\s*)(?!\[REDACTED)"
            r"(\"[^\"\n]{1,512}\"|'[^'\n]{1,512}'|[^\s\"',;}#]{1,512})",
            re.MULTILINE,
        ),
        3,
    ),
]

# Values that are obviously not secrets (placeholders, references to other variables)
_HARMLESS = re.compile(
    r"^[\"']?(?:|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^>]*>|x+|\*+|\.\.\.|…|none|null|true|false|"
    r"changeme|redacted|example|your[_-].*|os\.environ.*|process\.env.*|getenv.*|env\(.*|"
    r"str|int|bool|bytes|string|number|any|optional\[.*|none\)?|self\..*)[\"']?$",
    re.IGNORECASE,
)


def find_secrets(text: str) -> list[Finding]:
    """Every secret span in `text`, sorted, overlaps merged. `<private>` sections count too."""
    if not text:
        return []
    spans: list[Finding] = [Finding("private", m.start(), m.end()) for m in _PRIVATE.finditer(text)]
    for kind, pattern, group in _PATTERNS:
        for m in pattern.finditer(text):
            start, end = m.span(group)
            if start < 0 or end <= start:
                continue
            if kind in ("secret_assignment", "connection_password") and _HARMLESS.match(
                m.group(group)
            ):
                continue
            spans.append(Finding(kind, start, end))
    spans.sort(key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for f in spans:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            if f.end > last.end:
                merged[-1] = Finding(last.kind, last.start, f.end)
            continue
        merged.append(f)
    return merged


def redact(text: str) -> str:
    """`text` with secrets replaced by `[REDACTED:<kind>]` and private sections removed."""
    if not text:
        return text
    findings = find_secrets(text)
    if not findings:
        return text
    out: list[str] = []
    pos = 0
    for f in findings:
        out.append(text[pos : f.start])
        if f.kind != "private":
            out.append(f"[REDACTED:{f.kind}]")
        pos = f.end
    out.append(text[pos:])
    result = "".join(out)
    # a replacement can create a new match (e.g. a quoted value split in two); one more pass
    return result if result == text else _second_pass(result)


def _second_pass(text: str) -> str:
    findings = [f for f in find_secrets(text) if f.kind != "private"]
    if not findings:
        return text
    out: list[str] = []
    pos = 0
    for f in findings:
        out.append(text[pos : f.start])
        out.append(f"[REDACTED:{f.kind}]")
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


def redact_obj(value: object) -> object:
    """Redact every string inside nested dicts/lists (keys too, values mostly)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(k)): redact_obj(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_obj(v) for v in value]
    return value
