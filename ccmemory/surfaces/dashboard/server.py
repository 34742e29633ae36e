"""Run the dashboard with uvicorn on 127.0.0.1 (never another interface)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from ccmemory.surfaces.dashboard.app import create_app, new_token
from ccmemory.surfaces.dashboard.data import Dash

HOST = "127.0.0.1"


def bind(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0: any free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


class Server:
    """The dashboard on a bound socket; `url` carries the token the first request needs."""

    def __init__(self, dash: Dash, port: int = 0, token: str | None = None):
        import uvicorn

        self.dash = dash
        self.sock = bind(port)
        self.port = self.sock.getsockname()[1]
        self.token = token or new_token()
        self.app = create_app(dash, token=self.token, port=self.port)
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="off")
        self.uvicorn = uvicorn.Server(config)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def run(self, on_ready: Callable[[str], Any] | None = None) -> None:
        if on_ready:
            on_ready(self.url)
        self.uvicorn.run(sockets=[self.sock])

    def stop(self) -> None:
        self.uvicorn.should_exit = True
