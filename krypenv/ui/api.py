"""The JSON API of ``krypenv serve`` behind the web layer: games, moves, hints, replays (see :mod:`krypenv.ui.server`).

:class:`App` checks every request body (unknown fields, types, bounds; agents through the
:class:`~krypenv.ui.menu.AgentMenu`) and raises :class:`~krypenv.ui.guard.HttpError` with the
status and a message naming what was wrong; it never reads a socket (:mod:`krypenv.ui.web`
does, and calls it off the event loop: its methods block on the games' locks).
:func:`json_body` turns a request body into a JSON object, or a 400 naming what is wrong
with it (not UTF-8, malformed, nested too deeply, an integer of too many digits, not an object).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from krypenv.games import DEFAULT_GAME, GAMES, names
from krypenv.ui.guard import HttpError
from krypenv.ui.menu import AgentMenu
from krypenv.ui.replay import Deal, load_objects, load_text
from krypenv.ui.session import HUMAN, InputError, Session, parse_specs
from krypenv.ui.store import Busy, Store, Table

MAX_REPLAYS = 32  # opened records files kept in memory
MAX_REPLAY_BYTES = 64 * 1024 * 1024  # JSON text of the records kept for replay, all files together
FIELDS = {"games": {"game", "players", "agents", "seat", "seed", "deals", "rules"},
          "move": {"n", "key", "since", "move_index"}, "hint": {"spec"}, "replay": {"name", "text"},
          "live": {"type", "n", "key", "move_index"}}  # a move sent over the WebSocket (krypenv.ui.live)


class App:
    """The server's state: games (:class:`~krypenv.ui.store.Store`), opened records files, the agents it offers."""

    def __init__(self, folder: Path = Path("games"), menu: AgentMenu | None = None, store: Store | None = None) -> None:
        self.menu = menu if menu is not None else AgentMenu.build()
        self.store = store if store is not None else Store(folder)
        self.replays: OrderedDict[str, tuple[list[Deal], list[str], int]] = OrderedDict()  # id -> deals, errors, bytes
        self.names: dict[str, str] = {}  # replay id -> the file's name
        self.lock = threading.Lock()

    def table(self, gid: str) -> Table:
        """The game of an id; 404 otherwise."""
        try:
            return self.store.get(gid)
        except KeyError:
            raise HttpError(404, f"unknown game id {gid[:40]!r} (games live in memory and end with the server; the "
                                 f"least recently used go first, their records saved)") from None

    def replay(self, rid: str) -> tuple[list[Deal], list[str], int]:
        """The opened records file of an id; 404 otherwise."""
        with self.lock:
            if rid not in self.replays:
                raise HttpError(404, f"unknown replay id {rid[:40]!r}")
            return self.replays[rid]

    def upload(self, body: dict[str, Any]) -> dict[str, Any]:
        """Check an uploaded records file ``{name, text}`` and keep its legal records (first errors only)."""
        _fields(body, "replay")
        if not isinstance(body.get("text"), str):
            raise HttpError(400, "a records upload is {\"name\": \"file name\", \"text\": \"the file's text\"}")
        name = str(body.get("name") or "upload")[:200]
        return self.keep_records(*load_text(body["text"], name), name)

    def files(self) -> dict[str, Any]:
        """The records files opened (preloaded or uploaded), not the games' own replays."""
        with self.lock:
            return {"files": [{"id": k, "name": self.names.get(k, k), "deals": len(v[0])}
                              for k, v in self.replays.items() if not k.startswith("game-")]}

    def keep_records(self, deals: list[Deal], errors: list[str], name: str, key: str | None = None) -> dict[str, Any]:
        """Keep checked records for replay under ``key`` (default a new id); 400 if there are none, 413 if too big."""
        if not deals:
            why = "; ".join(errors[:3]) or "the file is empty"
            raise HttpError(400, f"no game record in {name} parses: {why}")
        size = sum(len(json.dumps(d.record)) for d in deals)
        if size > MAX_REPLAY_BYTES:
            raise HttpError(413, f"the records of {name} take {size} bytes, over the limit of {MAX_REPLAY_BYTES}")
        with self.lock:
            rid = key or self.store.new_id()
            self.replays[rid] = (deals, errors, size)
            self.replays.move_to_end(rid)
            while len(self.replays) > MAX_REPLAYS or sum(v[2] for v in self.replays.values()) > MAX_REPLAY_BYTES:
                self.replays.popitem(last=False)
            self.names = {k: self.names.get(k, name) if k != rid else name for k in self.replays}
        return {"id": rid, "deals": [d.to_json(i) for i, d in enumerate(deals)], "errors": errors}

    # ------------------------------------------------------------------ the API
    def meta(self) -> dict[str, Any]:
        """Games, the agents offered for each (with the players and presets each plays), defaults."""
        from krypenv.ui.hints import default_hint_spec

        return {"games": {g.name: {"title": g.title, "agents": self.menu.offer(g.name),
                                   "default_players": g.play_players, "default_opponent": g.play_opponent,
                                   "hint": default_hint_spec(g.name), "rules": g.part("ui").rules_meta()}
                          for g in GAMES.values()},
                "default_game": DEFAULT_GAME}

    def new_game(self, body: dict[str, Any]) -> tuple[Table, dict[str, Any]]:
        """A game from ``{game, players, agents, seat, seed, deals, rules}``, its agents not yet moved."""
        import secrets

        from krypenv import agents

        _fields(body, "games")
        game = body.get("game", DEFAULT_GAME)
        if not isinstance(game, str) or game not in GAMES:
            raise HttpError(400, f"unknown game {str(game)[:40]!r}; known games: {', '.join(names())}")
        players = int_field(body, "players", GAMES[game].play_players, 2, 6)
        specs = body.get("agents") or [GAMES[game].play_opponent]
        if isinstance(specs, str):
            specs = specs.split(",")
        if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs) or len(specs) > players:
            raise HttpError(400, f"agents must be a list of at most {players} agent spec strings (one per opponent, "
                                 f"one for all of them, or one per seat with one human)")
        seat = body.get("seat")
        seat = None if seat is None else int_field(body, "seat", 0, 0, players - 1)
        seed = body.get("seed")
        seed = secrets.randbelow(10**6) if seed in (None, "") else int_field(body, "seed", 0, 0, 2**63 - 1)
        deals = int_field(body, "deals", 1, 1, 100)
        options = _rules(game, players, body.get("rules"))
        seats, human = parse_specs(specs, players, seat, agents_name="agents", seat_name="seat")
        rules = GAMES[game].part("ui").rules_of(players, options)  # the table the agents must fit
        loaded = {s: agents.load(self.menu.resolve(spec, game, rules), game=game)
                  for s, spec in enumerate(seats) if spec != HUMAN}
        gid = self.store.new_id()
        session = Session(game, players, seats, seat=human, seed=seed, deals=deals, options=options,
                          record=self.store.record_path(game, seed, gid), advance=False, loaded=loaded)
        table = self.store.add(gid, session)
        self.store.drive(table)
        return table, {"id": gid, "seed": seed}

    def move(self, table: Table, body: dict[str, Any], what: str = "move") -> None:
        """Apply the person's move ``n`` (1-based) or ``key`` at ``move_index``, then start the agents' moves.

        ``what`` names the fields the request may hold (``move``: an HTTP body, ``live``: a WebSocket message).
        """
        _fields(body, what)
        with table.lock:
            session = table.session
            if table.thinking:
                raise HttpError(409, "the agents are still playing: wait for your turn (GET the state)")
            if "move_index" not in body:
                raise HttpError(400, f"a move needs move_index, the state's move_index it answers "
                                     f"(now {session.moves})")
            index = int_field(body, "move_index", 0, 0, 10**9)
            if index != session.moves:
                raise HttpError(409, f"this move has move_index {index}, but the game is at move {session.moves} "
                                     f"(a repeated or stale request): nothing was played")
            if "n" in body:
                session.play(int_field(body, "n", 1, 1, 10**6) - 1, advance=False)
            elif isinstance(body.get("key"), str):
                session.play(session.parse(body["key"][:200]), advance=False)
            else:
                raise HttpError(400, "a move needs n (its number in the legal list) or key (its short form)")
        self.store.drive(table)

    def hint(self, table: Table, body: dict[str, Any], cancel: threading.Event) -> Future[dict[str, Any]]:
        """The hint job of agent ``spec`` (default: the strongest offered one), on the agent pool."""
        from krypenv.ui.hints import default_hint_spec, hint

        _fields(body, "hint")
        game = table.session.game_name
        shown = body.get("spec") or default_hint_spec(game, table.session.game.rules)
        resolved = self.menu.resolve(shown, game, table.session.game.rules)

        def job() -> dict[str, Any]:
            with table.lock:
                if table.thinking:
                    raise HttpError(409, "a hint needs your turn: the agents are still playing")
                return hint(table.session, resolved, shown=shown, stop=cancel.is_set).to_json(table.session.legal())

        return self.store.submit(job)

    def game_replay(self, table: Table) -> dict[str, Any]:
        """The game's finished deals, opened for replay under the id ``game-ID`` (409 before the first ends)."""
        with table.lock:
            records = table.session.finished_records()
        if not records:
            raise HttpError(409, "the replay opens when the first deal is over (it shows every hand)")
        name = f"game {table.gid}"
        return self.keep_records(*load_objects(records, name), name, key=f"game-{table.gid}")


