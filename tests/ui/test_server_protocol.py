"""``krypenv serve`` at the protocol level: raw HTTP bytes on sockets, every refusal docs/SECURITY.md promises.

A grid of Host × Origin × method × Content-Type × body sends every combination and checks each
answer against the documented order of the checks (size, Host, Origin, method, Content-Type,
length; then the app), and that a refused request never reaches the app.  Then the framing attacks
(conflicting lengths, smuggling through ``Transfer-Encoding``, oversized heads) that h11 or the
guard refuse, and slow clients that the request deadline and the keep-alive limit drop.  The
WebSocket's own tests are in tests/ui/test_server_live.py.
"""

from __future__ import annotations

import itertools
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from krypenv.ui.guard import Limits
from krypenv.ui.server import make_server

pytest.importorskip("uvicorn", reason="the server needs the extra serve (pip install -e '.[serve]')")

LIMIT = 64  # the grid's server takes bodies of at most 64 bytes
GAME = b'{"players": 2, "agents": ["random"]}'  # a new game: 36 bytes, reaches the app only if nothing refuses it


class Answer:
    """A raw HTTP answer: status, headers by lower-case name, body, and whether the server closed the connection."""

    def __init__(self, data: bytes, closed: bool) -> None:
        head, _, self.body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ", 2)[1]) if lines[0].startswith("HTTP/") else 0
        self.headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        self.closed = closed

    def error(self) -> str:
        """The JSON error's message."""
        assert self.headers.get("content-type") == "application/json", (self.status, self.headers, self.body)
        return json.loads(self.body)["error"]


def connect(port: int, timeout: float = 10.0) -> socket.socket:
    """A TCP connection to the server on loopback."""
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def exchange(port: int, *parts: bytes, pause: float = 0.0, timeout: float = 10.0) -> Answer:
    """Send ``parts`` (``pause`` seconds apart) on a new connection; the answer read until the server closes (status
    0 when it reset the connection before an answer could be read: it closed while we were still sending)."""
    with connect(port, timeout) as s:
        data, closed = b"", False
        try:
            for k, part in enumerate(parts):
                if k and pause:
                    time.sleep(pause)
                s.sendall(part)
            while chunk := s.recv(65536):
                data += chunk
            closed = True
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            try:
                data += s.recv(65536)
            except OSError:
                pass
        except TimeoutError:
            pass
    return Answer(data, closed)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A server whose bodies are at most :data:`LIMIT` bytes."""
    srv = make_server("127.0.0.1", 0, games=tmp_path_factory.mktemp("protocol"), limits=Limits(body=LIMIT)).start()
    yield srv
    srv.stop()


# ---------------------------------------------------------------- the grid
HOSTS = ["ip", "localhost", "foreign", "wrong-port", "missing"]
ORIGINS = ["none", "own", "other-local-name", "foreign", "null"]
METHODS = ["GET", "POST", "PUT", "OPTIONS"]
TYPES = ["none", "json", "text"]
BODIES = ["none", "small", "over", "chunked"]


def request(port: int, host: str, origin: str, method: str, ctype: str, body: str) -> bytes:
    """The raw request of one cell of the grid (``Connection: close``: the server closes after its answer)."""
    own = {"ip": f"127.0.0.1:{port}", "localhost": f"localhost:{port}"}
    sent_host = {**own, "foreign": f"evil.example:{port}", "wrong-port": "127.0.0.1:1", "missing": None}[host]
    reached = sent_host if host in own else own["ip"]
    other = own["localhost"] if reached == own["ip"] else own["ip"]
    sent_origin = {"none": None, "own": f"http://{reached}", "other-local-name": f"http://{other}",
                   "foreign": "http://evil.example", "null": "null"}[origin]
    path = "/api/meta" if method == "GET" else "/api/games"
    lines = [f"{method} {path} HTTP/1.1"]
    lines += [f"Host: {sent_host}"] if sent_host else []
    lines += [f"Origin: {sent_origin}"] if sent_origin else []
    types = {"none": [], "json": ["Content-Type: application/json"], "text": ["Content-Type: text/plain"]}
    lines += types[ctype]
    data = {"none": b"", "small": GAME, "over": b"{" + b" " * (LIMIT - 1) + b"}", "chunked": b""}[body]
    if body == "chunked":
        lines.append("Transfer-Encoding: chunked")
        data = b"%x\r\n%s\r\n0\r\n\r\n" % (len(GAME), GAME)
    elif body != "none":
        lines.append(f"Content-Length: {len(data)}")
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def expected(host: str, origin: str, method: str, ctype: str, body: str) -> tuple[int, str]:
    """The documented answer: the first check that fails (status, words of its error); (200, "") when none does.

    An HTTP/1.1 request without Host is h11's to refuse (its plain-text 400, before the guard); the rest are the
    guard's JSON errors, in the order of its checks.
    """
    if host == "missing":
        return 400, "Invalid HTTP request received."
    if host in ("foreign", "wrong-port"):
        return 403, "does not name this server"
    if origin in ("other-local-name", "foreign", "null"):
        return 403, "are refused: only this server's own page"
    if method not in ("GET", "POST"):
        return 405, f"{method} is not allowed: the server takes GET and POST"
    if method == "POST":
        if ctype != "json":
            return 415, "must be JSON with Content-Type: application/json"
        if body == "chunked":
            return 411, "a chunked body is refused"
        if body == "none":
            return 411, "a POST needs a Content-Length header"
        if body == "over":
            return 413, f"request body of {LIMIT + 1} bytes is over the limit of {LIMIT}"
    return 200, ""


GRID = list(itertools.product(HOSTS, ORIGINS, METHODS, TYPES, BODIES))


@pytest.mark.parametrize("host,origin,method,ctype,body", GRID, ids=["-".join(cell) for cell in GRID])
def test_every_combination_is_answered_where_the_docs_say(server: Any, host: str, origin: str, method: str,
                                                         ctype: str, body: str) -> None:
    """Each cell gets the status and JSON error of the first documented check it fails, with the security headers and
    no CORS grant; a refused request is closed and never reaches the app (no game is made); one that passes every
    check is the app's (a POST makes exactly one game)."""
    games = len(server.app.store.tables)
    answer = exchange(server.port, request(server.port, host, origin, method, ctype, body))
    status, words = expected(host, origin, method, ctype, body)
    assert answer.status == status, (answer.status, answer.body[:200])
    assert not any(name.startswith("access-control-") for name in answer.headers)
    assert answer.closed
    made = len(server.app.store.tables) - games
    if words.startswith("Invalid HTTP"):  # refused by h11: the app never ran
        assert answer.body.decode() == words and made == 0
        return
    assert answer.headers["cache-control"] == "no-store" and answer.headers["x-content-type-options"] == "nosniff"
    assert "default-src 'self'" in answer.headers["content-security-policy"]
    if status == 200:
        out = json.loads(answer.body)
        assert ("games" in out) if method == "GET" else (out["state"]["players"] == 2 and made == 1)
    else:
        assert words in answer.error() and made == 0
        assert (answer.headers.get("allow") == "GET, POST") == (status == 405)


