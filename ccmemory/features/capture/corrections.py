"""Rules-only corrections: precision first, never upside down.

A correction is written only for a phrasing whose sides are unmistakable, and the side the user
rejected always goes to `wrong_belief`:

- "use X instead of / rather than Y"            -> right X, wrong Y
- "instead of / rather than Y, use X"            -> right X, wrong Y
- "don't / never / stop using Y[,;.—] use X"     -> right X, wrong Y
- "not Y — use X" / "not Y but X"                -> right X, wrong Y
- "you used / wrote / returned X instead of Y"   -> right Y, wrong X (the assistant's choice is the wrong one)
- "it's / should be / we use / is called X, not Y" -> right X, wrong Y

Anything unsure writes nothing: questions, hedges ("maybe", "I wonder", "what if"), conditionals,
reported speech ("the logs say"), narration of the past ("we tried", "used to"; both only before a
reason clause such as "; it leaked last time"), "not only / not
just", lines that look like code, fenced code blocks, and a "use X instead of Y" whose own verb is
negated ("don't use X instead of Y" has the sides the other way round).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_CODE_LINE = re.compile(
    r"^\s*(?:def\s|class\s|for\s.+:\s*$|if\s.+:\s*$|import\s|from\s\S+\s+import|return\b|const\s|let\s|"
    r"var\s|select\s|update\s|insert\s|delete\s+from|\$\s)|[;{}]\s*$|^\s*\w+(?:\.\w+)*\s*=[^=]|\s#\s|^\s{4,}\S",
    re.IGNORECASE,
)
# anywhere in the line: the correction itself is hedged, asked or conditional
_UNSURE = re.compile(
    r"(?ix)\?|\b(?:maybe|perhaps|might|possibly|i\s+wonder|what\s+if|not\s+sure|consider|"
    r"i\s+think|probably|could\s+you|would\s+you|should\s+(?:we|i)|shall\s+we|how\s+about|"
    r"not\s+only|not\s+just|but\s+also|i['’]d|i\s+would|if|unless|whether)\b"
)
# before the first reason clause only: narration of the past or reported speech makes the
# statement someone else's or history ("the logs say X, not Y", "we tried X instead of Y last
# week"); after ", ", "; " or " because" it is the reason given for a correction ("use a bounded
# queue instead of a list; memory blew up last time")
_NARRATED = re.compile(
    r"(?ix)\b(?:used\s+to|we\s+tried|i\s+tried|previous(?:ly)?|long\s+ago|"
    r"last\s+(?:year|sprint|week|month|time)|says?|said|told|reports?|shows?|claims?|claimed|"
    r"according\s+to|apparently)\b"
)
_REASON = re.compile(r"(?i)[,;]|\s[—–]\s|\s-\s|\s+because\b")
_LEAD = re.compile(
    r"(?i)^\s*(?:(?:no+|nope|nah|wrong|actually|hmm|well|please|ugh|wait|oops|that'?s\s+(?:wrong|incorrect))"
    r"\b[\s,.:;!—–-]*)+"
)
# where a side ends: punctuation (a dot or colon only before a space: "v2.1", "02:00", "a::b"
# stay whole), a dash, or a clause word
_END = re.compile(
    r"(?i)\s*(?:[,;!?()]|[.:](?=\s|$)|\s[—–-]+\s|\s+(?:because|since|so\s+that|as\s+well|and|but|when|"
    r"unless|instead|please)\b|$)"
)
_NEG = r"(?:don'?t|do\s+not|never|please\s+don'?t|stop\s+using|avoid(?:\s+using)?|no\s+more)"
_USE = r"(?:(?:please\s+|just\s+|always\s+)?(?:use|prefer|go\s+with|switch\s+to|we\s+use|we\s+prefer))"
_YOU = r"(?:you\s+(?:used|wrote|returned|imported|added|called|picked|chose|put|created|made))"
_IS = (
    r"(?:it'?s|it\s+is|that'?s|should\s+be|must\s+be|is\s+called|are\s+called|lives\s+in|live\s+in|"
    r"goes\s+in|go\s+in|lives?\s+(?:under|at)|we\s+use|we\s+deploy\s+(?:with|to|on)|we\s+run|use|is|are|"
    r"(?:we'?re|we\s+are)\s+(?:on|using)|runs?\s+(?:on|at|in|every))"
)
_INSTEAD = r"(?:instead\s+of|rather\s+than)"
_NEGATED = re.compile(r"(?i)\b(?:not|never|no)\b|n't\b")

_SEP = r"\s*(?:[,;]|\.\s|\s[—–-]+\s)\s*"  # between a rejected and a wanted clause
_P_NEG_THEN_USE = re.compile(
    rf"(?i)\b{_NEG}\s+(?:use\s+|using\s+)?(?P<wrong>.+?){_SEP}(?:instead\s*,?\s*)?{_USE}\s+(?P<right>.+)$"
)
# "we don't use Y (any more), it's X"
_P_NEG_THEN_IS = re.compile(
    rf"(?i)\b(?:we\s+)?(?:don'?t|do\s+not|never)\s+use\s+(?P<wrong>.+?){_SEP}"
    r"(?:it'?s|it\s+is|we\s+use|we'?re\s+(?:on|using)|we\s+are\s+(?:on|using))\s+(?P<right>.+)$"
)
# after "no" / "nope" / "wrong" / "actually" only, a bare "X, not Y" of short sides ("nope, python
# 3.12 not 3.11"); without that lead it is too often a description ("fast, not perfect")
_P_BARE_NOT = re.compile(r"(?i)^(?P<right>[^,;]+?),?\s+not\s+(?P<wrong>[^,;]+?)[.!]*$")
_CORRECTING = re.compile(
    r"(?i)\b(?:no+|nope|nah|wrong|actually|incorrect)\b\s*[,.:;!—–-]"
)  # "no worries" is not
_P_NOT_THEN_USE = re.compile(rf"(?i)^not\s+(?P<wrong>[^,;.—–]+?){_SEP}{_USE}\s+(?P<right>.+)$")
_P_INSTEAD_FIRST = re.compile(rf"(?i)^{_INSTEAD}\s+(?P<wrong>.+?)\s*,\s*(?:{_USE}\s+)?(?P<right>.+)$")
_P_YOU = re.compile(rf"(?i)\b{_YOU}\s+(?P<wrong>.+?)\s+{_INSTEAD}\s+(?P<right>.+)$")
_P_USE_INSTEAD = re.compile(
    rf"(?i)(?P<neg>\b{_NEG}\s+)?\b{_USE}\s+(?P<right>.+?)\s+{_INSTEAD}\s+(?P<wrong>.+)$"
)
_P_NOT_BUT = re.compile(
    r"(?i)^(?P<head>(?:it'?s|it\s+is|that'?s)\s+)?not\s+(?P<wrong>[^,;]+?)\s*,?\s+but\s+(?P<right>.+)$"
)
_P_IS_NOT = re.compile(
    rf"(?i)(?P<head>^|.*?\b{_IS})\s+(?P<right>[^,;]+?)(?P<comma>\s*,)?\s+not\s+(?P<wrong>.+)$"
)
_NOT_A_SIDE = re.compile(
    r"(?i)^(?:what|that|this|it|so|too|very|quite|yet|now|bad|sure|really|always|working|running|not|no|even|let'?s|i|we|you|they|today|tomorrow|tonight|later|soon|"
    r"passing|enough|right|correct|good|fine|the\s+point|a\s+problem)\b"
)


@dataclass(frozen=True)
class Found:
    right: str
    wrong: str
    title: str
    line: str


def _side(text: str) -> str:
    """The phrase up to where the clause ends, without quotes and a trailing 'instead'."""
    m = _END.search(text)
    side = text[: m.start()] if m else text
    side = re.sub(r"(?i)\s+(?:instead|please|here|then|any\s*more)$", "", side.strip())
    return side.strip().strip("'\"").strip()


def _ok(side: str) -> bool:
    words = side.split()
    return 0 < len(words) <= 8 and not _NOT_A_SIDE.match(side) and side.lower() not in ("it", "that")


def _clauses(prompt: str) -> list[str]:
    text = _FENCE.sub("\n", prompt)
    out: list[str] = []
    for line in text.splitlines():
        if not line.strip() or _CODE_LINE.search(line):
            continue
        out.append(" ".join(line.split()))
    return out


def find(prompt: str) -> Found | None:
    """The one correction an utterance states unmistakably, or None."""
    for line in _clauses(prompt):
        if _UNSURE.search(line) or _NARRATED.search(_REASON.split(line, maxsplit=1)[0]):
            continue
        lead = _LEAD.match(line)
        body = line[lead.end() :].strip() if lead else line.strip()
        got = _match(body)
        if (
            got is None
            and lead
            and _CORRECTING.search(lead.group())
            and lead.group().rstrip()[-1:] in ",.:;!—–-"
        ):
            got = _bare(body)
        if got is not None:
            right, wrong, title = got
            if _ok(right) and _ok(wrong) and right.casefold() != wrong.casefold():
                return Found(right, wrong, title, line)
            return None  # a correction-shaped line whose sides are unclear: write nothing
    return None


Match = re.Match[str]
Result = tuple[str, str, str]  # (right, wrong, title)


def _use(m: Match, sentence: str = "") -> Result | None:
    right, wrong = _side(m["right"]), _side(m["wrong"])
    return right, wrong, f"Use {right}, not {wrong}"


def _use_unless_negated(m: Match, sentence: str) -> Result | None:
    if m["neg"] or _NEGATED.search(sentence[: m.start("right")]):
        return None  # "don't / should not use X instead of Y": sides reversed, easy to misread
    return _use(m)


def _not_but(m: Match, sentence: str) -> Result | None:
    right, wrong = _side(m["right"]), _side(m["wrong"])
    return right, wrong, f"{right}, not {wrong}"


def _is_not_applies(m: Match, sentence: str) -> bool:
    return bool(m["comma"] or len(m["right"].split()) == 1) and not re.search(
        rf"(?i)\b{_NEG}\b", m["head"] or ""
    )


def _is_not(m: Match, sentence: str) -> Result | None:
    right, wrong = _side(m["right"]), _side(m["wrong"])
    head = (m["head"] or "").strip()
    head = "Use" if head.lower() in ("use", "we use") else head[:1].upper() + head[1:]
    return right, wrong, f"{head} {right}, not {wrong}".strip()


def _always(m: Match, sentence: str) -> bool:
    return True


#: Sentence by sentence, in this order: (pattern, does the match count, what it says). A match
#: that counts decides the utterance (None: refused as ambiguous); one that does not moves on.
_SENTENCE_RULES: tuple[
    tuple[re.Pattern[str], Callable[[Match, str], bool], Callable[[Match, str], Result | None]], ...
] = (
    (_P_INSTEAD_FIRST, _always, _use),
    (_P_USE_INSTEAD, _always, _use_unless_negated),
    (_P_NOT_BUT, _always, _not_but),
    (_P_IS_NOT, _is_not_applies, _is_not),
)


def _match(body: str) -> Result | None:
    for sentence in _sentences(body):
        m = _P_YOU.search(sentence)
        if m:
            return _use(m)
    for pattern in (_P_NEG_THEN_USE, _P_NEG_THEN_IS, _P_NOT_THEN_USE):  # across sentences
        m = pattern.search(body)
        if m:
            return _use(m)
    for sentence in _sentences(body):
        for pattern, applies, says in _SENTENCE_RULES:
            m = pattern.search(sentence)
            if m and applies(m, sentence):
                return says(m, sentence)
    return None


def _bare(body: str) -> Result | None:
    """ "X, not Y" as the whole first sentence, each side at most three words."""
    m = _P_BARE_NOT.match(_sentences(body)[0]) if body else None
    if m is None or len(m["right"].split()) > 3 or len(m["wrong"].split()) > 3:
        return None
    return _not_but(m, body)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!])\s+(?=[A-Z`'\"])", text) if s.strip()]
