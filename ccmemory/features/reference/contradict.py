"""Reference sections that contradict a memory (issue 31; the seed's "Domain 2 needs testing
against Domain 1"): `ccmemory check` warnings and the dashboard's review page.

Reference knowledge (`.ccmemory/reference/**.md`) is general advice; the memories are what this
team found to hold here. Each sentence of each reference section (its heading included) is set
against each current memory (not superseded; questions, references, hypotheses and knowledge gaps
left out) with the project's polarity rules (ccmemory.features.capture.polarity, ccmemory.text.opposition):

1. **opposed rule**: one says "use X", the other "don't / never / avoid X" (text.opposition).
2. **flipped stance**: at least 70 % (and 3 or more) of the memory's content words are in the
   sentence, and one of the two is negated and the other not ("Store tokens in httpOnly
   cookies" / "Tokens should not be stored in cookies"). For a correction the right belief is
   what it says.
3. **corrected belief**: a correction's `wrong_belief` (70 %, 3+ words) stated with the same
   stance: the reference says what the team corrected.
4. **turned away**: the sentence recommends (is not negated) what a memory turns away from
   ("fixed delays instead of exponential backoff": "exponential backoff", 2+ words, all of them).
5. **failed here**: the sentence recommends a failed approach's `approach` (70 %, 3+ words).

Content words: ccmemory.text.overlap.tokens without negations and "use". The rules are
deliberately strict (a warning names the sentence and the rule, so a reader can judge it); they
catch plain-worded conflicts, not paraphrases. Nothing is written; a warning never fails the
check unless --strict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ccmemory.features.capture.polarity import negated, rejected
from ccmemory.text.opposition import opposition
from ccmemory.text.overlap import tokens

CONTAINMENT = 0.7
MIN_WORDS = 3
MIN_TURNED = 2
MAX_SENTENCE = 400  # characters of a sentence considered (a longer one is a paragraph, cut)
SKIP_TYPES = frozenset({"question", "reference", "hypothesis", "knowledge_gap"})  # not claims held
_FILLER = frozenset(
    "never not don dont doesn didn shouldn mustn won can cannot avoid no longer stop use using used "
    "always instead rather should must do does".split()
)
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+>]\s+|\d+[.)]\s+)+")


@dataclass(frozen=True)
class Conflict:
    ref: str  # reference file, relative to the repository
    line: int  # line of the sentence in that file
    section: str  # the section's heading path
    sentence: str
    memory_id: str
    memory_path: str
    memory_type: str
    memory_title: str
    rule: str

    def message(self) -> str:
        """The warning's text; the quoted sentence and title are redacted (a check log is a log)."""
        from ccmemory.core.redact import redact

        return redact(
            f"reference section '{self.section}' may contradict {self.memory_type} "
            f"{self.memory_id[:10]} '{self.memory_title[:80]}' ({self.memory_path}): {self.rule}: "
            f'"{self.sentence[:160]}"'
        )

    def as_dict(self) -> dict[str, Any]:
        from ccmemory.core.redact import redact

        return {
            "ref": self.ref,
            "line": self.line,
            "section": self.section,
            "sentence": redact(self.sentence[:300]),
            "memory": {
                "id": self.memory_id,
                "path": self.memory_path,
                "type": self.memory_type,
                "title": redact(self.memory_title),
            },
            "rule": self.rule,
        }


def words(text: str) -> set[str]:
    return tokens(text) - _FILLER


def _contains(small: set[str], big: set[str], least: int = MIN_WORDS) -> bool:
    return len(small) >= least and len(small & big) >= CONTAINMENT * len(small)


def sentences(text: str) -> list[str]:
    out = []
    for part in _SPLIT.split(text):
        s = _MARKUP.sub("", part).strip()
        if len(s) >= 8:
            out.append(s[:MAX_SENTENCE])
    return out


def _field(m: Any, name: str) -> str:
    value = (getattr(m, "fields", None) or {}).get(name)
    return value.strip() if isinstance(value, str) else ""


@dataclass(frozen=True)
class _Claims:
    """What a memory asserts, read once (the rules run once per sentence and candidate)."""

    type: str
    claim: str  # the title, or a correction's right belief
    claim_words: frozenset[str]
    claim_neg: bool
    wrong_words: frozenset[str]  # a correction's wrong belief
    wrong_neg: bool
    away: frozenset[str]  # what the claim turns away from ("instead of X")
    approach_words: frozenset[str]  # a failed approach's approach

    @classmethod
    def of(cls, m: Any) -> _Claims:
        claim = (_field(m, "right_belief") if m.type == "correction" else "") or m.title
        wrong = _field(m, "wrong_belief") if m.type == "correction" else ""
        approach = (_field(m, "approach") or m.title) if m.type == "failed_approach" else ""
        return cls(
            m.type,
            claim,
            frozenset(words(claim)),
            negated(claim),
            frozenset(words(wrong)),
            negated(wrong) if wrong else False,
            frozenset(rejected(claim) - _FILLER),
            frozenset(words(approach)),
        )


