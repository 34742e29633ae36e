"""Rules-only corrections: precision first, never upside down.

A correction is written only for a phrasing whose sides are unmistakable, and the side the user
rejected always goes to `wrong_belief`:

- "use X instead of / rather than Y"            -> right X, wrong Y
- "instead of / rather than Y, use X"            -> right X, wrong Y
- "don't / never / stop using Y[,;.—] use X"     -> right X, wrong Y
- "not Y — use X" / "not Y but X"                -> right X, wrong Y
- "you used / wrote / returned X instead of Y"   -> right Y, wrong X (the assistant's choice is the wrong one)
- "it's / should be / we use / is called X, not Y" -> right X, wrong Y
- "you called it Y — the convention here is X", "it's X, you wrote Y", "Y is wrong, change it to X",
  "your Y…, they should be X", "replace Y with X" (only about the assistant's work: you / your)
- "the region is X, you put Y", "the endpoint is X, Y is deprecated / was renamed" (the second
  after "no," / "actually" or when X is a version, an identifier or a path)
- "Gradle, not maven. …" / "python 3.12 not 3.10, …" opening the line (one word each side, or a
  version, an identifier or a path)
- after "no," / "nope" / "wrong" / "actually" / "you're mixing them up": a bare "… X, not Y"

Anything unsure writes nothing: questions (sentence by sentence), hedges ("maybe", "I wonder",
"what if"), conditionals, reported speech ("the logs say"), narration of the past ("we tried",
"used to"; both only before a reason clause such as "; it leaked last time"), "not only / not
just", lines that look like code, fenced code blocks, and a "use X instead of Y" whose own verb is
negated ("don't use X instead of Y" has the sides the other way round) or said of something else
("the tests use X instead of Y"), and new work specified ("scaffold a screen; use X instead of Y").
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
# anywhere in the line: the correction itself is hedged or conditional (a question is dropped
# sentence by sentence: "can you rerun it? the tables are in `analytics`, not `public`")
_UNSURE = re.compile(
    r"(?ix)\b(?:maybe|perhaps|might|possibly|i\s+wonder|what\s+if|not\s+sure|consider|"
    r"i\s+think|probably|could\s+you|would\s+you|should\s+(?:we|i)|shall\s+we|how\s+about|"
    r"not\s+only|not\s+just|but\s+also|i['’]d|i\s+would|if|unless|whether)\b"
)
# before the first reason clause only: narration of the past or reported speech makes the
# statement someone else's or history ("the logs say X, not Y", "we tried X instead of Y last
# week"); after ", ", "; " or " because" it is the reason given for a correction ("use a bounded
# queue instead of a list; memory blew up last time")
_NARRATED = re.compile(
    r"(?ix)\b(?:used\s+to|we\s+tried|i\s+tried|previous(?:ly)?|long\s+ago|"
    r"last\s+(?:year|sprint|week|month|time)|says?|said|told|reported|reports\s+(?:that|it)|shows?|claims?|claimed|"
    r"according\s+to|apparently)\b"
)
_REASON = re.compile(r"(?i)[,;]|\s[—–]\s|\s-\s|\s+because\b")
_LEAD = re.compile(
    r"(?i)^\s*(?:(?:no+|nope|nah|wrong(?=\s*[,.:;!—–-])|actually|hmm|well|please|ugh|wait|oops|sorry(?:\s+but)?|"
    r"that'?s\s+(?:wrong|incorrect))"
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
    r"(?:it'?s|its|it\s+is|that'?s|should\s+be|must\s+be|is\s+called|are\s+called|lives\s+in|live\s+in|"
    r"goes\s+in|go\s+in|lives?\s+(?:under|at)|we\s+use|we\s+deploy\s+(?:with|to|on)|we\s+run|use|is|are|"
    r"(?:we'?re|we\s+are)\s+(?:on|using)|uses|(?<!that\s)(?<!which\s)(?<!to\s)runs?\s+(?:on|at|in|every))"
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
    r"(?:it'?s|it\s+is|we\s+use|we'?re\s+(?:on|using)|we\s+are\s+(?:on|using)|"
    r"this\s+(?:codebase|repo|project|app|service|team)\s+uses|here\s+we\s+use)\s+(?P<right>.+)$"
)
# after "no" / "nope" / "wrong" / "actually" only, a bare "X, not Y" of short sides ("nope, python
# 3.12 not 3.11"); without that lead it is too often a description ("fast, not perfect")
_P_BARE_NOT = re.compile(r"(?i)^(?P<right>[^,;]+?),?\s+not\s+(?P<wrong>[^,;]+?)[.!]*$")
_P_OPENS_NOT = re.compile(  # a dot inside a word ("3.12") is not a sentence's end
    r"(?i)^(?P<right>(?:[^,;.]|\.(?=\S))+?),?\s+not\s+(?P<wrong>(?:[^,;.]|\.(?=\S))+?)"
    r"\s*(?:[,;!]|\.(?=\s|$)|\s[—–-]\s|$)"
)
_CORRECTING = re.compile(
    r"(?i)\b(?:no+|nope|nah|wrong|actually|incorrect)\b\s*[,.:;!—–-]"
)  # "no worries" is not
# "it's X" / "this service is X" / "the default branch is X", after the rejected side
_THIS_IS = (
    r"(?:it'?s|its|it\s+is|(?:this|the|our)\s+(?:[\w`'-]+\s+){0,3}?"
    r"(?:is|are|uses|use|runs?\s+(?:on|against)|belongs?\s+in))"
)
_P_NOT_THEN_USE = re.compile(rf"(?i)^not\s+(?P<wrong>[^,;.—–]+?){_SEP}(?:{_USE}|{_THIS_IS})\s+(?P<right>.+)$")
# the assistant's own work named, then what is right: "you called it `OrderSvc` — the convention
# here is `OrderService`", "you imported moment again. moment was dropped, we use date-fns"
_YOU_DID = (
    r"(?:you'?re\s+(?:calling|using|importing)|you\s+keep\s+(?:using|writing|calling)|"
    r"you\s+(?:just\s+)?(?:used|wrote|returned|imported|added|called\s+it|named\s+it|called|picked|chose|put|created|made|set|"
    r"assumed|connected\s+to|pinned|named|typed|hard-?coded|installed|opened|targeted|pointed|configured))"
)
_RIGHT_HEAD = (
    r"(?:it\s+should\s+be|should\s+be|they\s+should\s+be|it'?s|its|it\s+is|(?:here\s+)?we\s+use|"
    r"this\s+(?:codebase|repo|project|app|service)\s+uses|ours\s+(?:go|goes|live|lives)\s+in|"
    r"(?:the\s+)?(?:[\w-]+\s+){0,3}?(?:here\s+)?(?:is\s+called|is|are|uses|runs\s+on|listens\s+on|goes\s+in|"
    r"lives\s+in|belongs\s+in))"
)
_P_YOU_THEN = re.compile(
    rf"(?i)\b{_YOU_DID}\s+(?P<wrong>[^,;.—–]+?)(?:\s+again)?\s*(?:[,;]|\.\s|\s[—–-]+\s|\s+but\s+)\s*"
    rf"(?:no,?\s+|but\s+)?(?:[^,;.—–]+?[,.]\s+)?{_RIGHT_HEAD}\s+(?P<right>.+)$"
)
# "it's X, you wrote Y"
_P_IS_YOU_WROTE = re.compile(
    r"(?i)(?:it'?s|its|it\s+is|it\s+should\s+be|should\s+be)\s+(?P<right>[^,;—–]+?)\s*[,;—–]\s*(?:but\s+|not\s+)?"
    r"you\s+(?:wrote|used|put|typed|had|set|called\s+it)\s+(?P<wrong>.+)$"
)
# "the bucket region is eu-west-1, you put us-east-1 in the terraform": R is the clause's last words
_P_THEN_YOU_DID = re.compile(
    r"(?i)^(?P<pre>[^,;—–]+?)\s*[,;—–]\s*(?:but\s+)?(?:you\s+(?:set|put|wrote|used|typed|had|picked|chose|gave)|"
    r"you\s+keep\s+(?:writing|using|putting))\s+(?P<wrong>.+)$"
)
# "the endpoint is R, W is deprecated / was renamed / is the legacy one"
_P_THEN_OLD = re.compile(
    r"(?i)^(?P<pre>[^,;—–]+?)\s*[,;—–]\s*(?P<wrong>[^,;—–]+?)\s+(?:is|was|were|are|got)\s+(?:the\s+)?"
    r"(?:deprecated|legacy|gone|dropped|removed|renamed|retired|obsolete|what\s+the\s+old|the\s+old)\b"
)
# "Y is wrong, it's / change it to X"
_P_WRONG_THEN = re.compile(
    r"(?i)^(?P<wrong>.+?)\s+(?:is|are)\s+wrong\s*[,:;.—–-]+\s*(?:it'?s|its|it\s+is|it\s+should\s+be|should\s+be|"
    r"change\s+it\s+to|make\s+it|use)\s+(?P<right>.+)$"
)
# "your report dates are in UTC, they should be Europe/Berlin"
_P_YOURS_SHOULD = re.compile(
    r"(?i)^(?P<wrong>.*?\byour?\b[^,;—–]*?)\s*[,;—–]+\s*(?:but\s+)?(?:it|they|that|this)\s+"
    r"(?:should|must|needs?\s+to)\s+be\s+(?P<right>.+)$"
)
# "replace Y with X" / "swap Y for X": a correction only about the assistant's own work
_P_REPLACE = re.compile(r"(?i)\b(?:replace|swap)\s+(?P<wrong>.+?)\s+(?:with|for)\s+(?P<right>.+)$")
_YOURS = re.compile(r"(?i)\byou(?:r|'ve|'re)?\b")
_STATES = re.compile(r"(?i)\b(?:is|are|uses|it'?s|its|should\s+be|expires?|runs?\s+on)\b")
_TECHNICAL = re.compile(r"[0-9`]|\w[./_-]\w")  # a version, an identifier, a path
# "no," / "wrong" / "actually" / "you're mixing them up": the line says something is wrong
_STRONG = re.compile(
    r"(?i)^\W*(?:nope|nah)\b|(?:^|[\s,.:;—–-])(?:no|nope|nah)\s*[,.:;!—–-]|\b(?:wrong|incorrect|actually|"
    r"mix(?:ed|ing)\s+(?:them|it|these|those)\s+up)\b"
)
# after such a line, any "… R, not W": R is the clause's last words ("the gps module talks at 115200")
_P_ANY_NOT = re.compile(
    r"(?i)^(?P<pre>.+?)\s*,?\s+not\s+(?P<wrong>[^,;—–]+?)\s*(?:[,;!]|\.(?=\s|$)|\s[—–-]\s|$)"
)
# a new piece of work specified ("scaffold a receipts screen. use FlatList instead of ScrollView"):
# its "instead of" is part of the request, not a correction
_NEW_WORK = re.compile(
    r"(?i)^\s*(?:let'?s\s+)?(?:create|add|scaffold|build|write|implement|make|start|set\s+up|generate|design)\b"
)
_P_INSTEAD_FIRST = re.compile(rf"(?i)^{_INSTEAD}\s+(?P<wrong>.+?)\s*,\s*(?:{_USE}\s+)?(?P<right>.+)$")
_P_YOU = re.compile(rf"(?i)\b{_YOU}\s+(?P<wrong>.+?)\s+{_INSTEAD}\s+(?P<right>.+)$")
_P_USE_INSTEAD = re.compile(
    rf"(?i)(?P<neg>\b{_NEG}\s+)?\b{_USE}\s+(?P<right>.+?)\s+{_INSTEAD}\s+(?P<wrong>.+)$"
)
_P_ITS_NOT = re.compile(
    r"(?i)^(?:it'?s|its|it\s+is)\s+not\s+(?P<wrong>[^,;]+?)\s*[,;]\s*(?:it'?s|its|it\s+is)\s+(?P<right>.+)$"
)
_P_NOT_BUT = re.compile(
    r"(?i)^(?P<head>(?:it'?s|it\s+is|that'?s)\s+)?not\s+(?P<wrong>[^,;]+?)\s*,?\s+but\s+(?P<right>.+)$"
)
_P_IS_NOT = re.compile(
    rf"(?i)(?P<head>^|.*?\b{_IS})\s+(?P<right>[^,;]+?)(?P<comma>\s*,)?\s+not\s+(?P<wrong>.+)$"
)
_NOT_A_SIDE = re.compile(
    r"(?i)^(?:what|that|this|it|so|too|very|quite|yet|now|bad|sure|really|always|working|running|not|no|even|let'?s|i|we|you|they|is|are|was|were|today|tomorrow|tonight|later|soon|"
    r"passing|enough|right|correct|good|fine|great|nice|perfect|better|worse|broken|wrong|done|ok|okay|"
    r"up|down|live|back|gone|ready|merged|"
    r"the\s+point|a\s+problem|the\s+default)\b"
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


#: a longer line is pasted text, not a correction stated unmistakably (the longest in the labelled
#: sets is 136 characters); and some patterns here cost time that grows faster than the line
#: (a 2,000-character line of prose took seconds)
MAX_LINE = 300
#: lines of one prompt looked at (a pasted document is not read through: ~30 ms a line at worst)
MAX_LINES = 40


def _clauses(prompt: str) -> list[str]:
    text = _FENCE.sub("\n", prompt)
    out: list[str] = []
    for line in text.splitlines():
        line = " ".join(line.split())
        if not line or len(line) > MAX_LINE or _CODE_LINE.search(line):
            continue
        out.append(line)
        if len(out) == MAX_LINES:
            break
    return out


def find(prompt: str) -> Found | None:
    """The one correction an utterance states unmistakably, or None."""
    for line in _clauses(prompt):
        if _UNSURE.search(line) or _NARRATED.search(_REASON.split(line, maxsplit=1)[0]):
            continue
        lead = _LEAD.match(line)
        body = " ".join(s for s in _QUESTIONS.split(line[lead.end() :] if lead else line) if "?" not in s)
        if not body.strip():
            continue
        got = _match(body.strip(), line)
        if (
            got is None
            and lead
            and _CORRECTING.search(lead.group())
            and lead.group().rstrip()[-1:] in ",.:;!—–-"
        ):
            got = _bare(body.strip())
        elif got is None and not lead:
            got = _bare_technical(body.strip())
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
    if not _IMPERATIVE.search(sentence[: m.start()]):
        return None  # "the tests use sqlite instead of postgres": how things are, not what to do
    return _use(m)


def _instead_first(m: Match, sentence: str) -> Result | None:
    said = sentence[m.end("wrong") : m.end()]
    if re.match(r"(?i)\w+ing\b", m["wrong"]) and not re.search(rf"(?i)^\W*{_USE}\b", said):
        return None  # "rather than fixing it now, open an issue": a plan for this task, not a belief
    return _use(m)


def _not_but(m: Match, sentence: str) -> Result | None:
    right, wrong = _side(m["right"]), _side(m["wrong"])
    return right, wrong, f"{right}, not {wrong}"


def _is_not_applies(m: Match, sentence: str) -> bool:
    short = len(m["right"].split()) == 1 or (len(m["right"].split()) <= 3 and _TECHNICAL.search(m["right"]))
    return bool(m["comma"] or short) and not re.search(rf"(?i)\b{_NEG}\b", m["head"] or "")


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
    (_P_INSTEAD_FIRST, _always, _instead_first),
    (_P_USE_INSTEAD, _always, _use_unless_negated),
    (_P_NOT_BUT, _always, _not_but),
    (_P_ITS_NOT, _always, _not_but),
    (_P_IS_NOT, _is_not_applies, _is_not),
)


def _match(body: str, line: str) -> Result | None:
    for sentence in _sentences(body):
        m = _P_YOU.search(sentence)
        if m:
            return _use(m)
    for pattern in (_P_NEG_THEN_USE, _P_NEG_THEN_IS, _P_NOT_THEN_USE):  # across sentences
        m = pattern.search(body)
        if m:
            return _use(m)
    yours = _yours(body, line)
    if yours is not None:
        return yours
    if _NEW_WORK.match(body) and not _STRONG.search(line):
        return None  # a request for new work, whatever it prefers to what
    for sentence in _sentences(body):
        for pattern, applies, says in _SENTENCE_RULES:
            m = pattern.search(sentence)
            if m and applies(m, sentence):
                return says(m, sentence)
    named = _named_after(body, line)
    if named is not None:
        return named
    return _any_not(body) if _STRONG.search(line) else None


def _yours(body: str, line: str) -> Result | None:
    """Corrections that name the assistant's own work: what it did, and what is right."""
    m = _P_YOU_THEN.search(body) or _P_IS_YOU_WROTE.search(body)
    if m is None:
        for sentence in _sentences(body):
            m = _P_WRONG_THEN.search(sentence) or _P_YOURS_SHOULD.search(sentence)
            if m:
                break
    if m is None and _YOURS.search(line):
        m = _P_REPLACE.search(body)
    if m is None:
        return None
    right, wrong = _side(m["right"]), _side(m["wrong"])
    return right, wrong, f"{right}, not {wrong}"


