"""The MCP server's one Service: opened lazily, reopened when config.yaml changes."""

from __future__ import annotations

from pathlib import Path

from ccmemory.surfaces.mcp.backend import Backend


def test_an_edit_of_config_yaml_is_seen_by_the_running_server(repo: Path) -> None:
    be = Backend(repo, refresh_seconds=-1)
    try:
        with be.service() as svc:
            assert svc.config.raw.get("reference") is None
            first = svc
        cfg = repo / ".ccmemory" / "config.yaml"
        cfg.write_text(cfg.read_text() + "reference:\n  allow_private_hosts: true\n")
        with be.service() as svc:
            assert svc.config.raw["reference"] == {"allow_private_hosts": True}
            assert svc is not first
        with be.service() as svc:
            assert svc is not first and svc.config.raw["reference"]["allow_private_hosts"] is True
            again = svc
        with be.service() as svc:
            assert svc is again  # unchanged config: the same Service, no reopening per call
    finally:
        be.close()
