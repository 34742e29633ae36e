"""Reference operations over a Service: what the CLI and MCP surfaces call."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccmemory.app.refsync import RefReport, reindex_reference, supports
from ccmemory.features.reference.lookup import (  # re-exported: the surfaces call them through ops
    ReferenceUnavailable as ReferenceUnavailable,
)
from ccmemory.features.reference.lookup import _index
from ccmemory.features.reference.lookup import query as query

if TYPE_CHECKING:
    from ccmemory.app.service import Service


def _status_of(svc: Service) -> Any:
    from ccmemory.core import gitstate

    return gitstate.snapshot(svc.vault.root, svc.config.main_branch).status_of


def index_reference(svc: Service, paths: list[str] | None = None, *, full: bool = False) -> RefReport:
    """(Re)index the tree, or only these repo-relative paths."""
    return reindex_reference(svc.vault, _index(svc), svc.project, _status_of(svc), full=full, only=paths)


def counts(svc: Service) -> dict[str, int]:
    """{"files", "sections", "invalid"} of the indexed tree; {} when the backend has none."""
    idx = svc.index
    if not supports(idx):
        return {}
    files = idx.ref_files(svc.project)  # type: ignore[attr-defined]
    return {
        "files": len(files),
        "sections": sum(int(f["chunks"]) for f in files),
        "invalid": sum(1 for f in files if f.get("error")),
    }


def embed_sections(svc: Service) -> str | None:
    """Vectors for sections that have none yet (as `reindex` does for memories); a problem or None."""
    from ccmemory.features.reference.search import embed_missing

    emb = svc.embedder()
    if emb is None or not supports(svc.index):
        return None
    return embed_missing(svc.index, svc.project, emb)


def list_references(svc: Service) -> list[dict[str, Any]]:
    from ccmemory.core.reftree import tree_path

    return [{**f, "tree_path": tree_path(f["path"])} for f in _index(svc).ref_files(svc.project)]


def file_chunks(svc: Service, rel: str) -> list[Any]:
    return list(_index(svc).ref_file_chunks(svc.project, rel))


def _index_one(svc: Service, rel: str) -> str | None:
    """Index just-written file; a notice instead of an exception when the index is down."""
    try:
        index_reference(svc, [rel])
    except Exception as exc:
        return f"written, not indexed ({type(exc).__name__}: {exc}); run `ccmemory reindex`"
    return None


def allow_private_hosts(svc: Service) -> bool:
    ref = svc.config.raw.get("reference")
    return bool(isinstance(ref, dict) and ref.get("allow_private_hosts") is True)


def cache_url(svc: Service, url: str, **fetch_kw: Any) -> dict[str, Any]:
    from ccmemory.core.extras import require
    from ccmemory.features.reference.cache import cache_url as write

    require("reference")  # page and PDF extraction are an extra (pyproject.toml)

    if not fetch_kw.get("allow_private"):
        fetch_kw["allow_private"] = allow_private_hosts(svc)

    res = write(svc.vault, url, fetch_kw=fetch_kw or None)
    notice = _index_one(svc, res.path)
    return {**res.as_dict(), **({"notice": notice} if notice else {})}


def cache_pdf(svc: Service, file: str | Path) -> dict[str, Any]:
    from ccmemory.core.extras import require
    from ccmemory.features.reference.cache import cache_pdf as write

    require("reference")  # page and PDF extraction are an extra (pyproject.toml)

    res = write(svc.vault, Path(file))
    notice = _index_one(svc, res.path)
    return {**res.as_dict(), **({"notice": notice} if notice else {})}
