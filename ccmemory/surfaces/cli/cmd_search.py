"""search, trace, context, stats."""

from __future__ import annotations

import json
from typing import Any

import click

from ccmemory.core.model import TYPES
from ccmemory.features.context import context_for
from ccmemory.surfaces.cli.common import display_path, emit_json, notice, parse_when, service


@click.command("search")
@click.argument("query")
@click.option(
    "--type", "types", multiple=True, type=click.Choice(sorted(TYPES)), help="Only this type (repeatable)."
)
@click.option("--topic", "topics", multiple=True, help="Only memories with this topic (repeatable: any of).")
@click.option(
    "--file",
    "files",
    multiple=True,
    help="Only memories about this code path (a trailing / matches a folder).",
)
@click.option("--status", type=click.Choice(["curated", "developmental"]))
@click.option("--since", help="Created on or after: 2026-11-01, a timestamp, or 7d / 3w / 12h ago.")
@click.option("--until", help="Created on or before (same forms as --since).")
@click.option(
    "--literal-time",
    is_flag=True,
    help="Search time words as words: by default 'last week', 'yesterday', 'since March', 'in Q3' "
    "become a date range (unless --since or --until is given).",
)
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 500))
@click.option("--include-superseded", is_flag=True, help="Also show memories that a newer one replaced.")
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "text", "semantic"]),
    default="hybrid",
    show_default=True,
    help="hybrid fuses full-text and semantic (embedding) search.",
)
@click.option("--explain", is_flag=True, help="Show each result's score parts.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array, best first.")
@click.option("--at", metavar="REV", help="Search the memories as they stood at REV (tag, commit, branch).")
@click.option(
    "--cross-project",
    is_flag=True,
    help="Also search the related projects (related_to in .ccmemory/config.yaml); their hits are "
    "labelled with their project.",
)
@click.option(
    "--reference",
    is_flag=True,
    help="Search the reference tree (.ccmemory/reference/) by section instead of the memories.",
)
def search_cmd(
    query: str,
    types: tuple[str, ...],
    topics: tuple[str, ...],
    files: tuple[str, ...],
    status: str | None,
    since: str | None,
    until: str | None,
    limit: int,
    include_superseded: bool,
    mode: str,
    explain: bool,
    as_json: bool,
    at: str | None,
    cross_project: bool = False,
    reference: bool = False,
    literal_time: bool = False,
) -> None:
    """Find memories by words and meaning. The query is plain text: quotes, *, -, AND, NEAR and
    parentheses are searched as words, never as query syntax.

    Each result cites its id, file path and ccmemory://memory/<id>. A memory whose code files
    changed a lot since it was committed is marked "may be stale".
    """
    if reference:
        flags = (
            ("--type", types),
            ("--topic", topics),
            ("--file", files),
            ("--since", since),
            ("--until", until),
            ("--include-superseded", include_superseded),
            ("--at", at),
            ("--cross-project", cross_project),
        )
        _reference(query, flags, limit=limit, mode=mode, status=status, explain=explain, as_json=as_json)
        return
    from ccmemory.features.lifecycle.staleness import for_indexed
    from ccmemory.surfaces.cli.at import service_at

    with service_at(at) if at is not None else service() as svc:
        f = svc.filters(
            types=list(types) or None,
            topics=list(topics) or None,
            files=list(files) or None,
            status=status,
            since=parse_when(since),
            until=parse_when(until),
            include_superseded=include_superseded,
        )
        if not literal_time:  # "decisions from last week": a date range, not words
            from ccmemory.text.timewords import apply as time_words

            query, when = time_words(query, f)
            if when and (explain or not as_json):
                d = when.as_dict()
                span = " ".join(
                    x
                    for x in (
                        f"since {d['since']}" if d["since"] else "",
                        f"before {d['until']}" if d["until"] else "",
                    )
                    if x
                )
                notice(
                    f"time: {when.phrase!r} → {span}; searching {query!r} (--literal-time searches the words)"
                )
        if cross_project:
            if at:
                raise click.UsageError("--cross-project and --at cannot be combined")
            _cross(svc, query, f, limit, mode, explain, as_json)
            return
        resp = _warm_search(svc, query, f, limit, mode, explain) if at is None else None
        if resp is None:
            resp = svc.search(query, f, limit=limit, mode=mode)
        for n in resp.notices:
            notice(n)
        if as_json and resp.vectors_pending:  # stdout stays the array of hits
            warming = {"semantic_warming_up": {"vectors_pending": resp.vectors_pending}}
            click.echo(json.dumps(warming), err=True)
        stale = {} if at else for_indexed(svc.vault.root, [h.memory for h in resp.hits], svc.config.raw)
        if as_json:
            _emit_hits(resp.hits, stale, explain)
            return
        _echo_hits(svc, resp.hits, stale, explain)


