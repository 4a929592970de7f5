"""``krypenv serve``: the local web app (play against agents, watch replays), its JSON API and live WebSocket.

    krypenv serve [--host 127.0.0.1] [--port 8000] [--open] [--records FILE...]
                  [--checkpoint PATH...] [--allow-host NAME...] [--games DIR]

**Stack.** An ASGI app on Starlette (routing, requests, responses; :mod:`krypenv.ui.web`,
:mod:`krypenv.ui.live`) served by uvicorn with h11 for HTTP/1.1 and wsproto for the WebSocket
(:mod:`krypenv.ui.serving`, where its limits are set and documented).  They are the extra
``serve`` (``pip install -e ".[serve]"``; the quick start's ``.[all]`` includes it): without
them ``krypenv serve`` stops at once naming the extra.  The page is vanilla HTML, CSS and
JavaScript shipped in ``krypenv/ui/static/``; it needs no network.

**Security model** (``docs/SECURITY.md`` says it in one page).  The server binds to 127.0.0.1
by default.  A request is data, never code: an agent is a name the server offers with
bounded options, and a learned policy a checkpoint it trusts, by name, never a path
(:mod:`krypenv.ui.menu`); nothing from a request is imported, unpickled or used as a path.
Every request and WebSocket handshake must name this server in ``Host`` and, when a browser
sends an ``Origin``, come from this server's own page; bodies are JSON only, of bounded length
(:mod:`krypenv.ui.guard`: no page of another site, no DNS rebinding).  Everything a request can
make the server do is bounded: request framing and header sizes (h11), connections, the time a
request may take to arrive, body and message sizes, search budgets, agent work (a small pool,
off the event loop, dropped when the client goes away), games and record files kept
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
| WS   /api/games/ID/live         | live play (``?since=N``): states as every seat moves, the       |
|                                 | person's moves (:mod:`krypenv.ui.live`)                         |
| GET  /api/replay                | ``{files: [{id, name, deals}]}``: the records files opened      |
| POST /api/replay                | ``{name, text}``: a records file → ``{id, deals, errors}``      |
| GET  /api/replay/ID             | ``{id, deals, errors}``; ``/api/replay/ID/K``: frames of deal K |

A move names the ``move_index`` of the state it answers (``state.move_index``, the moves made so
far by every seat): a move for another index, a repeated request included, is a 409 and changes
nothing.  After the person's move the agents play on the pool.  Over the JSON API the answer
comes when they reach the person's next decision or after a few seconds with
``state.thinking`` true (then ``GET`` the state until it is false); the page plays over the
WebSocket instead and gets every agent move as it is made.  A Krypkasino game's ``rules`` are
``teams`` (K18: null, a number of teams, or seat lists), ``two_player_deal`` (K6),
``set_aside`` (K8), ``last_capture_point`` (K17) and ``preset`` (K22: ``standard``, ``tiny``,
``small``; the page offers it), checked strictly (:mod:`krypenv.ui.krypkasino`).  An agent
bound to a table (a checkpoint's or a tabular policy's players and preset, e.g.
``tabular:cfr-tiny`` at ``tiny`` with 2 players) is a 400 at any other table, for a game and
for a hint alike, and the page offers it only where it fits.  Every bad request (unknown
field, illegal move, unknown id, malformed JSON, a records file of which no record parses) is a
4xx with ``{"error": "..."}`` naming what was wrong and changes nothing; an unexpected failure
is a 500 with its message, and the server keeps running.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING, Any

from krypenv.ui.guard import HttpError, Limits
from krypenv.ui.tabulars import MAX_TABULAR_BYTES

if TYPE_CHECKING:
    from krypenv.ui.serving import Server
    from krypenv.ui.store import Store

STACK = ("starlette", "uvicorn", "wsproto")  # the extra "serve"


def require_stack() -> None:
    """ValueError naming the extra ``serve`` when a package of the web stack is not installed."""
    missing = [name for name in STACK if importlib.util.find_spec(name) is None]
    if missing:
        raise ValueError(f"krypenv serve needs the extra 'serve' (missing: {', '.join(missing)}); install it with "
                         f"pip install 'krypenv[serve]' (or -e \".[serve]\" in a clone)")


def make_server(host: str = "127.0.0.1", port: int = 8000, records: list[str] | None = None,
                checkpoints: list[str] | None = None, allow_hosts: list[str] | None = None,
                games: str | Path = "games", store: Store | None = None, limits: Limits | None = None) -> Server:
    """A server bound to ``host:port`` (port 0: a free one) with the agents, records and hosts it is given.

    ``store`` replaces the default :class:`~krypenv.ui.store.Store` of ``games`` and ``limits`` the
    default :class:`~krypenv.ui.guard.Limits` (other limits, for tests).  Start it with
    ``.serve_forever()`` or ``.start()`` (on a thread; ``.stop()`` ends it).
    """
    require_stack()
    from krypenv.ui.api import App
    from krypenv.ui.menu import AgentMenu
    from krypenv.ui.replay import load_file
    from krypenv.ui.serving import Server

    app = App(Path(games), AgentMenu.build(checkpoints or []), store)
    for k, path in enumerate(records or []):
        try:
            app.keep_records(*load_file(path), path, key=f"file{k}")
        except (OSError, HttpError) as exc:
            raise ValueError(f"--records {path}: {exc}") from None
    return Server(app, host, port, allow_hosts or [], limits or Limits())


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
    require_stack()
    try:
        server = make_server(args.host, args.port, args.records, args.checkpoints, args.allow_hosts, args.games)
    except OSError as exc:
        raise ValueError(f"cannot listen on {args.host} port {args.port}: {exc.strerror or exc}") from None
    host, port = server.server_address
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
        pass
    print("stopped", flush=True)
    return 0