# ---------------------------------------------------------------- framing
def post(port: int, *headers: str, body: bytes = GAME, path: str = "/api/games") -> bytes:
    """A POST with the given extra header lines (Host, JSON type and ``Connection: close`` added)."""
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json", *headers,
             "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def test_conflicting_lengths_are_refused_by_h11_before_the_app(server: Any) -> None:
    """Two different Content-Length values (in two headers or one list) or a non-number: h11's 400, the connection
    closed, no game made; the same length twice is one length."""
    games = len(server.app.store.tables)
    for lengths in (("Content-Length: 36", "Content-Length: 10"), ("Content-Length: 36, 10",),
                    ("Content-Length: 0x24",), ("Content-Length: +36",)):
        answer = exchange(server.port, post(server.port, *lengths))
        assert answer.status == 400 and answer.closed and b"Invalid HTTP request" in answer.body, lengths
    assert len(server.app.store.tables) == games
    answer = exchange(server.port, post(server.port, "Content-Length: 36", "Content-Length: 36"))
    assert answer.status == 200 and len(server.app.store.tables) == games + 1


def test_a_request_smuggled_behind_transfer_encoding_is_never_answered(server: Any) -> None:
    """CL.TE smuggling: a body framed both ways whose chunked end hides a second request.  The guard refuses any
    Transfer-Encoding (411) and closes the connection, so the hidden request is never read as one; a
    Transfer-Encoding other than chunked is h11's 400."""
    hidden = f"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    body = b"0\r\n\r\n" + hidden
    answer = exchange(server.port, post(server.port, f"Content-Length: {len(body)}", "Transfer-Encoding: chunked",
                                        body=body))
    assert answer.status == 411 and answer.closed and answer.body.count(b"HTTP/1.1") == 0
    assert "a chunked body is refused" in answer.error()
    for coding in ("gzip", "chunked, gzip", "identity"):
        answer = exchange(server.port, post(server.port, f"Transfer-Encoding: {coding}", "Content-Length: 36"))
        assert answer.status == 400 and answer.closed, coding


