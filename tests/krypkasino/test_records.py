"""Krypkasino game records (krypenv.krypkasino.records) and the ``krypenv replay`` command on them (krypenv.replay)."""

from __future__ import annotations

import copy
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from krypenv.krypkasino.cards import N_CODES, card_code, card_name, ordered_deck
from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.records import check_record, parse_record, record_from_deals, replay
from krypenv.krypkasino.rules import Rules
from krypenv.records import RecordError, iter_records, write_jsonl
from krypenv.replay import add_arguments, run

DATA = Path(__file__).parent / "data"
JSON_KEYS = ["ok", "error", "failed_move", "result", "legal_moves"]


# --------------------------------------------------------------------------- helpers
def finished_deals(rules: Rules, n: int, seed: int) -> DealBatch:
    """n random deals of ``rules`` played to the end."""
    deals = DealBatch(rules, n)
    rng = np.random.default_rng(seed)
    deals.reset(rng=rng)
    while not deals.done.all():
        deals.play_random(rng)
    return deals


def deck_with(first: list[str]) -> list[str]:
    """A full deck starting with ``first``, the other cards following in code order."""
    rest = [card_name(int(c)) for c in ordered_deck()]
    for name in first:
        rest.remove(name)
    return first + rest


def two_player_record(first: list[str], moves: list[dict[str, Any]]) -> dict[str, Any]:
    """A 2-player record, dealer seat 1, whose deck starts with ``first`` (K6: P3 T2 P3 T2)."""
    rules = Rules(players=2).to_dict()
    return {"game": "krypkasino", "rules": rules, "dealer": 1, "deck": deck_with(first), "moves": moves}


# seat 0: 8H 3D 4D 5D 9D 10H; table AC 2C 6D 7C: only 8H sweeps, so K13 forces it.
FORCED = ["8H", "3D", "4D", "2H", "3H", "4H", "AC", "2C", "5D", "9D", "10H", "5H", "6H", "7H", "6D", "7C"]
FORCED_LEGAL = "legal moves: 8H takes AC 2C 7C 6D"
# seat 0: 8H 2D 4D 6H 7H 10H; table 3C 5C 8D 9C: 8H must take 8D and 3C+5C (K11).
MAXIMAL = ["8H", "2D", "4D", "2H", "3H", "4H", "3C", "5C", "6H", "7H", "10H", "5H", "6S", "7S", "8D", "9C"]
MAXIMAL_LEGAL = "legal moves: 2D creeps | 4D creeps | 6H creeps | 7H creeps | 8H takes 3C 5C 8D | 10H creeps"
# table KC 5S QD JH: the courts are set aside (K8), 5S stays alone; seat 0 holds the other 5S.
# table 5C 5C 7D 9D: seat 0's 10H takes both copies of 5C.
TWINS = ["10H", "2H", "3H", "2S", "3S", "4S", "5C", "5C", "4H", "6H", "8S", "6S", "7S", "8H", "7D", "9D"]
DOUBLE = ["5S", "2D", "3D", "2H", "3H", "4H", "KC", "5S", "4D", "6D", "7D", "8H", "9H", "10H", "QD", "JH"]


def mv(card: str, *capture: str) -> dict[str, Any]:
    """A record move."""
    return {"card": card, "capture": list(capture)}


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    """One finished record per player count 2..6, plus variants."""
    out = []
    for players in range(2, 7):
        deals = finished_deals(Rules(players=players), 2, seed=players)
        out += [record_from_deals(deals, 0), record_from_deals(deals, 1)]
    for rules in (
        Rules(players=2, two_player_deal="5+6"),
        Rules(players=3, set_aside="spades", last_capture_point=True),
        Rules(players=4, teams=((0, 2), (1, 3))),
        Rules(players=6, teams=((0, 3), (1, 4), (2, 5))),
    ):
        out.append(record_from_deals(finished_deals(rules, 1, seed=7), 0))
    return out


@pytest.fixture(scope="module")
def good(records: list[dict[str, Any]]) -> dict[str, Any]:
    """A finished 3-player record."""
    return records[2]


def failing(obj: Any, move: int | None, *words: str) -> str:
    """Check ``obj`` fails at ``move`` with a message holding every word; return the message."""
    out = check_record(obj)
    assert out.ok is False
    assert out.failed_move == move, out.error
    assert out.error is not None
    for word in words:
        assert word in out.error, (word, out.error)
    return out.error


