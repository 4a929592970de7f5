"""The web app of ``krypenv serve`` on Starlette: the page, its static files, the JSON API and the live WebSocket.

:func:`build` returns the ASGI app that :mod:`krypenv.ui.serving` runs on uvicorn: Starlette's
router and requests, behind the :class:`~krypenv.ui.guard.Guard` middleware (Host, Origin,
method, JSON bodies of bounded length, before anything is read).  The routes are those of
:mod:`krypenv.ui.server`'s table; ``/api/games/ID/live`` is the WebSocket of
:mod:`krypenv.ui.live`.

Everything that touches a game (the :class:`~krypenv.ui.api.App`, its store and sessions) runs
on a worker thread, never on the event loop: those calls block on a game's lock while an agent
moves (:mod:`krypenv.ui.offload`: one call per request, the wait for the agents included).  A
request that waits for the agents (a move, a new game, a hint) has its connection watched
meanwhile: a client that goes away cancels the work and gets no answer.  Every error
is a JSON ``{"error": "..."}`` with its status: 4xx for what the request got wrong, 503 when the
server is busy (with ``Retry-After``), 500 for an unexpected failure (the server keeps running).
The static files are looked up by name among those shipped in ``static/`` (a request's path is
never used as a file path).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import Receive, Scope, Send

from krypenv.ui.api import App, error_status, int_field, json_body
from krypenv.ui.guard import METHODS, Guard, HttpError, Limits, RequestGuard
from krypenv.ui.live import Live
from krypenv.ui.offload import ClientGone, Offload, Waiter, while_connected
from krypenv.ui.replay import STATIC, frames, page
from krypenv.ui.store import Table

TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml"}


class NoAnswer(Response):
    """The answer to a client that went away: nothing is sent."""

    def __init__(self) -> None:
        super().__init__(status_code=499)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Send nothing."""


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The JSON error answer ``{"error": message}``."""
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def answer_of(exc: Exception) -> Response:
    """The answer to an exception raised while handling a request (see the module docstring)."""
    if isinstance(exc, (ClientGone, ClientDisconnect)):
        return NoAnswer()
    status = error_status(exc)
    if status is not None:
        return error(status, str(exc), {"Retry-After": "2"} if status == 503 else None)
    print(f"krypenv serve: internal error: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
    return error(500, f"internal error: {type(exc).__name__}: {exc}")


def endpoint(handler: Callable[[Web, Request], Awaitable[Any]]) -> Callable[[Web, Request], Awaitable[Response]]:
    """An API handler returning JSON-able data, with every exception turned into its JSON answer."""

    async def run(self: Web, request: Request) -> Response:
        try:
            out = await handler(self, request)
        except Exception as exc:  # noqa: BLE001 - every failure is an answer; the server keeps running
            return answer_of(exc)
        return out if isinstance(out, Response) else JSONResponse(out)

    run.__doc__ = handler.__doc__
    return run


class Web:
    """The routes of the app over one :class:`~krypenv.ui.api.App` (see the module docstring).

    Each handler makes one call to a worker thread for its blocking work (:mod:`krypenv.ui.offload`).
    """

    def __init__(self, app: App, limits: Limits, offload: Offload) -> None:
        self.app, self.limits, self.offload = app, limits, offload
        self.files = {p.name: p for p in STATIC.iterdir() if p.is_file()} if STATIC.is_dir() else {}

    def state(self, table: Table, since: int) -> dict[str, Any]:
        """``{"state": ...}`` of a game as the person sees it, its events from ``since`` on (blocks on the lock)."""
        with table.lock:
            return {"state": table.state(events_from=since)}

    async def waiting(self, request: Request, work: Callable[[Waiter], Any]) -> Any:
        """``work(waiter)`` on a worker thread, its client watched: gone, the waiter says so and no answer goes."""
        waiter = Waiter()
        return await while_connected(request.receive, waiter, lambda: self.offload.run(work, waiter))

    # ------------------------------------------------------------------ the page
    async def page(self, request: Request) -> Response:
        """GET /: the page."""
        if "index.html" not in self.files:
            return error(404, "the web page is not part of this checkout; the JSON API is under /api/")
        return Response(await self.offload.run(page), media_type=TYPES[".html"])

    async def static(self, request: Request) -> Response:
        """GET /static/NAME: a shipped file, looked up by its name."""
        path = self.files.get(request.path_params["name"])
        if path is None:
            return error(404, f"no page {request.url.path[:80]}")
        data = await self.offload.run(path.read_bytes)
        return Response(data, media_type=TYPES.get(path.suffix, "application/octet-stream"))

    # ------------------------------------------------------------------ the API
    @endpoint
    async def meta(self, request: Request) -> Any:
        """GET /api/meta."""
        return await self.offload.run(self.app.meta)

    @endpoint
    async def new_game(self, request: Request) -> Any:
        """POST /api/games: a new game, answered once the agents reach the person (or after a while, thinking)."""
        data = await request.body()

        def start(waiter: Waiter) -> dict[str, Any]:
            table, out = self.app.new_game(json_body(data))
            waiter.wait(table.job, self.limits.move_wait, table.cancel)
            return out | self.state(table, 0)

        return await self.waiting(request, start)

    @endpoint
    async def game(self, request: Request) -> Any:
        """GET /api/games/ID?since=N: the state, with events from N on; resumes agents stopped for a gone client."""
        since = int_field(dict(request.query_params), "since", 0, 0, 10**9)

        def read() -> dict[str, Any]:
            table = self.app.table(request.path_params["gid"])
            self.app.store.drive(table)
            return self.state(table, since)

        return await self.offload.run(read)

    @endpoint
    async def move(self, request: Request) -> Any:
        """POST /api/games/ID/move: the person's move; answered once the agents reach the person (or thinking)."""
        data = await request.body()

        def play(waiter: Waiter) -> dict[str, Any]:
            table, body = self.app.table(request.path_params["gid"]), json_body(data)
            self.app.move(table, body)
            waiter.wait(table.job, self.limits.move_wait, table.cancel)
            return self.state(table, int_field(body, "since", 0, 0, 10**9))

        return await self.waiting(request, play)

    @endpoint
    async def hint(self, request: Request) -> Any:
        """POST /api/games/ID/hint: what an agent would play; 503 if it takes longer than the hint limit."""
        data = await request.body()

        def ask(waiter: Waiter) -> Any:
            cancel = threading.Event()
            job = self.app.hint(self.app.table(request.path_params["gid"]), json_body(data), cancel)
            if not waiter.wait(job, self.limits.hint_wait, cancel):
                cancel.set()
                raise HttpError(503, f"the hint took longer than {self.limits.hint_wait:g} s and was given up; "
                                     f"try an agent with a smaller search")
            return job.result()

        return await self.waiting(request, ask)

    @endpoint
    async def game_replay(self, request: Request) -> Any:
        """GET /api/games/ID/replay: the game's finished deals, opened for replay."""
        return await self.offload.run(lambda: self.app.game_replay(self.app.table(request.path_params["gid"])))

    @endpoint
    async def replays(self, request: Request) -> Any:
        """GET /api/replay: the records files opened; POST /api/replay: open an uploaded one."""
        if request.method == "GET":
            return await self.offload.run(self.app.files)
        data = await request.body()
        return await self.offload.run(lambda: self.app.upload(json_body(data)))

    @endpoint
    async def replay(self, request: Request) -> Any:
        """GET /api/replay/ID: a records file's deals and errors."""
        rid = request.path_params["rid"]

        def read() -> dict[str, Any]:
            deals, errors, _ = self.app.replay(rid)
            return {"id": rid, "deals": [d.to_json(i) for i, d in enumerate(deals)], "errors": errors}

        return await self.offload.run(read)

    @endpoint
    async def replay_deal(self, request: Request) -> Any:
        """GET /api/replay/ID/K: the frames of deal K."""

        def read() -> dict[str, Any]:
            deals, _, _ = self.app.replay(request.path_params["rid"])
            return frames(deals[int_field({"deal": request.path_params["deal"]}, "deal", 0, 0, len(deals) - 1)])

        return await self.offload.run(read)

    async def http_error(self, request: Request, exc: Exception) -> Response:
        """Starlette's own refusals (no route, a method a route does not take) as JSON errors."""
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        path = request.url.path[:80]
        if status == 405:
            given = exc.headers.get("Allow", "") if isinstance(exc, HTTPException) and exc.headers else ""
            allow = ", ".join(m for m in given.split(", ") if m in METHODS)  # Starlette adds HEAD, which none takes
            return error(405, f"{request.method} is not allowed on {path} (it takes {allow or 'none'})",
                         {"Allow": allow})
        if status == 404:
            where = "API route" if path.startswith("/api/") else "page"
            return error(404, f"no {where} {request.method} {path}" if where == "API route" else f"no page {path}")
        return error(status, str(getattr(exc, "detail", exc)))


