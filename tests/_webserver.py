"""A real HTTP server on 127.0.0.1 in a thread, serving fixed routes (for the reference cache)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
