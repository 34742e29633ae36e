"""Score the rules-only correction extractor against the labelled corpus (tests/data).

A written memory is *right* when it is expected and its `right_belief` holds the expected right
term and its `wrong_belief` the expected wrong term; an *inversion* is a written correction whose
`right_belief` holds the rejected term (or `wrong_belief` the wanted one). Terms match as words,
case-insensitively, so "100" does not match inside "1000".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data"
HALVES = {"tuning": "capture_corpus_tune.jsonl", "held-out": "capture_corpus_heldout.jsonl"}
# written after the rules, run once, never tuned on: adversarial probes, reported separately
PROBES = "capture_corpus_probe.jsonl"
# written blind by another author (what they read is in the .md beside it), run once per code
BLIND = {"blind-2": "capture_corpus_blind2.jsonl", "blind-3": "capture_corpus_blind3.jsonl"}


def load(half: str) -> list[dict[str, Any]]:
    path = CORPUS / (PROBES if half == "probes" else BLIND.get(half) or HALVES[half])
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def has(text: str, term: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(term.casefold())}(?!\w)", text.casefold()) is not None


@dataclass
class Score:
    items: int = 0
    expected: int = 0
    written: int = 0
    right: int = 0
    inversions: list[str] = field(default_factory=list)
    false_positives: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.right / self.written if self.written else 1.0

    @property
    def recall(self) -> float:
        return self.right / self.expected if self.expected else 1.0


def score(items: list[dict[str, Any]]) -> Score:
    """Run the production rules path (rules.corrections over a one-prompt segment) on each item."""
    from ccmemory.features.capture import rules
    from ccmemory.features.capture.segment import build

    s = Score(items=len(items))
    for item in items:
        exp = item["expect"]
        s.expected += exp is not None
        cands = rules.corrections(build([{"k": "prompt", "text": item["text"]}]))
        s.written += len(cands)
        for cand in cands:
            f = cand["fields"]
            right_b, wrong_b = str(f.get("right_belief", "")), str(f.get("wrong_belief", ""))
            if exp is None:
                s.false_positives.append(f"{item['id']}: {item['text']!r} -> {cand['title']!r}")
                continue
            if (has(right_b, exp["wrong"]) and not has(right_b, exp["right"])) or (
                has(wrong_b, exp["right"]) and not has(wrong_b, exp["wrong"])
            ):
                s.inversions.append(f"{item['id']}: {item['text']!r} -> right={right_b!r} wrong={wrong_b!r}")
            elif has(right_b, exp["right"]) and has(wrong_b, exp["wrong"]):
                s.right += 1
            else:
                s.false_positives.append(
                    f"{item['id']}: {item['text']!r} -> right={right_b!r} wrong={wrong_b!r}"
                )
        if exp is not None and not cands:
            s.missed.append(f"{item['id']}: {item['text']!r}")
    return s
