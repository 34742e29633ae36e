"""The dashboard's Starlette app: pages, `/api/...` JSON and POST actions, behind a guard.

Safe by construction (docs/dashboard.md, "Security"):
- the server binds 127.0.0.1 only (cli/cmd_dashboard.py);
- every request needs the random token: `?token=` in the URL the command opens, then an
  HttpOnly SameSite=Strict cookie (the page redirects to drop the token from the address bar);
- the Host header must be `127.0.0.1:<port>` or `localhost:<port>` (DNS rebinding);
- actions are POST only, need the CSRF token (a header or form field derived from the token) and
  are refused when Origin / Sec-Fetch-Site say the request came from another site; they take no
  body, so one over 64 KB (or a chunked one) is refused unread (413);
- pages are rendered with Jinja autoescape, memory bodies through the published site's renderer
  (ccmemory/site/safe.py), and a Content-Security-Policy that allows no inline script at all.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route

from ccmemory.surfaces.dashboard import sessions as dash_sessions

if TYPE_CHECKING:
    from ccmemory.surfaces.dashboard.data import Dash

MAX_LIMIT = 500  # rows per page of any listing


def clamp(limit: int | None, default: int = 50) -> int:
    if limit is None:
        return default
    return max(1, min(int(limit), MAX_LIMIT))


HERE = Path(__file__).parent
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
MAX_OFFSET = 10_000  # the deepest page of results (the MCP tools' bound too)
MAX_BODY = 64 * 1024  # bytes a POST may carry (the actions read none)
PAGES = [
    ("/", "Overview"),
    ("/review", "Review queue"),
    ("/memories", "Memories"),
    ("/retrievals", "Retrievals"),
    ("/patterns", "Patterns"),
    ("/suggestions", "Suggestions"),
    ("/graph", "Graph"),
    ("/team", "Team"),
    ("/sessions", "Sessions"),
]


def csrf_for(token: str) -> str:
    return hmac.new(token.encode(), b"ccmemory-dashboard-csrf", hashlib.sha256).hexdigest()


def _forbidden(why: str) -> Response:
    return PlainTextResponse(f"403 forbidden: {why}\n", status_code=403)


class Guard:
    """ASGI middleware: Host check, token (query or cookie), CSRF + origin checks on POST."""

    def __init__(self, app: Any, token: str, port: int):
        self.app = app
        self.token = token
        self.port = port
        self.cookie = f"ccm_dash_{port}"
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{h}" for h in self.hosts}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        req = Request(scope)
        resp = self.check(req)
        if (
            resp is None
            and req.query_params.get("token")
            and req.method == "GET"
            and not req.url.path.startswith("/api/")
        ):
            # first load: set the cookie and drop the token from the address bar
            rest = [(k, v) for k, v in req.query_params.multi_items() if k != "token"]
            target = req.url.path + (
                "?" + "&".join(f"{quote(k)}={quote(v)}" for k, v in rest) if rest else ""
            )
            resp = RedirectResponse(target, status_code=303)
            resp.set_cookie(self.cookie, self.token, httponly=True, samesite="strict", path="/")
        if resp is not None:
            await resp(scope, receive, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                    (b"cache-control", b"no-store"),
                ]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def check(self, req: Request) -> Response | None:
        if req.headers.get("host", "") not in self.hosts:
            return _forbidden("wrong Host header (the dashboard answers only on 127.0.0.1)")
        given = req.query_params.get("token") or req.cookies.get(self.cookie) or ""
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return _forbidden("missing or wrong token; open the URL `ccmemory dashboard` printed")
        if req.method not in ("GET", "HEAD", "POST"):
            return PlainTextResponse("405 method not allowed\n", status_code=405)
        if req.method == "POST":
            # the actions take no body: a large or streamed one is refused before it is read
            length = req.headers.get("content-length", "0")
            if "transfer-encoding" in req.headers or not length.isdigit() or int(length) > MAX_BODY:
                return PlainTextResponse(
                    f"413 request body too large (actions take none; at most {MAX_BODY} bytes)\n",
                    status_code=413,
                    headers={"connection": "close"},
                )
            origin = req.headers.get("origin")
            if origin is not None and origin not in self.origins:
                return _forbidden("cross-origin request refused")
            if req.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
                return _forbidden("cross-site request refused")
            csrf = req.headers.get("x-csrf-token", "")
            if not hmac.compare_digest(csrf.encode(), csrf_for(self.token).encode()):
                return _forbidden("missing or wrong CSRF token")
        return None


def _md(text: str) -> str:
    from ccmemory.surfaces.site.safe import markdown_renderer

    def resolve(url: str) -> str | None:
        prefix = "ccmemory://memory/"
        return "/memory/" + quote(url[len(prefix) :], safe="") if url.startswith(prefix) else None

    return markdown_renderer(resolve)(text)


def _environment() -> Any:
    """The Jinja environment of the dashboard's templates (autoescaped, strict)."""
    import jinja2
    import markupsafe

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = lambda text: markupsafe.Markup(_md(str(text or "")))
    env.globals["pages"] = PAGES
    return env


