"""``krypenv serve``: the local web app (play against agents, watch replays) and its JSON API.

    krypenv serve [--host 127.0.0.1] [--port 8000] [--open] [--records FILE]

**Stack.** The standard library's :class:`http.server.ThreadingHTTPServer`: no dependency
beyond the package, nothing to build, and a thread per request is plenty for a few people on
one machine (the agents' numba kernels release nothing to gain from an async loop).  The
page is vanilla HTML, CSS and JavaScript shipped in ``krypenv/ui/static/``; it needs no
network.  It binds to 127.0.0.1 by default: only this machine can connect.  Binding to
another address (``--host 0.0.0.0``) lets everyone who can reach the machine play, read the
records files opened with ``--records`` and use its CPU, without any authentication.

**The server decides.** Games live in memory under random ids (the oldest are dropped beyond
:data:`MAX_GAMES`); the server holds the engine, checks every move and sends each page only
its seat's view (its own hand, never another's, until the record is replayed).  The page
never applies a rule: it shows the legal moves it is sent.

| method and path                 | body / answer                                                   |
|---------------------------------|-----------------------------------------------------------------|
| GET  /api/meta                  | games, their agents, default players, hint agent and ``rules``  |
|                                 | (each rules option: rule id, default, choices, player counts)   |
| POST /api/games                 | ``{game, players, agents, seat, seed, deals, rules}`` →         |
|                                 | ``{id, seed, state}``; ``rules`` (Krypkasino only, optional):   |
|                                 | ``{teams, two_player_deal, set_aside, last_capture_point}``,    |
|                                 | each optional, null meaning the default (see below)             |
| GET  /api/games/ID              | ``{state}`` (``?since=N``: events from N on)                    |
| POST /api/games/ID/move         | ``{n}`` (1-based) or ``{key}`` (short form), ``since`` → state  |
| POST /api/games/ID/hint         | ``{spec}`` (optional) → the hint                                |
| GET  /api/games/ID/replay       | the replay list of the game's records (see /api/replay)         |
| GET  /api/replay                | ``{files: [{id, name, deals}]}``: the records files opened      |
| POST /api/replay                | the text of a records file → ``{id, deals, errors}``            |
| GET  /api/replay/ID             | ``{id, deals, errors}``; ``/api/replay/ID/K``: frames of deal K |

A Krypkasino game's ``rules`` are the game record's rules keys: ``teams`` (K18) is null, a number
of teams (2: seats alternate, 4 or 6 players; 3: six players) or a list of seat lists such as
``[[0, 2], [1, 3]]``; ``two_player_deal`` (K6, 2 players) ``"6+4"`` or ``"5+6"``; ``set_aside``
(K8) ``"court"`` or ``"spades"``; ``last_capture_point`` (K17) true or false.  They are checked
strictly: an unknown key, a wrong type, a value the rules refuse (teams for 3 players, teams
that do not alternate seats), or ``rules`` for Kungsholmskille is a 400 naming what was wrong.
The state of a team game carries ``teams`` (seat lists, else null) and ``team_totals``.

Every bad request (illegal move, unknown id, malformed JSON, a records file of which no record
parses, a body over :data:`MAX_BODY`) is answered with a 4xx status and ``{"error": "..."}``
and changes nothing; an unexpected failure is a 500 with its message, and the server keeps
running.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
import webbrowser
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from krypenv.ui.games import DEFAULT_PLAYERS, GAMES
from krypenv.ui.replay import STATIC, Deal, frames, load_text, page
from krypenv.ui.session import InputError, Session

MAX_BODY = 8 * 1024 * 1024  # bytes of a request body (an uploaded records file)
MAX_GAMES = 64  # games kept in memory; the oldest go first
MAX_REPLAYS = 32  # opened records files kept in memory
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml"}


class ApiError(Exception):
    """A bad request: its HTTP status and the message of the JSON error."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class App:
    """The server's state: games and opened records files in memory, each under a random id."""

    def __init__(self) -> None:
        self.games: OrderedDict[str, tuple[Session, threading.Lock]] = OrderedDict()
        self.replays: OrderedDict[str, tuple[list[Deal], list[str]]] = OrderedDict()
        self.names: dict[str, str] = {}  # replay id -> the file's name
        self.lock = threading.Lock()

    @staticmethod
    def _store(table: OrderedDict, value: Any, limit: int, key: str | None = None) -> str:
        key = key or secrets.token_urlsafe(9)
        table[key] = value
        while len(table) > limit:
            table.popitem(last=False)
        return key

    def game(self, gid: str) -> tuple[Session, threading.Lock]:
        """The game of an id; 404 otherwise."""
        with self.lock:
            if gid not in self.games:
                raise ApiError(404, f"unknown game id {gid!r} (games live in memory and end with the server)")
            return self.games[gid]

    def replay(self, rid: str) -> tuple[list[Deal], list[str]]:
        """The opened records file of an id; 404 otherwise."""
        with self.lock:
            if rid not in self.replays:
                raise ApiError(404, f"unknown replay id {rid!r}")
            return self.replays[rid]

    def open_records(self, text: str, name: str, key: str | None = None) -> dict[str, Any]:
        """Check a records file's text and keep its legal records; 400 if none parses."""
        deals, errors = load_text(text, name)
        if not deals:
            why = "; ".join(errors[:3]) or "the file is empty"
            raise ApiError(400, f"no game record in {name} parses: {why}")
        with self.lock:
            rid = self._store(self.replays, (deals, errors), MAX_REPLAYS, key)
            self.names = {k: self.names.get(k, name) for k in self.replays}
        return {"id": rid, "deals": [d.to_json(i) for i, d in enumerate(deals)], "errors": errors}

    # ------------------------------------------------------------------ the API
    def meta(self) -> dict[str, Any]:
        """Games, their agents, defaults."""
        import agents

        from krypenv.ui.hints import default_hint_spec
        from krypenv.ui.krypkasino import rules_meta

        return {"games": {g: {"agents": agents.known(g), "default_players": DEFAULT_PLAYERS[g],
                              "default_opponent": "expert" if g == "krypkasino" else "random",
                              "hint": default_hint_spec(g), "rules": rules_meta() if g == "krypkasino" else {}}
                          for g in GAMES}}

    def new_game(self, body: dict[str, Any]) -> dict[str, Any]:
        """Start a game from ``{game, players, agents, seat, seed, deals, rules}``."""
        game = body.get("game", "krypkasino")
        if game not in GAMES:
            raise ApiError(400, f"unknown game {game!r}; known games: {', '.join(GAMES)}")
        players = _int(body, "players", DEFAULT_PLAYERS[game], 2, 6)
        specs = body.get("agents") or ["expert" if game == "krypkasino" else "random"]
        if isinstance(specs, str):
            specs = specs.split(",")
        if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
            raise ApiError(400, "agents must be a list of agent spec strings")
        seat = body.get("seat")
        seat = None if seat is None else _int(body, "seat", 0, 0, players - 1)
        seed = body.get("seed")
        seed = secrets.randbelow(10**6) if seed in (None, "") else _int(body, "seed", 0, 0, 2**63 - 1)
        deals = _int(body, "deals", 1, 1, 100)
        options = _rules(game, players, body.get("rules"))
        session = Session(game, players, specs, seat=seat, seed=seed, deals=deals, options=options,
                          record=Path("games") / f"web-{game}-{secrets.token_hex(4)}-s{seed}.jsonl")
        with self.lock:
            gid = self._store(self.games, (session, threading.Lock()), MAX_GAMES)
        return {"id": gid, "seed": seed, "state": session.state()}

    def move(self, gid: str, body: dict[str, Any]) -> dict[str, Any]:
        """The person's move by number ``n`` or short form ``key``; the state with events from ``since``."""
        session, lock = self.game(gid)
        since = _int(body, "since", 0, 0, 10**9)
        with lock:
            if "n" in body:
                n = _int(body, "n", 1, 1, 10**6)
                session.play(n - 1)
            elif isinstance(body.get("key"), str):
                session.play(session.parse(body["key"]))
            else:
                raise ApiError(400, "a move needs n (its number in the legal list) or key (its short form)")
            return {"state": session.state(events_from=since)}

    def hint(self, gid: str, body: dict[str, Any]) -> dict[str, Any]:
        """The hint of agent ``spec`` (default: the strongest shipped one)."""
        from krypenv.ui.hints import hint

        session, lock = self.game(gid)
        spec = body.get("spec") or None
        if spec is not None and not isinstance(spec, str):
            raise ApiError(400, "spec must be an agent spec string")
        with lock:
            return hint(session, spec).to_json(session.legal())

    def game_replay(self, gid: str) -> dict[str, Any]:
        """The game's records, opened for replay under the id ``game-ID``."""
        session, lock = self.game(gid)
        with lock:
            text = "\n".join(json.dumps(r) for r in session.records())
        return self.open_records(text, f"game {gid}", key=f"game-{gid}")


