"""The MCP `ingest` tool (full tool set): a passage through the capture pipeline (issue 30)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from ccmemory.surfaces.mcp.tools import Tool

if TYPE_CHECKING:
    from ccmemory.surfaces.mcp.backend import Backend


def register(tool: Tool, server: MCPServer, be: Backend) -> None:
    """Add `ingest`."""

    @tool(
        "Ingest a passage (meeting notes, a PR description, a design-doc excerpt): the capture pipeline "
        "(the configured LLM provider, or rules only) turns it into typed memories, redacted, checked "
        "against the memories in force for duplicates and supersession. dry_run lists them, writes none.",
        read_only=False,
    )
    def ingest(
        text: Annotated[str, Field(min_length=1, max_length=20_000, description="The passage.")],
        dry_run: Annotated[bool, Field(description="Only list what would be written.")] = False,
    ) -> dict[str, Any]:
        from ccmemory.features.capture.ingest import ingest as run

        with be.service() as svc:
            out = run(
                svc.vault.root, text, service=type(svc), dry_run=dry_run, author=svc.config.user_id
            ).as_dict()
            if out["written"]:
                svc.reindex()
            return out
