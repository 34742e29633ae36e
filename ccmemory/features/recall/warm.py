"""A warm process serves recall over a local socket, so hooks get hybrid candidates fast.

The MCP server Claude Code starts for a session (``ccmemory mcp``) already holds the index and
can hold the embedder; it listens on a Unix socket (``.ccmemory/local/recall.sock``, or under
``$XDG_RUNTIME_DIR``/``/tmp/ccmemory-<uid>/`` when that path is too long for a socket), mode
0600. A hook connects, sends one JSON line and reads one JSON line back, within
:data:`TIMEOUT`; when there is no server, or it is slow or broken, :func:`ask` returns None and
the hook ranks by full text itself. Requests carry no code: ``{"op": "prompt", "text", "limit"}``
(``"command": true`` when the text is a shell command's words)
or ``{"op": "files", "paths", "limit"}``; answers are the chosen memories. ``ccmemory search``
asks ``{"op": "search", "query", "mode", "limit", "filters", "index"}`` (:func:`search`): the
warm Service's whole search response (hits, notices), so a CLI process need not load the
embedder and the vector matrix itself (issue 29: 1.8 s cold at 100k memories, ~50 ms warm).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, suppress
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # socket and threading are imported where used: the hook path checks a path only
    import socket

    from ccmemory.app.service import Service
    from ccmemory.features.recall.engine import Pick
    from ccmemory.index.base import Filters
    from ccmemory.retrieval.search import SearchResponse

TIMEOUT = 0.25  # seconds a hook waits for the warm process, connect to answer
#: seconds `ccmemory search` waits (a search is ~50 ms warm at 100k memories; the first one after a
#: write reloads the vectors, ~1.5 s; searching cold in the CLI itself costs ~2 s there)
SEARCH_TIMEOUT = 3.0
MAX_REQUEST = 64 * 1024
MAX_REPLY = 32 * 1024 * 1024  # a search answer holds up to 500 memories, bodies whole
_MAX_SUN_PATH = 100  # AF_UNIX paths are limited to 104-108 bytes


def socket_path(root: str) -> str:
    path = os.path.join(root, ".ccmemory", "local", "recall.sock")
    if len(path.encode()) <= _MAX_SUN_PATH:
        return path
    base = os.environ.get("XDG_RUNTIME_DIR") or f"/tmp/ccmemory-{os.getuid()}"
    digest = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:20]
    return os.path.join(base, f"recall-{digest}.sock")


def _send(path: str, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """One request, one answer line, within ``timeout`` seconds in all (a slow answer trickling
    in does not extend it). Raises OSError or ValueError."""
    import socket
    import time

    data = json.dumps(request).encode("utf-8") + b"\n"
    if len(data) > MAX_REQUEST:
        raise ValueError("request too large")
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(data)
        chunks: list[bytes] = []
        size = 0
        while not chunks or not chunks[-1].endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer in time")
            sock.settimeout(left)
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_REPLY:
                raise ValueError("answer too large")
    answer = json.loads(b"".join(chunks))
    return answer if isinstance(answer, dict) else None


def ask(root: str, request: dict[str, Any], timeout: float = TIMEOUT) -> list[Pick] | None:
    """The warm process's picks for ``request``, or None (no server, too slow, bad answer)."""
    path = socket_path(root)
    if not os.path.exists(path):
        return None
    try:
        answer = _send(path, request, timeout)
    except (OSError, ValueError):
        return None
    if not answer or not isinstance(answer.get("picks"), list):
        return None
    try:
        return [from_wire(d) for d in answer["picks"]]
    except (KeyError, TypeError, ValueError):
        return None


