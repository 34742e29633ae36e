"""A deterministic provider for tests and offline demos. Same input -> same output, no network.

Prompt classes (PROMPT-CLASSES, the autonomy score): the rules' classes as letters.
Extraction prompts: per numbered segment, one memory per user prompt with a strong signal
(correction, preference, context), plus a failed approach per failing command. Pair checks
(SUPERSEDE-CHECK): "duplicate" for the same normalised title, "supersedes" when the titles share a
word of 4+ letters, else "distinct". A `script` list replaces all of that with
canned replies, in order (use it to test malformed replies).
"""

from __future__ import annotations

import json
import re

from ccmemory.features.capture.providers.base import Completion
from ccmemory.features.capture.signals import classify

_SEGMENT = re.compile(r"^### Segment (\d+)\b.*$", re.MULTILINE)
_PROMPTS = re.compile(r"^User prompts:\n((?:- .*\n?)+)", re.MULTILINE)
_FAILED = re.compile(r"^- `(.+)` \(exit ([1-9]\d*)\)$", re.MULTILINE)
_ARROW = re.compile(r"^(.*?)\s*(?:->|→)\s*(.*)$")


class TestProvider:
    __test__ = False  # not a pytest class
    name = "test"

    def __init__(self, script: list[str] | None = None):
        self.script = list(script) if script is not None else None
        self.calls: list[tuple[str, str]] = []  # (system, prompt) as sent

    def complete(self, system: str, prompt: str, *, model: str, max_tokens: int) -> Completion:
        self.calls.append((system, prompt))
        if self.script is not None:
            text = self.script.pop(0) if self.script else "{}"
        elif "SUPERSEDE-CHECK" in system:
            text = self._supersede(prompt)
        elif "SESSION-SUMMARY" in system:  # writes no summary unless scripted: the rules one stays
            text = "{}"
        elif "PROMPT-CLASSES" in system:  # the autonomy score's classes: the rules', as letters
            text = self._classes(prompt)
        else:
            heads = list(_SEGMENT.finditer(prompt))
            memories: list[dict] = []
            for i, head in enumerate(heads or [None]):
                start = head.end() if head else 0
                end = heads[i + 1].start() if head and i + 1 < len(heads) else len(prompt)
                for mem in self._extract(prompt[start:end] + "\n"):
                    memories.append({**mem, "segment": int(head.group(1)) if head else 1})
            text = json.dumps({"memories": memories})
        return Completion(text, len(prompt) // 4, len(text) // 4, model or "test")

    @staticmethod
    def _extract(prompt: str) -> list[dict]:
        out: list[dict] = []
        m = _PROMPTS.search(prompt)
        lines = [ln[2:].strip() for ln in m.group(1).splitlines()] if m else []
        for line in lines:
            signals = classify(line)
            title = line.split("\n")[0][:90]
            if "correction" in signals:
                arrow = _ARROW.match(line)
                wrong, right = (arrow.group(1), arrow.group(2)) if arrow else ("", line)
                out.append(
                    {
                        "type": "correction",
                        "title": title,
                        "body": f"The user corrected the assistant: {line}",
                        "confidence": 0.9,
                        "fields": {"wrong_belief": wrong, "right_belief": right, "severity": "significant"},
                    }
                )
            elif "preference" in signals:
                out.append(
                    {
                        "type": "preference",
                        "title": title,
                        "body": line,
                        "confidence": 0.8,
                        "fields": {"scope": "project"},
                    }
                )
            elif "context" in signals:
                out.append(
                    {
                        "type": "fact",
                        "title": title,
                        "body": line,
                        "confidence": 0.7,
                        "fields": {"category": "constraint"},
                    }
                )
        for cmd, code in _FAILED.findall(prompt):
            out.append(
                {
                    "type": "failed_approach",
                    "title": f"Command failed: {cmd[:70]}",
                    "body": f"`{cmd}` exited with {code}.",
                    "confidence": 0.6,
                    "fields": {"approach": cmd, "outcome": f"exit {code}", "lesson": ""},
                }
            )
        return out[:5]

    @staticmethod
    def _classes(prompt: str) -> str:
        from ccmemory.features.sessions.autonomy import classify

        texts = [m.group(1) for m in re.finditer(r"^\d+\. (.*)$", prompt, re.MULTILINE)]
        kinds = [classify(t, first=i == 0) for i, t in enumerate(texts)]
        letters = {"goal": "g", "correction": "c", "validation": "v", "continuation": "n"}
        return json.dumps({"classes": "".join(letters.get(k, "g") for k in kinds)})

    @staticmethod
    def _supersede(prompt: str) -> str:
        news = dict(re.findall(r"^NEW (\d+): (.*)$", prompt, re.MULTILINE))
        pairs = []
        for n, mid, title in re.findall(r"^OLD (\d+) (\S+): (.*)$", prompt, re.MULTILINE):
            new = news.get(n, "")
            if _norm(new) == _norm(title):
                rel = "duplicate"
            elif set(re.findall(r"\w{4,}", new.lower())) & set(re.findall(r"\w{4,}", title.lower())):
                rel = "supersedes"
            else:
                rel = "distinct"
            pairs.append({"new": int(n), "old": mid, "relation": rel})
        return json.dumps({"pairs": pairs})


def _norm(title: str) -> str:
    return re.sub(r"\W+", " ", title.casefold()).strip()