def _warm_search(svc: Any, query: str, f: Any, limit: int, mode: str, explain: bool) -> Any:
    """The search response of the warm process (a running `ccmemory mcp` for this repository
    holds the embedder and the vectors: ~50 ms against ~2 s cold at 100k memories), or None to
    search here. Silent, except that --explain says which process answered and why."""
    from ccmemory.core import settings

    if mode == "text" or not settings.SEARCH_WARM.get():
        if explain:
            notice(
                "searched in this process (full text needs neither the model nor the vectors)"
                if mode == "text"
                else "searched in this process (CCMEMORY_SEARCH_WARM=0)"
            )
        return None
    from ccmemory.features.recall import warm

    resp, why = warm.search(str(svc.vault.root), query, f, limit=limit, mode=mode, index=svc.index.location)
    if explain:
        notice(why if resp is not None else f"searched in this process: {why}")
    return resp


def _reference(query: str, flags: tuple[tuple[str, Any], ...], **kw: Any) -> None:
    """`search --reference`: the reference tree's sections; the memory-only filters are refused."""
    from ccmemory.surfaces.cli.cmd_cache import search_reference_cmd

    unsupported = [name for name, value in flags if value]
    if unsupported:
        raise click.UsageError(f"{', '.join(unsupported)} cannot be combined with --reference")

    search_reference_cmd(query, **kw)


def _emit_hits(hits: list[Any], stale: dict[str, Any], explain: bool) -> None:
    items = [h.to_dict(explain) for h in hits]
    for item in items:
        if item["id"] in stale:
            item["stale"] = stale[item["id"]].reason()
    emit_json(items)


def _echo_hits(svc: Any, hits: list[Any], stale: dict[str, Any], explain: bool) -> None:
    if not hits:
        click.echo("no matching memories")
        return
    from ccmemory.app.resolve import short_ids

    short = short_ids(svc, [h.memory.id for h in hits])
    for h in hits:
        m = h.memory
        flag = "" if m.status == "curated" else click.style(" [developmental]", fg="yellow")
        if m.id in stale:
            flag += click.style(" [may be stale]", fg="red")
        if h.weak:  # a far vector neighbour: shown, not dropped (search.MIN_SIMILARITY)
            flag += click.style(" [weak match]", dim=True)
        click.echo(f"{h.score:.4f}  " + click.style(f"[{m.type}] {m.title}", bold=True) + flag)
        click.echo(f"        {short[m.id]}  {display_path(svc.vault.root, m.path)}")
        if h.via:
            click.echo(f"        (related: {h.via})")
        if explain:
            parts = ", ".join(f"{k}={v:.4g}" for k, v in h.parts.items())
            click.echo(f"        {parts}")


def _cross(svc: Any, query: str, f: Any, limit: int, mode: str, explain: bool, as_json: bool) -> None:
    """`search --cross-project`: home and related projects' hits, each foreign one labelled."""
    from ccmemory.features.crossproject import cross_search

    resp = cross_search(svc, query, f, limit=limit, mode=mode)
    for n in resp.notices:
        notice(n)
    if as_json:
        emit_json([c.to_dict(explain) for c in resp.hits])
        return
    if not resp.hits:
        click.echo("no matching memories")
        return
    for c in resp.hits:
        m = c.hit.memory
        flag = "" if m.status == "curated" else click.style(" [developmental]", fg="yellow")
        if c.hit.weak:
            flag += click.style(" [weak match]", dim=True)
        label = ""
        if c.source is not None:
            label = click.style(f"[{c.source.name} · {c.source.relation}] ", fg="cyan")
        click.echo(f"{c.hit.score:.4f}  " + label + click.style(f"[{m.type}] {m.title}", bold=True) + flag)
        where = display_path(svc.vault.root, m.path) if c.source is None else c.citation().get("file", m.path)
        click.echo(f"        {m.id}  {where}")
        if c.hit.via:
            click.echo(f"        (related: {c.hit.via})")
        if explain:
            click.echo("        " + ", ".join(f"{k}={v:.4g}" for k, v in c.hit.parts.items()))


