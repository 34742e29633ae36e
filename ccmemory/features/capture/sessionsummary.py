"""A session's summary written by the LLM provider (issue 28).

With a provider (Anthropic API or the claude CLI), the session's record gets a summary call
when one is due (see :func:`apply`: the first turn, then whenever the prompts have doubled, and at
SessionEnd or PreCompact): the record's own facts (its redacted prompts, files, commands
and their outcome, errors, memories, open items; never the transcript) go to the small model,
and the reply (asked / done / decided / open, as JSON) becomes the record's ``summary``, with
``summary_source: llm``. The call counts against the session's LLM budget
(``ccmemory.features.capture.usage.Budget``). The same facts are never sent twice: the record
keeps a hash of what was summarised and reuses the summary while the facts are unchanged.

Without a provider, over budget, or with an unusable reply, the rules summary built from the
record (``ccmemory.features.sessions.record.summarize``) stays: never empty, never invented.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("ccmemory.capture")

#: The triggers of a job after which the session is over or compacted: a summary call is due.
FINAL_TRIGGERS = ("SessionEnd", "PreCompact")
MAX_TOKENS = 400
MAX_FACTS_CHARS = 6000
MAX_PART_CHARS = 300
PARTS = ("asked", "done", "decided", "open")

SYSTEM = (
    "SESSION-SUMMARY. You write the entry of one Claude Code session in a team's session log. "
    "You get the session's record: the user's prompts, files changed, commands with their exit "
    "code, errors, memories captured and open items. Reply with one JSON object and nothing else: "
    '{"asked": "...", "done": "...", "decided": "...", "open": "..."}, each one or two plain '
    "sentences, using only facts in the record (an empty string when the record shows none). "
    "Never include secrets, credentials or personal data."
)

#: (system, prompt) -> the reply's text, or None when the call was not made (over budget)
Call = Callable[[str, str], "str | None"]


def facts(rec: dict[str, Any]) -> str:
    """The record as the prompt states it (already redacted by the record's builder)."""
    lines = [f"Branch: {rec.get('branch') or 'unknown'}"]
    for p in (rec.get("prompts") or [])[:20]:
        lines.append(f"Prompt: {str(p)[:400]}")
    for f in (rec.get("files_changed") or [])[:30]:
        lines.append(f"Changed: {f}")
    for c in (rec.get("commands") or [])[:30]:
        if isinstance(c, dict):
            lines.append(f"Command (exit {c.get('exit')}): {str(c.get('cmd') or '')[:200]}")
    for e in (rec.get("errors") or [])[:10]:
        lines.append(f"Error: {str(e)[:200]}")
    if rec.get("memories"):
        lines.append(f"Memories captured: {len(rec['memories'])}")
    text = "\n".join(lines)
    return text[:MAX_FACTS_CHARS]


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse(reply: str) -> str | None:
    """The summary line from the model's reply, or None when it is unusable."""
    from ccmemory.core.llmreply import json_object
    from ccmemory.core.plaintext import strip_control
    from ccmemory.core.redact import redact

    data = json_object(reply)
    if data is None:
        return None
    out = []
    for part in PARTS:
        value = data.get(part)
        if not isinstance(value, str):
            continue
        text = " ".join(strip_control(redact(value)).split())[:MAX_PART_CHARS].rstrip(" .")
        if text:
            out.append(f"{part.capitalize()}: {text}.")
    return " ".join(out) or None


def apply(rec: dict[str, Any], previous: dict[str, Any] | None, call: Call | None, *, final: bool) -> str:
    """Give ``rec`` the LLM's summary when it can; returns where the summary came from: ``llm``,
    ``llm (reused)`` (the facts did not change), ``llm (earlier)`` (an earlier summary, kept until
    the next call is due) or ``rules``.

    When a call is due: at the end of a session or before a compaction (``final``), for the first
    summary, and when the prompts have doubled since the last one (1, 2, 4, 8… prompts: a long
    session costs a few calls, not one per turn). The rules summary of the latest facts is always
    kept in ``summary_rules``."""
    text = facts(rec)
    key = _key(text)
    rec["summary_rules"] = rec.get("summary")
    earlier = previous if previous and previous.get("summary_source") == "llm" else None
    if earlier and earlier.get("summary_key") == key:
        _keep(rec, earlier)
        return "llm (reused)"
    prompts = len(rec.get("prompts") or [])
    due = final or earlier is None or prompts >= 2 * int(earlier.get("summary_prompts") or 0)
    if call is not None and due:
        summary = _ask(call, text)
        if summary is not None:
            rec.update(summary=summary, summary_source="llm", summary_key=key, summary_prompts=prompts)
            return "llm"
    if earlier:
        _keep(rec, earlier)
        return "llm (earlier)"
    return "rules"


def _keep(rec: dict[str, Any], earlier: dict[str, Any]) -> None:
    for k in ("summary", "summary_key", "summary_prompts"):
        rec[k] = earlier.get(k)
    rec["summary_source"] = "llm"


def _ask(call: Call, text: str) -> str | None:
    try:
        reply = call(SYSTEM, text)
    except Exception as exc:  # a provider error must not cost the record: the rules summary stays
        from ccmemory.core.redact import redact

        log.info("session summary by the LLM skipped: %s", redact(str(exc))[:300])
        return None
    summary = parse(reply) if reply is not None else None
    if summary is None and reply is not None:
        log.info("session summary: the model's reply was not usable; the rules summary stays")
    return summary


def budgeted_call(
    choice: Any, settings: Any, budget: Any, *, purpose: str = "session-summary", max_tokens: int = MAX_TOKENS
) -> Call | None:
    """A call through the chosen provider's small model, within the session's budget (None: no
    provider). Also the autonomy score's prompt classes (``purpose="prompt-classes"``)."""
    if choice is None or getattr(choice, "provider", None) is None:
        return None

    def call(system: str, prompt: str) -> str | None:
        from ccmemory.features.capture.usage import budgeted_complete

        done = budgeted_complete(
            choice,
            budget,
            system,
            prompt,
            model=settings.signal_model,
            max_tokens=max_tokens,
            purpose=purpose,
        )
        return None if done is None else str(done.text)

    return call
