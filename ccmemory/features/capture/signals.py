"""Classify what the user's words signal: correction, preference, context, task, question,
feedback. Cheap regex heuristics. They annotate segments for the LLM (what to look for) and never
decide whether a segment is sent: the model judges every substantive segment (extract.substantive)."""

from __future__ import annotations

import re
from collections.abc import Iterable

SIGNALS = ("correction", "preference", "context", "task", "question", "feedback")
# the signals that on their own justify an extraction call
STRONG = frozenset({"correction", "preference", "context"})

_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "correction",
        re.compile(
            r"(?ix)^\s*(no[,.!\s]|nope\b|wrong\b|that'?s\s+(not|wrong|incorrect)|"
            r"not\s+(quite|what|like\s+that)|actually[,\s]|stop\b|don'?t\s+do\s+that|undo\b|revert\b)"
            r"|\b(you\s+(broke|misunderstood|forgot|missed)|that\s+is\s+(wrong|incorrect)|"
            r"that'?s\s+not\s+(right|correct|how)|instead\s+of|should\s+(have|be)\s+used?|"
            r"i\s+(said|told\s+you|meant)|isn'?t\s+(right|correct)|doesn'?t\s+work\s+like)"
        ),
    ),
    (
        "preference",
        re.compile(
            r"(?ix)\b(i\s+(prefer|like|want\s+you\s+to|'d\s+rather)|always\s+\w+|never\s+\w+|"
            r"please\s+(always|never|don'?t)|from\s+now\s+on|in\s+(this|our)\s+(project|repo|codebase)\s+we|"
            r"we\s+(use|prefer|don'?t\s+use)|use\s+\S+\s+(instead|rather)|don'?t\s+(ever\s+)?use)\b"
        ),
    ),
    (
        "context",
        re.compile(
            r"(?ix)\b(for\s+context|fyi|note\s+that|keep\s+in\s+mind|the\s+reason\s+(is|we)|because\s+"
            r"(our|the|we)|we\s+(decided|chose|agreed)|the\s+(api|server|db|database|deploy\w*|"
            r"prod\w*)\s+(is|uses|runs|requires)|our\s+\w+\s+(is|uses|requires)|requirement|constraint|"
            r"deadline|customer|legacy)\b"
        ),
    ),
    (
        "feedback",
        re.compile(
            r"(?ix)^\s*(thanks|thank\s+you|great|perfect|nice|good\s+job|awesome|looks\s+good|lgtm|"
            r"that\s+works|works\s+now)\b"
        ),
    ),
    (
        "question",
        re.compile(
            r"(?ix)(\?\s*$|^\s*(what|why|how|where|when|which|who|can\s+you\s+explain|"
            r"is\s+there|are\s+there|does|do\s+we|should\s+we|could\s+you\s+explain)\b)"
        ),
    ),
]


def classify(text: str) -> list[str]:
    """Every signal found in one prompt, strongest first; 'task' when nothing else matched."""
    found = [name for name, pattern in _RULES if pattern.search(text)]
    if not found or (found == ["feedback"] and len(text) > 80):
        found.append("task")
    return found


def classify_all(prompts: Iterable[str]) -> list[str]:
    """Union of signals over a segment's prompts, in SIGNALS order."""
    seen: set[str] = set()
    for prompt in prompts:
        seen.update(classify(prompt))
    return [s for s in SIGNALS if s in seen]


def primary(signals: list[str]) -> str:
    return signals[0] if signals else "task"