def _named_after(body: str, line: str) -> Result | None:
    """ "R-clause, you put W" / "R-clause, W is deprecated": the rejected side named after the
    clause that states the right one (its last words); the second only when the line says
    something is wrong or R is a version, an identifier or a path ("staging is green, prod is
    the legacy cluster" is a description)."""
    for sentence in _sentences(body):
        you = _P_THEN_YOU_DID.search(sentence)
        m = you or _P_THEN_OLD.search(sentence)
        if m is None:
            continue
        last = m["pre"].split()[-1]
        if _NEGATED.search(m["pre"]) or not _STATES.search(m["pre"]) or _NOT_A_SIDE.match(last):
            return None  # "don't add black, black is gone", "the build is fine, you set it up"
        if not (you or _STRONG.search(line) or _TECHNICAL.search(last)):
            return None  # "python is great, 2.7 is gone": nothing says the assistant was wrong
        clause = m["pre"].strip()
        stated = _STATES.split(clause)[-1].strip()  # what the clause says it is
        right = stated if 0 < len(stated.split()) <= 4 else " ".join(clause.split()[-3:])
        wrong = _side(m["wrong"])
        return right, wrong, f"{clause[:1].upper()}{clause[1:]}, not {wrong}"
    return None


def _any_not(body: str) -> Result | None:
    for sentence in _sentences(body):
        m = _P_ANY_NOT.search(sentence)
        if m:
            clause = re.split(r"[:;,]|\s[—–-]\s", m["pre"])[-1].strip()
            right, wrong = " ".join(clause.split()[-3:]), _side(m["wrong"])
            return right, wrong, f"{clause[:1].upper()}{clause[1:]}, not {wrong}"
    return None