def build(app: App, hosts: RequestGuard, limits: Limits) -> Starlette:
    """The ASGI app: routes over ``app``, behind the guard of ``hosts`` with the body limit of ``limits``."""
    offload = Offload(limits.connections)
    web = Web(app, limits, offload)
    live = Live(app, offload)
    get, post = ["GET"], ["POST"]
    routes = [
        Route("/", web.page, methods=get),
        Route("/static/{name}", web.static, methods=get),
        Route("/api/meta", web.meta, methods=get),
        Route("/api/games", web.new_game, methods=post),
        Route("/api/games/{gid}", web.game, methods=get),
        Route("/api/games/{gid}/move", web.move, methods=post),
        Route("/api/games/{gid}/hint", web.hint, methods=post),
        Route("/api/games/{gid}/replay", web.game_replay, methods=get),
        WebSocketRoute("/api/games/{gid}/live", live.serve),
        Route("/api/replay", web.replays, methods=list(METHODS)),
        Route("/api/replay/{rid}", web.replay, methods=get),
        Route("/api/replay/{rid}/{deal}", web.replay_deal, methods=get),
    ]
    guard = Middleware(Guard, hosts=hosts, max_body=limits.body, max_head=limits.head)
    return Starlette(routes=routes, middleware=[guard], exception_handlers={HTTPException: web.http_error})

