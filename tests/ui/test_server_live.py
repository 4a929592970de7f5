"""The live WebSocket of ``krypenv serve`` on raw sockets: its handshake's guard, its messages, and clients that vanish.

The client is wsproto on a plain socket (tests/ui/wsclient.py), so a test can send what no
browser would: a foreign Origin, a message over the limit, binary or malformed data, and a client
that stops answering pings without closing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from krypenv.ui.guard import Limits
from krypenv.ui.server import make_server
from tests.ui.client import call
from tests.ui.wsclient import WS, Closed, Refused

pytest.importorskip("uvicorn", reason="the server needs the extra serve (pip install -e '.[serve]')")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A server with the default limits."""
    srv = make_server("127.0.0.1", 0, games=tmp_path_factory.mktemp("live")).start()
    yield srv
    srv.stop()


def new_game(base: str, players: int = 2, seed: int = 1, seat: int = 0) -> tuple[str, dict[str, Any]]:
    """A game against random agents: (its id, its state)."""
    status, out = call(base, "POST", "/api/games", {"players": players, "seed": seed, "agents": ["random"],
                                                    "seat": seat})
    assert status == 200, out
    return out["id"], out["state"]


def live(base: str, gid: str, since: int = 0, **kw: Any) -> WS:
    """An open live socket of game ``gid``."""
    ws = WS.connect(base, f"/api/games/{gid}/live?since={since}", **kw)
    assert isinstance(ws, WS), ws
    return ws


def until_your_turn(ws: WS) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The state messages up to the person's turn (or the end): (all of them, the last state)."""
    got: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    while True:
        assert time.monotonic() < deadline, got[-3:]  # pings keep the socket alive: a hang would never time out
        message = ws.receive()
        assert not isinstance(message, Closed) and message["type"] == "state", message
        got.append(message)
        state = message["state"]
        if (state["your_turn"] or state["over"]) and not state["thinking"]:
            return got, state


# ---------------------------------------------------------------- the handshake
@pytest.mark.parametrize("host,origin,status,words", [
    ("own", None, 101, ""), ("own", "own", 101, ""), ("localhost", "localhost", 101, ""),
    ("own", "http://evil.example", 403, "are refused"), ("own", "null", 403, "are refused"),
    ("own", "localhost", 403, "are refused"), ("evil.example:PORT", None, 403, "does not name this server"),
    ("evil.example:PORT", "own", 403, "does not name this server"), ("127.0.0.1:1", None, 403, "does not name"),
])
def test_the_handshake_passes_the_same_guard(server: Any, host: str, origin: str | None, status: int,
                                             words: str) -> None:
    """Host and Origin decide as for any request (a page of another site cannot open the socket: cross-site
    WebSocket hijacking); a refusal is the JSON error, with the security headers, and no socket."""
    gid, _ = new_game(server.url)
    names = {"own": f"127.0.0.1:{server.port}", "localhost": f"localhost:{server.port}"}
    sent_host = names.get(host, host.replace("PORT", str(server.port)))
    sent_origin = None if origin is None else (f"http://{names[origin]}" if origin in names else origin)
    ws = WS.connect(server.url, f"/api/games/{gid}/live", host=sent_host, origin=sent_origin)
    if status == 101:
        assert isinstance(ws, WS) and ws.receive()["type"] == "state"
        ws.close()
        return
    assert isinstance(ws, Refused) and ws.status == status and words in ws.json()["error"]
    assert ws.headers["cache-control"] == "no-store" and ws.headers["content-type"] == "application/json"


@pytest.mark.parametrize("path,status,words", [
    ("/api/games/nope/live", 404, "unknown game id 'nope'"), ("/api/games/GID/live?since=x", 400, "since must be"),
    ("/api/games/GID/live?since=-1", 400, "since must be an integer from 0"),
])
def test_a_socket_for_no_game_is_refused(server: Any, path: str, status: int, words: str) -> None:
    """An unknown game or a bad ``since`` is refused at the handshake with its JSON error."""
    gid, _ = new_game(server.url)
    ws = WS.connect(server.url, path.replace("GID", gid))
    assert isinstance(ws, Refused) and ws.status == status and words in ws.json()["error"]