# --------------------------------------------------------------------------- writing and round trips
def test_round_trip_every_player_count(records: list[dict[str, Any]]) -> None:
    """Random finished deals for 2..6 players and variants replay ok with the recorded result."""
    assert sorted({r["rules"]["players"] for r in records}) == [2, 3, 4, 5, 6]
    for rec in records:
        assert json.loads(json.dumps(rec)) == rec
        parsed = parse_record(json.loads(json.dumps(rec)))
        assert len(parsed.moves) == parsed.rules.decisions_per_deal
        out = replay(parsed)
        assert out.ok and out.error is None and out.failed_move is None, out.error
        assert out.result == rec["result"]
        assert out.legal_moves == []
        assert sum(out.result["scores"]) == (43 if rec["rules"]["last_capture_point"] else 42)


def test_record_matches_engine_state() -> None:
    """record_from_deals writes the rules, dealer, deck, moves and result of the batch."""
    deals = finished_deals(Rules(players=4), 3, seed=11)
    for i in range(3):
        rec = record_from_deals(deals, i)
        assert list(rec) == ["game", "rules", "dealer", "deck", "moves", "result"]
        assert rec["game"] == "krypkasino" and rec["rules"] == Rules(players=4).to_dict() and rec["dealer"] == 3
        assert rec["deck"] == [card_name(int(c)) for c in deals.deck[i]]
        assert [card_code(m["card"]) for m in rec["moves"]] == [int(c) for c in deals.hist_card[i, :100]]
        for m in rec["moves"]:
            codes = [card_code(n) for n in m["capture"]]
            assert codes == sorted(codes)
        assert rec["result"] == {
            "scores": deals.scores()[i].tolist(),
            "card_points": deals.card_points()[i].tolist(),
            "tabbes": deals.tabbes[i].tolist(),
        }
        assert all(type(x) is int for k in ("scores", "card_points", "tabbes") for x in rec["result"][k])


def test_capture_log_keeps_multiplicity() -> None:
    """A capture of both copies of a card is logged, written and replayed with multiplicity (K1)."""
    rec = two_player_record(TWINS, [])
    parsed = parse_record(rec)
    deals = DealBatch(parsed.rules, 1)
    deals.reset(decks=parsed.deck[None, :], dealers=np.array([1]))
    cap = np.zeros((1, N_CODES), np.int8)
    cap[0, card_code("5C")] = 2
    assert deals.step(np.array([card_code("10H")]), cap)[0] == 0
    assert deals.move_capture(0, 0).tolist() == cap[0].tolist()
    written = record_from_deals(deals)
    assert written["moves"] == [mv("10H", "5C", "5C")] and "result" not in written
    assert check_record(written).ok


def test_partial_record_is_ok_without_result() -> None:
    """A deal stopped part way is written without result and replays ok with result null."""
    deals = DealBatch(Rules(players=3), 1)
    rng = np.random.default_rng(3)
    deals.reset(rng=rng)
    for _ in range(37):
        deals.play_random(rng)
    rec = record_from_deals(deals)
    assert "result" not in rec and len(rec["moves"]) == 37
    out = check_record(rec, legal=True)
    assert out.ok and out.result is None and out.moves_played == 37
    assert len(out.legal_moves) == 37
    for played, legal in zip(rec["moves"], out.legal_moves):
        assert played in legal
    assert check_record(dict(rec, result=None)).ok


def test_record_from_hand_built_position_is_refused() -> None:
    """A DealBatch.position has no full deck, so it cannot be written as a record."""
    deals = DealBatch.position(Rules(players=2), hands=[["8H"], ["2C"]], table=["8C"])
    with pytest.raises(ValueError, match="two full decks"):
        record_from_deals(deals)
    with pytest.raises(ValueError, match="outside"):
        record_from_deals(deals, 1)


