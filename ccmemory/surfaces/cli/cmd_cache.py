"""`ccmemory cache URL|FILE.pdf`: keep a web page or a PDF as reference markdown."""

from __future__ import annotations

from pathlib import Path

import click

from ccmemory.surfaces.cli.common import FiniteRange, emit_json, notice, service
from ccmemory.surfaces.cli.errors import cli_error


@click.command("cache")
@click.argument("source")
@click.option(
    "--timeout", default=20.0, show_default=True, type=FiniteRange(1, 300), help="Seconds per request."
)
@click.option(
    "--max-bytes",
    default=10 * 1024 * 1024,
    show_default=True,
    type=click.IntRange(1024),
    help="Largest page accepted.",
)
@click.option(
    "--allow-private-hosts",
    is_flag=True,
    help="Also fetch from loopback, private and link-local addresses (intranet pages).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def cache_cmd(source: str, timeout: float, max_bytes: int, allow_private_hosts: bool, as_json: bool) -> None:
    """Cache SOURCE (an http(s) URL or a PDF file) as markdown under .ccmemory/reference/cached/
    and index it by section.

    Web pages: the main content is kept (headings, lists, code, tables), menus and ads are
    dropped; the file is reference/cached/web/<slug>-<hash>.md with the source URL and time in
    its frontmatter, and caching the same URL again replaces it. Only http and https are fetched,
    redirects are re-checked, URLs with credentials are refused, and so are hosts on loopback,
    private or link-local addresses unless --allow-private-hosts (or config
    `reference: allow_private_hosts: true`). PDFs become text with page
    markers and headings where the font sizes show them; a scanned PDF (no text layer) is
    refused. Cached text is redacted (secrets removed) before it is written.
    """
    from ccmemory.features.reference.cache import CacheError
    from ccmemory.features.reference.ops import cache_pdf, cache_url

    with service() as svc:
        try:
            if "://" in source:
                result = cache_url(
                    svc, source, timeout=timeout, max_bytes=max_bytes, allow_private=allow_private_hosts
                )
            else:
                path = Path(source)
                if not path.is_file():
                    raise click.ClickException(f"{source}: no such file (give an http(s) URL or a PDF file)")
                result = cache_pdf(svc, path)
        except CacheError as exc:
            raise cli_error(exc) from None
        if as_json:
            emit_json(result)
            return
        verb = "cached" if result["created"] else "re-cached (updated)"
        click.echo(f"{verb} {result['source']} -> {result['path']}")
        if result.get("title"):
            click.echo(f"  title: {result['title']}")
        if result.get("pages") is not None:
            click.echo(f"  pages: {result['pages']}")
        if result["redactions"]:
            notice(f"{result['redactions']} possible secret(s) redacted from the cached text")
        if result.get("notice"):
            notice(result["notice"])


def search_reference_cmd(
    query: str, *, limit: int, mode: str, status: str | None, explain: bool, as_json: bool
) -> None:
    """`ccmemory search --reference`: sections of the reference tree, each with its citation."""
    from ccmemory.features.reference.ops import ReferenceUnavailable
    from ccmemory.features.reference.ops import query as ref_query

    with service() as svc:
        try:
            resp = ref_query(svc, query, limit=limit, mode=mode, status=status)
        except ReferenceUnavailable as exc:
            raise cli_error(exc) from None
        for n in resp.notices:
            notice(n)
        if as_json:
            emit_json([h.to_dict(explain=explain) for h in resp.hits])
            return
        if not resp.hits:
            click.echo("no matching reference sections")
            return
        for h in resp.hits:
            c = h.chunk
            flag = "" if c.status == "curated" else click.style(" [developmental]", fg="yellow")
            click.echo(f"{h.score:.4f}  " + click.style(" > ".join(c.heading_path) or c.id, bold=True) + flag)
            click.echo(f"        {c.uri}")
            from ccmemory.retrieval.search import snippet

            click.echo(f"        {snippet(c.text)}")
            if explain:
                click.echo("        " + ", ".join(f"{k}={v:.4g}" for k, v in h.parts.items()))