# ---------------------------------------------------------------- messages
def test_each_agent_move_arrives_as_it_is_made(server: Any) -> None:
    """After the person's move, every agent move comes in its own message (thinking), then the person's turn; the
    events of all messages are the game's, each once, in order."""
    gid, st = new_game(server.url, players=4, seed=3)
    ws = live(server.url, gid, since=st["n_events"])
    first, state = until_your_turn(ws)
    assert len(first) == 1 and first[0]["state"]["events"] == []
    events = list(st["events"])
    for _ in range(3):
        ws.send_json({"type": "move", "move_index": state["move_index"], "n": 1})
        got, state = until_your_turn(ws)
        moves = [m["state"]["events"] for m in got if m["state"]["events"]]
        assert [e["seat"] for e in moves[0]] == [0]  # the person's own move first
        agents = [e for batch in moves[1:] for e in batch if e["seat"] > 0]
        assert [e["seat"] for e in agents] == [1, 2, 3] and all(len(batch) == 1 for batch in moves[1:4])
        assert all(m["state"]["thinking"] for m in got[:-1] if m["state"]["events"] and m["state"]["events"][0]["seat"])
        events += [e for m in got for e in m["state"]["events"]]
    assert events == call(server.url, "GET", f"/api/games/{gid}")[1]["state"]["events"]
    ws.close()


@pytest.mark.parametrize("message,status,words", [
    ({"type": "move", "move_index": "M+1", "n": 1}, 409, "but the game is at move"),
    ({"type": "move", "move_index": "M", "n": 99}, 400, "there is no move 99"),
    ({"type": "move", "move_index": "M"}, 400, "a move needs n"),
    ({"type": "move", "n": 1}, 400, "a move needs move_index"),
    ({"type": "move", "move_index": "M", "n": 1, "since": 0}, 400, "unknown field(s) 'since'"),
    ({"type": "move", "move_index": "M", "key": "zz"}, 400, ""),
    ({"type": "move", "move_index": "M", "n": True}, 400, "n must be an integer"),
])
def test_a_refused_move_is_an_error_message_and_changes_nothing(server: Any, message: dict[str, Any], status: int,
                                                                words: str) -> None:
    """A stale or illegal move, or one with a missing or unknown field: an error message with its status, the socket
    stays open, the game unchanged; the next good move plays."""
    gid, st = new_game(server.url, seed=5)
    st = call(server.url, "GET", f"/api/games/{gid}")[1]["state"]
    ws = live(server.url, gid, since=st["n_events"])
    until_your_turn(ws)
    at = st["move_index"]
    ws.send_json({k: {"M": at, "M+1": at + 1}.get(v, v) if isinstance(v, str) else v for k, v in message.items()})
    answer = ws.receive()
    assert answer["type"] == "error" and answer["status"] == status and words in answer["error"], answer
    assert call(server.url, "GET", f"/api/games/{gid}")[1]["state"] == st
    ws.send_json({"type": "move", "move_index": at, "n": 1})
    _, state = until_your_turn(ws)
    assert state["move_index"] > at
    ws.close()