def test_dubbeltabbe_counts_two() -> None:
    """K14: a lone 5S taken with the other 5S is two tabbes in the record's result."""
    rec = two_player_record(DOUBLE, [mv("5S", "5S")])
    assert check_record(rec).ok
    parsed = parse_record(rec)
    deals = DealBatch(parsed.rules, 1)
    deals.reset(decks=parsed.deck[None, :], dealers=np.array([1]))
    assert deals.step(np.array([card_code("5S")]), parsed.moves[0][1][None, :])[0] == 0
    assert deals.tabbes[0].tolist() == [2, 0] and deals.scores()[0].tolist() == [12, -10]
    rng = np.random.default_rng(0)
    while not deals.done[0]:
        deals.play_random(rng)
    full = record_from_deals(deals)
    assert full["moves"][0] == mv("5S", "5S") and full["result"]["tabbes"][0] >= 2
    assert check_record(full).result == full["result"]


# --------------------------------------------------------------------------- malformed records
def test_shape_errors(good: dict[str, Any]) -> None:
    """Every structural problem is named, with no move index."""
    failing([good], None, "must be a JSON object", "list")
    failing({k: v for k, v in good.items() if k != "deck"}, None, "missing key", "deck")
    failing(dict(good, reslt=good["result"]), None, "unknown key", "reslt")
    failing(dict(good, game="casino"), None, "game must be 'krypkasino'", "'casino'")
    seven = dict(good["rules"], players=7)
    failing(dict(good, rules=seven), None, "bad rules", "players must be an integer from 2 to 6")
    failing(dict(good, rules=dict(good["rules"], colour="red")), None, "bad rules", "colour")
    failing(dict(good, rules=dict(good["rules"], teams=[[0, 1], [2]])), None, "bad rules", "teams")
    failing(dict(good, dealer=3), None, "dealer must be a seat 0..2", "3")
    failing(dict(good, dealer=True), None, "dealer must be a seat")
    failing(dict(good, moves={"card": "AS"}), None, "moves must be a list")
    with pytest.raises(RecordError, match="missing key"):
        parse_record({"game": "krypkasino"})


def test_deck_errors(good: dict[str, Any]) -> None:
    """A deck that is short, has unknown names, or is not two full decks."""
    failing(dict(good, deck=good["deck"][:103]), None, "deck must list all 104 cards", "got 103")
    failing(dict(good, deck="AS KS"), None, "deck must list all 104 cards", "str")
    deck = list(good["deck"])
    deck[17] = "1H"
    failing(dict(good, deck=deck), None, "deck[17]", "unknown card name '1H'")
    deck = list(good["deck"])
    victim = deck[5]
    deck[5] = "AS" if victim != "AS" else "KS"
    failing(dict(good, deck=deck), None, "not two full decks", f"{victim} x1", f"{deck[5]} x3")


def test_result_shape_errors(good: dict[str, Any]) -> None:
    """result needs exactly scores, card_points and tabbes, one integer per seat."""
    res = good["result"]
    failing(dict(good, result=[1, 2, 3]), None, "result must be an object")
    failing(dict(good, result={"scores": res["scores"], "tabbes": res["tabbes"]}), None,
            "exactly the keys scores, card_points, tabbes: missing card_points")
    failing(dict(good, result=dict(res, bonus=[0, 0, 0])), None, "unknown bonus")
    failing(dict(good, result=dict(res, scores=[1, 2])), None, "result.scores must be a list of 3 integers")
    failing(dict(good, result=dict(res, tabbes=[0, 0, 1.5])), None, "result.tabbes must be a list of 3 integers")


def test_move_shape_errors(good: dict[str, Any]) -> None:
    """A malformed move fails at its index and lists the legal moves there."""
    for bad, words in (
        ("8H", ["must be an object with exactly the keys card and capture"]),
        ({"card": "8H"}, ["exactly the keys card and capture", "['card']"]),
        ({"card": "8X", "capture": []}, ["move 4: card", "unknown card name '8X'"]),
        ({"card": "8H", "capture": ["AC", "ZZ"]}, ["move 4: capture[1]", "unknown card name 'ZZ'"]),
        ({"card": "8H", "capture": "AC"}, ["capture must be a list"]),
        ({"card": "8H", "capture": ["AC", "AC", "AC"]}, ["AC x3", "only twice"]),
    ):
        rec = copy.deepcopy(good)
        rec["moves"][4] = bad
        msg = failing(rec, 4, "move 4", "legal moves: ", *words)
        assert "\n" not in msg
    out = check_record(dict(copy.deepcopy(good), moves=good["moves"][:4] + ["x"]), legal=True)
    assert out.failed_move == 4 and len(out.legal_moves) == 5