def _params(dash: Dash, req: Request) -> tuple[int, Response | None]:
    """The `limit` of an API call, or the error response (another project, a bad limit)."""
    project = req.query_params.get("project")
    if project and project != dash.project:
        return 0, JSONResponse(
            {
                "error": "not_found",
                "message": f"this dashboard serves project {dash.project!r}, not {project!r}",
            },
            status_code=404,
        )
    try:
        limit = clamp(int(req.query_params["limit"])) if "limit" in req.query_params else 50
    except ValueError:
        return 0, JSONResponse(
            {"error": "invalid_argument", "message": "limit must be a number"}, status_code=400
        )
    return limit, None


def _memory_args(req: Request, limit: int) -> dict[str, Any]:
    """`Dash.memories` arguments from the query string (unknown values fall back to defaults)."""
    qp = req.query_params
    return {
        "q": qp.get("q") or None,
        "types": qp.getlist("type") or None,
        "status": qp.get("status") or None,
        "topics": qp.getlist("topic") or None,
        "files": qp.getlist("file") or None,
        "since": qp.get("since") or None,
        "until": qp.get("until") or None,
        "include_superseded": qp.get("include_superseded") in ("1", "true", "on"),
        "mode": qp.get("mode") if qp.get("mode") in ("hybrid", "text", "semantic") else "hybrid",
        "limit": limit,
        # at most MAX_OFFSET, as MCP `search`: a 20-digit offset overflowed SQLite's integer (a 500)
        "offset": min(int(qp.get("offset") or 0), MAX_OFFSET) if (qp.get("offset") or "0").isdigit() else 0,
    }


def _session_page(dash: Dash, page: Callable[..., HTMLResponse]) -> Callable[[Request], Response]:
    def inner(req: Request) -> Response:
        data = dash_sessions.one(dash, req.path_params["id"])
        if data is None:
            return HTMLResponse("<h1>Not found</h1>", status_code=404)
        return page("session.html", req, data=data)

    return inner


def _suggestion_key(req: Request) -> tuple[str, Response | None]:
    key = req.query_params.get("key") or ""
    if not key or len(key) > 200:
        return key, JSONResponse({"error": "invalid_argument", "message": "key is required"}, status_code=400)
    return key, None


def _no_suggestion(key: str) -> Response:
    return JSONResponse(
        {
            "error": "not_found",
            "message": f"no current suggestion {key!r} (accepted or dismissed, or the memories changed)",
        },
        status_code=404,
    )


def _suggestion_actions(dash: Dash, locked: Callable[..., Any]) -> list[Route]:
    """POST /api/suggestions/accept and /dismiss?key=KEY (the Guard checks CSRF and origin)."""

    @locked
    def accept(req: Request) -> Response:
        key, bad = _suggestion_key(req)
        if bad is not None:
            return bad
        try:
            done = dash.accept_suggestion(key)
        except ValueError as exc:  # the builder refused the memory (validation)
            return JSONResponse({"error": "invalid_memory", "message": str(exc)}, status_code=409)
        return JSONResponse(done) if done is not None else _no_suggestion(key)

    @locked
    def dismiss(req: Request) -> Response:
        key, bad = _suggestion_key(req)
        if bad is not None:
            return bad
        if not dash.dismiss_suggestion(key):
            return _no_suggestion(key)
        return JSONResponse({"dismissed": key})

    return [
        Route("/api/suggestions/accept", accept, methods=["POST"]),
        Route("/api/suggestions/dismiss", dismiss, methods=["POST"]),
    ]


