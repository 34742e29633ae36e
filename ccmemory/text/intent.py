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

#: What to check before acting: a developer's task ("add retry to the exporter") wants the
#: gotchas, corrections, exceptions and failed approaches about its topic before the decisions.
CHECK_FIRST = ("gotcha", "correction", "exception", "failed_approach")
#: The verbs a coding task starts with (imperative mood), optionally after a polite or
#: first-person lead-in ("please", "can you", "let's", "I need to").
_TASK_VERBS = (
    "add", "adapt", "adjust", "allow", "automate", "avoid", "build", "bump", "cache", "change", "clean",
    "configure", "convert", "create", "debug", "delete", "deploy", "deprecate", "disable", "drop",
    "enable", "ensure", "extend", "extract", "fix", "generate", "handle", "implement", "improve",
    "integrate", "introduce", "make", "merge", "migrate", "move", "optimi[sz]e", "patch", "port",
    "refactor", "release", "remove", "rename", "replace", "restructure", "retry", "revert", "rewrite",
    "rotate", "run", "schedule", "send", "set", "ship", "speed", "split", "store", "support", "switch",
    "test", "tune", "turn", "update", "upgrade", "use", "validate", "wire", "write",
)  # fmt: skip
_TASK = re.compile(
    r"^\s*(?:(?:please|pls|ok|okay|now|then|so)[,\s]+)*"
    r"(?:(?:can|could|would|will) you\s+|let'?s\s+|(?:i|we) (?:need|want|have) to\s+|help me\s+)?"
    r"(?:please\s+)?(?:" + "|".join(_TASK_VERBS) + r")\b",
    re.IGNORECASE,
)


def is_task(query: str) -> bool:
    """True when the query reads as an instruction to change something (imperative mood)."""
    return _TASK.match(query) is not None


def wanted_types(query: str) -> set[str]:
    """The memory types the query's wording asks for (empty when it names none); a task prompt
    asks for what to check before acting (CHECK_FIRST)."""
    out: set[str] = set()
    for mtype, pattern in _PATTERNS.items():
        if pattern.search(query):
            out.add(mtype)
            out.update(_ALSO.get(mtype, ()))
    if is_task(query):
        out.update(CHECK_FIRST)
    return out


def boost(query_types: set[str], mtype: str) -> float:
    return BOOST if mtype in query_types else 1.0
