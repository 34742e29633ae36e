"""Opposed rules in plain words: "use X" against "don't / never / avoid X" (analysis, personal)."""

from __future__ import annotations

import re
from typing import Any


def norm_text(value: Any) -> str:
    """Words of `value`, case-folded, single-spaced."""
    return " ".join(re.findall(r"\w+", str(value or "").casefold()))


_NEG = r"(?:don'?t|do not|never|avoid|stop|no longer|not)"


def opposition(a: str, b: str) -> str | None:
    """'use X' vs 'don't use X' / 'avoid X' / 'never use X': the shared phrase, else None."""
    ta, tb = norm_text(a.replace("'", "")), norm_text(b.replace("'", ""))
    for pos, neg in ((ta, tb), (tb, ta)):
        m = re.match(rf"^(?:{_NEG} )+(?:use |using |do )?(.+)$", neg.replace("dont", "don't"))
        if not m:
            continue
        phrase = m.group(1).strip()
        if len(phrase) >= 3 and re.sub(r"^(?:use |using |do |always )", "", pos).startswith(phrase):
            return phrase
    return None