def error_status(exc: Exception) -> int | None:
    """The HTTP status of an error a request caused (None: an unexpected failure, a 500)."""
    if isinstance(exc, HttpError):
        return exc.status
    if isinstance(exc, Busy):
        return 503
    if isinstance(exc, (InputError, ValueError)):
        return 400
    return None


def json_body(data: bytes) -> dict[str, Any]:
    """A request body as a JSON object (empty: ``{}``); :class:`HttpError` 400 naming what is wrong with it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise HttpError(400, "the request body is not UTF-8 text") from None
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


def _fields(body: dict[str, Any], what: str) -> None:
    """400 naming any field the request does not take (a misspelt one is never silently ignored)."""
    unknown = sorted(set(body) - FIELDS[what])
    if unknown:
        raise HttpError(400, f"unknown field(s) {', '.join(repr(k[:40]) for k in unknown[:5])}; this request takes "
                             f"{', '.join(sorted(FIELDS[what]))}")


def _rules(game: str, players: int, value: Any) -> dict[str, Any]:
    """A request's ``rules`` as the game's options (record rules keys); 400 naming what is wrong."""
    if value is None:
        return {}
    try:
        return GAMES[game].part("ui").options_from_json(value, players)
    except ValueError as exc:
        raise HttpError(400, str(exc)) from None


def int_field(body: dict[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    """An integer field of a request body within [lo, hi]; 400 naming it otherwise."""
    value = body.get(key, default)
    if isinstance(value, str) and len(value) < 20 and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise HttpError(400, f"{key} must be an integer from {lo} to {hi}, got {json.dumps(value)[:40]}")
    return value