def from_wire(d: dict[str, Any]) -> Pick:
    from ccmemory.features.recall.engine import Pick, Recalled

    m = Recalled(
        id=str(d["id"]),
        type=str(d["type"]),
        title=str(d["title"]),
        body=str(d.get("body") or ""),
        created=str(d.get("created") or ""),
        status=str(d.get("status") or "curated"),
        fields=dict(d.get("fields") or {}),
        files=[str(f) for f in d.get("files") or []][:50],
    )
    raw = d.get("parts")
    parts: dict[str, Any] = raw if isinstance(raw, dict) else {}
    clean = {str(k): float(v) for k, v in parts.items() if isinstance(v, int | float)}
    return Pick(m, float(d.get("score") or 0.0), str(d.get("why") or ""), clean)


def _as_dict(p: Pick) -> dict[str, Any]:
    m = p.memory
    return {
        "id": m.id,
        "type": m.type,
        "title": m.title,
        "body": m.body[:2000],
        "created": m.created,
        "status": m.status,
        "fields": {k: v for k, v in (m.fields or {}).items() if isinstance(v, str | int | float | bool)},
        "files": list(m.files or [])[:50],
        "score": p.score,
        "why": p.why,
        "parts": {k: v for k, v in p.parts.items() if k in ("text_score", "vector_score", "file_match")},
    }


# --- `ccmemory search` through the warm process -------------------------------------------------------

SEARCH_MODES = ("hybrid", "text", "semantic")
_LIST_FILTERS = ("types", "topics", "files", "ids")


def search(
    root: str,
    query: str,
    f: Filters,
    *,
    limit: int,
    mode: str,
    index: str,
    timeout: float = SEARCH_TIMEOUT,
) -> tuple[SearchResponse | None, str]:
    """The warm process's whole search response for what the CLI would search itself, with why
    not (no server, an old server that does not know ``search``, a timeout, a different index or
    project, a bad answer): ``(None, reason)``. ``index`` is the index the caller opened (its
    location): a server on another one is not asked to answer for it."""
    path = socket_path(root)
    if not os.path.exists(path):
        return None, "no warm process (no MCP server runs for this repository)"
    request = {
        "op": "search",
        "query": query,
        "mode": mode,
        "limit": limit,
        "filters": filters_to_wire(f),
        "index": index,
    }
    try:
        answer = _send(path, request, timeout)
    except (OSError, ValueError) as exc:
        return None, f"the warm process did not answer ({type(exc).__name__}: {exc})"
    if not answer or "error" in answer:
        why = answer.get("error") if answer else "an empty answer"
        return None, f"the warm process did not search ({why})"
    try:
        return response_from_wire(answer), "answered by the warm process (the MCP server's recall socket)"
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return None, f"the warm process's answer was not understood ({type(exc).__name__})"