@pytest.mark.parametrize("pieces", [1, 2, 40])
def test_heads_over_the_limit_are_refused_however_they_arrive(server: Any, pieces: int) -> None:
    """A head (target and headers) over 16 KiB, whether it arrives at once (the guard's 431) or in pieces (h11's
    400: it buffers at most 16 KiB of an unfinished head), is refused and closed; one just under is served."""
    limit = Limits().head
    for size, served in ((limit - 200, True), (limit + 1, False), (4 * limit, False)):
        head = (f"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-Pad: {'a' * size}\r\n"
                f"Connection: close\r\n\r\n").encode()
        step = -(-len(head) // pieces)
        answer = exchange(server.port, *(head[k:k + step] for k in range(0, len(head), step)), pause=0.01)
        assert (answer.status == 200) == served and answer.closed, (size, pieces, answer.status)
        if not served:  # h11's 400, the guard's 431, or a reset while the rest was still being sent
            assert answer.status in (0, 400, 431)
            assert answer.status != 431 or "over the limit of 16384" in answer.error()
    long_target = f"GET /api/meta?{'q' * limit} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    assert exchange(server.port, long_target).status == 431


@pytest.mark.parametrize("data,status", [
    (b"GET /api/meta HTTP/1.1\r\nHost: HOST\r\nX-A: a\x00b\r\n\r\n", 400),  # a NUL in a header value
    (b"GET /api/meta HTTP/1.1\r\nHost: HOST\r\nHost: HOST\r\n\r\n", 400),  # two Hosts
    (b"GET /api/meta HTTP/1.1\r\nHost: HOST\r\nBad Name: x\r\n\r\n", 400),  # a space in a field name
    (b"GET /api/meta HTTP/1.0\r\n\r\n", 400),  # no Host at all (the guard: a JSON 400)
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400),  # a TLS ClientHello: not HTTP
    (b"GARBAGE\r\n\r\n", 400),
])
def test_malformed_requests_are_400s_and_closed(server: Any, data: bytes, status: int) -> None:
    """What is not an HTTP/1.x request h11 accepts, or one with no Host, is a 400 and the connection is closed."""
    answer = exchange(server.port, data.replace(b"HOST", f"127.0.0.1:{server.port}".encode()))
    assert answer.status == status and answer.closed