def rule_for(m: Any, sentence: str, sw: set[str]) -> str | None:
    """The first rule by which `sentence` (its content words `sw`) contradicts memory `m`."""
    return _rule(_Claims.of(m), sentence, sw, negated(sentence))


def _rule(c: _Claims, sentence: str, sw: set[str], neg: bool) -> str | None:
    if c.type == "failed_approach":
        if not neg and _contains(set(c.approach_words), sw):
            return "recommends an approach that failed here"
        return None
    if c.wrong_words and c.wrong_neg == neg and _contains(set(c.wrong_words), sw):
        return "states the belief this correction says is wrong"
    if c.claim_neg != neg:  # "use X" / "don't X": one of the two is negated
        # the negated one's phrase is all of its words and begins the other: one word set
        # holds the other (a cheap test before the text comparison)
        phrase = opposition(c.claim, sentence) if c.claim_words <= sw or sw <= c.claim_words else None
        if phrase:
            return f"one says to do '{phrase}', the other not to"
        if _contains(set(c.claim_words), sw):
            return "the same subject with the opposite stance"
    if c.away and not neg and len(c.away) >= MIN_TURNED and c.away <= sw:
        return f"recommends what the memory turns away from ({', '.join(sorted(c.away))})"
    return None


def find(memories: Iterable[tuple[str, Any]], refs: Iterable[Any], texts: dict[str, str]) -> list[Conflict]:
    """Conflicts between reference records (`refs`: RefRecord with `path` and `chunks`; `texts`:
    rel -> the file's text, for line numbers) and `memories` ((repo-relative path, memory) with
    id, type, title, fields, supersedes). Superseded memories are left out."""
    mems = [(p, m) for p, m in memories if m.type not in SKIP_TYPES]
    superseded = {s for _, m in mems for s in (getattr(m, "supersedes", None) or [])}
    mems = [(p, m) for p, m in mems if m.id not in superseded]
    claims = [_Claims.of(m) for _, m in mems]
    # Only memories sharing words with a sentence are tried: two or more (every rule but the
    # opposed one needs them), or one for a memory of at most two content words ("Use Redis").
    by_word: dict[str, list[int]] = {}
    short: set[int] = set()
    for i, c in enumerate(claims):
        if len(c.claim_words) <= 2:
            short.add(i)
        for w in c.claim_words | c.wrong_words | c.approach_words | c.away:
            by_word.setdefault(w, []).append(i)
    out: list[Conflict] = []
    seen: set[tuple[str, str, str]] = set()
    for rec in refs:
        for chunk in rec.chunks:
            section = " › ".join(chunk.heading_path) or chunk.anchor
            for sentence in sentences(chunk.text):
                sw = words(sentence)
                neg = negated(sentence)
                for i in _candidates(sw, by_word, short):
                    path, m = mems[i]
                    key = (rec.path, chunk.id, m.id)
                    if key in seen:
                        continue
                    why = _rule(claims[i], sentence, sw, neg)
                    if why:
                        seen.add(key)
                        line = _line_of(texts.get(rec.path, ""), sentence)
                        out.append(
                            Conflict(rec.path, line, section, sentence, m.id, path, m.type, m.title, why)
                        )
    return sorted(out, key=lambda c: (c.ref, c.line, c.memory_id))


def _candidates(sw: set[str], by_word: dict[str, list[int]], short: set[int]) -> list[int]:
    from collections import Counter
    from itertools import chain

    shared = Counter(chain.from_iterable(by_word.get(w, ()) for w in sw))
    return sorted(i for i, n in shared.items() if n >= 2 or i in short)


def _line_of(text: str, sentence: str) -> int:
    at = text.find(sentence[:60])
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def load_refs(vault: Any) -> tuple[list[Any], dict[str, str]]:
    """The readable reference records of the vault and their text (for line numbers)."""
    from ccmemory.app.refsync import scan
    from ccmemory.core.reftree.record import load
    from ccmemory.core.walk import read_regular

    files, _ = scan(vault)
    recs, texts = [], {}
    for rel, (path, mtime, size) in sorted(files.items()):
        rec = load(path, rel, mtime, size)
        if rec.error:
            continue  # reported by reference.check
        recs.append(rec)
        try:
            texts[rel] = read_regular(path).decode("utf-8", "replace")
        except OSError:
            texts[rel] = ""
    return recs, texts


def findings(vault: Any, memories: Iterable[tuple[str, Any]]) -> list[Any]:
    """`ccmemory check` warnings: one per reference sentence and memory in conflict, at the
    sentence's line in the reference file."""
    from ccmemory.features.findings import Finding

    refs, texts = load_refs(vault)
    if not refs:
        return []
    return [Finding(c.ref, c.line, "warning", c.message()) for c in find(memories, refs, texts)]
