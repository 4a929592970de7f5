"""``krypenv serve``'s JSON API on a real socket: a whole game, replays, and bad requests that change nothing."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from krypenv.ui.server import make_server


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server on a free localhost port, records written under a temporary folder."""
    import os

    old = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("serve"))
    server = make_server("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    os.chdir(old)


def call(base: str, method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
    """(status, decoded JSON) of one request."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize("game,players", [("krypkasino", 2), ("kungsholmskille", 3)])
def test_whole_game_then_its_replay(base: str, game: str, players: int) -> None:
    """Play every first legal move to the end; the page only ever gets its own hand; the replay has every frame."""
    status, out = call(base, "POST", "/api/games", {"game": game, "players": players, "seed": 7,
                                                    "agents": ["random"]})
    assert status == 200, out
    gid, st = out["id"], out["state"]
    while not st["over"]:
        assert st["hands"] is None and st["hand"] is not None and st["legal"]
        status, out = call(base, "POST", f"/api/games/{gid}/move", {"n": 1})
        assert status == 200, out
        st = out["state"]
    assert st["results"] and st["legal"] == []
    status, rep = call(base, "GET", f"/api/games/{gid}/replay")
    assert status == 200 and rep["id"] == f"game-{gid}" and len(rep["deals"]) == 1
    status, deal = call(base, "GET", f"/api/replay/{rep['id']}/0")
    assert status == 200 and len(deal["frames"]) == len(deal["moves"]) + 1
    assert all(len(f["hands"]) == players for f in deal["frames"])


def test_bad_requests_answer_json_errors_and_change_nothing(base: str) -> None:
    """Illegal move, unknown id, malformed JSON, wrong fields, unparsable records: 4xx with an error; state kept."""
    _, out = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "seed": 1, "agents": "greedy"})
    gid = out["id"]
    before = call(base, "GET", f"/api/games/{gid}")[1]["state"]
    n_legal = len(before["legal"])
    cases = [
        ("POST", f"/api/games/{gid}/move", {"n": n_legal + 1}, 400, "no move"),
        ("POST", f"/api/games/{gid}/move", {"key": "ks qs"}, 400, ""),
        ("POST", f"/api/games/{gid}/move", {}, 400, "needs n"),
        ("POST", f"/api/games/{gid}/move", {"n": "x"}, 400, "integer"),
        ("POST", "/api/games/nope/move", {"n": 1}, 404, "unknown game id"),
        ("GET", "/api/games/nope", None, 404, "unknown game id"),
        ("POST", "/api/games", {"game": "poker"}, 400, "unknown game"),
        ("POST", "/api/games", {"game": "krypkasino", "players": 9}, 400, "players must be"),
        ("POST", "/api/games", {"game": "krypkasino", "agents": ["nobody"]}, 400, "unknown agent"),
        ("GET", "/api/replay/nope", None, 404, "unknown replay id"),
        ("GET", "/api/nothing", None, 404, "no API route"),
        ("GET", "/static/../server.py", None, 404, "no page"),
    ]
    for method, path, body, status, words in cases:
        got, out = call(base, method, path, body)
        assert got == status and words in out["error"], (path, body, got, out)
    got, out = call(base, "POST", f"/api/games/{gid}/move", raw=b"{not json")
    assert got == 400 and "malformed JSON" in out["error"]
    got, out = call(base, "POST", f"/api/games/{gid}/move", raw=b"[1, 2]")
    assert got == 400 and "JSON object" in out["error"]
    got, out = call(base, "POST", "/api/replay", raw=b'{"game": "krypkasino", "moves": []}\nnot json\n')
    assert got == 400 and "no game record" in out["error"] and ":2: bad JSON" in out["error"]
    assert call(base, "GET", f"/api/games/{gid}")[1]["state"] == before  # nothing changed
    assert call(base, "POST", f"/api/games/{gid}/move", {"n": 1})[0] == 200  # and the server still plays


def test_replay_upload_keeps_good_records_and_lists_bad_ones(base: str, tmp_path: Path) -> None:
    """An uploaded file with one bad line: the good records open, the bad one is named with its line."""
    from krypenv.ui.session import Session

    s = Session("krypkasino", 2, ["random"], seed=3, record=tmp_path / "r.jsonl")
    while not s.over:
        s.play(0)
    text = (tmp_path / "r.jsonl").read_text() + '{"game": "kungsholmskille"}\n'
    got, out = call(base, "POST", "/api/replay?name=mine.jsonl", raw=text.encode())
    assert got == 200 and len(out["deals"]) == 1 and out["errors"][0].startswith("mine.jsonl:2: missing key")
    got, hint = call(base, "GET", "/api/meta")
    assert got == 200 and hint["games"]["krypkasino"]["hint"] == "pimc" and "random" in hint["games"]["kungsholmskille"]["agents"]


def test_hint_over_the_api(base: str) -> None:
    """The hint names a legal move by its number."""
    _, out = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "seed": 5, "agents": ["expert"]})
    got, h = call(base, "POST", f"/api/games/{out['id']}/hint", {"spec": "expert"})
    assert got == 200 and 1 <= h["best"]["n"] <= len(out["state"]["legal"]) and h["kind"] == "votes"


def test_root_answers_without_crashing(base: str) -> None:
    """GET / serves the page, or a clear JSON 404 where the page's static files are absent."""
    req = urllib.request.Request(base + "/")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            assert resp.status == 200 and b"<html" in resp.read().lower()
    except urllib.error.HTTPError as exc:
        assert exc.code == 404 and "JSON API is under /api/" in json.loads(exc.read())["error"]
