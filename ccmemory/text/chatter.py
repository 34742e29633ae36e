"""Is a user's prompt the kind that may need a memory? Cheap checks made before anything is
ranked, on the hook path of every prompt (no stemmer, no other regular expressions loaded):
how many content words it has, whether it is asked as a question, and whether it says it is
about things in general or asks a textbook question (a comparison, a language's feature, what a
kind of thing is) that does not point at the project ("we", "our", "the team", "here"), or
steers the session ("run the tests again"). Used by
``ccmemory.features.recall.engine.speaks_to_project``.
"""

from __future__ import annotations

import functools
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
#: Textbook questions, asked as questions and general unless they point at the project ("we", "our",
#: "us", "the team", "here": "why do we use Redis vs Postgres?", "how does the team want errors
#: returned in Go?"): "X vs Y, which one?" and a question about a programming language ("… in
#: Python?", "… in Python 3.12?"). An instruction that names two things ("benchmark msgpack vs
#: json") or a language ("rewrite the parser in Rust") is a task.
_TEXTBOOK = re.compile(
    r"\b(?:vs\.?|versus)\b"
    r"|\bin (?:python|go|golang|rust|java|kotlin|javascript|typescript|c#|c\+\+|ruby|elixir|php|swift"
    r"|bash|sql)(?: \d[\d.]*)?\s*\?*\s*$",
    re.IGNORECASE,
)
#: A comparison asked for, question or not ("explain the difference between ISO-8859-1 and UTF-8",
#: "summarise the differences between Java 17 and 21"); "X vs Y" only when asked ("benchmark msgpack
#: vs json" is a task, "inches versus centimetres on incoming parcels" a search) or to be explained
#: or weighed.
_COMPARE = re.compile(
    r"\b(?:differences? between|differ(?:s|ent)? from)\b"
    # "X vs Y" asked to be explained or weighed, question or not ("explain rate limiting, token
    # bucket vs leaky bucket", "DataMatrix vs QR, what are the tradeoffs"; 2026-11-26, sixth session)
    r"|^\s*(?:can you |could you |please )?explain\b.*\b(?:vs\.?|versus)\b"
    r"|\b(?:vs\.?|versus)\b.*\b(?:trade-?offs|pros and cons)\b"
    r"|\b(?:trade-?offs|pros and cons)\b.*\b(?:vs\.?|versus)\b",
    re.IGNORECASE,
)
#: A concept asked for by its register, question or not: "what's a Postgres advisory lock?", "explain
#: what a GIN index is", "…, conceptually?", "…at a high level", "…, quick summary". The indefinite
#: article asks what a kind of thing is, not what this project's thing does ("what's a good
#: timeout for the carrier API?" asks for a value: not matched). Chosen on the tuning sets
#: (bench/RESULTS-recall.md); "stands for", "walk me through", "explain how" and "internally" were
#: left out: a project's own acronym or flow is asked the same way.
_CONCEPT = re.compile(
    r"\bwhat(?:'s| is| are) (?:a|an)\b(?! (?:good|safe|sensible|reasonable|better|clean|nice|quick)\b)"
    r"|^\s*(?:can you |could you |please )?explain what (?:a|an)\b"
    r"|\b(?:conceptually|at a high level|quick summary|in a nutshell)\b"
    # the register of a general explanation or of common practice (2026-11-26, sixth session):
    # "generally, when would someone pick…", "in plain English", "like I'm new to this", "to a
    # junior dev", "what do people usually do?", "rule of thumb", "best practices", "common
    # mistakes", "ZPL basics", "what's new in Python 3.12", "under the hood", "which would you
    # pick?", "when to use which", "who came up with it?"; not "usually" alone ("what usually
    # knocks origin over?" asks about the project)
    r"|\bgenerally\b|\bin (?:plain|simple|layman'?s) (?:english|words|terms)\b|\blike i'?m (?:new|five|5)\b"
    r"|\b(?:to|for) an? (?:junior|beginner|newbie|new dev)"
    r"|\bwhat do (?:most )?(?:people|folks|others)\b"
    r"|\b(?:people|someone|folks) (?:usually|typically|normally)\b"
    r"|\b(?:why|when) would (?:someone|anyone|one)\b|\bwhen would you\b"
    r"|\brules? of thumb\b|\bbest practices?\b|\bcommon (?:mistakes|pitfalls)\b|\bbasics\b"
    r"|\bwhat'?s new in\b|\bunder the hood\b|\bwould you (?:pick|choose|use|recommend|go with)\b"
    r"|\bwhen to use which\b|\bwho (?:came up with|invented)\b",
    re.IGNORECASE,
)
#: How a named thing works in general, asked as a question that names nothing of the project's
#: ("how does TLS session resumption work?", "how does Celery's acks_late setting work", and since
#: the tenth session with words after "work": "how does caching work in the Next.js app router?",
#: 13 chatter prompts and 1 question of the 23 tuning sets; not "how does the nightly export
#: work?", this project's job), how two things compare ("how do React
#: Native and Flutter compare…"), pros and cons (not "the trade-offs", a decision's), "ELI5", "what
#: is X and why/what/how …" (not "what's fhir-api written in, and how do I run its tests?"), "what
#: does X do in <Name> / in a …?" (not "in production"). Chosen on the seventeen tuning sets
#: (2026-11-27, ninth session: no task or question of any set matches; bench/RESULTS-recall.md).
_EXPLAINER = re.compile(
    # the subject names nothing of ours (no the/this/that/my/I before "work"), and what follows
    # "work" neither ("…work in the Next.js app router?", "…work across services?", not "…work
    # in this repo?"; not "work out", which asks how something is computed)
    r"^\s*how (?:does|do)\b(?:(?!\b(?:the|this|that|my|i)\b)[^,?])*?\bwork\b(?!\s+out\b)"
    r"(?![^?]*\b(?:this|that|my|i)\b)"
    r"|^\s*how (?:do|does)\b.*\bcompare\b"
    r"|(?<!\bthe )\b(?:pros and cons|trade-?offs)\b"  # not "what were the trade-offs of dropping Kafka?"
    r"|\beli5\b"
    r"|^\s*what(?:'s| is) (?!the\b)[^?]*?,? and (?:why|what|how)\b(?! (?:do|can|should) i\b)"
    r"|^\s*what (?:does|do) \S+ do in (?:an? |(?-i:[A-Z]))",  # "in Celery", "in a …", not "in production"
    re.IGNORECASE,
)
#: Steering the conversation, not asking anything new: "ok run the tests again", "run the golden
#: tests one more time please" (the session already has what it needs for them).
_AGAIN = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|cool|great|thanks|nice|alright|right)\W+)?(?:now\s+|please\s+)?"
    r"(?:re-?run\s+(?:the\s+|all\s+the\s+)?(?:[\w-]+\s+)?(?:tests?|specs?|suite|linter|lint|build|checks?)\W*$"
    r"|(?:re-?)?run\b[^.?!]{0,40}?\b(?:again|once more|one more time)\b)",
    re.IGNORECASE,
)
_OURS = re.compile(r"\b(?:we|our|ours|us|team|here)\b", re.IGNORECASE)
#: A question that opens like an explanation and names a product of the stack as its subject,
#: pointing at nothing of the project's: "how does Flyway handle a checksum mismatch?", "what does
#: tesseract's page segmentation mode 6 do?", "how long can an S3 presigned URL live?" (the names:
#: ``ccmemory/data/stack-names.txt``). Not "is search still on elasticsearch?" (no such lead), "what
#: Django version is the CMS on these days?", "what's celery using as the broker in prod?" (the
#: project's state: still, now, these days, prod...), "how do analytics events get into bigquery?"
#: (the product is not the subject: only the first ``_SUBJECT_WORDS`` words after the lead count).
#: Chosen on the 25 tuning sets (2026-11-27, tenth session: 37 chatter prompts and no task or
#: question of them; bench/RESULTS-recall.md).
_PRODUCT_LEAD = re.compile(
    r"^\s*(?:how (?:does|do|is|are|can|long|many|much)|what (?:does|do|is|are)|what's)\b", re.IGNORECASE
)
_PROJECT_STATE = re.compile(
    r"\b(?:we|our|ours|us|here|i|my|me|mine|this|that|prod|production|staging|still|now|currently|"
    r"anymore|these days|nowadays)\b",
    re.IGNORECASE,
)
_SUBJECT_WORDS = 5


