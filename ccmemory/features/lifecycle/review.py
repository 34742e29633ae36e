"""Review checks for `ccmemory check` (pre-commit and CI): secrets, staleness, and with `--base`
new memories that duplicate or contradict curated ones.

Curated = the memories in BASE's tree (e.g. `origin/main`); new = memories in the working tree
whose id is not in BASE; changed = ids in both whose file differs.

Rules, all deterministic and explainable:
- secret (ERROR, fails the check): a new or changed memory file contains something the secret
  detector (`lifecycle.secrets`) recognises; the message names the kind and line, never the value.
- duplicate (warning): a new memory whose normalised title equals a curated title or is at least
  85 % similar (difflib ratio), or whose content words (title, body and prose fields; words of 3+
  letters without stop words) overlap a curated memory's at Jaccard >= 0.6. A new memory that
  explicitly supersedes the curated one is never flagged against it.
- contradiction (warning):
  (a) a new memory declares `CONFLICTS_WITH` a curated memory;
  (b) a new correction whose `wrong_belief` is contained in a curated non-correction memory (at
      least 70 % of the wrong belief's content words, and at least 3 of them, appear in its text):
      the curated memory may state what the correction says is wrong;
  (c) a new non-correction memory that contains a curated correction's `wrong_belief` the same way:
      it may repeat a belief the team already corrected.
- maybe stale (warning, without --base too): see `lifecycle.staleness`.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import defaultdict

from ccmemory.core.model import TYPES, Memory
from ccmemory.core.vault import MemoryFileError, Vault, decode, key_line, parse_text, read_bytes_checked
from ccmemory.features.findings import Finding
from ccmemory.features.lifecycle import staleness
from ccmemory.features.lifecycle.gitread import records_at, resolve_commit
from ccmemory.features.lifecycle.secrets import find_secrets

TITLE_RATIO = 0.85
JACCARD = 0.6
CONTAINMENT = 0.7
MIN_BELIEF_WORDS = 3

_WORD = re.compile(r"[^\W\d_][\w'-]{2,}", re.UNICODE)
_STOP = frozenset(
    """the and for are but not you your with this that from have has had was were will would should
    could can our out use using used into onto than then them they their there these those what when
    where which while who why how all any each only also just more most some such very over under
    about after before because been being does did doing its it's isn't don't we us""".split()
)


def words(text: str) -> set[str]:
    return {w for w in (m.group(0).casefold() for m in _WORD.finditer(text)) if w not in _STOP}


def _text(m: Memory, *, skip: tuple[str, ...] = ()) -> str:
    parts = [m.title, m.body]
    for name in TYPES[m.type].text_fields:
        if name in skip:
            continue
        v = m.fields.get(name)
        if isinstance(v, list):
            parts.extend(str(x) for x in v)
        elif v not in (None, ""):
            parts.append(str(v))
    return "\n".join(parts)


