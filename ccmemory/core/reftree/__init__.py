"""Reference knowledge (Domain 2): a markdown tree under ``.ccmemory/reference/``.

Concepts written by hand and cached web pages / PDFs (``cached/web``, ``cached/pdf``) are plain
markdown with optional frontmatter (title, source, cached_at, tags). They are not memories: no
type, no id. The index splits them into heading-sized chunks (:mod:`.chunk`) and serves them by
section (:mod:`.search`); ``docs/reference.md`` describes the whole feature.
"""

from __future__ import annotations

from ccmemory.core.layout import REFERENCE_DIR, VAULT_DIR

#: Repo-relative folder of the tree (POSIX).
REF_ROOT = f"{VAULT_DIR}/{REFERENCE_DIR}"
URI_PREFIX = "ccmemory://reference/"


def tree_path(rel: str) -> str:
    """``.ccmemory/reference/a/b.md`` -> ``a/b.md`` (the path inside the tree)."""
    prefix = REF_ROOT + "/"
    return rel[len(prefix) :] if rel.startswith(prefix) else rel


def citation(chunk_id: str) -> str:
    """``concepts/jwt.md#claims`` -> ``ccmemory://reference/concepts/jwt.md#claims``."""
    return URI_PREFIX + chunk_id
