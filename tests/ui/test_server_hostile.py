"""``krypenv serve`` against hostile clients: no code from a request, no other site at the table, bounded everything.

Each test sends what a hostile local user or web page sent in the security trial (issue
"Safe to serve") and checks that nothing runs, nothing is lost and the server keeps serving.
"""

from __future__ import annotations

import base64
import json
import pickle
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from krypenv.ui.guard import Limits
from krypenv.ui.server import make_server, port_number
from krypenv.ui.store import Store
from tests.ui.client import call, move

pytest.importorskip("uvicorn", reason="the server needs the extra serve (pip install -e '.[serve]')")


class Boom:
    """A pickle that, when loaded, creates a marker file (what a crafted checkpoint did with os.system)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.marker,))


def crafted_checkpoint(folder: Path, marker: Path) -> Path:
    """An SB3-style zip whose ``data`` holds a ``:serialized:`` pickle that touches ``marker`` when loaded."""
    import zipfile

    payload = base64.b64encode(pickle.dumps(Boom(marker))).decode()
    path = folder / "evil.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", json.dumps({"observation_space": {":type:": "x", ":serialized:": payload}}))
        zf.writestr("policy.pth", b"")
        zf.writestr("krypenv.json", json.dumps({"format": "krypenv-ppo/1", "game": "krypkasino", "players": 2}))
    return path


def serve(folder: Path, limits: Limits | None = None, **store: Any) -> tuple[Any, str]:
    """A server on a free port with records under ``folder`` (store limits from ``store``); (server, base URL)."""
    server = make_server("127.0.0.1", 0, games=folder, store=Store(folder, **store) if store else None,
                         limits=limits).start()
    return server, server.url


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server shared by the tests that change no limits."""
    server, url = serve(tmp_path_factory.mktemp("hostile") / "games")
    yield url
    server.stop()


def raw(base: str, data: bytes, wait: float = 30.0) -> bytes:
    """Send raw bytes on a new connection; everything the server answers before it closes."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as s:
        s.sendall(data)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out


def status_of(answer: bytes) -> int:
    """The status code of a raw HTTP answer."""
    return int(answer.split(b" ", 2)[1])


def headers_of(answer: bytes) -> dict[str, str]:
    """The header fields of a raw HTTP answer by lower-case name (HTTP's field names are case-insensitive)."""
    head = answer.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]
    return {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in head)}


# ---------------------------------------------------------------- 1-2: no code from a request
@pytest.mark.parametrize("where", ["agents", "pimc-policy", "hint"])
def test_checkpoint_paths_are_never_loaded_nor_probed(base: str, tmp_path: Path, where: str) -> None:
    """A crafted checkpoint named by path (as an opponent, a pimc rollout policy or a hint) is never opened: the
    marker its pickle would create stays absent, and the answer for an existing file equals that for a missing one."""
    marker = tmp_path / "pwned"
    evil = crafted_checkpoint(tmp_path, marker)
    answers = []
    for path in (evil, tmp_path / "missing.zip"):
        spec = {"agents": f"ppo:{path}", "pimc-policy": f"pimc:policy=ppo:{path}", "hint": f"ppo:{path}"}[where]
        if where == "hint":
            _, out = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "agents": ["random"]})
            got, err = call(base, "POST", f"/api/games/{out['id']}/hint", {"spec": spec})
        else:
            got, err = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "agents": [spec]})
        assert got == 400 and "never a path" in err["error"], err
        answers.append(err["error"].replace(str(path), "PATH"))
    assert answers[0] == answers[1]  # nothing tells whether the file exists
    assert not marker.exists()
    got, err = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "agents": [f"rllib:{tmp_path}"]})
    assert got == 400 and "never a path" in err["error"]


@pytest.mark.parametrize("spec", ["this:x", "venv.__main__:x", "antigravity:fly", "os:system"])
def test_module_attr_specs_import_nothing(base: str, spec: str) -> None:
    """``module:attr`` over HTTP is refused before any import: the module's top-level code never runs."""
    module = spec.partition(":")[0]
    was_loaded = module in sys.modules
    got, err = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "agents": [spec]})
    assert got == 400 and "the server plays only the agents it offers" in err["error"]
    assert (module in sys.modules) == was_loaded


