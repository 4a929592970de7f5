"""``krypenv serve``'s JSON API on a real socket: a whole game, replays, and bad requests that change nothing."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from krypenv.ui.server import make_server
from tests.ui.client import call, move

pytest.importorskip("uvicorn", reason="the server needs the extra serve (pip install -e '.[serve]')")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server on a free localhost port, records written under a temporary folder."""
    import os

    old = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("serve"))
    server = make_server("127.0.0.1", 0).start()
    yield server.url
    server.stop()
    os.chdir(old)


@pytest.mark.parametrize("game,players", [("krypkasino", 2), ("kungsholmskille", 3)])
def test_whole_game_then_its_replay(base: str, game: str, players: int) -> None:
    """Play every first legal move to the end; the page only ever gets its own hand; the replay has every frame."""
    status, out = call(base, "POST", "/api/games", {"game": game, "players": players, "seed": 7,
                                                    "agents": ["random"]})
    assert status == 200, out
    gid, st = out["id"], out["state"]
    while not st["over"]:
        assert st["hands"] is None and st["hand"] is not None and st["legal"]
        status, out = move(base, gid, st)
        assert status == 200, out
        assert len(out["state"]["events"]) == out["state"]["n_events"] - st["n_events"] > 0  # only the new ones
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
    n_legal, at = len(before["legal"]), before["move_index"]
    cases = [
        ("POST", f"/api/games/{gid}/move", {"n": n_legal + 1, "move_index": at}, 400, "no move"),
        ("POST", f"/api/games/{gid}/move", {"key": "ks qs", "move_index": at}, 400, ""),
        ("POST", f"/api/games/{gid}/move", {"move_index": at}, 400, "needs n"),
        ("POST", f"/api/games/{gid}/move", {"n": 1}, 400, "needs move_index"),
        ("POST", f"/api/games/{gid}/move", {"n": "x", "move_index": at}, 400, "integer"),
        ("POST", f"/api/games/{gid}/move", {"n": 1, "move_index": at + 1}, 409, "nothing was played"),
        ("POST", f"/api/games/{gid}/move", {"n": 1, "move_index": at, "m": 2}, 400, "unknown field(s) 'm'"),
        ("POST", "/api/games/nope/move", {"n": 1, "move_index": 0}, 404, "unknown game id"),
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
    got, out = call(base, "POST", "/api/replay", {"text": '{"game": "krypkasino", "moves": []}\nnot json\n'})
    assert got == 400 and "no game record" in out["error"] and ":2: bad JSON" in out["error"]
    assert call(base, "GET", f"/api/games/{gid}")[1]["state"] == before  # nothing changed
    assert move(base, gid, before)[0] == 200  # and the server still plays


def test_replay_upload_keeps_good_records_and_lists_bad_ones(base: str, tmp_path: Path) -> None:
    """An uploaded file with one bad line: the good records open, the bad one is named with its line."""
    from krypenv.ui.session import Session

    s = Session("krypkasino", 2, ["random"], seed=3, record=tmp_path / "r.jsonl")
    while not s.over:
        s.play(0)
    text = (tmp_path / "r.jsonl").read_text() + '{"game": "kungsholmskille"}\n'
    got, out = call(base, "POST", "/api/replay", {"name": "mine.jsonl", "text": text})
    assert got == 200 and len(out["deals"]) == 1 and out["errors"][0].startswith("mine.jsonl:2: missing key")
    got, hint = call(base, "GET", "/api/meta")
    offered = [a["spec"] for a in hint["games"]["kungsholmskille"]["agents"]]
    assert got == 200 and hint["games"]["krypkasino"]["hint"] == "champion" and "random" in offered


def test_hint_over_the_api(base: str) -> None:
    """The hint names a legal move by its number."""
    _, out = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "seed": 5, "agents": ["expert"]})
    got, h = call(base, "POST", f"/api/games/{out['id']}/hint", {"spec": "expert"})
    assert got == 200 and 1 <= h["best"]["n"] <= len(out["state"]["legal"]) and h["kind"] == "votes"