@click.command("trace")
@click.argument("ref")
@click.option(
    "--direction",
    type=click.Choice(["both", "upstream", "downstream"]),
    default="both",
    show_default=True,
    help="upstream: what it builds on; downstream: what builds on it.",
)
@click.option("--depth", default=3, show_default=True, type=click.IntRange(0, 10))
@click.option("--json", "as_json", is_flag=True)
def trace_cmd(ref: str, direction: str, depth: int, as_json: bool) -> None:
    """Show a memory's supersession chain and its relations in both directions."""
    from ccmemory.surfaces.cli.common import resolve_or_exit

    with service() as svc:
        root = resolve_or_exit(svc, ref)  # the same resolver (and messages) as show
        t = svc.trace(root.id, direction=direction, depth=depth)
        if t is None:
            raise click.ClickException(f"no memory {ref!r}")
        if as_json:
            emit_json(
                {
                    "root": t.root.id,
                    "chain": [
                        {"id": m.id, "title": m.title, "created": m.created, "status": m.status}
                        for m in t.chain
                    ],
                    "steps": [
                        {
                            "depth": s.depth,
                            "relation": s.label,
                            "from": s.edge.src,
                            "type": s.edge.type,
                            "to": s.edge.dst,
                            "reason": s.edge.reason,
                        }
                        for s in t.steps
                    ],
                    "nodes": {
                        i: {
                            "title": m.title,
                            "type": m.type,
                            "status": m.status,
                            "path": m.path,
                            "uri": m.uri,
                        }
                        for i, m in t.nodes.items()
                    },
                }
            )
            return
        from ccmemory.app.resolve import short_ids

        short = short_ids(svc, [t.root.id, *(m.id for m in t.chain), *t.nodes])
        click.secho(f"[{t.root.type}] {t.root.title}  {short[t.root.id]}", bold=True)
        if len(t.chain) > 1:
            click.echo("supersession chain (oldest first):")
            for m in t.chain:
                mark = "▶" if m.id == t.root.id else " "
                click.echo(f"  {mark} {m.created[:10]}  {m.title}  {short[m.id]}")
        if not t.steps:
            click.echo("no relations")
        for s in t.steps:
            other = s.edge.dst if s.direction == "out" else s.edge.src
            here = s.edge.src if s.direction == "out" else s.edge.dst
            m = t.nodes[other]
            reason = f" — {s.edge.reason}" if s.edge.reason else ""
            click.echo(
                f"{'  ' * s.depth}{short.get(here, here)} {s.label} → [{m.type}] {m.title} "
                f"{short.get(other, other)}{reason}"
            )


@click.command("context")
@click.option(
    "--budget", default=None, type=click.IntRange(50, 50000), help="Token budget (default from config: 600)."
)
@click.option("--task", help="Put memories relevant to this task first.")
@click.option("--explain", is_flag=True, help="Also say what this and recall cost in tokens.")
@click.option("--json", "as_json", is_flag=True)
def context_cmd(budget: int | None, task: str | None, explain: bool, as_json: bool) -> None:
    """Print the session-start digest: what is open on this branch, memories about files changed
    recently, project rules, gotchas and exceptions, recent decisions, failed approaches,
    decisions needing review and open hypotheses, one line each, within a token budget. Memories
    a prompt or a file needs are added during the session by recall (`ccmemory recall`)."""
    with service() as svc:
        ctx = context_for(svc, budget, task=task)
        if as_json:
            emit_json({"text": ctx.text, "ids": ctx.ids, "tokens": ctx.tokens})
            return
        click.echo(ctx.text or "no memories yet")
        if explain:
            limit = budget if budget is not None else svc.config.context_budget
            click.echo(
                f"(session start: {ctx.tokens} tokens of a {limit}-token budget, {len(ctx.ids)} memories)"
            )
            click.echo(_recall_line(svc))


def _recall_line(svc: Any) -> str:
    """One line on recall's cost so far, from the local telemetry."""
    from ccmemory.core import telemetry
    from ccmemory.features.recall.config import recall_settings
    from ccmemory.features.recall.usage import USAGE_KINDS, summarise

    s = recall_settings(svc.config.raw)
    if not s.enabled:
        return "(recall is off)"
    store = telemetry.open_store(svc.vault.dir, svc.config.raw)
    try:
        store.ingest()
        u = summarise(store.events(list(USAGE_KINDS)))
    finally:
        store.close()
    per = f"{u.tokens / u.injections:.0f}" if u.injections else "0"
    return (
        f"(recall: up to {s.budget_tokens} tokens per prompt or file; so far {u.tokens} tokens in "
        f"{u.injections} injections, {per} each; `ccmemory recall --usage` for details)"
    )


@click.command("stats")
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--counts-only", is_flag=True, help="Only the counts: skip the metrics (they read telemetry and embed)."
)
def stats_cmd(as_json: bool, counts_only: bool) -> None:
    """Counts by type and status, relations and invalid files; then the metrics: ours and the seed's
    definitions side by side, each with its formula, and hours saved when config.yaml states the
    assumptions (docs/dashboard.md)."""
    with service() as svc:
        data = svc.view.stats()
        data["project"] = svc.project
        from ccmemory.features.reference.ops import counts

        ref = counts(svc)
        if ref.get("files"):
            data["reference"] = ref
        if not counts_only:
            from ccmemory.surfaces.dashboard import gather

            data.update(gather.all_metrics(svc))
        if as_json:
            emit_json(data)
            return
        click.echo(f"project {svc.project}: {data['memories']} memories ({data['backend']} index)")
        for k, v in data["by_type"].items():
            click.echo(f"  {k:16} {v}")
        for k, v in data["by_status"].items():
            click.echo(f"  {k:16} {v}")
        click.echo(f"  relations        {data['relations']}")
        click.echo(f"  invalid files    {data['invalid_files']}")
        if ref.get("files"):
            click.echo(f"  reference        {ref['files']} files, {ref['sections']} sections")
        if not counts_only:
            from ccmemory.surfaces.dashboard import gather

            for line in gather.render(data):
                click.echo(line)