@pytest.mark.parametrize("spec,words", [
    ("pimc:samples=100000", "samples must be an integer from 1 to 256"),
    ("pimc:rollouts=1000", "rollouts must be an integer from 1 to 4"),
    ("pimc:z=nan", "z must be a number from 0 to 10"),
    ("pimc:threads=64", "option 'threads' cannot be set over the network"),
    ("champion:checkpoints=/tmp", "option 'checkpoints' cannot be set over the network"),
    ("pimc:policy=ppo:ppo-9p", "no ppo checkpoint named 'ppo-9p'"),
    ("x" * 300, "over the limit of 200"),
])
def test_search_budgets_and_options_are_bounded(base: str, spec: str, words: str) -> None:
    """Options outside the registered limits, or not declared for outside use, are 400s naming them."""
    got, err = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "agents": [spec]})
    assert got == 400 and words in err["error"], err
    _, out = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "agents": ["random"]})
    got, err = call(base, "POST", f"/api/games/{out['id']}/hint", {"spec": spec})
    assert got == 400 and words in err["error"], err


def test_offered_agents_and_named_checkpoints_play(base: str) -> None:
    """What /api/meta offers is accepted: a shipped checkpoint by name, and a bounded pimc over it."""
    meta = call(base, "GET", "/api/meta")[1]["games"]
    specs = [a["spec"] for a in meta["krypkasino"]["agents"]]
    assert "ppo:ppo-2p" in specs and "expert" in specs and not any("/" in s for s in specs)
    assert "ppo:kille-4p" in [a["spec"] for a in meta["kungsholmskille"]["agents"]]
    got, out = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "seed": 3,
                                                 "agents": ["ppo:ppo-2p"]})
    assert got == 200 and out["state"]["names"][1] == "seat 1 (ppo:ppo-2p)"
    got, h = call(base, "POST", f"/api/games/{out['id']}/hint", {"spec": "pimc:policy=ppo:ppo-2p,samples=4"})
    assert got == 200 and h["spec"] == "pimc:policy=ppo:ppo-2p,samples=4"


# ---------------------------------------------------------------- 3: no other site at the table
@pytest.mark.parametrize("headers,status,words", [
    ({"Origin": "http://evil.example"}, 403, "are refused"),
    ({"Origin": "null"}, 403, "are refused"),
    ({"Host": "evil.example:80"}, 403, "does not name this server"),
    ({"Host": "rebind.example"}, 403, "does not name this server"),
    ({"Content-Type": "text/plain"}, 415, "Content-Type: application/json"),
    ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "Content-Type: application/json"),
])
def test_other_sites_and_non_json_bodies_are_refused(base: str, headers: dict[str, str], status: int,
                                                     words: str) -> None:
    """A cross-origin page, a DNS-rebinding Host or a non-JSON body: refused, and no game is made."""
    body = {"game": "krypkasino", "players": 2, "agents": ["random"]}
    got, err = call(base, "POST", "/api/games", body, headers=headers)
    assert got == status and words in err["error"], err
    if "Host" in headers:
        got, err = call(base, "GET", "/api/meta", headers=headers)  # reads too: a rebinding page reads nothing
        assert got == status


def test_own_origin_and_local_names_are_served(base: str) -> None:
    """The page's own origin, by 127.0.0.1 or localhost, is served."""
    port = base.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        got, _ = call(base, "POST", "/api/games", {"players": 2, "agents": ["random"]},
                      headers={"Host": host, "Origin": f"http://{host}"})
        assert got == 200


# ---------------------------------------------------------------- 4: bounded bodies and sockets
@pytest.mark.parametrize("head,status", [
    (b"Content-Length: -1\r\n", 400),
    (b"Content-Length: 1e9\r\n", 400),
    (b"", 411),
    (b"Transfer-Encoding: chunked\r\n", 411),
    (f"Content-Length: {Limits().body + 1}\r\n".encode(), 413),
    (b"Content-Length: 99999999999999999999\r\n", 413),  # 20 digits: a number, over the limit
    (b"Content-Length: 99999999999999999999999999\r\n", 400),  # 26: h11 refuses lengths of over 20 digits as malformed
])
def test_body_lengths_are_checked_before_reading(base: str, head: bytes, status: int) -> None:
    """A missing, negative, malformed or oversized length is refused without reading a body."""
    req = (b"POST /api/games HTTP/1.1\r\nHost: " + base.removeprefix("http://").encode()
           + b"\r\nContent-Type: application/json\r\n" + head + b"Connection: close\r\n\r\n{}")
    assert status_of(raw(base, req)) == status


@pytest.mark.parametrize("text,words", [("[" * 100_000 + "]" * 100_000, "nested too deeply"),
                                        ('{"seed": ' + "7" * 5000 + "}", "malformed JSON")])