def test_forced_sweep_skipped_and_incomplete() -> None:
    """K13: another card, or the sweeping card taking less than the table, is an error."""
    assert check_record(two_player_record(FORCED, [mv("8H", "AC", "2C", "7C", "6D")])).ok
    rec = two_player_record(FORCED, [mv("3D", "AC", "2C")])
    failing(rec, 0, "move 0 (seat 0: 3D takes AC 2C)", "a sweep is forced (K13)", FORCED_LEGAL)
    failing(two_player_record(FORCED, [mv("3D")]), 0, "a sweep is forced (K13)", FORCED_LEGAL)
    failing(two_player_record(FORCED, [mv("8H", "AC", "7C")]), 0, "must take the whole table (K13)", FORCED_LEGAL)
    rec = two_player_record(FORCED, [mv("8H", "AC", "7C")])
    msg = failing(rec, 0, "table: AC 2C 7C 6D", "seat 0 holds 3D 4D 5D 9D 8H 10H")
    assert msg.count("legal moves:") == 1


def test_not_in_hand_not_on_table_not_maximal() -> None:
    """The card must be in the hand of the seat to play; captures on the table and maximal (K11, K12)."""
    assert check_record(two_player_record(MAXIMAL, [mv("8H", "3C", "5C", "8D"), mv("2H")])).ok
    rec = two_player_record(MAXIMAL, [mv("2H")])
    failing(rec, 0, "seat 0: 2H creeps", "not in the hand of the seat to play", MAXIMAL_LEGAL)
    failing(two_player_record(MAXIMAL, [mv("KS")]), 0, "not in the hand", MAXIMAL_LEGAL)
    failing(two_player_record(MAXIMAL, [mv("8H", "8C")]), 0, "cards that are not on the table", MAXIMAL_LEGAL)
    failing(two_player_record(MAXIMAL, [mv("8H", "8D")]), 0, "not a maximal capture", MAXIMAL_LEGAL)
    failing(two_player_record(MAXIMAL, [mv("8H", "3C", "5C")]), 0, "not a maximal capture", MAXIMAL_LEGAL)
    failing(two_player_record(MAXIMAL, [mv("8H")]), 0, "8H creeps although it can capture", MAXIMAL_LEGAL)
    failing(two_player_record(MAXIMAL, [mv("2D", "9C")]), 0, "not a maximal capture")
    # seat 1 (the dealer) plays second: seat 0's card is no longer right.
    failing(two_player_record(MAXIMAL, [mv("2D"), mv("4D")]), 1, "move 1 (seat 1: 4D creeps)", "not in the hand")


def test_failing_move_with_legal_lists_up_to_it() -> None:
    """With legal=True, legal_moves holds one list per move up to and including the failing one."""
    out = check_record(two_player_record(MAXIMAL, [mv("8H", "3C", "5C", "8D"), mv("QS")]), legal=True)
    assert out.failed_move == 1 and len(out.legal_moves) == 2
    assert out.legal_moves[0] == [
        mv("2D"), mv("4D"), mv("6H"), mv("7H"), mv("8H", "3C", "5C", "8D"), mv("10H"),
    ]  # fmt: skip
    assert out.result is None


def test_moves_after_the_end_and_result_mismatch(good: dict[str, Any]) -> None:
    """Extra moves, wrong results and results on unfinished deals are errors."""
    n = len(good["moves"])
    extra = dict(good, moves=good["moves"] + [mv("AS")])
    failing(extra, n, f"move {n} (after the deal ended", "already finished", "legal moves: none")
    for key in ("scores", "card_points", "tabbes"):
        res = copy.deepcopy(good["result"])
        res[key][1] += 1
        expected, recorded = f"expected {good['result'][key]}", f"recorded {res[key]}"
        msg = failing(dict(good, result=res), None, f"result.{key} differs", expected, recorded)
        assert msg.count("differs") == 1
        assert check_record(dict(good, result=res)).result == good["result"]
    failing(dict(good, moves=good["moves"][:50]), None, "has a result but the deal is unfinished after 50 moves")