@functools.cache
def _names() -> frozenset[str]:
    """The product names, read once (only when a prompt has the lead)."""
    from pathlib import Path

    try:
        text = (Path(__file__).resolve().parents[1] / "data" / "stack-names.txt").read_text("utf-8")
    except OSError:  # a broken install: the rule is off, recall goes on
        text = ""
    return frozenset(w for line in text.splitlines() if not line.startswith("#") for w in line.split())


def asks_how_a_product_works(text: str) -> bool:
    """True for a question about a product of the stack in general (see ``_PRODUCT_LEAD``)."""
    lead = _PRODUCT_LEAD.search(text)
    if lead is None or _PROJECT_STATE.search(text) is not None:
        return False
    subject = [w.strip(".,?!:;()[]'\"`").lower() for w in text[lead.end() :].split()[:_SUBJECT_WORDS]]
    names = _names()
    return any(w in names or (w.endswith("'s") and w[:-2] in names) for w in subject)


#: Lower-case only: "WE" is a weekday code (BYDAY=MO,WE), "US" a country ("a US zip code").
_ABOUT_US = re.compile(r"\b(?:we|our|ours|us|here)\b")


def about_us(text: str) -> bool:
    """True when the prompt speaks of this project's people or things: we, our, us, here."""
    return _ABOUT_US.search(text) is not None


def content_words(text: str) -> int:
    """Distinct words that are not stopwords (as the analyser splits them, before stemming: a
    word and its plural count twice, which the full analysis would merge)."""
    return len(set(words(text)))


def is_question(text: str) -> bool:
    """True when the prompt is asked as a question (a closing "?" or a question's lead word)."""
    return text.rstrip().endswith("?") or _QUESTION.match(text) is not None


def steers(text: str) -> bool:
    """True when the prompt steers the session rather than asks anything new ("ok run the tests
    again", "rerun the linter"), whoever it speaks of."""
    return _AGAIN.search(text) is not None


def asks_general(text: str) -> bool:
    """True when the prompt says it is about things in general (or asks for a joke or a poem), or
    asks a textbook question (a comparison of two things, a programming language's feature) or
    for a concept ("what's a …?"), and does not point at the project (we, our, us, team, here)."""
    if _GENERAL.search(text) is not None:
        return True
    if _OURS.search(text) is not None:
        return False
    if any(rx.search(text) is not None for rx in (_CONCEPT, _COMPARE, _EXPLAINER)):
        return True
    if asks_how_a_product_works(text):
        return True
    return is_question(text) and _TEXTBOOK.search(text) is not None