@pytest.mark.parametrize("send,code,words", [
    (lambda ws: ws.send_bytes(b'{"type": "move"}'), 1003, "send JSON text messages, not binary data"),
    (lambda ws: ws.send_text("{not json"), 1007, "malformed JSON"),
    (lambda ws: ws.send_text("[" * 30_000 + "]" * 30_000), 1007, "malformed JSON: nested too deeply"),
    (lambda ws: ws.send_text('{"seed": ' + "7" * 5000 + "}"), 1007, "malformed JSON"),
    (lambda ws: ws.send_text("[1, 2]"), 1008, 'a message is {"type": "move"'),
    (lambda ws: ws.send_json({"type": "hint"}), 1008, "a message is"),
    (lambda ws: ws.send_text("x" * (Limits().ws_message + 1)), 1009, "exceeds the maximum size (65536 bytes)"),
])
def test_malformed_or_oversized_messages_close_the_socket(server: Any, send: Any, code: int, words: str) -> None:
    """Binary data, text that is not JSON (deep or huge included), JSON that is not a move message, a message over
    64 KiB: the socket is closed with its code and a reason naming the fault; the game is unchanged and a new socket
    plays on."""
    gid, st = new_game(server.url, seed=6)
    ws = live(server.url, gid, since=st["n_events"])
    until_your_turn(ws)
    send(ws)
    closed = ws.receive()
    assert isinstance(closed, Closed) and closed.code == code and words in closed.reason, closed
    assert call(server.url, "GET", f"/api/games/{gid}")[1]["state"]["move_index"] == st["move_index"]
    again = live(server.url, gid, since=st["n_events"])
    _, state = until_your_turn(again)
    again.send_json({"type": "move", "move_index": state["move_index"], "n": 1})
    assert until_your_turn(again)[1]["move_index"] > state["move_index"]
    again.close()


def test_the_socket_closes_after_the_last_state_of_the_match(server: Any) -> None:
    """Moves until the match is over: the final state, then a close (1000) saying so; a socket opened on a finished
    game gets its state and the same close."""
    gid, st = new_game(server.url, seed=2)
    ws = live(server.url, gid, since=st["n_events"])
    _, state = until_your_turn(ws)
    while not state["over"]:
        ws.send_json({"type": "move", "move_index": state["move_index"], "n": 1})
        _, state = until_your_turn(ws)
    assert state["results"] and ws.receive() == Closed(1000, "the match is over")
    late = live(server.url, gid, since=0)
    message = late.receive()
    assert message["state"]["over"] and len(message["state"]["events"]) == state["n_events"]
    assert late.receive() == Closed(1000, "the match is over")


def test_two_pages_of_one_game_both_see_every_move(server: Any) -> None:
    """Two sockets on one game (two tabs): a move from either reaches both, with the agents' answers."""
    gid, st = new_game(server.url, players=3, seed=8)
    a, b = live(server.url, gid, since=st["n_events"]), live(server.url, gid, since=st["n_events"])
    _, state = until_your_turn(a)
    until_your_turn(b)
    b.send_json({"type": "move", "move_index": state["move_index"], "n": 1})
    seen_a, end_a = until_your_turn(a)
    seen_b, end_b = until_your_turn(b)
    assert end_a == end_b and [e for m in seen_a for e in m["state"]["events"]] == [
        e for m in seen_b for e in m["state"]["events"]]
    a.close()
    b.close()