def test_pipelined_requests_are_answered_in_order(server: Any) -> None:
    """Two requests in one write: two answers, in order, on the one connection."""
    host = f"Host: 127.0.0.1:{server.port}\r\n".encode()
    with connect(server.port) as s:
        s.sendall(b"GET /api/meta HTTP/1.1\r\n" + host + b"\r\nGET /api/replay HTTP/1.1\r\n" + host
                  + b"Connection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert data.count(b"HTTP/1.1 200 OK") == 2 and data.index(b'"games"') < data.index(b'{"files"')


# ---------------------------------------------------------------- slow clients
@pytest.fixture
def quick(tmp_path: Path) -> Iterator[Any]:
    """A server with a half-second request deadline and a 0.3 s keep-alive."""
    srv = make_server("127.0.0.1", 0, games=tmp_path / "games",
                      limits=Limits(request_timeout=0.5, keep_alive=0.3, body=LIMIT)).start()
    yield srv
    srv.stop()


def closed_after(port: int, parts: list[bytes], pause: float) -> tuple[float, bytes]:
    """Trickle ``parts`` ``pause`` seconds apart until the server closes; (seconds until closed, what it answered)."""
    start = time.monotonic()
    with connect(port, timeout=30) as s:
        try:
            for part in parts:
                s.sendall(part)
                time.sleep(pause)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            data = s.recv(65536)
            while chunk := s.recv(65536):
                data += chunk
        except ConnectionResetError:
            data = b""
    return time.monotonic() - start, data


def test_a_trickled_head_is_dropped_at_the_deadline(quick: Any) -> None:
    """A client that sends its headers a byte every 50 ms (never silent long) is closed when the request deadline
    (0.5 s) passes, unanswered, long before its 10 s of trickle; the server goes on serving."""
    head = f"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1:{quick.port}\r\nX-Slow: {'a' * 150}\r\n\r\n".encode()
    took, data = closed_after(quick.port, [head[k:k + 1] for k in range(len(head))], 0.05)
    assert data == b"" and 0.4 < took < 5.0, (took, data[:100])
    assert exchange(quick.port, head.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n")).status == 200


def test_the_deadline_starts_again_after_each_answer(quick: Any) -> None:
    """On a kept-alive connection the next request has its own deadline from the previous answer: trickled, it is
    dropped too (the keep-alive limit does not apply once bytes come)."""
    head = f"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1:{quick.port}\r\n\r\n".encode()
    with connect(quick.port, timeout=30) as s:
        s.sendall(head)
        data = b""
        while b'"default_game"' not in data:
            data += s.recv(65536)
        start = time.monotonic()
        try:
            for k in range(len(head) * 4):
                s.sendall(b"GET /api/meta HTTP/1.1\r\nX: "[k:k + 1] or b"a")
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert s.recv(65536) == b"" and 0.4 < time.monotonic() - start < 5.0


def test_a_trickled_body_is_dropped_at_the_deadline(quick: Any) -> None:
    """Headers on time, then a body a byte every 50 ms: closed at the deadline, no answer, no game made."""
    body = b'{"players": 2, "agents": ["random"]}'
    head = post(quick.port, f"Content-Length: {len(body)}", body=b"")
    took, data = closed_after(quick.port, [head, *(body[k:k + 1] for k in range(len(body)))], 0.05)
    assert data == b"" and 0.4 < took < 5.0 and quick.app.store.tables == {}


def test_an_idle_keep_alive_connection_is_closed(quick: Any) -> None:
    """After an answer, a connection kept alive and silent is closed after the keep-alive limit (0.3 s)."""
    with connect(quick.port) as s:
        s.sendall(f"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1:{quick.port}\r\n\r\n".encode())
        start, data = time.monotonic(), b""
        while chunk := s.recv(65536):
            data += chunk
        assert data.startswith(b"HTTP/1.1 200") and 0.2 < time.monotonic() - start < 5.0


def test_the_deadline_bounds_arrival_not_the_answer(quick: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A request that arrived in time is answered however long the agents take (here 2 × 0.4 s, past the 0.5 s
    deadline): the deadline is for the request to arrive, not for the app to answer."""
    from krypenv.ui.session import Session

    advance = Session.advance

    def slow(self: Session, max_moves: int | None = None) -> None:
        time.sleep(0.4)
        advance(self, max_moves)

    monkeypatch.setattr(Session, "advance", slow)
    body = b'{"players": 3, "seed": 4, "agents": ["random"], "seat": 2}'  # seats 0 and 1 play first
    answer = exchange(quick.port, post(quick.port, f"Content-Length: {len(body)}", body=body), timeout=30)
    assert answer.status == 200 and json.loads(answer.body)["state"]["your_turn"]


def test_connections_past_the_cap_are_refused_at_once_and_counted_again_when_closed(tmp_path: Path) -> None:
    """With a cap of 3, three open connections (idle or mid-request) make a fourth get the JSON 503 at once, before it
    sends a byte; once one closes, a new one is served."""
    srv = make_server("127.0.0.1", 0, games=tmp_path / "games", limits=Limits(connections=3)).start()
    try:
        held = [connect(srv.port) for _ in range(3)]
        held[0].sendall(b"GET /api/meta HTTP/1.1\r\n")
        time.sleep(0.3)
        with connect(srv.port) as s:
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        answer = Answer(data, True)
        assert answer.status == 503 and "too many connections" in answer.error()
        assert answer.headers["retry-after"] == "2" and answer.headers["cache-control"] == "no-store"
        held.pop().close()
        deadline = time.monotonic() + 10
        while (status := exchange(srv.port, f"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n"
                                            "Connection: close\r\n\r\n".encode()).status) != 200:
            assert status == 503 and time.monotonic() < deadline
            time.sleep(0.05)
        for s in held:
            s.close()
    finally:
        srv.stop()


def test_a_client_gone_before_its_move_is_played_stops_the_agents(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that sends its move and hangs up at once (it is gone before the server waits for the agents, each
    of whose five moves takes 0.3 s): the move is played, the agents stop after the move in progress."""
    from krypenv.ui.session import Session

    advance = Session.advance

    def slow(self: Session, max_moves: int | None = None) -> None:
        time.sleep(0.3)
        advance(self, max_moves)

    srv = make_server("127.0.0.1", 0, games=tmp_path / "games").start()
    try:
        body = b'{"players": 6, "seed": 2, "agents": ["random"]}'
        answer = exchange(srv.port, post(srv.port, f"Content-Length: {len(body)}", body=body))
        st = json.loads(answer.body)["state"]
        table = srv.app.store.get(json.loads(answer.body)["id"])
        monkeypatch.setattr(Session, "advance", slow)
        move = json.dumps({"n": 1, "move_index": st["move_index"]}).encode()
        with connect(srv.port) as s:
            s.sendall(post(srv.port, f"Content-Length: {len(move)}", body=move, path=f"/api/games/{table.gid}/move"))
        deadline = time.monotonic() + 30
        while table.session.moves == st["move_index"] or table.thinking:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert table.session.agents_to_act and table.session.moves < st["move_index"] + 6
    finally:
        srv.stop()
