"""CcmemoryError -> exit code, in one table, and the one way the CLI reports such an error.

Exit codes: 0 success; 1 an anticipated failure (the message names the file or cause); 2 a usage
or configuration error (click's own usage errors, an unusable `.ccmemory/config.yaml`, a missing
setting); 3 no Docker, 4 no Docker Compose, 5 Docker engine not running (`ccmemory start`/`stop`).
Commands that report findings (`check`, `doctor`) exit 1 when they find a problem.

The table is keyed by class name (no import of the modules that define the classes: the CLI
starts fast); tests/test_errors.py checks that it names every CcmemoryError subclass.
"""

from __future__ import annotations

import click

from ccmemory.core.errors import CcmemoryError

EXIT_FAILURE = 1
EXIT_USAGE = 2

EXIT_CODES: dict[str, int] = {
    "CcmemoryError": EXIT_FAILURE,
    "ConfigError": EXIT_USAGE,
    "MissingExtra": EXIT_FAILURE,
    # files and folders
    "VaultNotFound": EXIT_FAILURE,
    "MemoryFileError": EXIT_FAILURE,
    "YAMLLimit": EXIT_FAILURE,
    "UnsafeFile": EXIT_FAILURE,
    "DecodeError": EXIT_FAILURE,
    # index, search, git
    "IndexUnavailable": EXIT_FAILURE,
    "EmbedderUnavailable": EXIT_FAILURE,
    "ConversionError": EXIT_FAILURE,
    "RefError": EXIT_FAILURE,
    "NoSuchMemory": EXIT_FAILURE,
    "AmbiguousRef": EXIT_FAILURE,
    "GitError": EXIT_FAILURE,
    "PromoteError": EXIT_FAILURE,
    "AlreadyWatching": EXIT_FAILURE,
    # capture, reference knowledge, site, dashboard, MCP
    "ProviderError": EXIT_FAILURE,
    "CacheError": EXIT_FAILURE,
    "FetchError": EXIT_FAILURE,
    "PdfError": EXIT_FAILURE,
    "_TooSlow": EXIT_FAILURE,  # internal to reference/pdf.py, never escapes it
    "ReferenceUnavailable": EXIT_FAILURE,
    "SiteError": EXIT_FAILURE,
    "NoPdfRenderer": EXIT_FAILURE,
    "ToolFailure": EXIT_FAILURE,
    "DraftError": EXIT_FAILURE,
    # ccmemory start / stop
    "DockerProblem": EXIT_FAILURE,
    "DockerMissing": 3,
    "ComposeMissing": 4,
    "DockerEngineDown": 5,
}


def exit_code(exc: BaseException) -> int:
    """The exit code for `exc`: the table's entry for the nearest class in its MRO, else 1."""
    for cls in type(exc).__mro__:
        if cls.__name__ in EXIT_CODES:
            return EXIT_CODES[cls.__name__]
    return EXIT_FAILURE


class CliError(click.ClickException):
    """A click error with the mapped exit code; shows `Error: <message>` and `Hint: <hint>`."""

    def __init__(self, message: str, code: int = EXIT_FAILURE, hint: str | None = None) -> None:
        super().__init__(message + (f"\nHint: {hint}" if hint else ""))
        self.exit_code = code  # type: ignore[misc]  # click declares a ClassVar; an instance value works


def cli_error(exc: BaseException, prefix: str = "") -> CliError:
    """The CLI's report of `exc`: a CcmemoryError with its code and hint; anything else (a
    ValueError a command anticipates) as a plain failure with its message."""
    if isinstance(exc, CcmemoryError):
        return CliError(prefix + exc.message, exit_code(exc), exc.hint)
    return CliError(prefix + str(exc), EXIT_FAILURE)