def _norm_title(t: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", t.casefold()).split())


def _similar(a: str, b: str) -> bool:
    sm = difflib.SequenceMatcher(None, a, b)
    return (
        sm.real_quick_ratio() >= TITLE_RATIO and sm.quick_ratio() >= TITLE_RATIO and sm.ratio() >= TITLE_RATIO
    )


def load_worktree(vault: Vault) -> dict[str, tuple[str, str, Memory]]:
    """rel -> (text, sha-less marker, memory) for every valid memory file in the working tree."""
    out: dict[str, tuple[str, str, Memory]] = {}
    for path in vault.iter_paths():
        rel = path.relative_to(vault.root).as_posix()  # iter_paths is under root: no resolve()
        try:
            data = read_bytes_checked(path, rel)
            text = decode(data, rel)
            parsed = parse_text(text, rel)
        except MemoryFileError:
            continue  # check_vault reports it
        out[rel] = (text, hashlib.sha256(data).hexdigest(), parsed.memory)
    return out


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def secret_findings(rel: str, text: str) -> list[Finding]:
    return [
        Finding(
            rel,
            _line_of(text, h.start),
            "error",
            f"possible secret ({h.kind}): remove it from the memory file (and from git history if committed)",
        )
        for h in find_secrets(text)
    ]


def stale_findings(
    vault: Vault,
    raw_config: dict[str, object] | None = None,
    files: dict[str, tuple[str, str, Memory]] | None = None,
) -> list[Finding]:
    files = files if files is not None else load_worktree(vault)
    mems = [staleness.MemoryFiles(m.id, rel, tuple(m.files)) for rel, (_, _, m) in files.items() if m.files]
    found = staleness.compute(vault.root, mems, staleness.threshold_from(raw_config))
    out = []
    for st in found.values():
        text = files[st.path][0]
        out.append(Finding(st.path, key_line(text, "files") or 1, "warning", f"may be stale: {st.reason()}"))
    return out


class _Curated:
    """The memories curated at the base commit, indexed for the duplicate and contradiction
    rules: content words (with an inverted index), normalised titles, corrections' beliefs."""

    def __init__(self, curated: dict[str, tuple[str, str, Memory]]) -> None:
        self.curated = curated
        self.cwords: dict[str, set[str]] = {mid: words(_text(m)) for mid, (_, _, m) in curated.items()}
        self.inverted: dict[str, set[str]] = defaultdict(set)
        for mid, ws in self.cwords.items():
            for w in ws:
                self.inverted[w].add(mid)
        self.ctitles = {mid: _norm_title(m.title) for mid, (_, _, m) in curated.items()}
        self.corrections = {
            mid: words(str(m.fields.get("wrong_belief") or ""))
            for mid, (_, _, m) in curated.items()
            if m.type == "correction"
        }

    def ref(self, mid: str) -> str:
        rel, _, m = self.curated[mid]
        return f"curated {m.type} {mid} '{m.title}' ({rel})"

    def duplicate(self, m: Memory, replaced: set[str]) -> str | None:
        """Why ``m`` duplicates a curated memory it does not replace (title, then words)."""
        nt = _norm_title(m.title)
        for mid, t in self.ctitles.items():
            if mid not in replaced and (t == nt or _similar(t, nt)):
                return f"duplicates {self.ref(mid)}: similar title"
        mw = words(_text(m))
        counts: dict[str, int] = defaultdict(int)
        for w in mw:
            for mid in self.inverted.get(w, ()):
                counts[mid] += 1
        best = None
        for mid, shared in counts.items():
            if mid in replaced:
                continue
            jac = shared / len(mw | self.cwords[mid]) if mw else 0.0
            if jac >= JACCARD and (best is None or jac > best[1]):
                best = (mid, jac)
        if best:
            return f"duplicates {self.ref(best[0])}: {best[1]:.0%} of their words are shared"
        return None

    def contradictions(self, rel: str, text: str, m: Memory, replaced: set[str]) -> list[Finding]:
        tline = key_line(text, "title") or 1
        out = [
            Finding(
                rel,
                key_line(text, "relations") or 1,
                "warning",
                f"contradicts {self.ref(r.target)} (declared CONFLICTS_WITH)",
            )
            for r in m.relations
            if r.type == "CONFLICTS_WITH" and r.target in self.curated
        ]
        if m.type == "correction":
            wb = words(str(m.fields.get("wrong_belief") or ""))
            if len(wb) < MIN_BELIEF_WORDS:
                return out
            for mid, ws in self.cwords.items():
                if mid in replaced or self.curated[mid][2].type == "correction":
                    continue
                if len(wb & ws) / len(wb) >= CONTAINMENT:
                    out.append(
                        Finding(
                            rel,
                            key_line(text, "wrong_belief") or tline,
                            "warning",
                            f"contradicts {self.ref(mid)}: it may state this correction's wrong belief",
                        )
                    )
            return out
        mw = words(_text(m))
        for mid, wb in self.corrections.items():
            if mid in replaced or len(wb) < MIN_BELIEF_WORDS:
                continue
            if len(wb & mw) / len(wb) >= CONTAINMENT:
                out.append(
                    Finding(
                        rel,
                        tline,
                        "warning",
                        f"contradicts {self.ref(mid)}: it repeats the belief that correction says is wrong",
                    )
                )
        return out


def base_findings(
    vault: Vault, base: str, work: dict[str, tuple[str, str, Memory]] | None = None
) -> list[Finding]:
    commit = resolve_commit(vault.root, base)
    work = work if work is not None else load_worktree(vault)
    curated: dict[str, tuple[str, str, Memory]] = {}
    parsed = {rel: (digest, m) for rel, (_, digest, m) in work.items()}  # unchanged files: parsed once
    for rel, rec in records_at(vault.root, commit, parsed).items():
        if rec.memory is not None and rec.memory.id not in curated:
            curated[rec.memory.id] = (rel, rec.hash, rec.memory)
    index = _Curated(curated)
    findings: list[Finding] = []
    for rel, (text, digest, m) in sorted(work.items()):
        old = curated.get(m.id)
        if old is not None and old[1] == digest:
            continue  # unchanged curated memory
        findings += secret_findings(rel, text)
        if old is not None:
            continue  # an edit of a curated memory: only secrets apply
        replaced = set(m.supersedes) | {r.target for r in m.relations if r.type == "SUPERSEDES"}
        dup = index.duplicate(m, replaced)
        if dup:
            findings.append(Finding(rel, key_line(text, "title") or 1, "warning", dup))
        findings += index.contradictions(rel, text, m, replaced)
    return findings


def lifecycle_findings(
    vault: Vault,
    base: str | None,
    raw_config: dict[str, object] | None = None,
    work: dict[str, tuple[str, str, Memory]] | None = None,
) -> list[Finding]:
    """Everything `ccmemory check` adds on top of file validation. Git problems become findings.
    `work`: the working tree's files as `load_worktree` gives them, when the caller has them."""
    from ccmemory.core import gitstate

    out: list[Finding] = []
    in_repo = gitstate.is_repo(vault.root)
    work = work if work is not None else load_worktree(vault)  # parsed once for every rule
    if base is not None:
        if not in_repo:
            raise gitstate.GitError("--base needs a git repository")
        out += base_findings(vault, base, work)
    else:
        for rel, (text, _, _) in sorted(work.items()):
            out += secret_findings(rel, text)
    if in_repo:
        out += stale_findings(vault, raw_config, work)
    return out
