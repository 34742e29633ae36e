"""A real HTTP server on 127.0.0.1 in a thread: fixed routes (the reference cache) or a folder
(the built site in the browser tests)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

Route = tuple[int, dict[str, str], bytes]


@contextmanager
def serve(routes: dict[str, Route]) -> Iterator[str]:
    """Yield the base URL (http://127.0.0.1:PORT); ``routes`` may be changed while it runs."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            status, headers, body = routes.get(self.path, (404, {"Content-Type": "text/plain"}, b"not found"))
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            if "Content-Length" not in headers:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    with running(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as base:
        yield base


@contextmanager
def serve_folder(folder: str | Path) -> Iterator[str]:
    """Yield the base URL of a server for the files under ``folder``."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    with running(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as base:
        yield base


@contextmanager
def running(server: ThreadingHTTPServer) -> Iterator[str]:
    """Serve ``server`` from a thread; yields its base URL, shuts it down after."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