def _rules(game: str, players: int, value: Any) -> dict[str, Any]:
    """A request's ``rules`` as the game's options (record rules keys); 400 naming what is wrong."""
    if value is None:
        return {}
    if game != "krypkasino":
        raise ApiError(400, f"rules are Krypkasino's options (K6, K8, K17, K18); {game} takes none, got {value!r}")
    from krypenv.ui.krypkasino import options_from_json

    try:
        return options_from_json(value, players)
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None


def _int(body: dict[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    """An integer field of a request body within [lo, hi]; 400 naming it otherwise."""
    value = body.get(key, default)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ApiError(400, f"{key} must be an integer from {lo} to {hi}, got {value!r}")
    return value


class Handler(BaseHTTPRequestHandler):
    """Routes requests to the :class:`App`; every answer of the API is JSON."""

    app: App
    server_version = "krypenv"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's signature
        """Quiet: errors only."""
        if args and str(args[1] if len(args) > 1 else "").startswith(("4", "5")):
            sys.stderr.write(f"{self.address_string()} {format % args}\n")

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json")

    def _body_text(self) -> str:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise ApiError(400, "bad Content-Length") from None
        if length > MAX_BODY:
            raise ApiError(413, f"request body of {length} bytes is over the limit of {MAX_BODY}")
        try:
            return self.rfile.read(length).decode("utf-8")
        except UnicodeDecodeError:
            raise ApiError(400, "the request body is not UTF-8 text") from None

    def _body(self) -> dict[str, Any]:
        text = self._body_text()
        try:
            obj = json.loads(text or "{}")
        except json.JSONDecodeError as exc:
            raise ApiError(400, f"malformed JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise ApiError(400, f"the request body must be a JSON object, got {type(obj).__name__}")
        return obj

    def _handle(self, method: str) -> None:
        url = urlparse(self.path)
        parts = [p for p in url.path.split("/") if p]
        try:
            if parts[:1] != ["api"]:
                if method != "GET":
                    raise ApiError(405, f"{method} is not allowed on {url.path}")
                return self._static(parts)
            self._json(200, self._api(method, parts[1:], parse_qs(url.query)))
        except ApiError as exc:
            self._json(exc.status, {"error": str(exc)})
        except (InputError, ValueError) as exc:
            self._json(400, {"error": str(exc)})
        except Exception as exc:  # noqa: BLE001 - the server answers and keeps running
            self._json(500, {"error": f"internal error: {type(exc).__name__}: {exc}"})

    def _api(self, method: str, parts: list[str], query: dict[str, list[str]]) -> Any:
        app = self.app
        route = (method, parts[0] if parts else "", len(parts))
        if route == ("GET", "meta", 1):
            return app.meta()
        if route == ("POST", "games", 1):
            return app.new_game(self._body())
        if route == ("GET", "games", 2):
            session, lock = app.game(parts[1])
            since = _int({"since": query.get("since", ["0"])[0]}, "since", 0, 0, 10**9)
            with lock:
                return {"state": session.state(events_from=since)}
        if route == ("POST", "games", 3) and parts[2] == "move":
            return app.move(parts[1], self._body())
        if route == ("POST", "games", 3) and parts[2] == "hint":
            return app.hint(parts[1], self._body())
        if route == ("GET", "games", 3) and parts[2] == "replay":
            return app.game_replay(parts[1])
        if route == ("GET", "replay", 1):
            with app.lock:
                return {"files": [{"id": k, "name": app.names.get(k, k), "deals": len(v[0])}
                                  for k, v in app.replays.items() if not k.startswith("game-")]}
        if route == ("POST", "replay", 1):
            name = query.get("name", ["upload"])[0][:200]
            return app.open_records(self._body_text(), name)
        if route == ("GET", "replay", 2):
            deals, errors = app.replay(parts[1])
            return {"id": parts[1], "deals": [d.to_json(i) for i, d in enumerate(deals)], "errors": errors}
        if route == ("GET", "replay", 3):
            deals, _ = app.replay(parts[1])
            k = _int({"deal": parts[2]}, "deal", 0, 0, len(deals) - 1)
            return frames(deals[k])
        raise ApiError(404, f"no API route {method} /api/{'/'.join(parts)}")

    def _static(self, parts: list[str]) -> None:
        if not parts:
            if not (STATIC / "index.html").is_file():
                raise ApiError(404, "the web page is not part of this checkout yet; the JSON API is under /api/")
            return self._send(200, page().encode(), TYPES[".html"])
        if len(parts) == 2 and parts[0] == "static":
            files = {p.name: p for p in STATIC.iterdir() if p.is_file()} if STATIC.is_dir() else {}
            if parts[1] in files:
                path = files[parts[1]]
                return self._send(200, path.read_bytes(), TYPES.get(path.suffix, "application/octet-stream"))
        raise ApiError(404, f"no page /{'/'.join(parts)}")

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        """GET: the page, static files, API reads."""
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        """POST: API actions."""
        self._handle("POST")


def make_server(host: str = "127.0.0.1", port: int = 8000, records: list[str] | None = None) -> ThreadingHTTPServer:
    """A server bound to ``host:port`` (port 0: a free one), with records files preloaded for replay."""
    app = App()
    for k, path in enumerate(records or []):
        app.open_records(Path(path).read_text(encoding="utf-8"), path, key=f"file{k}")
    handler = type("BoundHandler", (Handler,), {"app": app})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


def add_arguments(parser: Any) -> None:
    """The ``serve`` sub-command's arguments."""
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only). Another address, e.g. "
                             "0.0.0.0, exposes the app to everyone who can reach this machine, without any login: "
                             "they can play, use its CPU and read the records opened with --records")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--open", action="store_true", help="open the page in the default web browser")
    parser.add_argument("--records", nargs="*", default=[], metavar="FILE",
                        help="records files to offer in the replay view (e.g. evals/.../records.jsonl)")


def run(args: Any) -> int:
    """Serve until Ctrl-C."""
    try:
        server = make_server(args.host, args.port, args.records)
    except ApiError as exc:
        raise ValueError(str(exc)) from None
    host, port = server.server_address[:2]
    url = f"http://{'localhost' if host in ('127.0.0.1', '::1') else host}:{port}/"
    print(f"krypenv serve: {url} (Ctrl-C stops)", flush=True)
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