# ---------------------------------------------------------------- clients that vanish
@pytest.fixture
def slow_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every agent move takes 0.3 s."""
    from krypenv.ui.session import Session

    advance = Session.advance

    def slow(self: Session, max_moves: int | None = None) -> None:
        time.sleep(0.3)
        advance(self, max_moves)

    monkeypatch.setattr(Session, "advance", slow)


@pytest.mark.parametrize("how", ["stops answering pings", "closes its socket"])
def test_a_client_that_vanishes_mid_game_stops_the_agents_and_a_new_one_resumes(tmp_path: Path, slow_agents: None,
                                                                                how: str) -> None:
    """The only page of a 6-player game moves and vanishes while the agents play (5 × 0.3 s): without a close,
    by not answering the server's pings (0.4 s here), or by dropping its socket.  The server closes the socket and
    the agents stop after the move in progress, short of the person's turn; a new socket resumes them and gets every
    event it has not had."""
    srv = make_server("127.0.0.1", 0, games=tmp_path / "games", limits=Limits(ws_ping=0.4)).start()
    try:
        gid, st = new_game(srv.url, players=6, seed=2)
        table = srv.app.store.get(gid)
        ws = live(srv.url, gid, since=st["n_events"])
        _, state = until_your_turn(ws)
        ws.send_json({"type": "move", "move_index": state["move_index"], "n": 1})
        assert ws.receive()["state"]["thinking"]
        if how == "closes its socket":
            ws.close()
        else:
            ws.answer_pings = False
            start = time.monotonic()
            while not isinstance(message := ws.receive(), Closed):  # states keep coming until the ping times out
                assert message["type"] == "state"
            assert message.code in (1006, 1011) and time.monotonic() - start < 5
        deadline = time.monotonic() + 30
        while table.thinking:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert table.session.agents_to_act and not table.watchers  # stopped before the person's turn
        stopped = table.session.moves
        again = live(srv.url, gid, since=state["n_events"])
        got, end = until_your_turn(again)
        assert end["your_turn"] and end["move_index"] == state["move_index"] + 6 > stopped
        events = [e for m in got for e in m["state"]["events"]]
        assert [e["seat"] for e in events] == [0, 1, 2, 3, 4, 5]
        again.close()
    finally:
        srv.stop()


def test_a_watched_game_keeps_playing_past_the_idle_limit(tmp_path: Path, slow_agents: None) -> None:
    """No request for the game for longer than the store's idle limit (0.2 s here) while a page watches it live: the
    agents play on to the person's turn; the same game unwatched stops at that limit."""
    from krypenv.ui.store import Store

    folder = tmp_path / "games"
    srv = make_server("127.0.0.1", 0, games=folder, store=Store(folder, idle_stop=0.2)).start()
    try:
        gid, st = new_game(srv.url, players=4, seed=9)
        ws = live(srv.url, gid, since=st["n_events"])
        _, state = until_your_turn(ws)
        ws.send_json({"type": "move", "move_index": state["move_index"], "n": 1})
        _, end = until_your_turn(ws)  # 3 agent moves, 0.9 s: past the idle limit
        assert end["move_index"] == state["move_index"] + 4
        ws.close()
        table = srv.app.store.get(gid)
        deadline = time.monotonic() + 10
        while table.watchers:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        body = {"n": 1, "move_index": end["move_index"]}
        assert call(srv.url, "POST", f"/api/games/{gid}/move", body)[0] == 200  # no page: the idle limit applies
        assert table.session.agents_to_act and table.session.moves < end["move_index"] + 4
    finally:
        srv.stop()


def test_sockets_count_towards_the_connection_cap(tmp_path: Path) -> None:
    """With a cap of 2, two live sockets make a third connection get the JSON 503; closing one frees its place."""
    srv = make_server("127.0.0.1", 0, games=tmp_path / "games", limits=Limits(connections=2)).start()
    try:
        gid, st = new_game(srv.url)
        time.sleep(0.2)  # the new game's connection has closed
        sockets = [live(srv.url, gid, since=st["n_events"]) for _ in range(2)]
        refused = WS.connect(srv.url, f"/api/games/{gid}/live")
        assert isinstance(refused, Refused) and refused.status == 503
        assert json.loads(refused.body)["error"].startswith("too many connections")
        sockets.pop().close()
        deadline = time.monotonic() + 10
        while not isinstance(ws := WS.connect(srv.url, f"/api/games/{gid}/live"), WS):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        ws.close()
        sockets[0].close()
    finally:
        srv.stop()


def test_a_socket_outlives_the_request_deadline(tmp_path: Path) -> None:
    """The request deadline (0.3 s here) is for an HTTP request to arrive: a live socket open for longer keeps
    playing."""
    srv = make_server("127.0.0.1", 0, games=tmp_path / "games", limits=Limits(request_timeout=0.3)).start()
    try:
        gid, st = new_game(srv.url, seed=4)
        ws = live(srv.url, gid, since=st["n_events"])
        _, state = until_your_turn(ws)
        time.sleep(0.8)
        ws.send_json({"type": "move", "move_index": state["move_index"], "n": 1})
        assert until_your_turn(ws)[1]["move_index"] > state["move_index"]
        ws.close()
    finally:
        srv.stop()
