"""Live play over a WebSocket: the page gets each seat's move as it is made, and sends the person's moves.

    ws://HOST:PORT/api/games/ID/live?since=N

The handshake passes the same guard as every request (:mod:`krypenv.ui.guard`: the Host must
name the server and a browser's ``Origin`` must be its own page; a refusal is a JSON 403), and
names a game the server holds (a JSON 404 otherwise).  Then, as JSON text messages:

* **server → page** ``{"type": "state", "state": S}``: the game as the person's seat sees it
  (the JSON API's state), whose ``events`` are those the page has not been sent yet (the first
  message: from event N on).  One is sent on connecting, after the person's move, after every
  agent move (``state.thinking`` stays true until the agents reach the person), and when the
  agents stop.  After the state of a finished match the server closes the socket (1000).
* **page → server** ``{"type": "move", "move_index": M, "n": K}`` (or ``"key"`` for the move's
  short form instead of ``n``): the person's move, checked exactly as ``POST .../move`` checks it.
* **server → page** ``{"type": "error", "status": 409, "error": "..."}``: a move the game refused
  (a stale ``move_index``, an illegal move, the agents still playing); nothing changed and the
  socket stays open.

A message that is not one of these is closed, saying why: binary data (1003), text that is not
JSON (1007), JSON that is not a move message (1008); a message over the limit
(:attr:`~krypenv.ui.guard.Limits.ws_message`) is closed by uvicorn (1009).  The server pings
every :attr:`~krypenv.ui.guard.Limits.ws_ping` seconds: a client that does not answer in as
long is gone.  When the last live page of a game goes away, the agents stop after the move they
are making (the next request or connection for the game resumes them); while a page watches a
game live, its agents never stop for lack of requests, and the game is never pushed out of the
server's table.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.responses import JSONResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from krypenv.ui.api import App, error_status, int_field
from krypenv.ui.guard import SECURITY_HEADERS, HttpError
from krypenv.ui.offload import Offload
from krypenv.ui.store import Table

MOVE_MESSAGE = '{"type": "move", "move_index": M, "n": K}'


def close_reason(text: str) -> str:
    """``text`` cut to what a close frame carries (at most 123 bytes of UTF-8)."""
    return text.encode("utf-8")[:120].decode("utf-8", errors="ignore")


def parse_message(message: dict[str, Any]) -> tuple[dict[str, Any] | None, int, str]:
    """(the move message, 0, "") of a received WebSocket message, or (None, close code, reason) when it is refused."""
    text = message.get("text")
    if text is None:
        return None, 1003, "send JSON text messages, not binary data"
    try:
        body = json.loads(text)
    except RecursionError:
        return None, 1007, "malformed JSON: nested too deeply"
    except ValueError as exc:
        return None, 1007, close_reason(f"malformed JSON: {exc}")
    if not isinstance(body, dict) or body.get("type") != "move":
        return None, 1008, close_reason(f"a message is {MOVE_MESSAGE}")
    return body, 0, ""


class Page:
    """A live page as a :class:`~krypenv.ui.store.Watcher`: the states handed to it queue up on the event loop."""

    def __init__(self, since: int, loop: asyncio.AbstractEventLoop) -> None:
        self.sent = since
        self.loop = loop
        self.states: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def deliver(self, state: dict[str, Any]) -> None:
        """Queue ``state`` for the event loop (called on whichever thread changed the game)."""
        self.loop.call_soon_threadsafe(self.states.put_nowait, state)


class Live:
    """The WebSocket endpoint over one :class:`~krypenv.ui.api.App` (see the module docstring)."""

    def __init__(self, app: App, offload: Offload) -> None:
        self.app, self.offload = app, offload

    async def serve(self, ws: WebSocket) -> None:
        """One live page of one game, from the handshake to the close."""
        try:
            since = int_field(dict(ws.query_params), "since", 0, 0, 10**9)
            table = await self.offload.run(self.app.table, ws.path_params["gid"])
        except HttpError as exc:
            headers = {k.decode(): v.decode() for k, v in SECURITY_HEADERS} | {"connection": "close"}
            await ws.send_denial_response(JSONResponse({"error": str(exc)}, status_code=exc.status, headers=headers))
            return
        await ws.accept()
        page = Page(since, asyncio.get_running_loop())
        await self.offload.run(table.watch, page)  # the first state is handed at once
        try:
            await Feed(self.app, self.offload, ws, table).run(page)
        except WebSocketDisconnect:  # the page went away while it was being sent a state
            pass
        finally:
            if table.unwatch(page) and table.thinking:
                table.cancel.set()  # the last live page went away: the agents stop after this move


class Feed:
    """The loop of one live page: forward the states handed to it, play the moves it sends."""

    def __init__(self, app: App, offload: Offload, ws: WebSocket, table: Table) -> None:
        self.app, self.offload, self.ws, self.table = app, offload, ws, table
        self.last: tuple[Any, ...] | None = None  # what the last state message said

    async def send(self, state: dict[str, Any]) -> bool:
        """Send ``state`` unless it says nothing new; True when the match is over (nothing more comes)."""
        key = (state["n_events"], state["move_index"], state["thinking"], state["agent_error"], state["record_error"],
               state["over"])
        if key != self.last or state["events"]:
            self.last = key
            await self.ws.send_text(json.dumps({"type": "state", "state": state}))
        return bool(state["over"]) and not state["thinking"]

    async def handle(self, message: dict[str, Any]) -> bool:
        """Play a received move message (or answer its error); False when the socket was closed instead."""
        body, code, reason = parse_message(message)
        if body is None:
            await self.ws.close(code, reason)
            return False
        def play() -> None:
            self.app.table(self.table.gid)  # the game is used: the most recently, and now
            self.app.move(self.table, body, "live")

        try:
            await self.offload.run(play)
        except Exception as exc:  # noqa: BLE001 - every refusal is a message; the socket stays open
            status = error_status(exc)
            text = str(exc) if status is not None else f"internal error: {type(exc).__name__}: {exc}"
            await self.ws.send_text(json.dumps({"type": "error", "status": status or 500, "error": text}))
        return True

    async def run(self, page: Page) -> None:
        """Send states as the game changes and play the page's moves, until either side closes."""
        await self.offload.run(self.app.store.drive, self.table)  # resume agents stopped for a page that went away
        receiving = asyncio.ensure_future(self.ws.receive())
        handed = asyncio.ensure_future(page.states.get())
        try:
            while True:
                done, _ = await asyncio.wait({receiving, handed}, return_when=asyncio.FIRST_COMPLETED)
                if handed in done:
                    if await self.send(handed.result()):
                        await self.ws.close(1000, "the match is over")
                        return
                    handed = asyncio.ensure_future(page.states.get())
                if receiving in done:
                    message = receiving.result()
                    if message["type"] == "websocket.disconnect" or not await self.handle(message):
                        return
                    receiving = asyncio.ensure_future(self.ws.receive())
        finally:
            receiving.cancel()
            handed.cancel()
