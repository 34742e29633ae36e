"""The ccmemory MCP server (mcp SDK 2.x, `MCPServer`): thin wiring of `ccmemory.mcp.ops`.

Run with `ccmemory mcp` (stdio) or `ccmemory mcp --http` (streamable HTTP on 127.0.0.1).
Tool errors come back as `isError` results whose text is JSON: {"error": {code, message, hint}}.
"""

import difflib
import functools
import json
import logging
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from ccmemory.errors import CcmemoryError, mcp_error
from ccmemory.mcp import ops
from ccmemory.mcp.ops import Backend, ToolFailure

log = logging.getLogger("ccmemory.mcp")

INSTRUCTIONS = """\
ccmemory is this repository's reviewable memory: decisions, corrections, exceptions, insights,
questions, failed approaches, facts, preferences and references, one markdown file each under
.ccmemory/ (git is the source of truth; merged to main = curated, elsewhere = developmental).
Before changing something, `search` or `query_context` for what was decided and what failed.
When the user corrects you, decides something, or an approach fails, record it with the matching
`record_*` tool (it writes a new file for review in the pull request). Results cite id, path and
ccmemory://memory/<id>; read the full text with `get_memory`. Reference knowledge (concepts,
cached pages and papers under .ccmemory/reference/) is searched by section with `query_reference`.
"""

# --- parameter types ---------------------------------------------------------------------------------

RelationType = Literal["DEPENDS_ON", "CONSTRAINS", "CONFLICTS_WITH", "IMPACTS", "CITES", "RELATES_TO"]
MemoryType = Literal[
    "decision",
    "correction",
    "preference",
    "exception",
    "insight",
    "question",
    "failed_approach",
    "fact",
    "gotcha",
    "pattern",
    "reference",
]
Status = Literal["curated", "developmental"]


class RelationIn(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelled key is an error, not ignored

    type: RelationType = Field(description="Relation from the new memory to the target.")
    target: str = Field(
        min_length=4,
        max_length=300,
        description="An existing memory: id, 4+ character id prefix, file path or slug.",
    )
    reason: str | None = Field(default=None, max_length=500, description="Why they are related (optional).")


Title = Annotated[
    str, Field(min_length=3, max_length=200, description="One-line title a teammate understands.")
]
Body = Annotated[
    str, Field(max_length=20_000, description="Markdown description, understandable without this session.")
]
Topics = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=60)]] | None,
    Field(max_length=20, description="Topics, e.g. ['auth', 'security'].", default=None),
]
Files = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=300)]] | None,
    Field(max_length=50, description="Repo-relative code paths it concerns.", default=None),
]
Relations = Annotated[
    list[RelationIn] | None,
    Field(max_length=20, description="Typed links to existing memories.", default=None),
]
Supersedes = Annotated[
    list[Annotated[str, Field(min_length=4, max_length=300)]] | None,
    Field(
        max_length=10,
        description="Ids of memories this one replaces (their files stay unchanged).",
        default=None,
    ),
]
Confidence = Annotated[
    float | None, Field(ge=0.0, le=1.0, description="0..1, how sure (optional).", default=None)
]
Session = Annotated[
    str | None, Field(max_length=100, description="Claude Code session id, if known.", default=None)
]
Text = Annotated[str | None, Field(max_length=5000, default=None)]
Limit = Annotated[int, Field(ge=1, le=ops.MAX_LIMIT, description=f"Results per page (max {ops.MAX_LIMIT}).")]
Offset = Annotated[
    int, Field(ge=0, le=10_000, description="Skip this many results (pagination: use next_offset).")
]
MemoryRef = Annotated[
    str,
    Field(min_length=4, max_length=300, description="Memory id, 4+ character id prefix, file path or slug."),
]
Query = Annotated[str, Field(min_length=1, max_length=1000, description="Plain words; no query syntax.")]
Types = Annotated[
    list[MemoryType] | None, Field(max_length=11, description="Only these memory types.", default=None)
]
When = Annotated[
    str | None,
    Field(
        max_length=40,
        description="A date (2026-11-20), ISO timestamp, or age such as 7d / 3w / 12h.",
        default=None,
    ),
]

