"""Is a user's prompt the kind that may need a memory? Cheap checks made before anything is
ranked, on the hook path of every prompt (no stemmer, no other regular expressions loaded):
how many content words it has, whether it is asked as a question, and whether it says it is
about things in general. Used by ``ccmemory.features.recall.engine.speaks_to_project``.
"""

from __future__ import annotations

import re

from ccmemory.text.analyzer import words

#: A question's lead word (or a closing "?"): an asked question, not an instruction.
_QUESTION = re.compile(
    r"^\s*(?:what|why|how|where|when|who|which|whose|is|are|do|does|did|can|could|should|"
    r"have|has|was|were|will|would)\b",
    re.IGNORECASE,
)
#: The prompt says it wants general knowledge or a bit of writing, not this project's: "in
#: general", a joke or a poem. Recall stays silent even when a memory shares its topic.
_GENERAL = re.compile(
    r"\b(?:in general|generally speaking|in general terms|jokes?|poems?|haikus?|limericks?|riddles?)\b",
    re.IGNORECASE,
)


def content_words(text: str) -> int:
    """Distinct words that are not stopwords (as the analyser splits them, before stemming: a
    word and its plural count twice, which the full analysis would merge)."""
    return len(set(words(text)))


def is_question(text: str) -> bool:
    """True when the prompt is asked as a question (a closing "?" or a question's lead word)."""
    return text.rstrip().endswith("?") or _QUESTION.match(text) is not None


def asks_general(text: str) -> bool:
    """True when the prompt says it is about things in general (or asks for a joke or a poem)."""
    return _GENERAL.search(text) is not None
