"""Redaction: every secret kind is replaced, private sections vanish, ordinary text survives."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ccmemory.redact import find_secrets, redact, redact_obj
from tests.capture_helpers import SECRETS, assert_no_secrets, secret_text

CASES = [
    ("AWS access key AKIAZ7Q4XJ2M5N8P3R6T here", "AKIAZ7Q4XJ2M5N8P3R6T", "aws_access_key"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Xk2Lm9N", "wJalrXUtnFEMI", "aws_secret_key"),
    ("token ghp_R7d9Kq2mXv8LpT4nWz6Yb3Hc5Jf1Gs0Ae9Uu", "ghp_R7d9", "github_token"),
    (
        "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123",
        "github_pat_11",
        "github_token",
    ),
    ("xoxb-204817362514-4093827165403-Zq8Xk2Lm9NwR7d9Kq2mXv8Lp", "xoxb-2048", "slack_token"),
    (
        "hook https://hooks.slack.com/services/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",
        "Zq8Xk2Lm9NwR",
        "slack_webhook",
    ),
    ("OPENAI sk-proj-Qm3Zt8Vx2Lp9Rk4Ws7Yn1Bc6Df0Gh5Jk", "sk-proj-Qm3", "openai_key"),
    ("legacy sk-Qm3Zt8Vx2Lp9Rk4Ws7Yn1Bc6Df0Gh5JkT3BlbkFJ", "sk-Qm3Zt8", "openai_key"),
    (f"key {SECRETS['anthropic']}", "sk-ant-api03", "anthropic_key"),
    (f"jwt {SECRETS['jwt']}", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "jwt"),
    ("postgres://app:Tr0ub4dor-and-3-horses@db.internal:5432/prod", "Tr0ub4dor", "url_password"),
    ("mongodb+srv://root:p%40ssw0rd!@cluster0.mongodb.net/db", "p%40ssw0rd", "url_password"),
    ("Server=db;Database=app;User Id=sa;Password=Hunter2!xyz;", "Hunter2!xyz", "connection_password"),
    ("DB_PASSWORD=Tr0ub4dor-and-3-horses", "Tr0ub4dor", "secret_assignment"),
    ("export API_TOKEN='9f8e7d6c5b4a39281706f5e4d3c2b1a0'", "9f8e7d6c5b4a", "secret_assignment"),
    ('{"client_secret": "c2VjcmV0LXZhbHVlLTEyMzQ1"}', "c2VjcmV0LXZhbHVl", "secret_assignment"),
    ("stripeKey: sk_live_51HqZ8Xk2Lm9NwR7d9Kq2mXv8Lp", "sk_live_51", "stripe_key"),
    ("Authorization: Bearer Zq8Xk2Lm9NwR7d9Kq2mXv8LpT4nW", "Zq8Xk2Lm9NwR7d9", "bearer_token"),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1r",
        "private_key",
    ),
]


@pytest.mark.parametrize(("text", "secret", "kind"), CASES, ids=[c[2] for c in CASES])
def test_each_kind_is_redacted(text: str, secret: str, kind: str) -> None:
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert any(f.kind == kind for f in find_secrets(text))


def test_private_sections_are_removed_entirely() -> None:
    text = "keep this <private>my home address\nline 2</private> and this <PRIVATE>x</PRIVATE>."
    assert redact(text) == "keep this  and this ."
    assert "address" not in redact("unclosed <private> everything after is gone")


def test_ordinary_text_is_untouched() -> None:
    text = (
        "max_tokens=100 author: alice password_policy: strict\n"
        "def login(password: str) -> bool:\n    token = get_token()\n"
        "See https://docs.python.org/3/library/re.html and the key insight is caching.\n"
        "export PATH=$HOME/bin:$PATH\nAPI_KEY=${API_KEY}\n"
    )
    assert redact(text) == text


def test_all_secrets_in_one_text_and_nested_objects() -> None:
    text = secret_text()
    assert_no_secrets(redact(text), "redact()")
    nested = redact_obj({"cmd": text, "list": [text, {"inner": text}], "n": 3})
    assert_no_secrets(repr(nested), "redact_obj()")
    assert redact(redact(text)) == redact(text)  # idempotent


def test_import_is_light() -> None:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import ccmemory.redact"],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    names = {line.split("|")[-1].strip() for line in out.splitlines()}
    assert "dataclasses" not in names and "typing" not in names