F = TypeVar("F", bound=Callable[..., Any])


def _error_result(failure: CcmemoryError) -> CallToolResult:
    payload = {"error": mcp_error(failure)}  # the one mapping to MCP error codes (ccmemory/errors.py)
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
        is_error=True,
    )


def guarded(fn: F) -> F:
    """Turn every failure into a structured tool error: never a stack trace for the model."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except CcmemoryError as failure:  # ToolFailure, and any anticipated error a tool let through
            return _error_result(failure)
        except Exception as exc:  # a bug: log it for the user, give the model something actionable
            log.exception("ccmemory tool %s failed", fn.__name__)
            return _error_result(
                ToolFailure(
                    "internal",
                    f"{fn.__name__} failed: {type(exc).__name__}: {exc}",
                    "no memory file was changed; the server log (stderr) has the details",
                )
            )

    return wrapper  # type: ignore[return-value]


_PYDANTIC_URL = re.compile(r"\n\s*For further information visit \S+")


async def structured_argument_errors(ctx: Any, call_next: Any) -> Any:
    """The SDK reports arguments that fail the input schema as plain text; give them the same
    {"error": {code, message, hint}} shape as the tools' own errors."""
    result = await call_next(ctx)
    if getattr(ctx, "method", None) != "tools/call":
        return result
    data = result.model_dump(by_alias=True, exclude_none=True) if isinstance(result, BaseModel) else result
    if not isinstance(data, dict) or not data.get("isError") or data.get("structuredContent") is not None:
        return result
    content = data.get("content") or []
    text = content[0].get("text", "") if content and isinstance(content[0], dict) else ""
    if "validation error" not in text:
        return result
    failure = ToolFailure(
        "invalid_argument",
        _PYDANTIC_URL.sub("", text).strip(),
        "check the argument against the tool's input schema",
    )
    return _error_result(failure).model_dump(by_alias=True, exclude_none=True, mode="json")


def _schema_props(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any] | None:
    """The property schemas of an object schema (following one local $ref), else None."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        schema = defs.get(ref.removeprefix("#/$defs/"), {})
    props = schema.get("properties")
    return props if isinstance(props, dict) else None


def _item_schemas(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The schemas an array argument's items may have (`list[X] | None` is an anyOf)."""
    out: list[dict[str, Any]] = []
    for option in [schema, *schema.get("anyOf", [])]:
        items = option.get("items") if isinstance(option, dict) else None
        if isinstance(items, dict) and option.get("type") == "array":
            out.append(items)
    return out


def unknown_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """(where, unknown name, valid names) for every argument name the tool's input schema does
    not declare: top level, and keys of objects inside list arguments (e.g. relations[0].reasn)."""
    defs = schema.get("$defs") or {}
    props = _schema_props(schema, defs) or {}
    out: list[tuple[str, str, list[str]]] = []
    for name, value in arguments.items():
        if name not in props:
            out.append(("", name, sorted(props)))
            continue
        if not isinstance(value, list):
            continue
        for item_schema in _item_schemas(props[name]):
            inner = _schema_props(item_schema, defs)
            if inner is None:
                continue
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    out += [(f"{name}[{i}].", k, sorted(inner)) for k in item if k not in inner]
    return out


