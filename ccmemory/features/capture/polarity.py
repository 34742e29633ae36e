"""Duplicate, supersede or distinct without an LLM: polarity-aware rules.

Word overlap says two memories are about the same subject; it cannot say whether they agree.
"Do not use X for events" and "Use X for events" share every content word. So overlap only opens
the question, and the stance decides it:

- a new memory that reverses (negation flipped, or "instead of", "rather than", "switch from/to",
  "no longer", "replace", "migrate", "move away from", "stop using", "drop") an existing one of the
  same type on the same subject -> `supersedes`;
- same type, same subject, same stance, no reversal marker -> `duplicate`;
- same type and subject otherwise -> `related`; else (other types included) `distinct`.
"""

from __future__ import annotations

import re

from ccmemory.text.overlap import tokens

SAME_SUBJECT = 0.3  # content-word overlap from which two memories are about the same thing
DUPLICATE = 0.75  # overlap from which a same-stance memory says the same thing

RELATIONS = ("duplicate", "supersedes", "related", "distinct")

_NEGATION = re.compile(
    r"(?i)\b(?:don'?t|do\s+not|does\s+not|doesn'?t|never|no\s+longer|not|avoid|stop\s+using|"
    r"shouldn'?t|should\s+not|must\s+not|mustn'?t|won'?t|will\s+not|cannot|can'?t|forbid\w*|ban\w*)\b"
)
_REVERSAL = re.compile(
    r"(?i)\b(?:instead\s+of|rather\s+than|switch(?:ed|es|ing)?\s+(?:[\w-]+\s+){0,4}?(?:from|to|over|back)|"
    r"mov(?:e|ed|es|ing)\s+(?:away\s+)?(?:from|off)|no\s+longer|not\s+any\s*more|anymore|"
    r"replac(?:e|ed|es|ing)|migrat(?:e|ed|es|ing)\s+(?:from|to|off)|revert(?:ed|s|ing)?\s+to|"
    r"stop\s+using|drop(?:ped|s|ping)?|supersed\w*|revers\w*|abandon\w*|in\s+place\s+of)\b"
)


def negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


def reverses(text: str) -> bool:
    return bool(_REVERSAL.search(text))


_REJECTED = re.compile(
    r"(?i)\b(?:instead\s+of|rather\s+than|not|don'?t\s+use|never\s+use|stop\s+using|no\s+longer\s+use|"
    r"(?:switch\w*|mov\w*|migrat\w*)\s+(?:[\w-]+\s+){0,4}?(?:away\s+)?from|replac\w*)\s+(.+?)(?:[,;.!]|\s+(?:to|with|because|but)\b|$)"
)


def rejected(text: str) -> set[str]:
    """Content words of what a text turns away from ("instead of X", "not X", "switch from X")."""
    out: set[str] = set()
    for m in _REJECTED.finditer(text):
        out |= tokens(m.group(1))
    return out


def overlap(a: str, b: str) -> float:
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)


def classify(
    new_type: str,
    new_title: str,
    new_text: str,
    old_type: str,
    old_title: str,
    old_text: str,
    *,
    new_rejected: str = "",
) -> str:
    """duplicate | supersedes | related | distinct for a new memory against an existing one.

    `*_text` is the title plus body (and type fields); the stance is read from the titles first,
    because bodies quote what was rejected ("... instead of X"). `new_rejected` is what the new
    memory says is wrong (a correction's `wrong_belief`)."""
    titles = overlap(new_title, old_title)
    # bodies may share boilerplate (a type's template text): they only count once titles meet
    subject = max(titles, overlap(new_text, old_text)) if titles > 0 else 0.0
    if subject < SAME_SUBJECT:
        return "distinct"
    flipped = negated(new_title) != negated(old_title)
    old_chosen = tokens(old_title) - rejected(old_title)
    # the new one rejects what the old one chose (words it also chooses are the shared subject)
    new_chosen = tokens(new_title) - rejected(new_title)
    turned = ((rejected(new_title) | tokens(new_rejected)) - new_chosen) & old_chosen
    if reverses(new_title):
        # both may say "instead of": then only a turn against the old choice is a reversal
        reversal = not reverses(old_title) or bool(turned)
    else:
        reversal = bool(turned) or (reverses(new_text) and bool(rejected(new_text) & old_chosen))
    if new_type != old_type:
        return "distinct"  # links across types are suggest_connections' job, not an automatic one
    if (flipped or reversal) and titles >= SAME_SUBJECT:
        return "supersedes"
    if titles >= DUPLICATE or (subject >= DUPLICATE and titles >= SAME_SUBJECT):
        return "duplicate"  # bodies alone may share a quoted prompt: the titles must agree too
    return "related"
