"""MCP tools for reference knowledge (.ccmemory/reference/): query_reference, list_references,
cache_url, cache_pdf, index_reference, and the ccmemory://reference/{path} resource.

Registered by ``ccmemory.surfaces.mcp.server.build_server`` through :func:`register`; the work is done
by ``ccmemory.features.reference.ops`` (the same functions the CLI uses).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from ccmemory.surfaces.mcp.common import ToolFailure

if TYPE_CHECKING:
    from ccmemory.surfaces.mcp.backend import Backend

Mode = Literal["hybrid", "text", "semantic"]


def _ops() -> Any:
    from ccmemory.features.reference import ops

    return ops


def _fail(exc: Exception) -> ToolFailure:
    from ccmemory.features.reference.cache import CacheError
    from ccmemory.features.reference.ops import ReferenceUnavailable

    if isinstance(exc, CacheError):
        return ToolFailure("cache_failed", str(exc), "nothing was written; check the URL or file")
    if isinstance(exc, ReferenceUnavailable):
        return ToolFailure("unsupported", str(exc), "use the SQLite or Neo4j index")
    raise exc


def register(tool: Callable[..., Any], server: Any, be: Backend) -> None:
    """Add the reference tools with the server's own ``tool`` decorator (errors, annotations)."""

    @tool(
        "Search the reference tree (concepts, cached web pages and PDFs under .ccmemory/reference/) and "
        "return the best matching SECTIONS (not whole files), each with its heading path, text and a "
        "citation ccmemory://reference/<path>#<section>. Full-text and semantic search fused."
    )
    def query_reference(
        query: Annotated[str, Field(min_length=1, max_length=1000, description="Plain words; no syntax.")],
        limit: Annotated[int, Field(ge=1, le=20, description="Sections to return.")] = 5,
        mode: Mode = "hybrid",
        status: Literal["curated", "developmental"] | None = None,
    ) -> dict[str, Any]:
        with be.service() as svc:
            try:
                resp = _ops().query(svc, query, limit=limit, mode=mode, status=status)
            except Exception as exc:
                raise _fail(exc) from None
            return {
                "results": [h.to_dict() for h in resp.hits],
                "mode": resp.mode,
                "notices": resp.notices,
            }

    @tool("List the files of the reference tree with title, source, tags, status and section count.")
    def list_references() -> dict[str, Any]:
        with be.service() as svc:
            try:
                files = _ops().list_references(svc)
            except Exception as exc:
                raise _fail(exc) from None
            return {"files": files, "count": len(files)}

    @tool(
        "Fetch an http(s) web page, keep its main content as markdown under "
        ".ccmemory/reference/cached/web/ (re-caching the same URL updates the file), redact secrets, "
        "and index it by section. URLs with credentials and non-http schemes are refused.",
        read_only=False,
    )
    def cache_url(
        url: Annotated[str, Field(min_length=8, max_length=2000, description="An http:// or https:// URL.")],
    ) -> dict[str, Any]:
        with be.service(refresh=False) as svc:
            try:
                return dict(_ops().cache_url(svc, url))
            except Exception as exc:
                raise _fail(exc) from None

    @tool(
        "Turn a PDF file inside the repository into markdown (page markers, headings where the fonts "
        "show them) under .ccmemory/reference/cached/pdf/ and index it. Scanned PDFs without a text "
        "layer are refused.",
        read_only=False,
    )
    def cache_pdf(
        path: Annotated[
            str, Field(min_length=1, max_length=500, description="Repo-relative path of the PDF.")
        ],
    ) -> dict[str, Any]:
        with be.service(refresh=False) as svc:
            try:
                root = svc.vault.root.resolve()
                file = (root / path).resolve()  # an absolute `path` replaces root here
                if not file.is_relative_to(root):
                    raise ToolFailure("invalid_argument", f"{path} is outside the repository", None)
                if not file.is_file():
                    raise ToolFailure("not_found", f"no file {path}", "give a repo-relative path to a PDF")
                return dict(_ops().cache_pdf(svc, file))
            except ToolFailure:
                raise
            except ValueError as exc:
                raise ToolFailure(
                    "invalid_argument", str(exc), "give a repo-relative path to a PDF"
                ) from None
            except Exception as exc:
                raise _fail(exc) from None

    @tool(
        "Re-index the reference tree now (files changed on disk are picked up; unchanged ones are "
        "skipped). Returns counts and any file problems.",
        read_only=False,
    )
    def index_reference(full: bool = False) -> dict[str, Any]:
        with be.service(refresh=False) as svc:
            try:
                rep = _ops().index_reference(svc, full=full)
            except Exception as exc:
                raise _fail(exc) from None
            return {
                **rep.as_dict(),
                "problems": [{"path": p.path, "line": p.line, "reason": p.reason} for p in rep.problems],
            }

    def _sections(path: str, section: str) -> str:
        from urllib.parse import unquote

        from mcp.server.mcpserver.exceptions import ResourceNotFoundError

        from ccmemory.core.reftree import REF_ROOT

        with be.service() as svc:
            try:
                chunks = _ops().file_chunks(svc, f"{REF_ROOT}/{unquote(path)}")
            except Exception as exc:
                raise _fail(exc) from None
        if section:
            chunks = [c for c in chunks if c.anchor == unquote(section)]
        if not chunks:
            raise ResourceNotFoundError(f"no reference {'section' if section else 'file'} {path}#{section}")
        return "\n\n".join(c.text for c in chunks) + "\n"

    @server.resource(
        "ccmemory://reference/{+path}",
        name="reference",
        description="One reference file as indexed (its sections' markdown, frontmatter left out).",
        mime_type="text/markdown",
    )
    def reference_resource(path: str) -> str:
        return _sections(path, "")

    @server.resource(
        "ccmemory://reference/{+path}#{section}",
        name="reference_section",
        description="One section of a reference file: the citation query_reference returns.",
        mime_type="text/markdown",
    )
    def reference_section_resource(path: str, section: str) -> str:
        return _sections(path, section)