def test_the_default_hint_is_the_strongest_search_that_plays_the_table(base: str) -> None:
    """No spec: champion at a standard table (issue 40), pimc at a tiny one (champion plays the standard preset
    only) and at a Kungsholmskille table."""
    for rules, want in ((None, "champion"), ({"preset": "tiny"}, "pimc")):
        body = {"game": "krypkasino", "players": 2, "seed": 5, "agents": ["expert"], "rules": rules}
        _, out = call(base, "POST", "/api/games", body)
        got, h = call(base, "POST", f"/api/games/{out['id']}/hint", {})
        assert got == 200 and h["spec"] == want and 1 <= h["best"]["n"] <= len(out["state"]["legal"]), h
    body = {"game": "kungsholmskille", "players": 4, "seed": 5, "agents": ["expert"]}
    _, out = call(base, "POST", "/api/games", body)
    while not out["state"]["legal"]:  # the person's turn
        out = call(base, "GET", f"/api/games/{out['id']}")[1]
    got, h = call(base, "POST", f"/api/games/{out['id']}/hint", {})
    assert got == 200 and h["spec"] == "pimc", h


def test_root_answers_without_crashing(base: str) -> None:
    """GET / serves the page, or a clear JSON 404 where the page's static files are absent."""
    req = urllib.request.Request(base + "/")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            assert resp.status == 200 and b"<html" in resp.read().lower()
    except urllib.error.HTTPError as exc:
        assert exc.code == 404 and "JSON API is under /api/" in json.loads(exc.read())["error"]


def test_team_game_rules_reach_the_record(base: str) -> None:
    """``rules`` with K18 teams, K8 spades and K17: the state names the teams, the record keeps every rule.

    A 2v2 game (teams {0,2} {1,3}) played to the end: ``team_totals`` are the sums of the seats'
    totals (K18), and the deal sums to 43 with the last-capture point (K16, K17).
    """
    rules = {"teams": [[0, 2], [1, 3]], "set_aside": "spades", "last_capture_point": True}
    status, out = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 4, "seed": 8101,
                                                    "agents": ["greedy"], "rules": rules})
    assert status == 200, out
    gid, st = out["id"], out["state"]
    assert st["teams"] == [[0, 2], [1, 3]] and st["rules"]["set_aside"] == "spades"
    while not st["over"]:
        status, out = move(base, gid, st)
        assert status == 200, out
        st = out["state"]
    totals = st["totals"]
    assert st["team_totals"] == [totals[0] + totals[2], totals[1] + totals[3]]
    [path] = Path("games").glob("web-krypkasino-*-s8101-*.jsonl")  # the fixture's folder; this test's seed only
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["rules"] == {"players": 4, "teams": [[0, 2], [1, 3]], "two_player_deal": "6+4",
                               "set_aside": "spades", "last_capture_point": True}
    assert record["result"]["scores"] == totals and sum(totals) == 43


def test_preset_game_reaches_the_record(base: str) -> None:
    """K22: ``rules.preset`` "tiny" deals the 8-card deck; the record carries its keys and replays (K20, K21)."""
    status, out = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "seed": 8202,
                                                    "agents": ["expert"], "rules": {"preset": "tiny"}})
    assert status == 200, out
    gid, st = out["id"], out["state"]
    assert st["rules"]["hand"] == 3 and st["rules"]["copies"] == 1 and len(st["hand"]) == 3
    while not st["over"]:
        status, out = move(base, gid, st)
        assert status == 200, out
        st = out["state"]
    [path] = Path("games").glob("web-krypkasino-*-s8202-*.jsonl")
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(record["deck"]) == 8 and len(record["moves"]) == 6 and sum(record["result"]["scores"]) == 7
    status, rep = call(base, "GET", f"/api/games/{gid}/replay")
    assert status == 200
    status, deal = call(base, "GET", f"/api/replay/{rep['id']}/0")
    assert status == 200 and len(deal["frames"]) == 7


@pytest.mark.parametrize("players,teams,expected", [(4, 2, [[0, 2], [1, 3]]), (6, 2, [[0, 2, 4], [1, 3, 5]]),
                                                    (6, 3, [[0, 3], [1, 4], [2, 5]]), (6, [[1, 4], [2, 5], [0, 3]],
                                                                                       [[0, 3], [1, 4], [2, 5]]),
                                                    (3, None, None)])
