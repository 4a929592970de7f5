"""``krypenv serve``: the local web app (play against agents, watch replays) and its JSON API.

    krypenv serve [--host 127.0.0.1] [--port 8000] [--open] [--records FILE...]
                  [--checkpoint PATH...] [--allow-host NAME...] [--games DIR]

**Stack.** The standard library's :class:`http.server.ThreadingHTTPServer`: no dependency
beyond the package and nothing to build.  The page is vanilla HTML, CSS and JavaScript
shipped in ``krypenv/ui/static/``; it needs no network.

**Security model** (``docs/SECURITY.md`` says it in one page).  The server binds to 127.0.0.1
by default.  A request is data, never code: an agent is a name the server offers with
bounded options, and a learned policy a checkpoint it trusts, by name, never a path
(:mod:`krypenv.ui.menu`); nothing from a request is imported, unpickled or used as a path.
Every request must name this server in ``Host`` and, when a browser sends an ``Origin``, come
from this server's own page; bodies are JSON only (:mod:`krypenv.ui.guard`: no page of
another site, no DNS rebinding).  Everything a request can make the server do is bounded:
body size, connections and socket time-outs, search budgets, agent work (a small pool, off
the request threads, dropped when the client goes away), games and record files kept
(:mod:`krypenv.ui.store`), uploads (only the first errors are kept).  ``--host 0.0.0.0``
lets everyone who can reach the machine play, read the records opened with ``--records`` and
use its CPU, without any login: the command says so when it starts.

**The server decides.** The server holds the engine, checks every move and sends each page
only its seat's view (its own hand, never another's; a game's replay opens its finished
deals only).  The page never applies a rule: it shows the legal moves it is sent.

| method and path                 | body / answer                                                   |
|---------------------------------|-----------------------------------------------------------------|
| GET  /api/meta                  | games, the agents offered (``[{spec, summary, players,          |
|                                 | presets}]``: the player counts and presets each plays, null for |
|                                 | any), default players and opponent, hint agent, ``rules``       |
|                                 | options                                                         |
| POST /api/games                 | ``{game, players, agents, seat, seed, deals, rules}`` →         |
|                                 | ``{id, seed, state}``                                           |
| GET  /api/games/ID              | ``{state}`` (``?since=N``: events from N on)                    |
| POST /api/games/ID/move         | ``{move_index, n}`` (n 1-based) or ``{move_index, key}``,       |
|                                 | ``since`` → state                                               |
| POST /api/games/ID/hint         | ``{spec}`` (optional) → the hint                                |
| GET  /api/games/ID/replay       | the replay list of the game's finished deals                    |
| GET  /api/replay                | ``{files: [{id, name, deals}]}``: the records files opened      |
| POST /api/replay                | ``{name, text}``: a records file → ``{id, deals, errors}``      |
| GET  /api/replay/ID             | ``{id, deals, errors}``; ``/api/replay/ID/K``: frames of deal K |

A move names the ``move_index`` of the state it answers (``state.move_index``, the moves made so
far by every seat): a move for another index, a repeated request included, is a 409 and changes
nothing.  After the
person's move the agents play on the pool; the answer comes when they reach the person's
next decision or after a few seconds with ``state.thinking`` true (then ``GET`` the state
until it is false).  A Krypkasino game's ``rules`` are ``teams`` (K18: null, a number of
teams, or seat lists), ``two_player_deal`` (K6), ``set_aside`` (K8), ``last_capture_point``
(K17) and ``preset`` (K22: ``standard``, ``tiny``, ``small``; the page offers it), checked
strictly (:mod:`krypenv.ui.krypkasino`).  An agent bound to a table (a checkpoint's or a tabular
policy's players and preset, e.g. ``tabular:cfr-tiny`` at ``tiny`` with 2 players) is a 400 at
any other table, for a game and for a hint alike, and the page offers it only where it fits.
Every bad request (unknown field, illegal move, unknown id, malformed JSON, a records file of
which no record parses) is a 4xx with ``{"error": "..."}`` naming what was wrong and changes
nothing; an unexpected failure is a 500 with its message, and the server keeps running.
"""

from __future__ import annotations

