"""The autonomy score of a session (issue 31): the seed's Loop Efficiency / leverage.

The seed (patrickkidd/ccmemory, doc/TELEMETRY.md, "10. Loop Efficiency") defines
``LE = (total AI actions) / (human interventions)`` for the loop "Human sets goal + criteria → AI
iterates → Human validates outcome". Here:

- **AI actions** are the session's tool calls (distinct tool-use ids of the main conversation and
  of its sub-agents in the same transcript, as the transcript and the hooks' spool hold them).
- **Human interventions** are the prompts the human typed (and slash commands that start work),
  each classed as one of the loop's moves: ``goal`` (sets a goal or a new task), ``correction``
  (course correction: the AI's course or result was wrong), ``validation`` (approves or checks
  an outcome and asks for nothing new), ``continuation`` ("continue", "yes, go ahead": the AI
  stopped and the human only let it go on). Housekeeping slash commands (/clear, /compact, /cost…)
  are not interventions in the work and are left out.
- **score** = actions / interventions (None when a session has no intervention).
  Over a period: the sum of actions over the sum of interventions (a ratio of sums: a 1-prompt
  session does not weigh as much as a 40-prompt one).

The classes come from rules (`classify`, written from how people steer Claude Code; no test set
tuned them), or from the LLM provider when one is configured (`apply`, one budgeted call per
due record, as the session summary: the first time, when the prompts have doubled, and at the
session's end). The record keeps ``autonomy: {actions, classes, by}``; ``classes`` is aligned
with the record's ``prompts``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger("ccmemory.capture")

KINDS = ("goal", "correction", "validation", "continuation")
HOUSEKEEPING = "housekeeping"  # a slash command that is not an intervention in the work
_CODES = {"g": "goal", "c": "correction", "v": "validation", "n": "continuation"}

#: Claude Code's built-in commands that manage the session rather than steer the work.
HOUSEKEEPING_COMMANDS = frozenset(
    """add-dir agents bashes clear compact config context cost doctor exit export help hooks ide
    login logout mcp memory model output-style permissions privacy-settings release-notes resume
    rewind status statusline terminal-setup theme todos upgrade usage vim""".split()
)

_SHORT = 8  # words: a validation or continuation asks for nothing new, so it is short

_CORRECTION = re.compile(
    r"(?ix)^\W*(no\b|nope\b|wrong\b|wait\b|hold\s+on\b|stop\b|undo\b|revert\b|roll\s*back\b|"
    r"not\s+(quite|that|what|like\s+that)\b|actually\b|hmm+\b|that'?s\s+(not|wrong|incorrect)\b)"
    r"|\b(you\s+(broke|misunderstood|forgot|missed|didn'?t|did\s+not|haven'?t|ignored)|"
    r"(it|this|that)\s+(still\s+)?(doesn'?t|does\s+not|didn'?t|did\s+not|isn'?t|is\s+not)\s+work|"
    r"still\s+(fail\w*|broken|wrong|not\s+work\w*|(get|see)(ting)?\s+(an?\s+)?error)|"
    r"(that|this|it)\s+(broke|is\s+(wrong|broken|incorrect))|why\s+did\s+you|i\s+(said|told\s+you|meant)|"
    r"please\s+don'?t|don'?t\s+(do|change|touch|add|remove|delete)\b|instead\s+of|"
    r"that'?s\s+not\s+(right|correct|how|what))"
)
_VALIDATION = re.compile(
    r"(?ix)^\W*(thanks|thank\s+you|thx|great(\s+job|\s+work)?|perfect|nice(\s+job|\s+work)?|"
    r"good(\s+job|\s+work)?|awesome|excellent|lgtm|looks\s+(good|great|right|fine)(\s+to\s+me)?|"
    r"(that|it|this)\s+works(\s+now)?|works(\s+now)?|all\s+good|well\s+done|exactly|confirmed|"
    r"tests?\s+pass(es|ed)?|ship\s+it|cool|amazing|(that'?s|this\s+is)\s+(it|right|great|perfect|good))"
    r"\b[\s!.,]*"
)
_CHECK = re.compile(
    r"(?ix)^\W*(so\s+)?(did|does|do|is|are|have)\s+(it|that|this|the\s+tests?|everything|all(\s+the)?"
    r"(\s+tests?)?|we|you)\s+(work\w*|pass\w*|done|finish\w*|green|ok(ay)?|complete\w*|fixed)\b"
)
_CONTINUE = re.compile(
    r"(?ix)^\W*(continue|go\s+on|keep\s+going|carry\s+on|proceed|go\s+ahead|resume|next|yes|yep|"
    r"yeah|y|ok(ay)?|sure|do\s+it|go|try\s+again|retry|again|finish(\s+(it|up))?|keep\s+at\s+it|"
    r"sounds\s+good|please\s+do)\b[\s!.,]*"
)
_FILLER_WORDS = re.compile(r"(?ix)^\W*(please|pls|then|and|so|now|very\s+much|a\s+lot)\b[\s!.,]*")


def _words(text: str) -> int:
    return len(text.split())


def _acknowledgement(text: str) -> str | None:
    """'validation' or 'continuation' when the prompt is nothing but approvals ("looks good,
    thanks") and go-aheads ("yes, go ahead", "please continue"); None when it says more."""
    rest, saw_val, saw_cont = text, False, False
    while rest.strip():
        m = _VALIDATION.match(rest)
        if m:
            saw_val = True
        else:
            m = _CONTINUE.match(rest) or _FILLER_WORDS.match(rest)
            saw_cont = saw_cont or (m is not None and m.re is _CONTINUE)
        if m is None or not m.group(0):
            return None
        rest = rest[m.end() :]
    return "validation" if saw_val else "continuation" if saw_cont else None


def classify(text: str, *, first: bool = False) -> str:
    """The loop move of one human prompt, by rules. ``first``: the session's first prompt (there
    is no course to correct yet, so it is a goal unless it only says "continue")."""
    text = " ".join(text.split())
    if text.startswith("/"):  # a slash command as the record keeps it: "/name args"
        name = text[1:].split(" ", 1)[0].lower()
        return HOUSEKEEPING if name in HOUSEKEEPING_COMMANDS else "goal"
    ack = _acknowledgement(text) if _words(text) <= _SHORT else None
    if first:
        return "continuation" if ack == "continuation" else "goal"
    if _CORRECTION.search(text):
        return "correction"
    if ack:
        return ack
    if _words(text) <= _SHORT and _CHECK.match(text):
        return "validation"
    return "goal"


def classify_all(prompts: Iterable[str]) -> list[str]:
    return [classify(str(p), first=i == 0) for i, p in enumerate(prompts)]


def count_actions(*event_lists: Iterable[dict[str, Any]]) -> int:
    """Distinct tool calls over event lists (the same id in the spool, the transcript and a
    sub-agent's records counts once; a call without an id counts once where it appears)."""
    ids: set[str] = set()
    anonymous = 0
    for events in event_lists:
        for ev in events:
            if ev.get("k") != "tool":
                continue
            tid = ev.get("id")
            if isinstance(tid, str) and tid:
                ids.add(tid)
            else:
                anonymous += 1
    return len(ids) + anonymous


def for_record(prompts: list[str], actions: int) -> dict[str, Any]:
    """The record's ``autonomy`` field by rules."""
    return {"actions": int(actions), "classes": classify_all(prompts), "by": "rules"}


def score(rec: dict[str, Any]) -> dict[str, Any] | None:
    """{actions, interventions, score, goal, correction, validation, continuation, by} of one
    record; None for a record written before the field existed."""
    auto = rec.get("autonomy")
    if not isinstance(auto, dict) or not isinstance(auto.get("actions"), int):
        return None
    classes = [c for c in auto.get("classes") or [] if c in KINDS]
    counts = {k: classes.count(k) for k in KINDS}
    n = len(classes)
    return {
        "actions": auto["actions"],
        "interventions": n,
        "score": round(auto["actions"] / n, 2) if n else None,
        **counts,
        "by": str(auto.get("by") or "rules"),
    }


def period_of(when: str, by: str) -> str:
    """'2026-W03' (ISO week) or '2026-01' (month) of an ISO time."""
    from datetime import date

    if by == "all":
        return "all"
    try:
        day = date.fromisoformat(when[:10])
    except ValueError:
        return "unknown"
    if by == "month":
        return day.strftime("%Y-%m")
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def over_time(recs: Iterable[dict[str, Any]], *, by: str = "week") -> list[dict[str, Any]]:
    """Per period (oldest first): sessions, actions, interventions, each class, and the score as
    a ratio of sums. Records without the field are left out (counted in ``unscored``)."""
    rows: dict[str, dict[str, Any]] = {}
    for rec in recs:
        sc = score(rec)
        key = period_of(str(rec.get("start") or rec.get("end") or ""), by)
        row = rows.setdefault(
            key, {"period": key, "sessions": 0, "unscored": 0, "actions": 0, "interventions": 0}
        )
        if sc is None:
            row["unscored"] += 1
            continue
        row["sessions"] += 1
        row["actions"] += sc["actions"]
        row["interventions"] += sc["interventions"]
        for k in KINDS:
            row[k] = row.get(k, 0) + sc[k]
    out = []
    for key in sorted(rows):
        row = rows[key]
        for k in KINDS:
            row.setdefault(k, 0)
        n = row["interventions"]
        row["score"] = round(row["actions"] / n, 2) if n else None
        out.append(row)
    return out


def report(recs: list[dict[str, Any]], *, by: str = "week", limit: int = 20) -> dict[str, Any]:
    """What `ccmemory sessions autonomy`, MCP and the dashboard show: per session (newest
    first, at most ``limit``), per period, and over all sessions."""
    sessions = []
    for rec in recs:
        sc = score(rec)
        if sc is not None:
            sessions.append({"id": rec["id"], "start": rec.get("start"), "branch": rec.get("branch"), **sc})
    total = over_time(recs, by="all") if recs else []
    overall = total[0] if total else None
    if overall is not None:
        overall.pop("period", None)
    return {
        "definition": "score = AI actions (tool calls) / human interventions (prompts), the seed's "
        "Loop Efficiency (doc/TELEMETRY.md); over a period, a ratio of sums",
        "sessions": sessions[: max(0, limit)],
        "periods": [p for p in over_time(recs, by=by) if p["sessions"]],
        "overall": overall,
    }


# --- the LLM classes -------------------------------------------------------------------------

SYSTEM = (
    "PROMPT-CLASSES. You read the prompts a developer typed into one Claude Code session, in "
    "order, and class each as one move of the loop 'human sets a goal, the AI iterates, the human "
    "validates': g = sets a goal or a new task; c = course correction (the AI's course or result "
    "was wrong and the human redirects it); v = validation (approves or checks an outcome, asks "
    "for nothing new); n = continuation (only lets the AI go on: 'continue', 'yes, go ahead'). "
    'Reply with one JSON object and nothing else: {"classes": "gcvn..."}, one letter per prompt, '
    "in order."
)
MAX_PROMPTS = 60  # a longer session: the rules class the prompts after these
MAX_PROMPT_CHARS = 300
MAX_TOKENS = 200

Call = Callable[[str, str], "str | None"]  # (system, prompt) -> reply; as sessionsummary.Call


def _key(prompts: list[str]) -> str:
    return hashlib.sha256(json.dumps(prompts, ensure_ascii=False).encode("utf-8")).hexdigest()


def _prompt_text(prompts: list[str]) -> str:
    lines = []
    for i, p in enumerate(prompts, 1):
        lines.append(f"{i}. {' '.join(str(p).split())[:MAX_PROMPT_CHARS]}")
    return "\n".join(lines)


def parse(reply: str, n: int) -> list[str] | None:
    """The n classes of the model's reply, or None when it is unusable (wrong count, a letter
    outside g/c/v/n)."""
    from ccmemory.core.llmreply import json_object

    data = json_object(reply)
    letters = data.get("classes") if data is not None else None
    if isinstance(letters, list):
        letters = "".join(str(x)[:1] for x in letters)
    if not isinstance(letters, str):
        return None
    letters = "".join(letters.lower().split())
    if len(letters) != n or any(ch not in _CODES for ch in letters):
        return None
    return [_CODES[ch] for ch in letters]


def apply(rec: dict[str, Any], previous: dict[str, Any] | None, call: Call | None, *, final: bool) -> str:
    """Give ``rec["autonomy"]["classes"]`` the model's classes when it can (the rules' stay
    otherwise); returns ``llm``, ``llm (reused)``, ``llm (earlier)`` or ``rules``.

    A call is due as for the summary: the first time, when the prompts have doubled since the
    last call, and at the end or a compaction (``final``). Between calls the classes of an earlier
    call are kept for the prompts it saw (``llm+rules``). Housekeeping commands keep their class.
    A record cut at its size cap is left to the rules (its prompts are no longer all there)."""
    auto = rec.get("autonomy")
    prompts = [str(p) for p in rec.get("prompts") or []]
    if not isinstance(auto, dict) or not prompts or rec.get("truncated"):
        return "rules"
    rules = list(auto.get("classes") or [])
    if len(rules) != len(prompts):
        return "rules"
    head = prompts[:MAX_PROMPTS]
    earlier, seen = _earlier(previous, head)
    if earlier is not None and seen == len(head):  # the same prompts: never asked twice
        _merge(auto, rules, list(earlier.get("classes") or [])[:seen], seen, str(earlier["llm_key"]))
        return "llm (reused)"
    due = final or earlier is None or len(head) >= 2 * seen
    if call is not None and due:
        got = _ask(call, head)
        if got is not None:
            _merge(auto, rules, got, len(head), _key(head))
            return "llm"
    if earlier is not None:
        _merge(auto, rules, list(earlier.get("classes") or [])[:seen], seen, str(earlier["llm_key"]))
        return "llm (earlier)"
    return "rules"


def _earlier(previous: dict[str, Any] | None, head: list[str]) -> tuple[dict[str, Any] | None, int]:
    """The previous record's LLM classes and how many prompts they cover, when those prompts
    are this record's first ones; (None, 0) otherwise."""
    old = (previous or {}).get("autonomy")
    if not isinstance(old, dict) or not str(old.get("by", "")).startswith("llm"):
        return None, 0
    seen = int(old.get("llm_prompts") or 0)
    if 0 < seen <= len(head) and old.get("llm_key") == _key(head[:seen]):
        return old, seen
    return None, 0


def _merge(auto: dict[str, Any], rules: list[str], llm: list[str], seen: int, key: str) -> None:
    classes = [r if r == HOUSEKEEPING else c for r, c in zip(rules[:seen], llm, strict=False)]
    if len(classes) != seen:
        return
    auto["classes"] = classes + rules[seen:]
    auto["by"] = "llm" if seen == len(rules) else "llm+rules"
    auto["llm_prompts"] = seen
    auto["llm_key"] = key


def _ask(call: Call, prompts: list[str]) -> list[str] | None:
    try:
        reply = call(SYSTEM, _prompt_text(prompts))
    except Exception as exc:  # a provider error must not cost the record: the rules' classes stay
        from ccmemory.core.redact import redact

        log.info("prompt classes by the LLM skipped: %s", redact(str(exc))[:300])
        return None
    got = parse(reply, len(prompts)) if reply is not None else None
    if got is None and reply is not None:
        log.info("prompt classes: the model's reply was not usable; the rules' classes stay")
    return got