def test_teams_as_a_number_or_seat_lists(base: str, players: int, teams: Any, expected: Any) -> None:
    """K18: a number of teams seats them alternately; seat lists in any order are the same teams; null is none."""
    status, out = call(base, "POST", "/api/games", {"game": "krypkasino", "players": players, "seed": 4,
                                                    "agents": ["greedy"], "rules": {"teams": teams}})
    assert status == 200, out
    assert out["state"]["teams"] == expected and out["state"]["rules"]["teams"] == expected


@pytest.mark.parametrize("game,players,rules,words", [
    ("krypkasino", 4, {"team": 2}, "unknown Krypkasino rules key(s) ['team']"),
    ("krypkasino", 4, {"players": 4}, "players is a field of the request"),
    ("krypkasino", 4, [["teams", 2]], "rules must be an object"),
    ("krypkasino", 4, "teams=2", "rules must be an object"),
    ("krypkasino", 3, {"teams": 2}, "teams need 4 or 6 players (K18), got players=3"),
    ("krypkasino", 3, {"teams": [[0, 2], [1]]}, "teams need 4 or 6 players (K18), got players=3"),
    ("krypkasino", 4, {"teams": [[0, 1], [2, 3]]}, "do not alternate seats"),
    ("krypkasino", 4, {"teams": 3}, "do not alternate seats"),
    ("krypkasino", 6, {"teams": [[0, 2], [1, 3], [4, 5]]}, "do not alternate seats"),
    ("krypkasino", 4, {"teams": 1}, "a number of teams is 2 or 3"),
    ("krypkasino", 4, {"teams": "0,2/1,3"}, "rules.teams must be null, a number of teams"),
    ("krypkasino", 4, {"teams": True}, "rules.teams must be null, a number of teams"),
    ("krypkasino", 4, {"teams": [[0, "2"], [1, 3]]}, "rules.teams must be a list of seat lists of integers"),
    ("krypkasino", 4, {"teams": [0, 2, 1, 3]}, "rules.teams must be a list of seat lists of integers"),
    ("krypkasino", 3, {"two_player_deal": "5+6"}, "two_player_deal='5+6' needs players=2"),
    ("krypkasino", 2, {"two_player_deal": "7+3"}, "two_player_deal must be one of"),
    ("krypkasino", 2, {"two_player_deal": 56}, "rules.two_player_deal must be a string"),
    ("krypkasino", 3, {"set_aside": "hearts"}, "set_aside must be one of"),
    ("krypkasino", 3, {"set_aside": ["spades"]}, "rules.set_aside must be a string"),
    ("krypkasino", 3, {"last_capture_point": 1}, "rules.last_capture_point must be true or false"),
    ("krypkasino", 3, {"last_capture_point": "yes"}, "rules.last_capture_point must be true or false"),
    ("krypkasino", 3, {"preset": "tiny"}, "preset 'tiny' is for players 2 (K22), got players=3"),
    ("krypkasino", 2, {"preset": "huge"}, "preset must be one of"),
    ("krypkasino", 2, {"preset": 1}, "rules.preset must be a string"),
    ("kungsholmskille", 4, {"teams": 2}, "unknown kungsholmskille rules key(s) ['teams']"),
    ("kungsholmskille", 4, {"preset": "small"}, "ranks must be at least 14"),
    ("kungsholmskille", 3, {"preset": "huge"}, "preset must be one of standard, small"),
])
def test_bad_rules_are_400s_naming_the_problem(base: str, game: str, players: int, rules: Any, words: str) -> None:
    """Every kind of bad ``rules`` (unknown key, wrong type, a value K6/K8/K17/K18 or L20–L22 refuse) is a 400 whose
    message names it, never a 500 or a silent fix-up; the server keeps serving."""
    got, out = call(base, "POST", "/api/games", {"game": game, "players": players, "seed": 1, "agents": ["random"],
                                                 "rules": rules})
    assert got == 400 and words in out["error"], (rules, got, out)
    assert call(base, "GET", "/api/meta")[0] == 200
    got, out = call(base, "POST", "/api/games", {"game": game, "players": players, "seed": 1, "agents": ["random"]})
    assert got == 200 and out["state"]["teams"] is None  # the same request without rules still starts a game