def strict_arguments(server: MCPServer) -> Any:
    """Middleware: a tool call with an argument name its input schema does not declare is an
    `invalid_argument` error naming the closest valid parameter. (The SDK builds each tool's
    argument model from its signature with pydantic's default `extra="ignore"`, so a misspelled
    name such as `type` for `types` would otherwise be dropped silently and the call answered
    as if unfiltered.)"""

    async def middleware(ctx: Any, call_next: Any) -> Any:
        params = getattr(ctx, "params", None)
        if getattr(ctx, "method", None) != "tools/call" or not isinstance(params, Mapping):
            return await call_next(ctx)
        arguments = params.get("arguments") or {}
        tool = next((t for t in await server.list_tools() if t.name == params.get("name")), None)
        if tool is None or not isinstance(arguments, dict):
            return await call_next(ctx)
        bad = unknown_arguments(dict(tool.input_schema), arguments)
        if not bad:
            return await call_next(ctx)
        parts = []
        for where, name, valid in bad:
            close = difflib.get_close_matches(name, valid, n=1, cutoff=0.5)
            guess = f"; did you mean {where}{close[0]!r}?" if close else ""
            parts.append(f"unknown argument {where}{name!r} for tool {tool.name}{guess}")
        where, _, valid = bad[0]
        failure = ToolFailure(
            "invalid_argument",
            "; ".join(parts),
            f"valid {'arguments' if not where else 'keys of ' + where.rstrip('.')}: {', '.join(valid)}",
        )
        return _error_result(failure).model_dump(by_alias=True, exclude_none=True, mode="json")

    return middleware