def _bare(body: str) -> Result | None:
    """ "X, not Y" as the whole first sentence, each side at most three words."""
    m = _P_BARE_NOT.match(_sentences(body)[0]) if body else None
    if m is None or len(m["right"].split()) > 3 or len(m["wrong"].split()) > 3:
        return None
    return _not_but(m, body)


def _bare_technical(body: str) -> Result | None:
    """ "Gradle, not maven. …" / "python 3.12 not 3.10, …" opening the line with no lead: short
    sides, one word each or one of them a version, an identifier or a path ("could we not use
    globals" is a question, "fast, not perfect" a description)."""
    m = _P_OPENS_NOT.match(body)
    if m is None or len(m["right"].split()) > 3 or len(m["wrong"].split()) > 3:
        return None
    single = len(m["right"].split()) == 1 and len(m["wrong"].split()) == 1
    if not (single or _TECHNICAL.search(m["right"]) or _TECHNICAL.search(m["wrong"])):
        return None
    return _not_but(m, body)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!])\s+(?=[A-Z`'\"])", text) if s.strip()]


_QUESTIONS = re.compile(r"(?<=[.!?])\s+")
# what may come before "use X instead of Y" for it to be said to the assistant
_IMPERATIVE = re.compile(
    r"(?i)(?:^|\b(?:we|please|just|always|should|must|to|and|so|then|instead|you)|[,;:—–-])\s*$"
)
