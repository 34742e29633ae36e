"""Capture without an LLM: explicit commands, references, unmistakable corrections.

Explicit commands (any provider): `/decision TEXT`, `/correction WRONG -> RIGHT`,
`/exception RULE because REASON`, `/remember TEXT`, also namespaced as `/ccmemory:decision` and
seen either as a typed prompt or as a transcript's slash-command wrapper.
Rules-only mode adds URLs the user gave as references, repository documents the user pointed at,
and corrections phrased unmistakably ("no, use X instead of Y", "it's X, not Y").
Candidates are plain dicts: type, title, body, topics, files, confidence, source, fields.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ccmemory.features.capture.corrections import find as find_correction
from ccmemory.features.capture.segment import Segment
from ccmemory.features.capture.signals import classify

_EXPLICIT = re.compile(
    r"^\s*/(?:ccmemory:)?(decision|correction|exception|remember)\b[ \t]*(.*)\Z", re.DOTALL
)
_ARROW = re.compile(r"^(.*?)\s*(?:->|→|=>)\s*(.*)$", re.DOTALL)
_BECAUSE = re.compile(r"^(.*?)\s+because\s+(.*)$", re.DOTALL | re.IGNORECASE)
_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")
_DOC_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:md|rst|txt|adoc|pdf))(?![\w/-])", re.IGNORECASE
)


def _title(text: str, limit: int = 100) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    first = first.strip().rstrip(".")
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def explicit_from_text(name: str, args: str) -> dict[str, Any] | None:
    """A candidate for one explicit command, or None when the arguments are empty."""
    args = args.strip()
    if not args:
        return None
    base: dict[str, Any] = {"source": "explicit", "confidence": 1.0, "topics": [], "files": []}
    if name == "decision":
        m = _BECAUSE.match(args)
        fields = {"rationale": m.group(2).strip()} if m else {}
        title = m.group(1) if m else args
        return {**base, "type": "decision", "title": _title(title), "body": args, "fields": fields}
    if name == "correction":
        m = _ARROW.match(args)
        if m and m.group(1).strip() and m.group(2).strip():
            wrong, right = m.group(1).strip(), m.group(2).strip()
            return {
                **base,
                "type": "correction",
                "title": _title(right),
                "body": f"Not: {wrong}\n\nRight: {right}",
                "fields": {"wrong_belief": wrong, "right_belief": right},
            }
        return {
            **base,
            "type": "correction",
            "title": _title(args),
            "body": args,
            "fields": {"right_belief": args},
        }
    if name == "exception":
        m = _BECAUSE.match(args)
        rule, reason = (m.group(1).strip(), m.group(2).strip()) if m else (args, "")
        fields = {"rule_broken": rule}
        if reason:
            fields["justification"] = reason
        return {
            **base,
            "type": "exception",
            "title": _title(f"Exception: {rule}"),
            "body": args,
            "fields": fields,
        }
    if name == "remember":
        mtype = "preference" if "preference" in classify(args) else "fact"
        fields = {"scope": "project"} if mtype == "preference" else {}
        return {**base, "type": mtype, "title": _title(args), "body": args, "fields": fields}
    return None


def explicit(seg: Segment) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name, args in seg.commands_typed:
        m = _EXPLICIT.match(f"{name} {args}")
        if m:
            cand = explicit_from_text(m.group(1), m.group(2))
            if cand:
                out.append(cand)
    for prompt in seg.prompts:
        m = _EXPLICIT.match(prompt)
        if m:
            cand = explicit_from_text(m.group(1), m.group(2))
            if cand:
                out.append(cand)
    return _unique(out)


def is_explicit_prompt(prompt: str) -> bool:
    return bool(_EXPLICIT.match(prompt))


def references(seg: Segment, root: Path | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for prompt in seg.prompts:
        if is_explicit_prompt(prompt):
            continue
        for url in _URL.findall(prompt):
            url = url.rstrip(".,;:")
            if "[REDACTED" in url:
                continue
            out.append(
                {
                    "type": "reference",
                    "title": _title(f"Reference: {url}"),
                    "body": f"The user pointed to {url} while asking:\n\n> {_title(prompt, 300)}",
                    "source": "rules",
                    "confidence": 0.6,
                    "topics": [],
                    "files": [],
                    "fields": {"uri": url, "ref_type": "url"},
                }
            )
        if root is None:
            continue
        for rel in _DOC_PATH.findall(prompt):
            rel = rel.lstrip("./")
            if rel.startswith(".ccmemory/") or not (root / rel).is_file():
                continue
            out.append(
                {
                    "type": "reference",
                    "title": _title(f"Reference: {rel}"),
                    "body": f"The user pointed to `{rel}` while asking:\n\n> {_title(prompt, 300)}",
                    "source": "rules",
                    "confidence": 0.6,
                    "topics": [],
                    "files": [rel],
                    "fields": {"uri": rel, "ref_type": "file"},
                }
            )
    return _unique(out)


def corrections(seg: Segment) -> list[dict[str, Any]]:
    """Corrections the user stated unmistakably (see `corrections.py`); unsure -> nothing."""
    out: list[dict[str, Any]] = []
    for prompt in seg.prompts:
        if is_explicit_prompt(prompt):
            continue
        found = find_correction(prompt)
        if found is None:
            continue
        out.append(
            {
                "type": "correction",
                "title": _title(found.title),
                "body": f"The user corrected the assistant:\n\n> {found.line}",
                "source": "rules",
                "confidence": 0.7,
                "topics": [],
                "files": [],
                "fields": {
                    "wrong_belief": found.wrong,
                    "right_belief": found.right,
                    "severity": "significant",
                },
            }
        )
    return _unique(out)


def _unique(cands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[tuple[str, str]] = set()
    out = []
    for c in cands:
        key = (c["type"], c["title"].casefold())
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