import argparse
import json
import select
import socket
import sys
import threading
import time
import webbrowser
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from krypenv.ui.api import App, int_field
from krypenv.ui.guard import HttpError, RequestGuard, body_length, check_json
from krypenv.ui.menu import AgentMenu
from krypenv.ui.replay import STATIC, frames, load_file, page
from krypenv.ui.session import InputError
from krypenv.ui.store import Busy, Store, Table
from krypenv.ui.tabulars import MAX_TABULAR_BYTES

MAX_BODY = 16 * 1024 * 1024  # bytes of a request body (an uploaded records file: its text JSON-escaped)
MAX_CONNECTIONS = 64  # requests handled at once; more are answered 503 at once
SOCKET_TIMEOUT = 20.0  # seconds a client may stay silent while sending its request
MOVE_WAIT = 8.0  # seconds a move (or a new game) waits for the agents before answering with thinking: true
HINT_WAIT = 60.0  # seconds a hint may take
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml"}
_BUSY_BODY = json.dumps({"error": "too many connections at once; try again shortly"}).encode()
BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY))  # the answer past MAX_CONNECTIONS


class ClientGone(Exception):
    """The client closed its connection while waiting: its work was cancelled and no answer is sent."""


class Handler(BaseHTTPRequestHandler):
    """Checks Host, Origin and the body (:mod:`krypenv.ui.guard`), then routes to the :class:`App`; answers JSON."""

    app: App
    guard: RequestGuard
    server_version = "krypenv"
    timeout = SOCKET_TIMEOUT  # socketserver sets it on the connection: a silent client is dropped

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: errors only."""
        if args and str(args[1] if len(args) > 1 else "").startswith(("4", "5")):
            sys.stderr.write(f"{self.address_string()} {format % args}\n")

    def _send(self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", extra)

    # ------------------------------------------------------------------ bodies
    def _body_text(self) -> str:
        check_json(self.headers.get("Content-Type"))
        length = body_length(self.headers, MAX_BODY)
        data = self.rfile.read(length)
        if len(data) != length:
            raise HttpError(400, f"the body ended after {len(data)} of {length} bytes")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise HttpError(400, "the request body is not UTF-8 text") from None

    def _body(self) -> dict[str, Any]:
        text = self._body_text()
        try:
            obj = json.loads(text or "{}")
        except json.JSONDecodeError as exc:
            raise HttpError(400, f"malformed JSON: {exc}") from None
        except RecursionError:
            raise HttpError(400, "malformed JSON: nested too deeply") from None
        except ValueError as exc:  # e.g. an integer of more digits than Python converts
            raise HttpError(400, f"malformed JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise HttpError(400, f"the request body must be a JSON object, got {type(obj).__name__}")
        return obj

    # ------------------------------------------------------------------ waiting for agent work
    def _client_gone(self) -> bool:
        """True if the client closed its connection (the socket reads as ended)."""
        try:
            ready, _, _ = select.select([self.connection], [], [], 0)
            return bool(ready) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _wait(self, job: Future[Any] | None, limit: float, cancel: threading.Event) -> bool:
        """Wait up to ``limit`` seconds for ``job``; True when done.  A vanished client sets ``cancel`` (ClientGone)."""
        deadline = time.monotonic() + limit
        while job is not None:
            try:
                job.result(timeout=0.05)
                return True
            except FutureTimeout:
                pass
            except Exception:  # noqa: BLE001 - the job's own error is read by its caller
                return True
            if self._client_gone():
                cancel.set()
                raise ClientGone
            if time.monotonic() >= deadline:
                return False
        return True

    def _state(self, table: Table, since: int) -> dict[str, Any]:
        with table.lock:
            return {"state": table.state(events_from=since)}

    # ------------------------------------------------------------------ routing
    def _handle(self, method: str) -> None:
        url = urlparse(self.path)
        parts = [p for p in url.path.split("/") if p]
        try:
            host = self.guard.check_host(self.headers.get("Host"))
            self.guard.check_origin(self.headers.get("Origin"), host)
            if method not in ("GET", "POST"):
                raise HttpError(405, f"{method} is not allowed: the API takes GET and POST")
            if parts[:1] != ["api"]:
                if method != "GET":
                    raise HttpError(405, f"{method} is not allowed on {url.path[:80]}")
                return self._static(parts)
            self._json(200, self._api(method, parts[1:], parse_qs(url.query)))
        except ClientGone:
            self.close_connection = True
        except HttpError as exc:
            self._json(exc.status, {"error": str(exc)}, {"Allow": "GET, POST"} if exc.status == 405 else None)
        except Busy as exc:
            self._json(503, {"error": str(exc)}, {"Retry-After": "2"})
        except (InputError, ValueError) as exc:
            self._json(400, {"error": str(exc)})
        except (ConnectionError, TimeoutError):
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - the server answers and keeps running
            self._json(500, {"error": f"internal error: {type(exc).__name__}: {exc}"})

    def _api(self, method: str, parts: list[str], query: dict[str, list[str]]) -> Any:
        app = self.app
        route = (method, parts[0] if parts else "", len(parts))
        since = int_field({"since": query.get("since", ["0"])[0]}, "since", 0, 0, 10**9)
        if route == ("GET", "meta", 1):
            return app.meta()
        if route == ("POST", "games", 1):
            table, out = app.new_game(self._body())
            self._wait(table.job, MOVE_WAIT, table.cancel)
            return out | self._state(table, 0)
        if parts[:1] == ["games"] and len(parts) in (2, 3):
            return self._game(method, app.table(parts[1]), parts[2:], since)
        if route == ("GET", "replay", 1):
            return app.files()
        if route == ("POST", "replay", 1):
            return app.upload(self._body())
        if route == ("GET", "replay", 2):
            deals, errors, _ = app.replay(parts[1])
            return {"id": parts[1], "deals": [d.to_json(i) for i, d in enumerate(deals)], "errors": errors}
        if route == ("GET", "replay", 3):
            deals, _, _ = app.replay(parts[1])
            return frames(deals[int_field({"deal": parts[2]}, "deal", 0, 0, len(deals) - 1)])
        raise HttpError(404, f"no API route {method} /api/{'/'.join(parts)[:80]}")

    def _game(self, method: str, table: Table, rest: list[str], since: int) -> Any:
        """The routes under ``/api/games/ID``."""
        app = self.app
        if method == "GET" and not rest:
            app.store.drive(table)  # resume agents stopped for a client that went away
            return self._state(table, since)
        if method == "POST" and rest == ["move"]:
            body = self._body()
            app.move(table, body)
            self._wait(table.job, MOVE_WAIT, table.cancel)
            return self._state(table, int_field(body, "since", 0, 0, 10**9))
        if method == "POST" and rest == ["hint"]:
            cancel = threading.Event()
            job = app.hint(table, self._body(), cancel)
            if not self._wait(job, HINT_WAIT, cancel):
                cancel.set()
                raise HttpError(503, f"the hint took longer than {HINT_WAIT:g} s and was given up; "
                                     f"try an agent with a smaller search")
            return job.result()
        if method == "GET" and rest == ["replay"]:
            return app.game_replay(table)
        raise HttpError(404, f"no API route {method} /api/games/{table.gid}/{'/'.join(rest)[:40]}")

    def _static(self, parts: list[str]) -> None:
        if not parts:
            if not (STATIC / "index.html").is_file():
                raise HttpError(404, "the web page is not part of this checkout; the JSON API is under /api/")
            return self._send(200, page().encode(), TYPES[".html"])
        if len(parts) == 2 and parts[0] == "static":
            files = {p.name: p for p in STATIC.iterdir() if p.is_file()} if STATIC.is_dir() else {}
            if parts[1] in files:
                path = files[parts[1]]
                return self._send(200, path.read_bytes(), TYPES.get(path.suffix, "application/octet-stream"))
        raise HttpError(404, f"no page /{'/'.join(parts)[:80]}")

    def do_GET(self) -> None:
        """GET: the page, static files, API reads."""
        self._handle("GET")

    def do_POST(self) -> None:
        """POST: API actions."""
        self._handle("POST")

    def do_OTHER(self) -> None:
        """Any other method: a JSON 405."""
        self._handle(self.command)

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = do_TRACE = do_CONNECT = do_OTHER


class Server(ThreadingHTTPServer):
    """A threading HTTP server with a bounded number of requests at once, IPv4 or IPv6 by its host."""

    daemon_threads = True
    request_queue_size = 128  # the listen backlog

    def __init__(self, address: tuple[str, int], handler: type[Handler], app: App) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.app = app
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Handle the request on a thread, or answer 503 at once when :data:`MAX_CONNECTIONS` are being handled."""
        if not self.slots.acquire(blocking=False):
            try:
                request.sendall(BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """The base class's request thread, giving its slot back at the end."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def server_close(self) -> None:
        """Close the socket, stop the agents and save every game's record."""
        super().server_close()
        self.app.store.close()


def make_server(host: str = "127.0.0.1", port: int = 8000, records: list[str] | None = None,
                checkpoints: list[str] | None = None, allow_hosts: list[str] | None = None,
                games: str | Path = "games", store: Store | None = None) -> Server:
    """A server bound to ``host:port`` (port 0: a free one) with the agents, records and hosts it is given.

    ``store`` replaces the default :class:`~krypenv.ui.store.Store` of ``games`` (other limits, for tests).
    """
    app = App(Path(games), AgentMenu.build(checkpoints or []), store)
    for k, path in enumerate(records or []):
        try:
            app.keep_records(*load_file(path), path, key=f"file{k}")
        except (OSError, HttpError) as exc:
            raise ValueError(f"--records {path}: {exc}") from None
    handler = type("BoundHandler", (Handler,), {"app": app})
    server = Server((host, port), handler, app)
    handler.guard = RequestGuard(host, server.server_address[1], allow_hosts or [])
    return server


def port_number(text: str) -> int:
    """An argparse type: a TCP port 0..65535 (0: a free one)."""
    if not text.strip().isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 0 to 65535 (0: a free one), got {text!r}")
    return int(text)


def add_arguments(parser: Any) -> None:
    """The ``serve`` sub-command's arguments."""
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; ::1 for IPv6). Another "
                             "address, e.g. 0.0.0.0, exposes the app to everyone who can reach this machine, without "
                             "any login: they can play, use its CPU and read the records opened with --records")
    parser.add_argument("--port", type=port_number, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--open", action="store_true", help="open the page in the default web browser")
    parser.add_argument("--records", nargs="*", default=[], metavar="FILE",
                        help="records files to offer in the replay view (e.g. evals/.../records.jsonl)")
    parser.add_argument("--checkpoint", nargs="*", default=[], metavar="PATH", dest="checkpoints",
                        help="more checkpoints the page may play, offered by file name (ppo:NAME); loading one runs "
                             "pickle, so name only files you trust (the shipped checkpoints are always offered). A "
                             f".json or .json.gz file is a tabular policy (JSON, no pickle; at most "
                             f"{MAX_TABULAR_BYTES >> 20} MiB), offered as tabular:NAME at the table it was solved for")
    parser.add_argument("--allow-host", nargs="*", default=[], metavar="NAME", dest="allow_hosts",
                        help="host names the page may be reached by besides the bound address (and localhost on a "
                             "loopback address); requests naming any other Host are refused (DNS rebinding)")
    parser.add_argument("--games", default="games", metavar="DIR",
                        help="folder of the games' records (default ./games; the oldest web-* files beyond 1000 "
                             "are removed)")


def run(args: Any) -> int:
    """Serve until Ctrl-C."""
    try:
        server = make_server(args.host, args.port, args.records, args.checkpoints, args.allow_hosts, args.games)
    except OSError as exc:
        raise ValueError(f"cannot listen on {args.host} port {args.port}: {exc.strerror or exc}") from None
    host, port = server.server_address[:2]
    shown = "localhost" if host in ("127.0.0.1", "::1") else (f"[{host}]" if ":" in host else host)
    url = f"http://{shown}:{port}/"
    print(f"krypenv serve: {url} (Ctrl-C stops)", flush=True)
    if not (host.startswith("127.") or host == "::1"):
        print(f"krypenv serve: warning: listening on {host}, not this machine only: everyone who can reach it may "
              f"play, use its CPU and read the records opened with --records, without any login", file=sys.stderr,
              flush=True)
    for k, path in enumerate(args.records):
        print(f"  replay of {path}: {url}#replay/file{k}", flush=True)
    if args.open:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        server.server_close()
    return 0