# --------------------------------------------------------------------------- files
def test_iter_records_detects_the_format(tmp_path: Path, good: dict[str, Any]) -> None:
    """One pretty-printed record, or JSON Lines with blank and broken lines."""
    pretty = tmp_path / "one.json"
    pretty.write_text("\n" + json.dumps(good, indent=2) + "\n")
    raws = list(iter_records(pretty))
    assert [(r.label, r.obj, r.error) for r in raws] == [(f"{pretty}:2", good, None)]
    lines = tmp_path / "many.jsonl"
    lines.write_text(json.dumps(good) + "\n\n   \n" + '{"game": oops}\n' + json.dumps(good) + "\n")
    raws = list(iter_records(lines))
    assert [r.label for r in raws] == [f"{lines}:1", f"{lines}:4", f"{lines}:5"]
    assert raws[0].obj == raws[2].obj == good and raws[1].obj is None and raws[1].error.startswith("bad JSON")
    broken_first = tmp_path / "first.jsonl"
    broken_first.write_text('{"game": \n' + json.dumps(good) + "\n")
    assert [r.error is None for r in iter_records(broken_first)] == [False, True]
    broken_pretty = tmp_path / "broken.json"
    broken_pretty.write_text(json.dumps(good, indent=2)[:-3])
    raws = list(iter_records(broken_pretty))
    assert len(raws) == 1 and raws[0].error.startswith("bad JSON")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    assert list(iter_records(empty)) == []


