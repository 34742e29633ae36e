"""Session-start context within a token budget (docs/architecture.md, "Retrieval").

Progressive disclosure: one line a memory (type, title, short id), the full text on request through
`ccmemory show ID` or the MCP tools. Sections in priority order; a line that would exceed the
budget is left out, so the output never goes over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ccmemory.core.tokens import estimate_tokens
from ccmemory.index.base import IndexedMemory

if TYPE_CHECKING:  # for annotations only: the caller hands the service (or capture's store) in
    from ccmemory.app.service import Service
    from ccmemory.features.capture.store import Store


@dataclass
class ContextResult:
    text: str
    ids: list[str]
    tokens: int


#: characters of a correction's right belief, a lesson or a justification shown after the title;
#: the digest is one short line per memory, the full text is one `get` away
GIST_CHARS = 90
#: lines each section may take before any section takes more (a second pass fills the budget in
#: section order), so a vault with forty corrections still shows its gotchas and decisions
FIRST_PASS = 3


def _clip(text: str, limit: int = GIST_CHARS) -> str:
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut.rstrip(",;:.") + "…"


def _line(m: IndexedMemory, stale: set[str] | frozenset[str] = frozenset()) -> str:
    extra = ""
    if m.type == "correction" and m.fields.get("right_belief"):
        extra = f" → {_clip(m.fields['right_belief'])}"
    elif m.type == "failed_approach" and m.fields.get("lesson"):
        extra = f" — lesson: {_clip(m.fields['lesson'])}"
    elif m.type == "exception" and m.fields.get("justification"):
        extra = f" — because {_clip(m.fields['justification'])}"
    elif m.type == "hypothesis" and m.fields.get("prediction"):
        extra = f" — test: {_clip(m.fields['prediction'])}"
    flag = "" if m.status == "curated" else " (developmental)"
    flag += " (may be stale)" if m.id in stale else ""
    flag += f" (from {m.fields['_from']})" if m.fields.get("_from") else ""
    text = f"- [{m.type}] {m.title}{extra} `{m.id}`{flag}"
    return " ".join(text.split())[:400]


def _across_projects(svc: Service, rules: list[IndexedMemory]) -> list[tuple[str, list[IndexedMemory]]]:
    """Sections from outside the project (docs/cross-project.md): the personal vault's global
    rules, minus those a project memory overrides, and other projects' memories whose
    applies_to names this project. Labelled through `fields["_from"]` (see `_line`)."""
    from ccmemory.features import personal
    from ccmemory.features.crossproject import applying_memories

    out: list[tuple[str, list[IndexedMemory]]] = []
    mine = personal.global_memories(svc.config.user_id, service=type(svc))
    if mine.memories:
        project_side = rules + svc.view.query(svc.filters(types=["decision"]), limit=100)
        overridden = {c.personal.id for c in personal.conflicts(project_side, mine.memories)}
        kept = [m for m in mine.memories if m.id not in overridden]
        for m in kept:
            m.fields = {**m.fields, "_from": personal.LABEL}
        out.append(("Your global preferences (all projects)", kept))
    if svc.config.related or svc.config.backend == "neo4j":
        applying, _notices = applying_memories(svc)
        mems = []
        for m, src in applying:
            m.fields = {**m.fields, "_from": f"project {src.name}"}
            mems.append(m)
        out.append(("From other projects (applies here)", mems))
    return out


def context_for(svc: Service, budget_tokens: int | None = None, *, task: str | None = None) -> ContextResult:
    """The session-start context of `svc`'s project within `budget_tokens` (else the configured
    budget)."""
    return build_context(svc, budget_tokens or svc.config.context_budget, task=task)


def _digest_sections(svc: Service, task: str | None) -> list[tuple[str, list[IndexedMemory]]]:
    """The session-start digest, most useful first (the budget cuts from the end): the task's
    memories, what is open on this branch, memories about files changed recently, the project's
    rules, gotchas and exceptions, then recent decisions, failed approaches and decisions needing
    review. The same memories also reach Claude when a prompt or an edit needs them (recall)."""
    from ccmemory.core import gitstate
    from ccmemory.features import recentfiles
    from ccmemory.features.recall.engine import file_picks

    root = svc.vault.root
    recentfiles.prefetch(root)  # git works while the index is queried (SessionStart started it sooner)
    sections: list[tuple[str, list[IndexedMemory]]] = []
    if task:
        hits = svc.search(task, limit=5).hits
        sections.append(("Relevant to the task", [h.memory for h in hits if not h.weak]))
    branch = gitstate.current_branch(root) if gitstate.is_repo(root) else None
    main = svc.config.main_branch or (gitstate.main_branch(root) if branch else None)
    if branch and branch != main:
        mine = [
            m for m in svc.view.query(svc.filters(status="developmental"), limit=50) if m.branch == branch
        ]
        sections.append((f"Open on this branch ({branch})", mine[:10]))
    changed = recentfiles.take(root)
    if changed:
        picks = file_picks(svc.index, svc.project, changed, limit=8, viewer=svc.viewer)
        mems = [p.memory for p in picks if isinstance(p.memory, IndexedMemory)]  # the index's own
        sections.append(("About files changed recently", mems))
    rules = svc.view.query(svc.filters(types=["correction", "preference", "fact"]), limit=40)
    order = {"correction": 0, "preference": 1, "fact": 2}
    rules.sort(key=lambda m: (order[m.type], m.status != "curated"))  # stable: newest first within
    sections.append(("Project rules (corrections, preferences, facts)", rules))
    # gotchas and exceptions exist to stop a mistake before it is made: right after the rules
    warnings = svc.view.query(svc.filters(types=["gotcha", "exception"]), limit=20)
    sections.append(("Gotchas and exceptions (check before acting)", warnings))
    sections += _across_projects(svc, rules)
    sections.append(("Recent decisions", svc.view.query(svc.filters(types=["decision"]), limit=8)))
    sections.append(
        ("Failed approaches (don't repeat)", svc.view.query(svc.filters(types=["failed_approach"]), limit=6))
    )
    review = [
        m
        for m in svc.view.query(svc.filters(types=["decision"]), limit=200)
        if m.status == "developmental" or (m.confidence is not None and m.confidence < 0.6)
    ][:6]
    sections.append(("Decisions needing review (developmental or low confidence)", review))
    if _has_files(root, "hypothesis"):  # the index has no per-type index: see _has_files
        from ccmemory.features.cothinker import status_of

        tracked = svc.view.query(svc.filters(types=["hypothesis"]), limit=20)  # the seed's "being tracked"
        sections.append(
            ("Open hypotheses (being tested)", [m for m in tracked if status_of(m.fields) == "open"][:5])
        )
    return sections


def _has_files(root: Path, mtype: str) -> bool:
    """Whether the type's folder holds a memory file. Asking the index for a type it has none of
    walks its newest-first order past every memory (~60 ms at 100k, for every SessionStart of
    the vaults without hypotheses, i.e. nearly all); a folder listing answers in microseconds. (A
    per-type SQLite index was tried instead: it changed SQLite's plans for other queries and
    slowed the prompt hook.)"""
    import os

    from ccmemory.core.layout import VAULT_DIR
    from ccmemory.core.model import TYPES

    try:
        with os.scandir(root / VAULT_DIR / TYPES[mtype].folder) as entries:
            return any(e.name.endswith(".md") for e in entries)
    except OSError:
        return False


def build_context(svc: Service, budget_tokens: int, *, task: str | None = None) -> ContextResult:
    sections = _digest_sections(svc, task)

    from ccmemory.features.recall.config import recall_settings

    later = (
        " memories that apply to a prompt or to a file are added when it comes up."
        if recall_settings(svc.config.raw).enabled
        else ""
    )
    header = (
        f"# ccmemory: what this project remembers ({svc.project})\n"
        f"A digest, one line per memory;{later} Full text: `ccmemory show <id>` or the MCP tools.\n"
    )
    from ccmemory.features.lifecycle.staleness import for_indexed

    here = [m for _, ms in sections for m in ms if not m.fields.get("_from")]
    stale = set(for_indexed(svc.vault.root, here, svc.config.raw))
    chosen, used = _fill(sections, stale, budget_tokens - estimate_tokens(header))
    out = [header]
    ids: list[str] = []
    for title, lines in chosen:
        if lines:
            out.append(f"\n## {title}\n")
            out.extend(line for _, line in lines)
            ids.extend(mid for mid, _ in lines)
    used += estimate_tokens(header)
    ref_text = _reference(svc, task, budget_tokens - used)
    if ref_text:
        out.append("\n" + ref_text)
    unread = _unindexed_line(svc)
    if unread:
        out.append(unread)
    if not ids and not ref_text and not unread:
        return ContextResult("", [], 0)
    text = "".join(out)
    return ContextResult(text, ids, estimate_tokens(text))


def _unindexed_line(svc: Service) -> str:
    """A line saying memory files are left out (invalid), so Claude can tell the user or fix them:
    the count only (a few tokens); `ccmemory check` names each file and its reason."""
    count, _ = svc.view.invalid_files(limit=0)
    if not count:
        return ""
    files = "file is" if count == 1 else "files are"
    return (
        f"\nNote: {count} memory {files} invalid (frontmatter or field values), so left out of this"
        " digest and of every search; `ccmemory check` names each file and its problem.\n"
    )


def _fill(
    sections: list[tuple[str, list[IndexedMemory]]], stale: set[str], budget: int
) -> tuple[list[tuple[str, list[tuple[str, str]]]], int]:
    """Choose lines within ``budget`` tokens: first up to FIRST_PASS per section in section order,
    then the rest in section order; each memory once (in its first section). Returns the
    sections' (id, line) lists in section order, and the tokens used."""
    chosen: list[tuple[str, list[tuple[str, str]]]] = [(title, []) for title, _ in sections]
    seen: set[str] = set()
    used = 0
    for first in (True, False):
        for (title, mems), (_, lines) in zip(sections, chosen, strict=True):
            for m in mems:
                if first and len(lines) >= FIRST_PASS:
                    break
                if m.id in seen:
                    continue
                line = _line(m, stale) + "\n"
                cost = estimate_tokens(line) + (0 if lines else estimate_tokens(f"\n## {title}\n"))
                if used + cost > budget:
                    continue
                lines.append((m.id, line))
                seen.add(m.id)
                used += cost
    for (_, mems), (_, lines) in zip(sections, chosen, strict=True):
        rank = {m.id: i for i, m in enumerate(mems)}  # the second pass may fill a gap the first left
        lines.sort(key=lambda item: rank[item[0]])
    return chosen, used


