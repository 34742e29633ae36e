"""Choosing the memories that apply to a prompt or a file, and rendering them compactly.

Prompt recall ranks with the product's one search (``ccmemory.retrieval.search.search``: calibrated full
text, vectors when an embedder is at hand, the type/status/recency priors) over the memories in
force (never superseded) of the types that change what Claude should do, then keeps only what
is relevant enough by *absolute* gates: the calibrated text score (the share of the prompt's
idf-weighted words a memory covers) or the cosine of the prompt to the memory; and a share of
the best hit's score. Nothing passes for chatter ("ok thanks", "run the tests again"), which is
the point: injection costs tokens in every prompt.

File recall is exact: the memories whose ``files:`` cover the path (exact path before glob
before folder), check-before-acting types first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ccmemory.features.recall import paths as P

if TYPE_CHECKING:
    from ccmemory.features.recall.config import RecallSettings
    from ccmemory.index.base import Index
    from ccmemory.text.fusion import FusionRecipe

#: Types that exist to stop a mistake before it is made: shown first, favoured in prompt recall.
CHECK_FIRST = ("gotcha", "correction", "exception", "failed_approach")
#: Types that change how Claude should act, in the order they are shown.
RECALL_TYPES = (*CHECK_FIRST, "preference", "decision", "fact", "pattern")
#: Types recalled for a prompt: those, and what answers a question (insights, references, and
#: questions: answered ones for any prompt, open ones only for a prompt asked as a question, to
#: which "still open" is the answer: "did we ever decide on transfer codes?").
PROMPT_TYPES = (*RECALL_TYPES, "insight", "reference", "question")
#: Types recalled for a file: every memory in force that names it (the issue's "inject those
#: memories"), what changes how it is edited first, then what explains it (a question, open or
#: answered, an insight, a reference). Before the tenth session only RECALL_TYPES: 21 of 248
#: reads and 2 of 598 edits of the tuning sets missed a memory naming the file that way.
FILE_TYPES = PROMPT_TYPES
_TYPE_ORDER = {t: i for i, t in enumerate(PROMPT_TYPES)}


@dataclass(frozen=True)
class Gate:
    """When a prompt's search hit is relevant enough to inject (chosen on the tuning split of
    the recall dev sets, bench/RESULTS-recall.md).

    A hit's relevance is absolute, not the search's min-max fused score (which lifts the best
    of any list to 1.0, however weak): the larger of its calibrated text score (the share of
    the prompt's idf-weighted words it covers, in [0, 1)) and its cosine to the prompt times
    ``vector_scale``; check-before-acting types get ``check_first_boost``.
    """

    min_score: float = 0.45  # relevance needed to inject anything (a short prompt, with vectors)
    text_min_score: float = 0.35  # the same when only full text ranks (no warm process)
    per_term: float = 0.05  # the bar drops by this for each content word beyond `long_after`
    long_after: int = 4
    floor: float = 0.25  # however long the prompt
    #: the same with full text alone: a long task prompt's calibrated text score is a share of all
    #: its words (0.1-0.3 for the memory it needs), so the text bar goes lower (2026-11-26; 0.15
    #: then 0.10 in the sixth session, once the chatter rules silenced the long general prompts:
    #: thirteen tuning sets, hook alone, tasks 0.759 -> 0.841, chatter silent 0.907 -> 0.905)
    text_floor: float = 0.10
    #: once one hit clears the bar (the prompt is about something the vault knows), a further hit
    #: is shown when it comes close: this share of the bar, and ``relative`` of the best hit's
    #: relevance. The bar decides *whether* anything is shown, so chatter stays as silent; these
    #: decide how far down the search's order the shown memories may come from (2026-11-26, fifth
    #: session: the memory to check was often a same-topic neighbour just under the bar)
    near: float = 0.8
    relative: float = 0.5
    vector_scale: float = 1.0  # cosine -> the text score's scale
    min_terms: int = 2  # prompts with fewer analysed content words never recall
    short_terms: int = 2  # prompts of this many content words recall only when asked as a question
    check_first_boost: float = 1.15  # gotchas, corrections, exceptions, failed approaches
    #: with vectors, the bar of a question about us ("why did we drop LaunchDarkly?", "where does
    #: our Temporal cluster live?", lower-case we / our / us / here) is this share of the usual
    #: one: its memory was often first in the search, just under the bar (2026-11-26, fifth
    #: session; with full text alone it let session chatter through: "what did we change today?")
    ours_question: float = 0.8
    #: with vectors, a prompt of which this share of the words or more is in no memory ("how does
    #: Terraform state locking work in S3?" in a firmware project) has the bar x ``unknown_raise``:
    #: a general question sits as close to a same-topic memory as a real one by cosine, but uses
    #: words the vault does not (tuning sets: a third or more of the words for 49 % of chatter
    #: prompts, 3 % of questions; 2026-11-26, fifth session)
    unknown_share: float = 0.34
    unknown_raise: float = 1.3
    #: with vectors, a prompt that the general-question model (``recall.general``) scores above
    #: ``general_above`` has the bar x ``general_raise``: raised, not silenced, as the model was
    #: trained on invented projects' prompts; one it scores below ``project_below`` (it reads as
    #: about the project) has the bar x ``project_lower``: its memory was often first, just under
    #: the bar (2026-11-26, sixth session; leave one set out on the fourteen tuning sets, against
    #: no model: chatter silent +2.6 points, questions +1.7, tasks +0.9)
    general_above: float = 0.7
    general_raise: float = 1.2
    project_below: float = 0.4
    project_lower: float = 0.9
    #: a shell command's words (``paths.command_words``) are never chatter and say in one or two
    #: identifiers what a prompt says in a sentence ("make test", "uv sync", "bitbake perch-image"):
    #: they are asked with one content word, and with vectors need this share of the bar
    #: (2026-11-27, ninth session: nineteen tuning sets, 205 commands with a memory and 50
    #: without, hybrid: recall 0.849 -> 0.898, commands without one silent 45 -> 42 of 50; 0.7
    #: silenced 5 fewer for nothing; with full text alone 0.8 cost 8 of the 50 for 8 more found,
    #: so the text bar stays)
    command_bar: float = 0.8
    command_min_terms: int = 1

    def bar(
        self,
        terms: int,
        vectors: bool,
        ours: bool = False,
        unknown: float = 0.0,
        general: float | None = None,
        command: bool = False,
    ) -> float:
        """The relevance a hit needs for a prompt of ``terms`` content words. A long prompt
        dilutes both signals (its text score is a share of all its words, its vector an average
        of them), and chatter ("thanks, that works") is short: the bar drops with length.
        ``ours``: the prompt is a question about us (see ``ours_question``); ``unknown``: the
        share of its words no memory holds (see ``unknown_share``); ``general``: the
        general-question model's score, None without a model (see ``general_above``);
        ``command``: the words of a shell command (see ``command_bar``)."""
        base = self.min_score if vectors else self.text_min_score
        floor = self.floor if vectors else self.text_floor
        bar = max(floor, base - self.per_term * max(0, terms - self.long_after))
        if vectors and ours:
            bar *= self.ours_question
        if vectors and unknown >= self.unknown_share:
            bar *= self.unknown_raise
        if vectors and general is not None:
            if general > self.general_above:
                bar *= self.general_raise
            elif general < self.project_below:
                bar *= self.project_lower
        if vectors and command:
            bar *= self.command_bar
        return bar

    def needs_terms(self, command: bool = False) -> int:
        """The content words a prompt (or a shell ``command``'s words) needs to be asked at all."""
        return self.command_min_terms if command else self.min_terms


DEFAULT_GATE = Gate()


class Shown(Protocol):
    """What recall shows of a memory: an ``IndexedMemory``, or a :class:`Recalled` sent by the
    warm process (so the hook's warm path imports no index code)."""

    id: str
    type: str
    title: str
    body: str
    created: str
    status: str
    fields: dict[str, Any]
    files: list[str]


@dataclass
class Recalled:
    id: str
    type: str
    title: str
    body: str = ""
    created: str = ""
    status: str = "curated"
    fields: dict[str, Any] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)


@dataclass
class Pick:
    memory: Shown
    score: float
    why: str  # "prompt" or "file <path>"
    parts: dict[str, float] = field(default_factory=dict)


def prompt_picks(
    index: Index,
    project: str,
    prompt: str,
    *,
    limit: int,
    embedder: Any = None,
    viewer: str | None = None,
    gate: Gate = DEFAULT_GATE,
    command: bool = False,
) -> list[Pick]:
    """The memories in force that apply to ``prompt``, best first, at most ``limit``;
    ``command``: ``prompt`` is a shell command's words, not what a user typed."""
    terms = content_terms(prompt)
    if terms < gate.needs_terms(command):
        return []
    from ccmemory.index.base import Filters
    from ccmemory.retrieval.search import search

    f = Filters(project=project, types=list(PROMPT_TYPES), viewer=viewer)
    mode = "hybrid" if embedder is not None else "text"
    recipe = prompt_recipe(prompt, terms)
    resp = search(
        index, prompt, f, limit=candidates(limit), mode=mode, embedder=embedder, expand=False, recipe=recipe
    )
    return gate_response(resp, prompt, terms, index, project, limit=limit, gate=gate, command=command)


def gate_response(
    resp: Any,
    prompt: str,
    terms: int,
    index: Index,
    project: str,
    *,
    limit: int,
    gate: Gate = DEFAULT_GATE,
    command: bool = False,
) -> list[Pick]:
    """:func:`gate_hits` for the search response ``resp`` (``ccmemory.retrieval.search.SearchResponse``)
    of ``prompt`` (of ``terms`` content words), with what the prompt's words say: asked, about us,
    how many of them the vault knows (asked of ``index`` only when vectors ranked), and how much
    its vector reads as a general question (``recall.general``: a user's prompt only, never a
    ``command``'s words, which the model was not trained on)."""
    vectors = resp.mode == "hybrid"
    general = None
    if vectors and resp.hits and not command:
        from ccmemory.features.recall.general import general_score

        general = general_score(resp.query_vector, resp.vector_model)
    return gate_hits(
        resp.hits,
        limit=limit,
        gate=gate,
        terms=terms,
        vectors=vectors,
        question=asked(prompt),
        ours=asked_about_us(prompt),
        unknown=unknown_share(index, project, prompt) if vectors and resp.hits else 0.0,
        general=general,
        command=command,
    )


def combine(first: Sequence[Pick], then: Sequence[Pick], limit: int) -> list[Pick]:
    """``first`` (a file's memories), then ``then`` (the command's), each memory once."""
    seen: set[str] = set()
    out: list[Pick] = []
    for p in (*first, *then):
        if p.memory.id not in seen:
            seen.add(p.memory.id)
            out.append(p)
    return out[:limit]


def content_terms(prompt: str) -> int:
    """How many analysed content words the prompt has (stopwords and punctuation left out)."""
    from ccmemory.text.analyzer import query_terms

    return len(query_terms(prompt))


def worth_asking(prompt: str, gate: Gate = DEFAULT_GATE, *, command: bool = False) -> bool:
    """Whether the text (a prompt, or with ``command`` a shell command's words) has enough
    content words to recall anything for."""
    return bool(prompt) and content_terms(prompt) >= gate.needs_terms(command)


def speaks_to_project(prompt: str, gate: Gate = DEFAULT_GATE) -> bool:
    """Whether a user's prompt may need a memory at all, before anything is ranked: enough content
    words; a prompt of only ``gate.short_terms`` of them ("run the tests again", "commit this
    please") only when asked as a question ("why did we drop LaunchDarkly?"); and never one that
    says it is about things in general or asks for a joke or a poem (its topic may be the
    project's, its question is not), or that steers the session ("ok run the tests again").
    Chosen on the tuning splits, bench/RESULTS-recall.md."""
    from ccmemory.text.chatter import asks_general, content_words, is_question, steers

    words = content_words(prompt)  # no stemmer on the hook path (it costs ~15 ms to load)
    if words < gate.min_terms or (words <= gate.short_terms and not is_question(prompt)):
        return False
    return not (asks_general(prompt) or steers(prompt))


def asked(prompt: str) -> bool:
    """Whether the prompt is asked as a question (``ccmemory.text.chatter.is_question``)."""
    from ccmemory.text.chatter import is_question

    return is_question(prompt)


#: a prompt of this many content words or more, not asked as a question, ranks with
#: ``ccmemory.text.fusion.LONG_PROMPT``
LONG_PROMPT_TERMS = 6


def prompt_recipe(prompt: str, terms: int) -> FusionRecipe | None:
    """The fusion recipe prompt recall ranks ``prompt`` (of ``terms`` content words) with: None
    (the search's default) unless it is long and not a question, then
    ``ccmemory.text.fusion.LONG_PROMPT``."""
    if terms < LONG_PROMPT_TERMS or asked(prompt):
        return None
    from ccmemory.text.fusion import LONG_PROMPT

    return LONG_PROMPT


def asked_about_us(prompt: str) -> bool:
    """Whether the prompt is a question about this project's people or things (lower-case we,
    our, us, here: ``ccmemory.text.chatter.about_us``)."""
    from ccmemory.text.chatter import about_us

    return asked(prompt) and about_us(prompt)


def unknown_share(index: Index, project: str, prompt: str) -> float:
    """The share of the prompt's analysed words that no memory of the project holds."""
    from ccmemory.text.analyzer import query_terms

    terms = list(dict.fromkeys(query_terms(prompt)))
    if not terms:
        return 0.0
    known = sum(1 for n in index.doc_freqs(project, terms).values() if n > 0)
    return 1.0 - known / len(terms)


def candidates(limit: int) -> int:
    """How many search hits the gates choose from."""
    return max(limit * 4, 10)


def relevance(parts: dict[str, float], mtype: str, gate: Gate = DEFAULT_GATE) -> float:
    """A search hit's absolute relevance to the prompt (see :class:`Gate`)."""
    text, vec = parts.get("text_score", 0.0), parts.get("vector_score", 0.0)
    base = max(text, vec * gate.vector_scale)
    return base * (gate.check_first_boost if mtype in CHECK_FIRST else 1.0)


def gate_hits(
    hits: Iterable[Any],
    *,
    limit: int,
    gate: Gate = DEFAULT_GATE,
    terms: int = 0,
    vectors: bool = True,
    question: bool = False,
    ours: bool = False,
    unknown: float = 0.0,
    general: float | None = None,
    command: bool = False,
) -> list[Pick]:
    """Apply the relevance gates to search hits (``ccmemory.retrieval.search.Hit``, best first)
    of a prompt of ``terms`` content words, ranked with vectors or not.

    The bar decides *whether* anything is shown (one hit's absolute relevance must clear it);
    then every hit that comes close (``gate.near`` of the bar, ``gate.relative`` of the best) may
    be shown, and the search's order, which holds the type, status, recency and intent priors (a
    task wants what to check before acting), decides *which* come first. Open questions are left
    out unless the prompt is ``question``: asked whether something was decided, "it is still
    open" is the answer. ``ours``: the prompt is a question about us (:func:`asked_about_us`);
    ``unknown``: the share of its words no memory holds (:func:`unknown_share`); ``general``: how
    much it reads as a general question (``ccmemory.features.recall.general``); ``command``: the
    words of a shell command (``Gate.command_bar``)."""
    relevant = [
        Pick(h.memory, relevance(h.parts, h.memory.type, gate), "prompt", dict(h.parts))
        for h in hits
        if question or not _open_question(h.memory)
    ]
    bar = gate.bar(terms, vectors, ours=ours, unknown=unknown, general=general, command=command)
    if not any(p.score >= bar for p in relevant):
        return []
    best = max(p.score for p in relevant)
    least = max(gate.near * bar, gate.relative * best)
    return [p for p in relevant if p.score >= least][:limit]


def _open_question(m: Shown) -> bool:
    return m.type == "question" and not str((m.fields or {}).get("answer") or "").strip()


def file_picks(
    index: Index, project: str, touched: Sequence[str], *, limit: int, viewer: str | None = None
) -> list[Pick]:
    """The memories in force whose ``files:`` cover one of ``touched``: those of ``RECALL_TYPES``
    (what changes how the file is edited) before the others, most specific match first, then by
    ``FILE_TYPES`` order."""
    if not touched:
        return []
    from ccmemory.index.base import Filters

    f = Filters(project=project, types=list(FILE_TYPES), viewer=viewer)
    best: dict[str, tuple[int, str]] = {}

    def covers(pattern: str) -> bool:
        return any(P.match(pattern, path) for path in touched)

    # only the links whose file covers one of `touched`: the others never set a strength
    for mem_id, pattern in index.file_links(f, covers):
        for path in touched:
            strength = P.match(pattern, path)
            if strength > best.get(mem_id, (0, ""))[0]:
                best[mem_id] = (strength, path)
    if not best:
        return []
    mems = {m.id: m for m in index.get(project, list(best))}
    picks = [
        Pick(m, float(best[m.id][0]), f"file {best[m.id][1]}", {"file_match": float(best[m.id][0])})
        for m in mems.values()
    ]
    picks.sort(
        key=lambda p: (
            p.memory.type not in RECALL_TYPES,  # what changes the edit before what explains the file
            -p.score,
            _TYPE_ORDER.get(p.memory.type, 99),
            p.memory.created,
            p.memory.id,
        )
    )
    return picks[:limit]


# --- rendering --------------------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """About four characters a token (no tokenizer on the hook path)."""
    return (len(text) + 3) // 4


def _first_sentence(text: str, width: int) -> str:
    text = " ".join(text.split())
    for stop in (". ", "! ", "? "):
        cut = text.find(stop)
        if 0 < cut < width:
            return text[: cut + 1]
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def gist(m: Shown, width: int = 140) -> str:
    """One line that says what to do: the right belief of a correction, the justification of
    an exception, the lesson of a failed approach, else the body's first sentence."""
    f = m.fields or {}
    if m.type == "correction" and f.get("right_belief"):
        return "→ " + _first_sentence(str(f["right_belief"]), width)
    if m.type == "failed_approach" and f.get("lesson"):
        return "lesson: " + _first_sentence(str(f["lesson"]), width)
    if m.type == "exception" and f.get("justification"):
        return "because " + _first_sentence(str(f["justification"]), width)
    return _first_sentence(m.body, width) if m.body.strip() else ""


def title_line(m: Shown) -> str:
    """A memory as its type, title and id only: one more that applies, at a fifth of a line's cost."""
    flag = "" if m.status == "curated" else " (developmental)"
    return "- also " + " ".join(f"[{m.type}] {m.title}".split())[:200] + f" `{m.id}`{flag}"


def line(m: Shown) -> str:
    text = f"- [{m.type}] {m.title}"
    g = gist(m)
    if g and g.lower() not in m.title.lower():
        text += f" — {g}"
    flag = "" if m.status == "curated" else " (developmental)"
    return " ".join(text.split())[:400] + f" `{m.id}`{flag}"


@dataclass
class Rendered:
    text: str
    ids: list[str]  # every memory shown, in full or by title
    tokens: int
    titled: list[str] = field(default_factory=list)  # those shown by title only


def show(picks: Sequence[Pick], s: RecallSettings, header: str, *, check_first: bool = False) -> Rendered:
    """What the settings let through: the first ``s.max_memories`` picks in full, then the next
    ``s.also_titles`` by title only (every pick has cleared the same relevance gate), within
    ``s.budget_tokens``."""
    full = picks[: s.max_memories]
    titles = picks[s.max_memories : s.max_memories + s.also_titles]
    return render(full, s.budget_tokens, header, check_first=check_first, titles=titles)


def render(
    picks: Sequence[Pick],
    budget_tokens: int,
    header: str,
    *,
    check_first: bool = False,
    titles: Sequence[Pick] = (),
) -> Rendered:
    """``header`` then one line per pick, in order, then a title line (:func:`title_line`) per
    pick of ``titles``, leaving out what does not fit the budget; with ``check_first`` (a
    prompt's picks, chosen in the search's order), what to check before acting is listed before
    the rest, each part in its order. Nothing is shown by title unless a full line was."""
    if not picks or budget_tokens <= 0:
        return Rendered("", [], 0)
    if check_first:
        picks = sorted(picks, key=lambda p: p.memory.type not in CHECK_FIRST)
    used = estimate_tokens(header + "\n")
    lines: list[str] = []
    ids: list[str] = []
    titled: list[str] = []
    for p, brief in [*((p, False) for p in picks), *((p, True) for p in titles)]:
        if brief and not lines:
            break
        text = title_line(p.memory) if brief else line(p.memory)
        cost = estimate_tokens(text + "\n")
        if used + cost > budget_tokens or p.memory.id in ids:
            continue
        lines.append(text)
        ids.append(p.memory.id)
        if brief:
            titled.append(p.memory.id)
        used += cost
    if not lines:
        return Rendered("", [], 0)
    body = header + "\n" + "\n".join(lines) + "\n"
    return Rendered(body, ids, estimate_tokens(body), titled)