def create_app(dash: Dash, *, token: str, port: int) -> Any:
    env = _environment()
    csrf = csrf_for(token)

    def locked(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
        async def call(*args: Any, **kw: Any) -> Any:
            def run() -> Any:
                with dash.lock:
                    return fn(*args, **kw)

            return await run_in_threadpool(run)

        return call

    def page(name: str, req: Request, **ctx: Any) -> HTMLResponse:
        html = env.get_template(name).render(
            project=dash.project, path=req.url.path, csrf=csrf, query=dict(req.query_params), **ctx
        )
        return HTMLResponse(html)

    # --- JSON -------------------------------------------------------------------------------------
    def api(fn: Callable[[Request, int], Any]) -> Callable[[Request], Awaitable[Response]]:
        @locked
        def inner(req: Request) -> Response:
            limit, bad = _params(dash, req)
            if bad is not None:
                return bad
            try:
                data = fn(req, limit)
            except ValueError as exc:
                return JSONResponse({"error": "invalid_argument", "message": str(exc)}, status_code=400)
            if data is None:
                return JSONResponse({"error": "not_found"}, status_code=404)
            return JSONResponse(data)

        return inner

    api_routes = {
        "/api/overview": lambda req, limit: dash.overview(),
        "/api/stats": lambda req, limit: dash.stats(),
        "/api/review": lambda req, limit: dash.review(limit),
        "/api/memories": lambda req, limit: dash.memories(**_memory_args(req, limit)),
        "/api/memory/{id}": lambda req, limit: dash.memory(req.path_params["id"]),
        "/api/retrievals": lambda req, limit: dash.retrievals(limit),
        "/api/patterns": lambda req, limit: dash.patterns(limit),
        "/api/suggestions": lambda req, limit: dash.suggestions(limit),
        "/api/graph": lambda req, limit: dash.graph(
            topic=req.query_params.get("topic"),
            file=req.query_params.get("file"),
            limit=int(req.query_params.get("limit", "3000")),
        ),
        "/api/team": lambda req, limit: dash.team(limit),
        "/api/sessions": lambda req, limit: dash_sessions.listing(
            dash, req.query_params.get("q"), text_only=req.query_params.get("text") == "1"
        ),
        "/api/session/{id}": lambda req, limit: dash_sessions.one(dash, req.path_params["id"]),
    }

    # --- actions ----------------------------------------------------------------------------------
    @locked
    def do_promote(req: Request) -> Response:
        from ccmemory.core.gitstate import GitError
        from ccmemory.features.lifecycle.promote import PromoteError

        branch = req.query_params.get("branch") or None
        try:
            return JSONResponse(dash.promote(branch))
        except (PromoteError, GitError) as exc:
            return JSONResponse({"error": "promote_failed", "message": str(exc)}, status_code=409)

    @locked
    def do_dismiss(req: Request) -> Response:
        key = req.query_params.get("key") or ""
        if not key or len(key) > 200:
            return JSONResponse({"error": "invalid_argument", "message": "key is required"}, status_code=400)
        dash.dismiss(key)
        return JSONResponse({"dismissed": key})

    # --- pages ------------------------------------------------------------------------------------
    @locked
    def overview_page(req: Request) -> Response:
        data = dash.overview()
        dash.store.visit()
        return page("overview.html", req, data=data, poll=dash.poll_seconds)

    def simple(template: str, fn: Callable[[Request], Any]) -> Callable[[Request], Awaitable[Response]]:
        @locked
        def inner(req: Request) -> Response:
            try:
                return page(template, req, data=fn(req))
            except ValueError as exc:
                return PlainTextResponse(f"400 bad request: {exc}\n", status_code=400)

        return inner

    @locked
    def memory_page(req: Request) -> Response:
        data = dash.memory(req.path_params["id"])
        if data is None:
            return HTMLResponse("<h1>Not found</h1>", status_code=404)
        return page("memory.html", req, data=data)

    @locked
    def memory_file(req: Request) -> Response:
        m = dash.svc.get(req.path_params["id"])
        if m is None:
            return PlainTextResponse("not found\n", status_code=404)
        from ccmemory.core.walk import inside, read_regular

        try:  # the safe reader: a file swapped for a FIFO or a link must not hang the dashboard's lock
            text = read_regular(inside(dash.svc.vault.root, *m.path.split("/"))).decode("utf-8", "replace")
        except (OSError, ValueError) as exc:
            return PlainTextResponse(f"cannot read {m.path}: {exc}\n", status_code=404)
        return PlainTextResponse(text, headers={"content-disposition": "inline"})

    def static(name: str, media: str) -> Callable[[Request], Awaitable[Response]]:
        async def inner(req: Request) -> Response:
            return FileResponse(HERE / "static" / name, media_type=media)

        return inner

    routes = [Route(path, api(fn)) for path, fn in api_routes.items()]
    routes += [
        Route("/api/promote", do_promote, methods=["POST"]),
        Route("/api/dismiss", do_dismiss, methods=["POST"]),
        *_suggestion_actions(dash, locked),
        Route("/", overview_page),
        Route("/review", simple("review.html", lambda req: dash.review(200))),
        Route("/memories", simple("memories.html", lambda req: dash.memories(**_memory_args(req, 100)))),
        Route("/memory/{id}", memory_page),
        Route("/memory/{id}/file", memory_file),
        Route("/retrievals", simple("retrievals.html", lambda req: dash.retrievals(100))),
        Route("/patterns", simple("patterns.html", lambda req: dash.patterns(100))),
        Route("/suggestions", simple("suggestions.html", lambda req: dash.suggestions(200))),
        Route("/graph", simple("graph.html", lambda req: {"topic": req.query_params.get("topic", "")})),
        Route("/team", simple("team.html", lambda req: dash.team(100))),
        Route(
            "/sessions",
            simple(
                "sessions.html",
                lambda req: dash_sessions.listing(
                    dash, req.query_params.get("q"), text_only=req.query_params.get("text") == "1"
                ),
            ),
        ),
        Route("/session/{id}", locked(_session_page(dash, page))),
        Route("/static/dash.css", static("dash.css", "text/css")),
        Route("/static/dash.js", static("dash.js", "text/javascript")),
        Route("/static/graph.js", static("graph.js", "text/javascript")),
    ]
    app = Starlette(routes=routes)
    return Guard(app, token, port)


def new_token() -> str:
    return secrets.token_urlsafe(24)