def build_server(repo: Path | None = None, backend: Backend | None = None) -> MCPServer:
    be = backend or Backend(repo)
    server = MCPServer(
        "ccmemory",
        instructions=INSTRUCTIONS,
        version=_version(),
        log_level="WARNING",
        middleware=[structured_argument_errors],
    )
    server.middleware.append(strict_arguments(server))
    readonly = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)

    def tool(description: str, *, read_only: bool = True) -> Callable[[F], F]:
        def deco(fn: F) -> F:
            server.add_tool(
                guarded(fn), description=description, annotations=readonly if read_only else writes
            )
            return fn

        return deco

    def rec(mtype: str, **kw: Any) -> dict[str, Any]:
        rels = [r.model_dump() for r in (kw.pop("relations") or [])]
        with be.service() as svc:
            return ops.record(svc, mtype, relations=rels, **kw)

    # --- recording ----------------------------------------------------------------------------------
    @tool(
        "Record a decision (what was chosen and why). Writes a new .ccmemory/decisions/ file for review "
        "in the pull request, indexes it, and returns id, path, status and uri.",
        read_only=False,
    )
    def record_decision(
        title: Title,
        body: Body = "",
        rationale: Text = None,
        options_considered: Annotated[list[str] | None, Field(max_length=20, default=None)] = None,
        revisit_trigger: Annotated[
            str | None, Field(max_length=500, description="When to reconsider.")
        ] = None,
        sets_precedent: bool | None = None,
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        supersedes: Supersedes = None,
        confidence: Confidence = None,
        session: Session = None,
    ) -> dict[str, Any]:
        fields = {
            "rationale": rationale,
            "options_considered": options_considered,
            "revisit_trigger": revisit_trigger,
            "sets_precedent": sets_precedent,
        }
        return rec(
            "decision",
            title=title,
            body=body,
            topics=topics,
            files=files,
            relations=relations,
            supersedes=supersedes,
            confidence=confidence,
            session=session,
            fields=fields,
        )

    @tool(
        "Record a correction: something Claude (or the team) believed that turned out wrong, and what is "
        "right. Corrections rank first in search and session context.",
        read_only=False,
    )
    def record_correction(
        title: Title,
        wrong_belief: Annotated[str, Field(min_length=1, max_length=2000)],
        right_belief: Annotated[str, Field(min_length=1, max_length=2000)],
        severity: Literal["minor", "significant", "critical"] | None = None,
        body: Body = "",
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        supersedes: Supersedes = None,
        confidence: Confidence = None,
        session: Session = None,
    ) -> dict[str, Any]:
        fields = {"wrong_belief": wrong_belief, "right_belief": right_belief, "severity": severity}
        return rec(
            "correction",
            title=title,
            body=body,
            topics=topics,
            files=files,
            relations=relations,
            supersedes=supersedes,
            confidence=confidence,
            session=session,
            fields=fields,
        )

    @tool("Record an exception: a rule that was deliberately broken, and why.", read_only=False)
    def record_exception(
        title: Title,
        rule_broken: Annotated[str, Field(min_length=1, max_length=1000)],
        justification: Annotated[str, Field(min_length=1, max_length=2000)],
        scope: Literal["one-time", "conditional", "new-precedent"] | None = None,
        body: Body = "",
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        supersedes: Supersedes = None,
        confidence: Confidence = None,
        session: Session = None,
    ) -> dict[str, Any]:
        fields = {"rule_broken": rule_broken, "justification": justification, "scope": scope}
        return rec(
            "exception",
            title=title,
            body=body,
            topics=topics,
            files=files,
            relations=relations,
            supersedes=supersedes,
            confidence=confidence,
            session=session,
            fields=fields,
        )

    @tool("Record an insight: a realization, analysis, strategy or synthesis worth keeping.", read_only=False)
    def record_insight(
        title: Title,
        body: Body = "",
        category: Literal["realization", "analysis", "strategy", "personal", "synthesis"] | None = None,
        implications: Text = None,
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        supersedes: Supersedes = None,
        confidence: Confidence = None,
        session: Session = None,
    ) -> dict[str, Any]:
        return rec(
            "insight",
            title=title,
            body=body,
            topics=topics,
            files=files,
            relations=relations,
            supersedes=supersedes,
            confidence=confidence,
            session=session,
            fields={"category": category, "implications": implications},
        )

    @tool(
        "Record a question. Leave `answer` empty for an open question (listed by query_open_questions); "
        "answer it later by superseding it with memory_supersede.",
        read_only=False,
    )
    def record_question(
        question: Annotated[str, Field(min_length=3, max_length=2000)],
        answer: Text = None,
        title: Annotated[str | None, Field(max_length=200, description="Defaults to the question.")] = None,
        body: Body = "",
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        supersedes: Supersedes = None,
        confidence: Confidence = None,
        session: Session = None,
    ) -> dict[str, Any]:
        return rec(
            "question",
            title=title or question[:200],
            body=body,
            topics=topics,
            files=files,
            relations=relations,
            supersedes=supersedes,
            confidence=confidence,
            session=session,
            fields={"question": question, "answer": answer},
        )

    @tool(
        "Record a failed approach so nobody repeats it: what was tried, what happened, the lesson.",
        read_only=False,
    )
    def record_failed_approach(
        title: Title,
        approach: Annotated[str, Field(min_length=1, max_length=2000)],
        outcome: Annotated[str, Field(min_length=1, max_length=2000)],
        lesson: Text = None,
        body: Body = "",
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        supersedes: Supersedes = None,
        confidence: Confidence = None,
        session: Session = None,
    ) -> dict[str, Any]:
        return rec(
            "failed_approach",
            title=title,
            body=body,
            topics=topics,
            files=files,
            relations=relations,
            supersedes=supersedes,
            confidence=confidence,
            session=session,
            fields={"approach": approach, "outcome": outcome, "lesson": lesson},
        )

    @tool(
        "Record a project fact: a convention, constraint, architecture note, command or environment detail.",
        read_only=False,
    )
    def record_fact(
        title: Title,
        body: Body = "",
        category: Literal["convention", "constraint", "architecture", "command", "environment"] | None = None,
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        supersedes: Supersedes = None,
        confidence: Confidence = None,
        session: Session = None,
    ) -> dict[str, Any]:
        return rec(
            "fact",
            title=title,
            body=body,
            topics=topics,
            files=files,
            relations=relations,
            supersedes=supersedes,
            confidence=confidence,
            session=session,
            fields={"category": category},
        )

    @tool("Record a preference of the user or team (how they like things done).", read_only=False)
    def record_preference(
        title: Title,
        body: Body = "",
        scope: Literal["project", "global"] | None = None,
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        supersedes: Supersedes = None,
        confidence: Confidence = None,
        session: Session = None,
    ) -> dict[str, Any]:
        return rec(
            "preference",
            title=title,
            body=body,
            topics=topics,
            files=files,
            relations=relations,
            supersedes=supersedes,
            confidence=confidence,
            session=session,
            fields={"scope": scope},
        )

    @tool("Record a reference: a URL, file or document worth coming back to, and why.", read_only=False)
    def record_reference(
        title: Title,
        uri: Annotated[str, Field(min_length=1, max_length=2000, description="URL, path or document name.")],
        ref_type: Literal["url", "file", "doc"] | None = None,
        body: Body = "",
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        supersedes: Supersedes = None,
        confidence: Confidence = None,
        session: Session = None,
    ) -> dict[str, Any]:
        return rec(
            "reference",
            title=title,
            body=body,
            topics=topics,
            files=files,
            relations=relations,
            supersedes=supersedes,
            confidence=confidence,
            session=session,
            fields={"uri": uri, "ref_type": ref_type},
        )

    # --- querying -----------------------------------------------------------------------------------
    def _search(query: str, mode: str, limit: int, offset: int, **kw: Any) -> dict[str, Any]:
        with be.service() as svc:
            return ops.search(svc, query, mode=mode, limit=limit, offset=offset, **kw)

    @tool(
        "Search the project's memories (hybrid: full-text + embeddings, fused and weighted so corrections "
        "and preferences come first; superseded memories hidden unless asked). Returns cited snippets; "
        "open one with get_memory."
    )
    def search(
        query: Query,
        mode: Literal["hybrid", "text", "semantic"] = "hybrid",
        types: Types = None,
        status: Status | None = None,
        topics: Topics = None,
        files: Files = None,
        since: When = None,
        until: When = None,
        include_superseded: bool = False,
        limit: Limit = 10,
        offset: Offset = 0,
        explain: Annotated[bool, Field(description="Include the score breakdown.")] = False,
        include_cross_project: Annotated[
            bool, Field(description="Also search the related projects (related_to in config).")
        ] = False,
    ) -> dict[str, Any]:
        return _search(
            query,
            mode,
            limit,
            offset,
            explain=explain,
            include_cross_project=include_cross_project,
            types=types,
            status=status,
            topics=topics,
            files=files,
            since=since,
            until=until,
            include_superseded=include_superseded,
        )

    @tool(
        "Full-text (BM25) search for precedent: what was decided, excepted or corrected before, matching "
        "these exact words. Defaults to decisions, exceptions and corrections."
    )
    def search_precedent(
        query: Query,
        types: Types = None,
        topics: Topics = None,
        include_superseded: bool = False,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        return _search(
            query,
            "text",
            limit,
            offset,
            types=types or ["decision", "exception", "correction"],
            topics=topics,
            include_superseded=include_superseded,
        )

    @tool(
        "Semantic (embedding) search: memories close in meaning even without shared words. If embeddings "
        "are unavailable the result says so in `notices` and falls back to full-text."
    )
    def search_semantic(
        query: Query,
        types: Types = None,
        topics: Topics = None,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        return _search(query, "semantic", limit, offset, types=types, topics=topics)

    @tool(
        "Context for the work at hand: memories matching the task, memories about the current file (and "
        "its folder), then their neighbours up to max_hops along relations and shared topics/files. "
        "Without task or file it returns the session-start context. include_cross_project adds the related "
        "projects' memories (related_to in config), labelled with their project."
    )
    def query_context(
        task: Annotated[str | None, Field(max_length=2000, description="What you are about to do.")] = None,
        current_file: Annotated[str | None, Field(max_length=300, description="Repo-relative path.")] = None,
        max_hops: Annotated[int, Field(ge=0, le=3)] = 1,
        include_cross_project: bool = False,
        limit: Limit = 15,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return ops.query_context(
                svc,
                task=task,
                current_file=current_file,
                max_hops=max_hops,
                include_cross_project=include_cross_project,
                limit=limit,
            )

    @tool("Memories about one or more topics (any of them), newest first, with co-occurring topics.")
    def query_by_topic(
        topics: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=60)]], Field(min_length=1, max_length=20)
        ],
        types: Types = None,
        status: Status | None = None,
        include_superseded: bool = False,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return ops.query_by_topic(
                svc,
                topics,
                types=types,
                status=status,
                include_superseded=include_superseded,
                limit=limit,
                offset=offset,
            )

    @tool(
        "Timeline: memories created within window_days of one memory (`around`), or within since..until "
        "(default: the last 30 days). Superseded memories are included and marked."
    )
    def timeline(
        around: Annotated[str | None, Field(max_length=300, description="Memory id to centre on.")] = None,
        window_days: Annotated[int, Field(ge=1, le=3650)] = 7,
        since: When = None,
        until: When = None,
        types: Types = None,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return ops.timeline(
                svc,
                around=around,
                window_days=window_days,
                since=since,
                until=until,
                types=types,
                limit=limit,
                offset=offset,
            )

    @tool(
        "Decisions that need review. Rule: a current decision is stale if it has a revisit_trigger, or is "
        "still developmental developmental_days after creation, or a file in its `files:` has a git commit "
        "newer than the decision. Each result lists its reasons."
    )
    def query_stale_decisions(
        developmental_days: Annotated[int, Field(ge=0, le=3650)] = 30,
        check_files: Annotated[bool, Field(description="Compare `files:` with git history.")] = True,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return ops.stale(
                svc,
                developmental_days=developmental_days,
                check_files=check_files,
                limit=limit,
                offset=offset,
            )

    @tool(
        "Failed approaches (don't repeat them): with a query, the best matches; without, the newest. "
        "Each result carries approach, outcome and lesson."
    )
    def query_failed_approaches(
        query: Annotated[str | None, Field(max_length=1000)] = None,
        topics: Topics = None,
        files: Files = None,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return ops.failed_approaches(
                svc, query=query, topics=topics, files=files, limit=limit, offset=offset
            )

    @tool("Open questions: question memories whose answer is still empty, newest first.")
    def query_open_questions(topics: Topics = None, limit: Limit = 20, offset: Offset = 0) -> dict[str, Any]:
        with be.service() as svc:
            return ops.open_questions(svc, topics=topics, limit=limit, offset=offset)

    @tool(
        "The full text and metadata of one memory (body capped at 20k characters), with incoming relations."
    )
    def get_memory(id: MemoryRef) -> dict[str, Any]:
        with be.service() as svc:
            return ops.get_memory(svc, id)

    # --- graph --------------------------------------------------------------------------------------
    @tool(
        "Trace a decision (or any memory) through the graph: its supersession chain and its relations "
        "upstream (what it depends on / cites / supersedes), downstream (what depends on it / supersedes "
        "it) or both, as structured steps plus a readable chain."
    )
    def trace_decision(
        id: MemoryRef,
        direction: Literal["upstream", "downstream", "both"] = "both",
        depth: Annotated[int, Field(ge=1, le=5)] = 3,
        max_steps: Annotated[int, Field(ge=1, le=200)] = 50,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return ops.trace(svc, id, direction=direction, depth=depth, max_steps=max_steps)

    @tool(
        "Patterns across the project: exception clusters (same rule broken or same topic, min_size+ times), "
        "supersession chains of 3+ memories, and correction hotspots (topics/files with min_size+ "
        "corrections)."
    )
    def query_patterns(
        min_size: Annotated[int, Field(ge=2, le=100)] = 2,
        limit: Annotated[int, Field(ge=1, le=50, description="Items per pattern kind.")] = 10,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return ops.patterns(svc, min_size=min_size, limit=limit)

    @tool(
        "Find problems in the memory graph: contradictions (CONFLICTS_WITH between current memories, and "
        "same-topic decisions titled 'use X' vs 'don't use X'), stale decisions, orphans (no topics, "
        "files or relations), dependency cycles, broken links and invalid files. Each kind states its rule."
    )
    def detect_issues(
        kinds: Annotated[
            list[Literal["contradictions", "stale", "orphans", "cycles", "broken_links", "invalid_files"]]
            | None,
            Field(max_length=6, description="Default: all kinds.", default=None),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="Items per kind.")] = 10,
        include_cross_project: Annotated[
            bool, Field(description="Also compare decisions with the related projects' (related_to).")
        ] = False,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return ops.detect_issues(
                svc, kinds=kinds, limit=limit, include_cross_project=include_cross_project
            )

    @tool(
        "Suggest connections for a memory: similar memories (same hybrid search) it is not linked to yet, "
        "with shared topics/files and a suggested relation type. Without `id`: the strongest missing "
        "links across the whole project (pairs of memories with much in common and no relation)."
    )
    def suggest_connections(
        id: Annotated[
            str | None,
            Field(max_length=300, description="Memory id, prefix, path or slug; omit for the whole project."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=20)] = 5,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return ops.suggest(svc, id, limit=limit)

    @tool(
        "Supersede a memory: writes a NEW memory (same type) whose `supersedes` names the old one; the old "
        "file is never rewritten, the index marks it superseded. Topics and files default to the old one's.",
        read_only=False,
    )
    def memory_supersede(
        old_id: MemoryRef,
        title: Title,
        body: Body,
        reason: Annotated[
            str | None, Field(max_length=1000, description="Why the old memory no longer holds.")
        ] = None,
        fields: Annotated[
            dict[str, Any] | None,
            Field(description="The type's own fields, e.g. {'rationale': ...} for a decision.", default=None),
        ] = None,
        topics: Topics = None,
        files: Files = None,
        relations: Relations = None,
        confidence: Confidence = None,
    ) -> dict[str, Any]:
        with be.service() as svc:
            return ops.supersede(
                svc,
                old_id,
                title=title,
                body=body,
                reason=reason,
                fields=fields,
                topics=topics,
                files=files,
                relations=[r.model_dump() for r in relations or []],
                confidence=confidence,
            )

    @tool(
        "Metrics computed from the indexed memories: counts by type/status/source, corrections rate, "
        "supersession counts and longest chain, relations by type, open questions, confidence, weekly "
        "capture. Nothing is estimated; what the index cannot measure is listed under not_measured."
    )
    def get_metrics() -> dict[str, Any]:
        with be.service() as svc:
            return ops.metrics(svc)

    # --- resources ----------------------------------------------------------------------------------
    def _resource(fn: Callable[[Any], Any]) -> Any:
        try:
            with be.service() as svc:
                return fn(svc)
        except ToolFailure as failure:
            if failure.code in ("not_found", "ambiguous"):
                raise ResourceNotFoundError(f"{failure.message}. {failure.hint or ''}".strip()) from None
            raise ResourceError(f"{failure.message}. {failure.hint or ''}".strip()) from None

    @server.resource("graph://schema", name="schema", description="Node, relation and memory-type schema.")
    def graph_schema() -> str:
        return json.dumps(ops.schema(), indent=2)

    @server.resource("graph://stats", name="stats", description="Index counts for this project.")
    def graph_stats() -> str:
        return json.dumps(_resource(ops.stats), indent=2, default=str)

    @server.resource(
        "graph://project/{name}",
        name="project",
        description="Overview of a project: stats, topics, decisions.",
    )
    def graph_project(name: str) -> str:
        return json.dumps(_resource(lambda svc: ops.project_overview(svc, name)), indent=2, default=str)

    @server.resource(
        "ccmemory://memory/{id}",
        name="memory",
        description="One memory file (markdown with YAML frontmatter).",
        mime_type="text/markdown",
    )
    def memory_resource(id: str) -> str:
        return str(_resource(lambda svc: ops.memory_markdown(svc, id)))

    from ccmemory.mcp.reference_tools import register as register_reference

    register_reference(tool, server, be)
    return server


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("ccmemory")
    except Exception:
        return "0"


def run(repo: Path | None = None, *, http: bool = False, port: int = 8765, path: str = "/mcp") -> None:
    backend = Backend(repo)
    server = build_server(repo, backend)
    try:
        if http:
            server.run("streamable-http", host="127.0.0.1", port=port, streamable_http_path=path)
        else:
            server.run("stdio")
    finally:
        backend.close()
