"""Kungsholmskille game records: format, malformed records and their one-line errors, replay (KILLE.md L17–L19).

Each malformed-record test checks that the message names the record's move (index, seat,
move string) and the problem, and that ``failed_move`` is the index of the first illegal move.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krypenv.kungsholmskille.records import check_record, parse_record, record_from_deals, summary
from krypenv.records import RecordError, ReplayOutcome
from tests.kungsholmskille.helpers import deck_for, play, start
from tests.kungsholmskille.test_engine import TIE_HANDS, TIE_TRICKS

TIE_MOVES = ["knacka", "stay", "stay", "stay", "stand", "stand", "stand", "stand", "knacka",
             *[f"play:{c}" for trick in TIE_TRICKS for _, c in trick], "bud", "show"]


def tie_record() -> dict[str, Any]:
    """The worked example "Showdown tie" as a full record (pot 8)."""
    d = start(4, deck_for(4, TIE_HANDS), pot=8)
    play(d, *TIE_MOVES)
    return record_from_deals(d, 0)


def with_moves(rec: dict[str, Any], moves: list[Any], result: bool = False) -> dict[str, Any]:
    """A copy of a record with other moves (and no result unless asked)."""
    out = copy.deepcopy(rec)
    out["moves"] = moves
    if not result:
        out.pop("result", None)
    return out


# ----------------------------------------------------------------------------- L18 format
def test_L18_record_format() -> None:
    """L18: exactly the keys game, rules, dealer, pot, deck (42 names), moves (L17 strings), result."""
    rec = tie_record()
    assert list(rec) == ["game", "rules", "dealer", "pot", "deck", "moves", "result"]
    assert rec["game"] == "kungsholmskille" and rec["rules"] == {"players": 4}
    assert rec["dealer"] == 3 and rec["pot"] == 8 and len(rec["deck"]) == 42
    assert rec["moves"] == TIE_MOVES
    assert rec["result"] == {"outcome": "showdown", "winner": 1, "shower": 3, "penalty": 8,
                             "money": [0, 16, 0, -8], "antes_next": [2, 0, 2, 2], "pot_next": 6}
    assert json.loads(json.dumps(rec)) == rec


def test_L18_partial_record_has_no_result() -> None:
    """L18: a record of an unfinished deal has no result and replays ok to result None."""
    d = start(4, deck_for(4, TIE_HANDS))
    play(d, *TIE_MOVES[:10])
    rec = record_from_deals(d, 0)
    assert "result" not in rec
    out = check_record(rec)
    assert out.ok and out.result is None and out.moves_played == 10 and out.total_moves == 10


def test_L19_check_record_and_legal_lists() -> None:
    """L19: check_record recomputes the result; with legal=True, legal_moves[i] lists the moves before move i."""
    out = check_record(tie_record(), legal=True)
    assert isinstance(out, ReplayOutcome) and out.ok and out.failed_move is None and out.error is None
    assert out.result["winner"] == 1
    assert out.legal_moves[0] == ["bud", "knacka"] and out.legal_moves[1] == ["fold", "stay"]
    assert out.legal_moves[4] == ["stand"] + [m for m in out.legal_moves[4] if m != "stand"]
    assert out.legal_moves[12] == ["play:blompotta"]  # seat 3 cannot reach kille (L10)
    assert out.legal_moves[-1] == ["bud", "show"] and len(out.legal_moves) == len(TIE_MOVES)
    assert out.to_json()["legal_moves"] == out.legal_moves
    assert check_record(tie_record()).legal_moves == []


def test_record_needs_a_dealt_deal() -> None:
    """record_from_deals refuses a deal that was never dealt, or an index outside the batch."""
    from krypenv.kungsholmskille import DealBatch, Rules

    with pytest.raises(ValueError, match="has not been dealt"):
        record_from_deals(DealBatch(Rules(3), 1), 0)
    with pytest.raises(ValueError, match="outside 0..0"):
        record_from_deals(DealBatch(Rules(3), 1), 1)


# ----------------------------------------------------------------------------- illegal moves
def bad(rec: dict[str, Any], failed: int | None, *fragments: str) -> ReplayOutcome:
    """check_record must fail with one line holding every fragment, at move ``failed``."""
    out = check_record(rec, legal=True)
    assert not out.ok and out.failed_move == failed
    assert "\n" not in out.error
    for frag in fragments:
        assert frag in out.error, f"{frag!r} not in {out.error!r}"
    if failed is not None:
        assert len(out.legal_moves) == failed + 1  # up to and including the failing move
    return out


def test_wrong_kind_of_move() -> None:
    """L5/L17: play:X during the first call is a move of the wrong kind."""
    rec = with_moves(tie_record(), ["play:gok"])
    bad(rec, 0, "move 0 (seat 0: play:gok)", "a move of the wrong kind", "first call (L5)", "legal moves: bud, knacka")


def test_fold_after_the_fold_decisions() -> None:
    """L9: nobody may fold in the second call."""
    rec = with_moves(tie_record(), TIE_MOVES[:8] + ["fold"])
    bad(rec, 8, "move 8 (seat 0: fold)", "nobody may fold", "legal moves: bud, knacka")


def test_must_play_its_lowest_card() -> None:
    """L10: a player that cannot reach the highest card must play its lowest."""
    moves = TIE_MOVES[:12] + ["play:krans"]  # seat 3 holds blompotta x2, 6, vardshus, krans
    bad(with_moves(tie_record(), moves), 12, "move 12 (seat 3: play:krans)",
        "must play its lowest card blompotta: no card can overtake kille (L10)", "legal moves: play:blompotta")


def test_must_overtake() -> None:
    """L10: a player holding a card at least as high as the highest so far must play one."""
    moves = TIE_MOVES[:10] + ["play:blaren"]  # seat 1 holds 2, 10, 11, gok, blaren after 1 was led
    bad(with_moves(tie_record(), moves), 10, "move 10 (seat 1: play:blaren)", "must play one of those (L10)",
        "legal moves: play:2, play:10, play:11, play:gok")


def test_discard_not_held() -> None:
    """L8: a seat can only discard cards it holds."""
    moves = TIE_MOVES[:5] + ["discard:7"]
    bad(with_moves(tie_record(), moves), 5, "move 5 (seat 1: discard:7)", "discards 7 which seat 1 does not hold",
        "(it holds blaren 2 10 11 gok); legal moves: stand, discard:blaren, discard:2,")


def test_play_not_held() -> None:
    """L10: a seat can only play cards it holds."""
    moves = TIE_MOVES[:9] + ["play:kille"]
    bad(with_moves(tie_record(), moves), 9, "move 9 (seat 0: play:kille)", "plays kille which seat 0 does not hold")


def test_moves_after_the_end_of_the_deal() -> None:
    """L18: a record may not go on after its deal ended."""
    rec = with_moves(tie_record(), ["bud", "bud", "bud", "bud", "knacka"])
    bad(rec, 4, "move 4 (knacka)", "moves after the end of the deal", "budrunda", "legal moves: none")


def test_unknown_move_string() -> None:
    """L17: an unknown move string is reported at its move, with the legal moves there."""
    rec = with_moves(tie_record(), ["knacka", "stay", "knock"])
    bad(rec, 2, "move 2 (seat 2: 'knock')", "unknown move 'knock'", "legal moves: fold, stay")


def test_pair_with_the_higher_rank_first() -> None:
    """L17: discard:Y,X with Y above X is refused, saying the expected order."""
    rec = with_moves(tie_record(), TIE_MOVES[:4] + ["discard:gok,1"])
    bad(rec, 4, "move 4 (seat 0: 'discard:gok,1')", "write 'discard:1,gok' (L17: lower rank first)")


def test_illegal_move_before_a_malformed_one_is_reported_first() -> None:
    """failed_move is the first illegal move even when a later move string is malformed."""
    rec = with_moves(tie_record(), ["stay", "knock"])
    bad(rec, 0, "move 0 (seat 0: stay)", "wrong kind")


def test_non_string_move() -> None:
    """L17: a move must be a string."""
    rec = with_moves(tie_record(), ["knacka", 3])
    bad(rec, 1, "move 1 (seat 1: 3)", "a move must be a string")


# ----------------------------------------------------------------------------- results
def test_result_does_not_match() -> None:
    """L18: the recorded result must equal the recomputed one."""
    rec = tie_record()
    rec["result"]["money"] = [0, 0, 16, -8]
    rec["result"]["winner"] = 2
    out = bad(rec, None, "the recorded result does not match", "winner 2 recomputed 1",
              "money [0, 0, 16, -8] recomputed [0, 16, 0, -8]")
    assert out.result == tie_record()["result"]


def test_sum_of_money_breaks_the_bookkeeping() -> None:
    """L18: sum(money) must be the pot after a showdown or walkover."""
    rec = tie_record()
    rec["result"]["money"] = [0, 16, 0, 0]
    bad(rec, None, "sum(money) breaks L18's bookkeeping", "sums to 16", "must be 8")
    rec = with_moves(tie_record(), ["bud"] * 4, result=True)
    rec["result"] = {"outcome": "budrunda", "winner": None, "shower": None, "penalty": 0,
                     "money": [1, 0, 0, 0], "antes_next": [1, 1, 1, 1], "pot_next": 12}
    bad(rec, None, "sum(money) breaks L18's bookkeeping", "must be 0 after a budrunda")


def test_pot_next_breaks_the_bookkeeping() -> None:
    """L18: pot_next is the pot if it stayed, plus the antes."""
    rec = tie_record()
    rec["result"]["pot_next"] = 14
    bad(rec, None, "pot_next 14 breaks L18's bookkeeping", "= 6")


def test_result_on_an_unfinished_deal() -> None:
    """L18: a partial record must not carry a result."""
    rec = with_moves(tie_record(), TIE_MOVES[:5], result=True)
    bad(rec, None, "has a result but the deal is unfinished after 5 moves", "seat 1 is to act")


@pytest.mark.parametrize("change, message", [
    (lambda r: r["result"].pop("penalty"), "result must have exactly the keys outcome, winner, shower, penalty"),
    (lambda r: r["result"].update(extra=1), "unknown extra"),
    (lambda r: r["result"].update(outcome="draw"), "result.outcome must be one of budrunda, walkover, showdown"),
    (lambda r: r["result"].update(money=[0, 16, -8]), "result.money must be a list of 4 integers"),
    (lambda r: r["result"].update(antes_next=[2, 0, 2, 2.0]), "result.antes_next must be a list of 4 integers"),
    (lambda r: r["result"].update(winner=4), "result.winner must be a seat 0..3 or null"),
    (lambda r: r["result"].update(shower="3"), "result.shower must be a seat 0..3 or null"),
    (lambda r: r["result"].update(penalty=-8), "result.penalty must be a non-negative integer"),
    (lambda r: r.update(result=[1]), "result must be an object"),
])  # fmt: skip
def test_bad_result_shape(change: Any, message: str) -> None:
    """L18: a result of the wrong shape is named precisely."""
    rec = tie_record()
    change(rec)
    bad(rec, None, message)
    with pytest.raises(RecordError):
        parse_record(rec)


# ----------------------------------------------------------------------------- record fields
@pytest.mark.parametrize("change, message", [
    (lambda r: r.update(players=4), "unknown key(s) players"),
    (lambda r: r.pop("pot"), "missing key(s) pot"),
    (lambda r: r.update(game="krypkasino"), "game must be 'kungsholmskille'"),
    (lambda r: r.update(rules={"players": 7}), "bad rules: players must be an integer from 2 to 6"),
    (lambda r: r.update(rules={"players": 4, "teams": None}), "bad rules: unknown rules key"),
    (lambda r: r.update(rules=4), "bad rules: rules must be an object"),
    (lambda r: r.update(dealer=4), "dealer must be a seat 0..3, got 4"),
    (lambda r: r.update(dealer=True), "dealer must be a seat 0..3, got True"),
    (lambda r: r.update(pot=-1), "pot must be a whole number of kronor"),
    (lambda r: r.update(pot=8.5), "pot must be a whole number of kronor"),
    (lambda r: r.update(pot=2**40), "pot must be a whole number of kronor"),
    (lambda r: r["deck"].__setitem__(7, "joker"), "deck[7]: unknown rank name 'joker'"),
    (lambda r: r["deck"].__setitem__(7, r["deck"][8]), "bad deck: the deck is not 21 ranks twice"),
    (lambda r: r["deck"].pop(), "deck must list all 42 rank names in dealing order, got 41 cards"),
    (lambda r: r.update(deck="kille"), "deck must list all 42 rank names in dealing order, got str"),
    (lambda r: r.update(moves="bud"), "moves must be a list of move strings"),
])  # fmt: skip
def test_bad_record_fields(change: Any, message: str) -> None:
    """L18: unknown keys, bad players/dealer/pot, unknown rank names, a deck that is not 21 ranks twice."""
    rec = tie_record()
    change(rec)
    bad(rec, None, message)


def test_not_an_object() -> None:
    """L18: a record is a JSON object."""
    bad([1, 2], None, "a record must be a JSON object, got list")


# ----------------------------------------------------------------------------- summary
def test_summary_lines() -> None:
    """L19: the readable lines of krypenv replay: headline, per-seat money and antes, legal lists, errors."""
    rec = tie_record()
    lines = summary("deal.json:1", rec, check_record(rec))
    assert lines[0] == ("deal.json:1: ok: 4 players, dealer seat 3, pot 8, 27 moves, showdown: seat 1 wins 8, "
                        "seat 3 pays a penalty of 8; result matches the record")
    assert lines[2].split() == ["money", "0", "16", "0", "-8", "(sum", "8)"]
    assert lines[3].split() == ["antes", "next", "2", "0", "2", "2", "(pot", "next", "6)"]
    lines = summary("f:2", rec, check_record(rec, legal=True))
    assert lines[4] == "  legal before move 0 (2): bud | knacka" and len(lines) == 4 + 27
    partial = with_moves(rec, TIE_MOVES[:3])
    assert summary("f:3", partial, check_record(partial))[0].endswith("3 moves, partial deal (no result until "
                                                                      "it is finished)")
    wrong = with_moves(rec, ["play:gok"])
    assert summary("f:4", wrong, check_record(wrong))[0].startswith("f:4: error: move 0 (seat 0: play:gok)")
    budrunda = with_moves(rec, ["bud"] * 4)
    assert "budrunda (L12): the pot of 8 stays" in summary("f:5", budrunda, check_record(budrunda))[0]


# ----------------------------------------------------------------------------- never raises
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 2**40) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=20,
)
FIELDS = ["game", "rules", "dealer", "pot", "deck", "moves", "result"]


@settings(deadline=None, derandomize=True, database=None, max_examples=150,
          suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_check_record_never_raises_on_junk(obj: Any) -> None:
    """L19: check_record answers every JSON value with ok=False and a message, never an exception."""
    out = check_record(obj, legal=True)
    assert not out.ok and out.error and "internal error" not in out.error


@settings(deadline=None, derandomize=True, database=None, max_examples=150,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FIELDS + ["moves[]", "result.", "deck[]"]), json_values, st.integers(0, 40))
def test_check_record_never_raises_on_damaged_records(where: str, junk: Any, k: int) -> None:
    """L19: a good record with one field, move, card or result entry replaced by junk never makes check_record raise."""
    rec = tie_record()
    if where == "moves[]":
        rec["moves"][k % len(rec["moves"])] = junk
    elif where == "deck[]":
        rec["deck"][k] = junk
    elif where == "result.":
        rec["result"][sorted(rec["result"])[k % 7]] = junk
    else:
        rec[where] = junk
    out = check_record(rec, legal=bool(k % 2))
    assert out.error is None or "internal error" not in out.error
    assert out.ok == (out.error is None)