def test_meta_lists_the_rules_options(base: str) -> None:
    """GET /api/meta describes Krypkasino's options (K6, K8, K17, K18) so the page need not hard-code them."""
    got, meta = call(base, "GET", "/api/meta")
    assert got == 200
    opts = meta["games"]["krypkasino"]["rules"]
    assert set(opts) == {"teams", "two_player_deal", "set_aside", "last_capture_point", "preset"}
    assert opts["preset"]["choices"] == ["standard", "tiny", "small"] and opts["preset"]["rule"] == "K22"
    assert opts["preset"]["labels"]["tiny"] == "tiny (8 cards, 2 players)"
    assert opts["teams"]["choices"] == {"4": [[[0, 2], [1, 3]]],
                                        "6": [[[0, 2, 4], [1, 3, 5]], [[0, 3], [1, 4], [2, 5]]]}
    assert opts["two_player_deal"]["players"] == [2] and opts["two_player_deal"]["choices"] == ["6+4", "5+6"]
    assert opts["set_aside"]["default"] == "court" and opts["last_capture_point"]["choices"] == [False, True]
    assert set(meta["games"]["kungsholmskille"]["rules"]) == {"preset"}  # KILLE.md L22


def test_every_offered_agent_plays(base: str) -> None:
    """Every agent /api/meta offers, for every game, starts a game at a table it plays (its players and preset) and
    answers a move (Kungsholmskille's pimc included, which could not act at the web table before its adapter offered
    the engine's rows; ``tabular:cfr-tiny`` at a tiny table)."""
    meta = call(base, "GET", "/api/meta")[1]["games"]
    for game, info in meta.items():
        for offer in info["agents"]:
            players = offer["players"][0] if offer["players"] else info["default_players"]
            rules = {"preset": offer["presets"][0]} if offer["presets"] else None
            status, out = call(base, "POST", "/api/games", {"game": game, "players": players, "seed": 2,
                                                            "agents": [offer["spec"]], "rules": rules})
            assert status == 200, (game, offer, out)
            status, out = move(base, out["id"], out["state"])
            assert status == 200 and out["state"]["agent_error"] is None, (game, offer, out)


def test_tabular_policy_plays_and_hints_at_its_table_only(base: str) -> None:
    """Issue 26: ``tabular:cfr-tiny`` is offered for 2 players and the tiny preset, plays a tiny game to its end and
    hints there; at a standard or 3-player table, or named by a path, it is a 400 naming what differs."""
    pytest.importorskip("pyspiel", reason="the tabular policies need the extra openspiel")
    [offer] = [a for a in call(base, "GET", "/api/meta")[1]["games"]["krypkasino"]["agents"]
               if a["spec"] == "tabular:cfr-tiny"]
    assert offer["players"] == [2] and offer["presets"] == ["tiny"]
    tiny = {"game": "krypkasino", "players": 2, "seed": 26, "agents": ["tabular:cfr-tiny"], "rules": {"preset": "tiny"}}
    status, out = call(base, "POST", "/api/games", tiny)
    assert status == 200 and out["state"]["names"][1] == "seat 1 (tabular:cfr-tiny)", out
    gid, st = out["id"], out["state"]
    status, h = call(base, "POST", f"/api/games/{gid}/hint", {"spec": "tabular:cfr-tiny"})
    assert status == 200 and h["spec"] == "tabular:cfr-tiny" and 1 <= h["best"]["n"] <= len(st["legal"]), h
    while not st["over"]:
        status, out = move(base, gid, st)
        assert status == 200 and out["state"]["agent_error"] is None, out
        st = out["state"]
    assert sum(st["totals"]) == 7  # the tiny deck's points (K4, K20)
    _, standard = call(base, "POST", "/api/games", {"game": "krypkasino", "players": 2, "seed": 1,
                                                    "agents": ["random"]})
    cases = [({**tiny, "rules": None}, "not this table (2 players, standard preset"),
             ({**tiny, "players": 3, "rules": None}, "players 3 here, 2 in the policy"),
             ({**tiny, "agents": ["tabular:checkpoints/cfr-tiny.json.gz"]}, "never a path"),
             ({**tiny, "agents": ["tabular:cfr-none"]}, "no tabular policy named 'cfr-none'")]
    for body, words in cases:
        status, err = call(base, "POST", "/api/games", body)
        assert status == 400 and words in err["error"] and "offered" in err["error"], (body, err)
    status, err = call(base, "POST", f"/api/games/{standard['id']}/hint", {"spec": "tabular:cfr-tiny"})
    assert status == 400 and "solved for 2 players and the tiny preset" in err["error"], err