def test_write_jsonl_round_trip(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    """write_jsonl then iter_records gives the same objects, one per line."""
    path = tmp_path / "all.jsonl"
    write_jsonl(records, path)
    assert len(path.read_text().splitlines()) == len(records)
    assert [r.obj for r in iter_records(path)] == records


def test_example_data_files() -> None:
    """tests/krypkasino/data: a pretty-printed finished deal, and JSON Lines with a partial and a bad record."""
    (raw,) = list(iter_records(DATA / "deal_3p.json"))
    out = check_record(raw.obj)
    assert out.ok and out.result == raw.obj["result"]
    assert out.result == {"scores": [5, 34, 3], "card_points": [10, 19, 13], "tabbes": [2, 3, 0]}
    outs = [check_record(r.obj) for r in iter_records(DATA / "mixed.jsonl")]
    assert [o.ok for o in outs] == [True, True, False]
    assert outs[1].result is None and outs[2].failed_move == 3


# --------------------------------------------------------------------------- the command
def run_cli(paths: list[Path], as_json: bool = True, legal: bool = False) -> tuple[int, str, str]:
    """Call replay.run; return (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    status = run([str(p) for p in paths], as_json, legal, out=out, err=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture()
def mixed(tmp_path: Path, good: dict[str, Any]) -> Path:
    """JSON Lines: good, bad JSON, a skipped forced sweep, a wrong result, a partial deal, good."""
    res = copy.deepcopy(good["result"])
    res["tabbes"][0] += 1
    partial = dict(good, moves=good["moves"][:10])
    del partial["result"]
    path = tmp_path / "mixed.jsonl"
    rows = [
        json.dumps(good), "{not json", json.dumps(two_player_record(FORCED, [mv("3D")])),
        json.dumps(dict(good, result=res)), "", json.dumps(partial), json.dumps(good),
    ]  # fmt: skip
    path.write_text("\n".join(rows) + "\n")
    return path


def test_cli_json_schema_and_exit_codes(tmp_path: Path, mixed: Path, good: dict[str, Any]) -> None:
    """One five-key JSON object per record, bad ones not stopping the rest, exit 1."""
    status, out, err = run_cli([mixed])
    assert status == 1 and err == ""
    objs = [json.loads(line) for line in out.splitlines()]
    assert len(objs) == 6 and all(list(o) == JSON_KEYS for o in objs)
    assert [o["ok"] for o in objs] == [True, False, False, False, True, True]
    assert [o["failed_move"] for o in objs] == [None, None, 0, None, None, None]
    assert objs[0] == {"ok": True, "error": None, "failed_move": None, "result": good["result"], "legal_moves": []}
    assert objs[1]["error"].startswith(f"{mixed}:2: bad JSON") and objs[1]["result"] is None
    assert objs[2]["error"].startswith(f"{mixed}:3: move 0 ") and FORCED_LEGAL in objs[2]["error"]
    tabbes = good["result"]["tabbes"]
    recorded = [tabbes[0] + 1] + tabbes[1:]
    assert objs[3]["error"] == f"{mixed}:4: result.tabbes differs: expected {tabbes}, recorded {recorded}"
    assert objs[4] == {"ok": True, "error": None, "failed_move": None, "result": None, "legal_moves": []}
    single = tmp_path / "good.json"
    single.write_text(json.dumps(good, indent=1))
    status, out, _ = run_cli([single])
    assert status == 0 and len(out.splitlines()) == 1 and json.loads(out)["ok"] is True


def test_cli_legal_lists_every_move(tmp_path: Path, good: dict[str, Any]) -> None:
    """--legal: legal_moves[i] lists {card, capture} before move i and holds the played move."""
    path = tmp_path / "g.jsonl"
    write_jsonl([good, two_player_record(MAXIMAL, [mv("8H")])], path)
    status, out, _ = run_cli([path], legal=True)
    first, second = (json.loads(line) for line in out.splitlines())
    assert status == 1
    assert len(first["legal_moves"]) == len(good["moves"])
    for played, legal in zip(good["moves"], first["legal_moves"]):
        assert played in legal and all(list(m) == ["card", "capture"] for m in legal)
    assert second["legal_moves"] == [[mv("2D"), mv("4D"), mv("6H"), mv("7H"), mv("8H", "3C", "5C", "8D"), mv("10H")]]
    assert second["failed_move"] == 0


def test_cli_text_mode(mixed: Path, good: dict[str, Any]) -> None:
    """Text: a summary per good record (scores, tabbes, taker), one line per bad one, a total."""
    status, out, err = run_cli([mixed], as_json=False)
    assert status == 1 and err == "" and "Traceback" not in out
    lines = out.splitlines()
    assert lines[0] == f"{mixed}:1: ok: 3 players, dealer seat 2, 99 of 99 moves, result matches the record"
    assert lines[2].split()[:4] == ["score", *map(str, good["result"]["scores"])]
    assert lines[4].split() == ["tabbes", *map(str, good["result"]["tabbes"])]
    taker = check_record(good).taker
    assert lines[5] == f"  seat {taker} took the table rest and the set-aside pile (K15)"
    errors = [line for line in lines if ": error: " in line]
    assert [e.split(": error: ")[0] for e in errors] == [f"{mixed}:2", f"{mixed}:3", f"{mixed}:4"]
    assert f"{mixed}:6: ok: 3 players, dealer seat 2, 10 of 99 moves, partial deal" in out
    assert lines[-1] == "6 record(s): 3 ok, 3 with errors"


def test_cli_missing_file_and_empty_file(tmp_path: Path, good: dict[str, Any]) -> None:
    """A missing file is exit 2 on stderr, the other files are still checked; an empty one is exit 1."""
    path = tmp_path / "g.json"
    path.write_text(json.dumps(good))
    status, out, err = run_cli([tmp_path / "nope.jsonl", path])
    assert status == 1 and json.loads(out)["ok"] is True
    assert err == f"krypenv replay: error: cannot read {tmp_path / 'nope.jsonl'}: No such file or directory\n"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    status, out, err = run_cli([empty, path], as_json=False)
    assert status == 1 and "holds no game record" in err and "1 record(s): 1 ok, 0 with errors" in out
    assert run_cli([path], as_json=False)[0] == 0


def test_add_arguments() -> None:
    """The replay sub-command's arguments."""
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["a.jsonl", "b.json", "--json", "--legal"])
    assert (args.files, args.json, args.legal) == (["a.jsonl", "b.json"], True, True)
    assert parser.parse_args(["a"]).json is False
    with pytest.raises(SystemExit):
        parser.parse_args([])


def test_installed_command(mixed: Path, tmp_path: Path) -> None:
    """The real ``krypenv replay`` command: JSON lines, exit codes, no traceback."""
    exe = shutil.which("krypenv")
    cmd = [exe] if exe else [sys.executable, "-m", "krypenv.cli"]
    proc = subprocess.run([*cmd, "replay", str(mixed), "--json"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    objs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["ok"] for o in objs] == [True, False, False, False, True, True]
    proc = subprocess.run([*cmd, "replay", str(tmp_path / "missing.json")], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 1 and "missing.json" in proc.stderr and "Traceback" not in proc.stderr