def test_deep_and_huge_json_are_400s(base: str, text: str, words: str) -> None:
    """100,000 nested lists and a 5,000-digit integer: a 400 naming the fault, never a 500."""
    got, err = call(base, "POST", "/api/games", raw=text.encode())
    assert got == 400 and words in err["error"], err


def test_other_methods_are_json_405s(base: str) -> None:
    """PUT, DELETE, PATCH and OPTIONS get a JSON 405 with Allow (and no CORS grant for a preflight)."""
    for method in ("PUT", "DELETE", "PATCH", "OPTIONS"):
        host = base.removeprefix("http://")
        answer = raw(base, f"{method} /api/games HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        head, body = headers_of(answer), answer.partition(b"\r\n\r\n")[2]
        assert status_of(answer) == 405 and head["allow"] == "GET, POST" and not any("access-control" in k
                                                                                    for k in head)
        assert "not allowed" in json.loads(body)["error"]


def test_a_silent_client_is_dropped(tmp_path: Path) -> None:
    """A connection that never finishes its request is closed after the socket time-out, freeing its thread."""
    server, url = serve(tmp_path / "games", Limits(request_timeout=0.5))
    try:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as s:
            s.sendall(b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-")  # and then nothing
            assert s.recv(100) == b""  # closed by the server, not by our 30 s time-out
        assert call(url, "GET", "/api/meta")[0] == 200
    finally:
        server.stop()


def test_connections_beyond_the_limit_get_503(tmp_path: Path) -> None:
    """Past the limit of requests handled at once, a new connection is answered 503 at once; then all is served."""
    server, url = serve(tmp_path / "games", Limits(connections=4))
    host, port = url.removeprefix("http://").split(":")
    idle = [socket.create_connection((host, int(port)), timeout=30) for _ in range(4)]
    try:
        for s in idle:
            s.sendall(b"GET /api/meta HTTP/1.1\r\n")  # unfinished: each holds a slot
        time.sleep(0.5)
        answer = raw(url, f"GET /api/meta HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        assert status_of(answer) == 503 and b"too many connections" in answer
    finally:
        for s in idle:
            s.close()
    deadline = time.monotonic() + 30
    while call(url, "GET", "/api/meta")[0] != 200:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    server.stop()


# ---------------------------------------------------------------- 5-9: games, records, moves
def test_a_repeated_move_is_applied_once(base: str) -> None:
    """The same move sent twice (same move_index): the second is a 409 and the game moved once."""
    _, out = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "seed": 12, "agents": ["random"]})
    gid, st = out["id"], out["state"]
    got, first = move(base, gid, st)
    assert got == 200
    got, err = move(base, gid, st)
    assert got == 409 and "nothing was played" in err["error"]
    assert call(base, "GET", f"/api/games/{gid}")[1]["state"]["move_index"] == first["state"]["move_index"]


def test_replay_of_a_game_in_progress_shows_no_hands(base: str) -> None:
    """The replay of a game opens only finished deals: while the first deal is on, a 409 and no frames."""
    _, out = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 3, "seed": 4, "agents": ["random"]})
    got, err = call(base, "GET", f"/api/games/{out['id']}/replay")
    assert got == 409 and "when the first deal is over" in err["error"] and "frames" not in err


def test_least_recently_used_game_goes_first_with_its_record(tmp_path: Path) -> None:
    """With room for 3 games, a 4th pushes out the least recently *used* one, after saving its partial record."""
    folder = tmp_path / "games"
    server, url = serve(folder, max_games=3)
    try:
        ids = [call(url, "POST", "/api/games", {"players": 2, "seed": k, "agents": ["random"]})[1]["id"]
               for k in range(3)]
        st = call(url, "GET", f"/api/games/{ids[0]}")[1]["state"]  # the oldest game is used again
        assert move(url, ids[0], st)[0] == 200
        call(url, "POST", "/api/games", {"players": 2, "seed": 9, "agents": ["random"]})
        assert call(url, "GET", f"/api/games/{ids[0]}")[0] == 200  # in play: kept
        assert call(url, "GET", f"/api/games/{ids[1]}")[0] == 404  # least recently used: dropped ...
        [saved] = folder.glob(f"web-krypkasino-*-{ids[1]}.jsonl")  # ... with its partial record saved
        [record] = [json.loads(line) for line in saved.read_text().splitlines()]
        assert "result" not in record or record["result"] is None
    finally:
        server.stop()