def filters_to_wire(f: Filters) -> dict[str, Any]:
    """Filters as plain JSON data (dates as ISO-8601 text)."""
    out: dict[str, Any] = {}
    for fld in dataclasses.fields(f):
        value = getattr(f, fld.name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif fld.name in _LIST_FILTERS and value is not None:
            value = [str(v) for v in value]
        out[fld.name] = value
    return out


def filters_from_wire(d: Any) -> Filters:
    """The inverse of :func:`filters_to_wire`; anything of the wrong type raises ValueError."""
    from ccmemory.index.base import Filters

    if not isinstance(d, dict):
        raise ValueError("filters must be an object")
    names = {fld.name for fld in dataclasses.fields(Filters)}
    if not isinstance(d.get("project"), str) or set(d) - names:
        raise ValueError("bad filters")
    kw: dict[str, Any] = {"project": d["project"]}
    for name in ("status", "viewer"):
        if d.get(name) is not None:
            kw[name] = _text(d[name])
    for name in ("since", "until"):
        if d.get(name) is not None:
            kw[name] = datetime.fromisoformat(_text(d[name]))
    for name in _LIST_FILTERS:
        if d.get(name) is not None:
            if not isinstance(d[name], list):
                raise ValueError(f"{name} must be a list")
            kw[name] = [_text(v) for v in d[name]]
    if not isinstance(d.get("include_superseded", False), bool):
        raise ValueError("include_superseded must be true or false")
    kw["include_superseded"] = d.get("include_superseded", False)
    return Filters(**kw)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("expected text")
    return value


def response_to_wire(resp: SearchResponse) -> dict[str, Any]:
    """A search response as JSON data: every field of every hit (the memory whole), so the
    other side rebuilds exactly what it would have computed."""
    return {
        "mode": resp.mode,
        "notices": list(resp.notices),
        "vectors_pending": resp.vectors_pending,
        "hits": [
            {
                "memory": dataclasses.asdict(h.memory),
                "score": h.score,
                "parts": h.parts,
                "via": h.via,
                "weak": h.weak,
            }
            for h in resp.hits
        ],
    }


def response_from_wire(d: dict[str, Any]) -> SearchResponse:
    from ccmemory.core.model import Relation
    from ccmemory.index.base import IndexedMemory
    from ccmemory.retrieval.search import Hit, SearchResponse

    hits = []
    for h in d["hits"]:
        m = dict(h["memory"])
        m["relations"] = [Relation(**r) for r in m.get("relations") or []]
        parts = {str(k): _number(v) for k, v in dict(h["parts"]).items()}  # ranks stay ints
        via = h.get("via")
        if via is not None and not isinstance(via, str):
            raise TypeError("via")
        hits.append(Hit(IndexedMemory(**m), _number(h["score"]), parts, via, bool(h.get("weak"))))
    notices = [str(n) for n in d["notices"]]
    return SearchResponse(hits, str(d["mode"]), notices, int(d["vectors_pending"]))


def _number(v: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise TypeError("not a number")
    return v


def _search_answer(svc: Service, request: dict[str, Any]) -> dict[str, Any]:
    """`op: search`: the Service's search with the caller's filters, as it would run in the
    caller's process (see :func:`search`)."""
    query, mode, limit = request.get("query"), request.get("mode"), request.get("limit")
    if not isinstance(query, str) or mode not in SEARCH_MODES:
        return {"error": "bad search request"}
    if not isinstance(limit, int) or isinstance(limit, bool) or not 0 < limit <= 500:
        return {"error": "bad limit"}
    try:
        f = filters_from_wire(request.get("filters"))
    except (ValueError, TypeError) as exc:
        return {"error": f"bad filters: {exc}"}
    if f.project != svc.project or request.get("index") != svc.index.location:
        return {"error": "another project or index"}
    # a fresh process scans for missing vectors before its first search; so does this one
    # before each CLI search, as another process may have added memories since (the scan is
    # cheap when nothing is missing: SQLiteIndex.missing_vectors)
    svc.forget_vector_scan()
    return response_to_wire(svc.search(query, f, limit=limit, mode=mode))


# --- the server side -------------------------------------------------------------------------------


def answer(svc: Service, request: Any) -> dict[str, Any]:
    """The reply to one request, computed with a warm Service (its index and embedder)."""
    from ccmemory.features.recall import engine

    if not isinstance(request, dict):
        return {"error": "request must be a JSON object"}
    limit = request.get("limit")
    limit = limit if isinstance(limit, int) and 0 < limit <= 20 else 6
    op = request.get("op")
    if op == "prompt" and isinstance(request.get("text"), str):
        text = request["text"][:8000]
        picks = []
        terms = engine.content_terms(text)
        command = request.get("command") is True  # a shell command's words
        if terms >= engine.DEFAULT_GATE.needs_terms(command):  # the Service's search: hybrid
            f = svc.filters(types=list(engine.PROMPT_TYPES))
            recipe = engine.prompt_recipe(text, terms)
            resp = svc.search(
                text,
                f,
                limit=engine.candidates(limit),
                mode="hybrid",
                expand=False,
                recipe=recipe,
                unindexed_notice=False,
            )
            picks = engine.gate_response(
                resp, text, terms, svc.index, svc.project, limit=limit, command=command
            )
    elif op == "files" and isinstance(request.get("paths"), list):
        touched = [p for p in request["paths"] if isinstance(p, str)][:20]
        picks = engine.file_picks(svc.index, svc.project, touched, limit=limit, viewer=svc.viewer)
    elif op == "search":
        return _search_answer(svc, request)
    elif op == "ping":
        return {"ok": True}
    else:
        return {"error": f"unknown request {op!r}"}
    return {"picks": [_as_dict(p) for p in picks]}


class WarmServer:
    """Serves :func:`answer` on the repository's recall socket from a daemon thread.

    ``service`` opens the warm Service as a context manager (the MCP backend's, which holds the
    lock its tools use and refreshes the index now and then).
    """

    def __init__(self, root: str, service: Callable[[], AbstractContextManager[Service]]) -> None:
        self.root = root
        self.service = service
        self.path = socket_path(root)
        self._sock: socket.socket | None = None

    def start(self) -> bool:
        """Listen unless another live process already serves this repository. Never raises."""
        import socket
        import threading

        try:
            if os.path.exists(self.path):
                try:
                    _send(self.path, {"op": "ping"}, TIMEOUT)
                    return False  # another session's server answers: leave it
                except (OSError, ValueError):
                    os.unlink(self.path)  # stale: its process is gone
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            old = os.umask(0o177)
            try:
                sock.bind(self.path)
            finally:
                os.umask(old)
            sock.listen(8)
            self._sock = sock
        except OSError:
            return False
        threading.Thread(target=self._serve, name="ccmemory-recall", daemon=True).start()
        threading.Thread(target=self._preload, name="ccmemory-recall-preload", daemon=True).start()
        return True

    def _preload(self) -> None:
        """Open the index and load the embedder's model now, so the first prompt is answered
        warm (``Service.embedder`` only builds the embedder: the model loads on first use)."""
        try:
            with self.service() as svc:
                emb = svc.embedder()
            load = getattr(emb, "load", None)
            if load is not None:
                load()  # outside the backend's lock: its tools need not wait (the model has its own)
        except Exception:
            pass

    def _serve(self) -> None:
        sock = self._sock
        while sock is not None:
            try:
                conn, _ = sock.accept()
            except OSError:
                return  # closed
            with conn:
                try:
                    conn.settimeout(2.0)
                    request = json.loads(_read_line(conn))
                    with self.service() as svc:
                        reply = answer(svc, request)
                except Exception as exc:  # a bad request or a broken index: the hook falls back
                    reply = {"error": f"{type(exc).__name__}"}
                with suppress(OSError):
                    conn.sendall(json.dumps(reply).encode("utf-8") + b"\n")

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()
            with suppress(OSError):
                os.unlink(self.path)


def serve_in_background(service: Callable[[], AbstractContextManager[Service]]) -> Callable[[], None]:
    """Start a :class:`WarmServer` from a thread (finding the repository opens the Service, which
    may reindex: never on the caller's path). Returns a function that stops it."""
    import threading

    # numpy before any thread: the preload thread imports it (onnxruntime) while a tool call or a
    # socket request may import it too, and two threads importing numpy at once can see it
    # partially initialized (LocalMiniLM.load_in_background says the same). ~60 ms of start-up.
    import numpy  # noqa: F401

    holder: list[WarmServer] = []
    stopped = threading.Event()

    def boot() -> None:
        try:
            with service() as svc:
                root = str(svc.vault.root)
        except Exception:
            return  # no repository or no index: hooks rank by full text themselves
        server = WarmServer(root, service)
        if not stopped.is_set() and server.start():
            holder.append(server)

    threading.Thread(target=boot, name="ccmemory-recall-boot", daemon=True).start()

    def stop() -> None:
        stopped.set()
        for server in holder:
            server.close()

    return stop


def _read_line(conn: socket.socket) -> bytes:
    data = b""
    for chunk in _chunks(conn):
        data += chunk
        if b"\n" in data or len(data) > MAX_REQUEST:
            break
    return data.split(b"\n", 1)[0][:MAX_REQUEST]


def _chunks(conn: socket.socket) -> Iterator[bytes]:
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return
        yield chunk