def _reference(svc: Service, task: str | None, budget_tokens: int) -> str:
    """The few reference sections most relevant to the task (or, at session start, to the
    current branch's name), when `context: reference_sections: N` is set; off by default."""
    n = svc.config.context.reference_sections
    if n <= 0 or budget_tokens <= 0:
        return ""
    query = task
    if not query:
        from ccmemory.core import gitstate

        branch = gitstate.current_branch(svc.vault.root) if gitstate.is_repo(svc.vault.root) else None
        if not branch or branch == (svc.config.main_branch or gitstate.main_branch(svc.vault.root)):
            return ""
        query = branch.replace("/", " ").replace("-", " ").replace("_", " ")
    from ccmemory.features.reference.lookup import context_sections

    try:
        text, _ = context_sections(svc, query, budget_tokens, limit=n)
    except Exception:  # the memories' context must not fail because of the reference tree
        return ""
    return text


#: seconds SessionStart waits for the first reindex of a new clone or worktree (run by a git hook in
#: the background) before it answers from the index as it is
SESSION_START_WAIT = 3.0


def session_start_context(store: Store, budget_tokens: int) -> tuple[str, list[str]]:
    """SessionStart's context (text, ids) through capture's store: the index's `context_for`
    when the store's service opens, a files-only listing otherwise (the index is a cache; a
    session must start either way)."""
    svc = store.service()
    if svc is not None:
        try:
            if svc.never_built():  # a new worktree: its first reindex (a git hook's) may be running
                svc.wait_for_reindex(SESSION_START_WAIT)
            res = context_for(svc, budget_tokens)
            return str(res.text), list(res.ids)
        except Exception as exc:
            import logging

            logging.getLogger("ccmemory.features.capture").info(
                "service context failed, using files only: %s", exc
            )
    from ccmemory.features.capture.store import fallback_context

    return fallback_context(store.all_memories(), budget_tokens)
