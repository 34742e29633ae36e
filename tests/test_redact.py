"""Redaction: every secret kind is replaced, private sections vanish, ordinary text survives."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ccmemory.core.redact import find_secrets, redact, redact_obj
from tests.capture_helpers import assert_no_secrets, secret_text
from tests.secret_samples import CASES


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
        [sys.executable, "-X", "importtime", "-c", "import ccmemory.core.redact"],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    names = {line.split("|")[-1].strip() for line in out.splitlines()}
    assert "dataclasses" not in names and "typing" not in names


def test_every_match_holds_a_marker_of_its_kind() -> None:
    """The per-kind prefilter (`_NEEDS`) skips a pattern when the text holds none of its markers:
    every match any pattern finds in the samples and the corpus (secrets and near misses, with
    upper-case, long-s and dotted/dotless i variants) must hold one, or a secret would be kept."""
    from ccmemory.core import redact as r
    from tests.secret_corpus import CORPUS

    texts = [t for t, _s, _k in CASES] + [t for _k, t, _s, _n in CORPUS] + [n for *_x, n in CORPUS]
    texts += [t.upper() for t in texts] + [t.replace("s", "\u017f").replace("i", "\u0131") for t in texts]
    texts += [t.replace("I", "\u0130") for t in texts]
    checked = 0
    for kind, pattern, _group in r._patterns():
        needs = r._NEEDS.get(kind)
        if needs is None:
            continue
        for text in texts:
            for m in pattern.finditer(text):
                assert any(n in r._fold(m.group(0)) for n in needs), (kind, m.group(0))
                checked += 1
    assert checked > 100


def test_the_prefilter_skips_only_patterns_that_cannot_match() -> None:

    page = '<a href="ccmemory://memory/01HK">Backup refresh token</a> <code>src/vault.py</code>\n' * 40
    assert redact(page) == page
    leaked = page + "\nexport GITHUB_TOKEN=ghp_" + "a1B2" * 9 + "\n"
    assert "ghp_a1B2" not in redact(leaked)
    assert "[REDACTED:" in redact(leaked.replace("GITHUB_TOKEN", "GITHUB_TOKEN".lower()))
