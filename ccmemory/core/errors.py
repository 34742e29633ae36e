"""One base for every anticipated ccmemory failure, and its mapping to MCP error codes.

`CcmemoryError(message, hint)`: `message` names the file or cause, `hint` (optional) says what to
do. Each module keeps its own subclass (VaultNotFound, GitError, ...; IndexUnavailable lives here); classes
that callers also catch as a builtin keep that builtin as a second base (UnsafeFile is an
OSError, ConfigError a ValueError, ...).

The surfaces map the classes once: `ccmemory.surfaces.cli.errors.EXIT_CODES` to exit codes, `MCP_CODES`
here to the `code` of an MCP tool error (`mcp_error`). Both tables are keyed by class name and a
test checks that they name every subclass, so a new error class is a deliberate choice on both
surfaces. Stdlib only: the hooks may import this module.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class CcmemoryError(Exception):
    """An anticipated failure; `str()` is the message, `hint` what the user (or model) can do."""

    hint: str | None = None  # a class may give a default hint

    def __init__(self, message: str = "", hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if hint is not None:
            self.hint = hint

    def __str__(self) -> str:
        return self.message


class ConfigError(CcmemoryError, ValueError):
    """`.ccmemory/config.yaml` cannot be used (unreadable, not a mapping, unknown backend).

    A ValueError too: code that caught the old ValueError keeps working."""

    hint = "fix .ccmemory/config.yaml (docs/configuration.md)"


class IndexUnavailable(CcmemoryError):
    """The index cannot be used (backend down, wrong password, corrupt database...).

    Defined here rather than in ccmemory.index.base (which re-exports it) so that a backend's
    lowest modules can raise it without importing the index's data types.

    The message names the backend location and the cause; memory files are never affected.
    """

    hint = (
        "memory files are untouched; check the backend (`ccmemory doctor`), or run "
        "`ccmemory reindex` to rebuild the local index"
    )


# The `code` of an MCP tool error for each class (by name; the nearest class in the MRO wins).
# ToolFailure and RefError carry their own code (`code` attribute); the table gives the fallback.
MCP_CODES: dict[str, str] = {
    "CcmemoryError": "failed",
    "ConfigError": "bad_config",
    "MissingExtra": "unavailable",
    # files and folders
    "VaultNotFound": "no_vault",
    "MemoryFileError": "bad_file",
    "YAMLLimit": "bad_file",
    "UnsafeFile": "bad_file",
    "DecodeError": "invalid_argument",
    # index, search, git
    "IndexUnavailable": "index_unavailable",
    "EmbedderUnavailable": "embedder_unavailable",
    "ConversionError": "embedder_unavailable",
    "RefError": "not_found",
    "NoSuchMemory": "not_found",
    "AmbiguousRef": "ambiguous",
    "GitError": "git_failed",
    "PromoteError": "promote_failed",
    "AlreadyWatching": "already_running",
    # capture, reference knowledge, site, dashboard, MCP
    "ProviderError": "provider_failed",
    "CacheError": "cache_failed",
    "FetchError": "fetch_failed",
    "PdfError": "bad_file",
    "_TooSlow": "bad_file",  # internal to reference/pdf.py, never escapes it
    "ReferenceUnavailable": "unsupported",
    "SiteError": "site_failed",
    "NoPdfRenderer": "unsupported",
    "ToolFailure": "failed",
    "DraftError": "invalid_argument",
    # ccmemory start / stop
    "DockerProblem": "docker_unavailable",
    "DockerMissing": "docker_unavailable",
    "ComposeMissing": "docker_unavailable",
    "DockerEngineDown": "docker_unavailable",
}


def mcp_code(exc: BaseException) -> str:
    """The MCP error code of `exc`: its own `code` string if it has one, else the table's entry
    for the nearest class in its MRO, else `internal`."""
    own = getattr(exc, "code", None)
    if isinstance(own, str) and own:
        return own
    for cls in type(exc).__mro__:
        if cls.__name__ in MCP_CODES:
            return MCP_CODES[cls.__name__]
    return "internal"


def mcp_error(exc: BaseException) -> dict[str, Any]:
    """The `{"code", "message", "hint"?}` payload of an MCP tool error for `exc`."""
    message = getattr(exc, "message", None)
    out: dict[str, Any] = {
        "code": mcp_code(exc),
        "message": message if isinstance(message, str) else str(exc),
    }
    hint = getattr(exc, "hint", None)
    if hint:
        out["hint"] = hint
    return out