def test_records_folder_keeps_a_bounded_number_of_web_files(tmp_path: Path) -> None:
    """Beyond the limit the oldest web-* record files go; other files in the folder are never touched."""
    folder = tmp_path / "games"
    folder.mkdir()
    (folder / "mine.jsonl").write_text("{}\n")
    for k in range(6):
        old = folder / f"web-krypkasino-20200101-00000{k}-s{k}-old{k}.jsonl"
        old.write_text("{}\n")
    server, url = serve(folder, max_files=4)
    try:
        call(url, "POST", "/api/games", {"players": 2, "agents": ["random"]})
        left = sorted(p.name for p in folder.glob("web-*"))
        assert len(left) == 3 and "web-krypkasino-20200101-000005-s5-old5.jsonl" in left  # + the live game's = 4
        assert (folder / "mine.jsonl").exists()
    finally:
        server.stop()


def test_a_record_that_cannot_be_saved_is_reported_and_the_game_goes_on(tmp_path: Path) -> None:
    """``games`` is a file, so no record can be written: the deal's end says why, and the match goes on."""
    folder = tmp_path / "games"
    folder.write_text("not a folder")
    server, url = serve(folder)
    try:
        _, out = call(url, "POST", "/api/games", {"players": 2, "seed": 5, "deals": 2, "agents": ["random"]})
        gid, st = out["id"], out["state"]
        while st["deal_no"] == 0:
            got, out = move(url, gid, st)
            assert got == 200, out
            st = out["state"]
        assert st["record_error"] and "could not be saved" in st["record_error"]
        assert st["your_turn"] and st["legal"]  # deal 2 is on: not stuck
        assert move(url, gid, st)[0] == 200
    finally:
        server.stop()


