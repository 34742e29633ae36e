"""Lexical overlap of two short texts (capture's duplicate and polarity checks): content words
and their Jaccard similarity. Cheap, deterministic, explainable."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9][a-z0-9_.\-]*[a-z0-9]|[a-z0-9]")
_STOP = frozenset(
    "the a an and or of to in on for with is are be was were it this that we use using not no "
    "do does don't should must can will from by as at into than then instead".split()
)


def tokens(text: str) -> set[str]:
    # single letters carry no meaning, single digits do ("Python 2" vs "Python 3")
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and (len(w) > 1 or w.isdigit())}


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of content words: cheap, deterministic, explainable."""
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)
