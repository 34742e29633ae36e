"""Optional parts of the install (`pip install 'ccmemory-vault[EXTRA]'`) and the one message when
one is missing.

The base install is what Claude Code needs every day: the files, the SQLite index, the local
embedder, the hooks, the MCP server and the CLI. The rest is an extra (pyproject.toml); a command
that needs one calls `require` first, so the user reads which `pip install` to run instead of a
traceback. Stdlib only.

The distribution is named `ccmemory-vault` (`ccmemory` on the package index is somebody else's
reserved name); the package and the command stay `ccmemory`. From a clone, the hint names the clone.
"""

from __future__ import annotations

from ccmemory.core.errors import CcmemoryError

DIST = "ccmemory-vault"

# extra -> (the modules it brings, what needs it)
EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "neo4j": (("neo4j",), "the Neo4j backend (backend: neo4j)"),
    "llm": (("anthropic",), "capture through the Anthropic API"),
    "voyage": (("voyageai",), "Voyage embeddings (embedder: voyage)"),
    "reference": (("readability", "markdownify", "pypdf"), "the reference cache (`ccmemory cache`)"),
    "site": (("mkdocs", "material"), "the MkDocs site (`ccmemory site`)"),
}


class MissingExtra(CcmemoryError):
    """A feature needs an optional part of the install that is not there."""


def missing(extra: str) -> list[str]:
    """The modules of `extra` that cannot be imported here."""
    import importlib

    out = []
    for module in EXTRAS[extra][0]:
        try:
            importlib.import_module(module)
        except ImportError:
            out.append(module)
    return out


def require(extra: str) -> None:
    """Raise MissingExtra naming the `pip install` to run when `extra` is not installed."""
    gone = missing(extra)
    if gone:
        raise MissingExtra(message(extra, gone), f"or every extra at once: {install_command('all')}")


def install_command(extra: str) -> str:
    """`pip install` of `extra` for this install: the clone it runs from (an editable install of a
    source tree), else the distribution on the package index."""
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.isfile(os.path.join(root, "pyproject.toml")):
        return f"pip install -e '{root}[{extra}]'"
    return f"pip install '{DIST}[{extra}]'"


def message(extra: str, gone: list[str]) -> str:
    return (
        f"{EXTRAS[extra][1]} needs the optional '{extra}' extra ({', '.join(gone)} not installed): "
        f"{install_command(extra)}"
    )