def test_a_hint_for_a_client_that_went_away_is_dropped(tmp_path: Path) -> None:
    """A client that closes its connection during a hint cancels it: the votes stop long before all 12."""
    server, url = serve(tmp_path / "games")
    try:
        _, out = call(url, "POST", "/api/games", {"players": 2, "seed": 1, "agents": ["random"]})
        table = server.app.store.get(out["id"])
        adapter, calls = table.session.game, []
        real = adapter.agent_choice

        def slow_choice(agent: Any, stream: int) -> Any:
            calls.append(stream)
            time.sleep(0.3)
            return real(agent, stream)

        adapter.agent_choice = slow_choice
        host, port = url.removeprefix("http://").split(":")
        body = b'{"spec": "expert"}'
        with socket.create_connection((host, int(port)), timeout=30) as s:
            s.sendall(f"POST /api/games/{out['id']}/hint HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: "
                      f"application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
            time.sleep(0.5)
        deadline = time.monotonic() + 30
        while server.app.store.jobs._value < server.app.store.max_jobs:  # the job has ended
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert 1 <= len(calls) < 12
        got, h = call(url, "POST", f"/api/games/{out['id']}/hint", {"spec": "greedy"})  # the game is fine
        assert got == 200 and h["votes"] == 12
    finally:
        server.stop()


# ---------------------------------------------------------------- the command line
@pytest.mark.parametrize("text,ok", [("0", True), ("8000", True), ("65535", True), ("99999", False), ("-1", False),
                                     ("http", False)])
def test_port_numbers(text: str, ok: bool) -> None:
    """--port takes 0..65535; anything else is argparse's one-line usage error, not a traceback."""
    import argparse

    if ok:
        assert port_number(text) == int(text)
    else:
        with pytest.raises(argparse.ArgumentTypeError, match="a port is a number from 0 to 65535"):
            port_number(text)


def test_serve_on_ipv6_loopback(tmp_path: Path) -> None:
    """--host ::1 serves (where the machine has IPv6), answering by [::1] and localhost."""
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        server = make_server("::1", 0, games=tmp_path / "games")
    except OSError as exc:
        pytest.skip(f"cannot bind ::1 here: {exc}")
    server.start()
    try:
        port = server.port
        got, meta = call(f"http://[::1]:{port}", "GET", "/api/meta")
        assert got == 200 and "krypkasino" in meta["games"]
    finally:
        server.stop()


def test_web_errors_name_the_request_fields_not_command_line_flags(base: str) -> None:
    """A bad seating over HTTP names ``agents`` and ``seat``, the request's fields, not ``--agents``."""
    got, err = call(base, "POST", "/api/games", {"players": 3, "agents": ["human", "human", "random"]})
    assert got == 400 and err["error"].startswith("agents names 2 humans") and "--" not in err["error"]
    got, err = call(base, "POST", "/api/games", {"players": 3, "agents": ["random", "random", "random"]})
    assert got == 400 and "agents lists 3 opponents" in err["error"] and "--" not in err["error"]


def test_serving_beyond_this_machine_warns_on_the_terminal(tmp_path: Path) -> None:
    """``--host 0.0.0.0`` prints a warning that everyone who can reach the machine may play, without login."""
    import subprocess

    proc = subprocess.Popen([sys.executable, "-m", "krypenv.cli", "serve", "--host", "0.0.0.0", "--port", "0",
                             "--games", str(tmp_path / "games")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path)
    try:
        line = proc.stderr.readline()
        assert "warning: listening on 0.0.0.0" in line and "without any login" in line
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    bad = subprocess.run([sys.executable, "-m", "krypenv.cli", "serve", "--port", "99999"], capture_output=True,
                         text=True, check=False)
    assert bad.returncode == 2 and "a port is a number from 0 to 65535" in bad.stderr and "Traceback" not in bad.stderr


def test_a_game_whose_record_cannot_be_saved_is_never_dropped(tmp_path: Path) -> None:
    """With room for 2 games and a records folder that is a file, a 3rd game is refused (503) rather than dropping the
    least recently used one unsaved; both games play on."""
    folder = tmp_path / "games"
    folder.write_text("not a folder")
    server, url = serve(folder, max_games=2)
    try:
        ids = [call(url, "POST", "/api/games", {"players": 2, "seed": k, "agents": ["random"]})[1]["id"]
               for k in range(2)]
        got, err = call(url, "POST", "/api/games", {"players": 2, "seed": 9, "agents": ["random"]})
        assert got == 503 and "cannot save the oldest one's record" in err["error"]
        for gid in ids:
            st = call(url, "GET", f"/api/games/{gid}")[1]["state"]
            assert move(url, gid, st)[0] == 200
    finally:
        server.stop()


def test_agents_stop_for_a_client_that_went_away_and_resume_when_asked(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that hangs up while the agents play (each move 0.3 s here) stops them after the move in progress;
    the next GET of the game resumes them up to the person's turn."""
    from krypenv.ui.session import Session

    advance = Session.advance

    def slow_advance(self: Session, max_moves: int | None = None) -> None:
        time.sleep(0.3)
        advance(self, max_moves)

    monkeypatch.setattr(Session, "advance", slow_advance)
    server, url = serve(tmp_path / "games")
    try:
        _, out = call(url, "POST", "/api/games", {"players": 6, "seed": 2, "agents": ["random"]})
        gid, st = out["id"], out["state"]
        while st["thinking"]:
            st = call(url, "GET", f"/api/games/{gid}")[1]["state"]
        table = server.app.store.get(gid)
        host, port = url.removeprefix("http://").split(":")
        body = json.dumps({"n": 1, "move_index": st["move_index"]}).encode()
        with socket.create_connection((host, int(port)), timeout=30) as s:  # 5 agents to play: about 1.5 s
            s.sendall(f"POST /api/games/{gid}/move HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: "
                      f"application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
            time.sleep(0.4)
        deadline = time.monotonic() + 30
        while table.thinking:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert table.session.agents_to_act  # stopped before the person's turn came round
        stopped_at = table.session.moves
        st = call(url, "GET", f"/api/games/{gid}")[1]["state"]  # asked again: the agents go on
        while st["thinking"]:
            st = call(url, "GET", f"/api/games/{gid}")[1]["state"]
        assert st["your_turn"] and st["move_index"] > stopped_at
    finally:
        server.stop()


@pytest.mark.parametrize("body,words", [({"txt": "x"}, "unknown field(s) 'txt'"), ({"text": 5}, "a records upload is"),
                                        ({"name": "a.jsonl"}, "a records upload is")])
def test_a_records_upload_takes_name_and_text_only(base: str, body: dict[str, Any], words: str) -> None:
    """An upload is ``{name, text}``: another field or a text that is not a string is a 400 naming it."""
    got, err = call(base, "POST", "/api/replay", body)
    assert got == 400 and words in err["error"], err


def test_serve_without_its_extra_stops_at_once_naming_it(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Without uvicorn (or starlette, or wsproto) installed, ``krypenv serve`` prints one line naming the extra
    ``serve`` and how to install it, and exits 1 before it loads or binds anything."""
    import importlib.util

    from krypenv import cli
    from krypenv.ui import server

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a))

    def never(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("make_server was reached")

    monkeypatch.setattr(server, "make_server", never)
    with pytest.raises(ValueError, match=r"needs the extra 'serve' \(missing: uvicorn\); install it with pip install "
                                         r"'krypenv\[serve\]'"):
        server.require_stack()
    assert cli.main(["serve", "--port", "0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("krypenv serve: error: krypenv serve needs the extra 'serve'") and "Traceback" not in err
