"""A synchronous wrapper around the real MCP SDK client, for tests and the benchmark.

The client runs in an anyio blocking portal (an event loop in a background thread), so a whole
test module can share one server process.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal

#: The tests of the individual tools run the server with every tool (the default list is the lean
#: one, tests/test_mcp_lean.py); a test can pass CCMEMORY_MCP_TOOLS itself.
FULL = {"CCMEMORY_MCP_TOOLS": "full"}


class SyncClient:
    def __init__(self, portal: BlockingPortal, session: Any, stack: ExitStack):
        self.portal = portal
        self.session = session
        self._stack = stack

    @classmethod
    def stdio(cls, cwd: Path, env: dict[str, str] | None = None, args: list[str] | None = None) -> SyncClient:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "ccmemory", "mcp", *(args or [])],
            cwd=str(cwd),
            env={**os.environ, **FULL, **(env or {})},
        )
        return cls._connect(lambda: stdio_client(params))

    @classmethod
    def http(cls, url: str) -> SyncClient:
        from mcp.client.streamable_http import streamable_http_client

        return cls._connect(lambda: streamable_http_client(url))

    @classmethod
    def _connect(cls, transport_factory: Any) -> SyncClient:
        from mcp.client.session import ClientSession

        stack = ExitStack()
        portal_cm: AbstractContextManager[BlockingPortal] = start_blocking_portal()
        portal = stack.enter_context(portal_cm)
        try:
            streams = stack.enter_context(portal.wrap_async_context_manager(transport_factory()))
            read, write = streams[0], streams[1]
            session = stack.enter_context(portal.wrap_async_context_manager(ClientSession(read, write)))
            portal.call(session.initialize)
        except BaseException:
            stack.close()
            raise
        return cls(portal, session, stack)

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- calls ------------------------------------------------------------------------------------
    def list_tools(self) -> list[Any]:
        return list(self.portal.call(self.session.list_tools).tools)

    def call_raw(self, name: str, args: dict[str, Any] | None = None) -> Any:
        return self.portal.call(self.session.call_tool, name, args or {})

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """A successful tool result's structured content (fails loudly on a tool error)."""
        res = self.call_raw(name, args)
        if res.is_error:
            raise AssertionError(f"{name} failed: {res.content[0].text}")
        data = res.structured_content
        assert isinstance(data, dict)
        return data

    def error(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """A tool error: {'code', 'message', 'hint'} for ours, {'code': 'sdk', 'message'} for the SDK's."""
        res = self.call_raw(name, args)
        assert res.is_error, f"{name} unexpectedly succeeded: {res.structured_content}"
        text = res.content[0].text
        if res.structured_content and "error" in res.structured_content:
            err = res.structured_content["error"]
            assert json.loads(text)["error"] == err  # the text is the same JSON, for text-only clients
            return dict(err)
        return {"code": "sdk", "message": text}

    def read(self, uri: str) -> str:
        res = self.portal.call(self.session.read_resource, uri)
        return str(res.contents[0].text)

    def templates(self) -> list[str]:
        res = self.portal.call(self.session.list_resource_templates)
        return [t.uri_template for t in res.resource_templates]

    def resources(self) -> list[str]:
        res = self.portal.call(self.session.list_resources)
        return [str(r.uri) for r in res.resources]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http_server(
    cwd: Path, port: int, path: str = "/mcp", timeout: float = 60
) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccmemory", "mcp", "--http", "--port", str(port), "--path", path],
        cwd=cwd,
        env={**os.environ, **FULL},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(f"server exited with {proc.returncode}: {err}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("HTTP server did not start in time")


def make_repo(path: Path, init: bool = True) -> Path:
    """A git repository with a user, and (by default) `ccmemory init` run in it."""
    path.mkdir(parents=True, exist_ok=True)
    for cmd in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "config", "user.email", "tester@example.com"],
        ["git", "config", "user.name", "Tester"],
        ["git", "config", "commit.gpgsign", "false"],
    ):
        subprocess.run(cmd, cwd=path, check=True)
    if init:
        subprocess.run([sys.executable, "-m", "ccmemory", "init"], cwd=path, check=True, capture_output=True)
    return path
