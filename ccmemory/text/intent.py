"""Query intent: which memory types a query asks for ("what did we try that failed" wants
failed approaches, "what are we not allowed to do" wants constraints and preferences).

Pure and cheap (a few regular expressions); used by ``ccmemory.retrieval.search`` as a multiplicative
boost on the matching types. The cue lists were written from the type definitions, then checked on
the tuning half of ``bench/memories`` (see bench/RESULTS-retrieval.md).
"""

from __future__ import annotations

import re

#: How much a memory of an asked-for type is favoured over the others.
BOOST = 1.35

_CUES: dict[str, tuple[str, ...]] = {
    "failed_approach": (
        r"fail(ed|s|ure)?",
        r"did(n't| not) work",
        r"does(n't| not) work",
        r"gave up",
        r"give up",
        r"abandon(ed)?",
        r"dead ends?",
        r"went wrong",
        r"rolled back",
        r"tried",
        r"attempts?",
        r"regret(ted)?",
    ),
    "correction": (r"wrong", r"mistakes?", r"mistaken", r"misconceptions?", r"incorrect", r"misunderst\w*"),
    "exception": (
        r"exceptions?",
        r"broke the rule",
        r"break(ing)? the rule",
        r"waived?",
        r"one-off",
        r"allowed once",
    ),
    "preference": (r"prefer\w*", r"preferences?", r"style", r"conventions?"),
    "fact": (
        r"not allowed",
        r"forbidden",
        r"must not",
        r"never allowed",
        r"rules?",
        r"limits?",
        r"constraints?",
    ),
    "gotcha": (r"gotchas?", r"pitfalls?", r"watch out", r"traps?", r"careful"),
    "decision": (r"decid\w*", r"decisions?", r"chose", r"why did we"),
    "question": (r"open questions?",),
    "reference": (r"links?", r"runbooks?", r"documentation", r"references?", r"specs?"),
}
_PATTERNS = {t: re.compile(r"\b(" + "|".join(c) + r")\b", re.IGNORECASE) for t, c in _CUES.items()}
#: Constraints also live in preferences ("we never deploy on Friday") and exceptions name the rule.
_ALSO = {"fact": ("preference",)}


def wanted_types(query: str) -> set[str]:
    """The memory types the query's wording asks for (empty when it names none)."""
    out: set[str] = set()
    for mtype, pattern in _PATTERNS.items():
        if pattern.search(query):
            out.add(mtype)
            out.update(_ALSO.get(mtype, ()))
    return out


def boost(query_types: set[str], mtype: str) -> float:
    return BOOST if mtype in query_types else 1.0
