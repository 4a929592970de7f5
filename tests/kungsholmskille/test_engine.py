"""The Kungsholmskille engine against the rules, rule by rule, and the worked examples (KILLE.md L2–L17).

Every expected value is worked out by hand from KILLE.md; decks are built with
``helpers.deck_for`` so that chosen seats hold chosen hands.
"""

from __future__ import annotations

import numpy as np
import pytest

from krypenv.kungsholmskille.actions import parse_move
from krypenv.kungsholmskille.cards import RANKS, ordered_deck, parse_deck
from krypenv.kungsholmskille.engine import (
    EXCHANGE,
    FINISHED,
    FIRST_CALL,
    FOLDING,
    SECOND_CALL,
    SHOWING,
    TRICKS,
    DealBatch,
    IllegalMoveError,
    kernels,
)  # fmt: skip
from krypenv.kungsholmskille.rules import Rules
from tests.kungsholmskille.helpers import deck_for, hand, longest_policy, play, snapshot, start

# The worked example "Showdown tie": every deal ends with seats 0 and 1 on blaren, seat 2 on 5,
# seat 3 on krans, and seat 2 winning the fourth trick (the tricks are worked out in the test).
TIE_HANDS = {
    0: ["1", "8", "svin", "husar", "blaren"],
    1: ["2", "10", "11", "gok", "blaren"],
    2: ["kille", "4", "12", "kille", "5"],
    3: ["blompotta", "6", "vardshus", "blompotta", "krans"],
}
TIE_TRICKS = [  # (seat, card) in playing order
    [(0, "1"), (1, "2"), (2, "kille"), (3, "blompotta")],  # seat 3 cannot reach kille: its lowest
    [(2, "4"), (3, "6"), (0, "8"), (1, "10")],
    [(1, "11"), (2, "12"), (3, "vardshus"), (0, "svin")],
    [(0, "husar"), (1, "gok"), (2, "kille"), (3, "blompotta")],
]


def to_tricks(d: DealBatch) -> None:
    """From the start: forehand knocks, everyone stays and stands, forehand knocks again."""
    p = d.players
    play(d, "knacka", *["stay"] * (p - 1), *["stand"] * p, "knacka")


# ----------------------------------------------------------------------------- L2, L4
@pytest.mark.parametrize("players", range(2, 7))
def test_L2_forehand_is_dealers_left_and_speaks_first(players: int) -> None:
    """L2: forehand is dealer+1; L5: forehand speaks first; the default dealer is seat P−1."""
    d = DealBatch(Rules(players), players)
    d.reset(decks=np.tile(ordered_deck(), (players, 1)), dealers=np.arange(players))
    assert d.forehand.tolist() == [(s + 1) % players for s in range(players)]
    assert d.to_act.tolist() == d.forehand.tolist()
    d.reset(decks=np.tile(ordered_deck(), (players, 1)))
    assert d.dealer.tolist() == [players - 1] * players and (d.forehand == 0).all()


def test_L3_default_pot_and_given_pots() -> None:
    """L3: the pot defaults to 2 per player; reset takes a pot per deal (antes for it already paid)."""
    d = DealBatch(Rules(3), 2)
    d.reset(decks=np.tile(ordered_deck(), (2, 1)))
    assert d.pot.tolist() == [6, 6]
    d.reset(decks=np.tile(ordered_deck(), (2, 1)), pots=np.array([0, 1000]))
    assert d.pot.tolist() == [0, 1000]


@pytest.mark.parametrize("players, dealer", [(2, 0), (3, 1), (5, 4), (6, 2)])
def test_L4_deal_one_at_a_time_from_forehand(players: int, dealer: int) -> None:
    """L4: card k of the deck goes to seat forehand + k until each holds 5; the rest is the talon in order."""
    deck = parse_deck([RANKS[(5 * k) % 21] for k in range(42)])  # 5 is prime to 21: every rank twice
    d = DealBatch(Rules(players), 1)
    d.reset(decks=deck[None, :], dealers=dealer)
    fh = (dealer + 1) % players
    for s in range(players):
        mine = [int(deck[k]) for k in range(5 * players) if (fh + k) % players == s]
        assert sorted(mine) == [r for r in range(21) for _ in range(int(d.hands[0, s, r]))]
    assert d.talon(0) == deck[5 * players:].tolist()
    assert int(d.talon_pos[0]) == 5 * players
    assert (d.card_census(0) == 2).all()


def test_reset_rejects_bad_input() -> None:
    """reset: clear errors for a bad deck, dealer or pot, or neither decks nor rng."""
    d = DealBatch(Rules(3), 2)
    good = np.tile(ordered_deck(), (2, 1))
    bad = good.copy()
    bad[1, 0] = 1
    with pytest.raises(ValueError, match="deck of deal 1: the deck is not 21 ranks twice"):
        d.reset(decks=bad)
    with pytest.raises(ValueError, match=r"decks must have shape \(2, 42\)"):
        d.reset(decks=good[:, :41])
    with pytest.raises(ValueError, match="dealers must be in 0..2, got 3"):
        d.reset(decks=good, dealers=3)
    with pytest.raises(ValueError, match="pots must be in"):
        d.reset(decks=good, pots=-1)
    with pytest.raises(ValueError, match="pots must be integers"):
        d.reset(decks=good, pots=2.5)
    with pytest.raises(ValueError, match="needs either decks or an rng"):
        d.reset()
    with pytest.raises(ValueError, match="batch size"):
        DealBatch(Rules(3), 0)


# ----------------------------------------------------------------------------- L5
def test_L5_all_bud_is_a_budrunda() -> None:
    """L5 + L12: everybody says bud in the first call: budrunda, every player antes 1, the pot stays."""
    d = start(4, deck_for(4, {}), pot=8)
    for s in range(4):
        assert d.to_act[0] == s and d.phase[0] == FIRST_CALL and d.legal_moves(0) == ["bud", "knacka"]
        play(d, "bud")
    assert d.done[0] and d.phase[0] == FINISHED and d.to_act[0] == -1
    assert d.result(0) == {"outcome": "budrunda", "winner": None, "shower": None, "penalty": 0,
                           "money": [0, 0, 0, 0], "antes_next": [1, 1, 1, 1], "pot_next": 12}
    assert d.legal_moves(0) == [] and not d.legal_masks()[0].any()


def test_L5_first_knock_ends_the_call_at_once() -> None:
    """L5: the first knacka ends the call; the players after the knocker are not asked."""
    d = start(5, deck_for(5, {}), dealer=2)  # forehand 3
    play(d, "bud", "knacka")  # seats 3, 4
    assert d.phase[0] == FOLDING and d.knocker1[0] == 4
    assert d.call1[0].tolist() == [-1, -1, -1, 0, 1]  # seats 0, 1, 2 were never asked


# ----------------------------------------------------------------------------- L6, L7, L15
def test_L6_fold_order_from_the_knockers_left_and_the_knocker_cannot_fold() -> None:
    """L6: folds are asked from the knocker's left neighbour round to its right neighbour, once each."""
    d = start(5, deck_for(5, {}), dealer=4)
    play(d, "bud", "bud", "knacka")  # seat 2 knocks
    asked = []
    while d.phase[0] == FOLDING:
        asked.append(int(d.to_act[0]))
        assert d.legal_moves(0) == ["fold", "stay"]
        play(d, "stay")
    assert asked == [3, 4, 0, 1]
    assert d.phase[0] == EXCHANGE and d.fold_calls[0].tolist() == [3, 3, -1, 3, 3]


def test_L15_walkover_when_all_but_the_knocker_fold() -> None:
    """L6 + L15: everybody else folds: the knocker takes the pot, every player antes 1."""
    d = start(4, deck_for(4, {}), pot=11)
    play(d, "bud", "bud", "knacka", "fold", "fold", "fold")
    assert d.result(0) == {"outcome": "walkover", "winner": 2, "shower": None, "penalty": 0,
                           "money": [0, 0, 11, 0], "antes_next": [1, 1, 1, 1], "pot_next": 4}
    assert d.folded[0].tolist() == [1, 1, 0, 1] and d.n_in[0] == 1


def test_worked_example_fold_and_forehand() -> None:
    """Worked example "Fold and forehand" (L6, L7, L8, L9, L10): seat 0 folds, seat 1 becomes forehand."""
    d = start(4, deck_for(4, {}), dealer=3)
    assert d.forehand[0] == 0
    play(d, "bud", "knacka")
    order = []
    for mv in ("stay", "stay", "fold"):
        order.append(int(d.to_act[0]))
        play(d, mv)
    assert order == [2, 3, 0]
    assert d.forehand[0] == 1  # L7: nearest player still in, clockwise from seat 0
    assert d.phase[0] == EXCHANGE and d.to_act[0] == 1  # it exchanges first
    play(d, "stand", "stand", "stand")  # seats 1, 2, 3
    assert d.phase[0] == SECOND_CALL and d.to_act[0] == 1  # and speaks first in the second call
    assert d.legal_moves(0) == ["bud", "knacka"]  # the first knock does not bind (L9)
    play(d, "knacka")
    assert d.phase[0] == TRICKS and d.to_act[0] == 1 and d.trick_lead[0, 0] == 1  # and leads trick 1


def test_L7_forehand_skips_several_folded_seats() -> None:
    """L7: forehand moves to the nearest player still in clockwise, skipping every folded seat."""
    d = start(6, deck_for(6, {}), dealer=5)  # forehand 0
    play(d, "bud", "bud", "bud", "knacka")  # seat 3 knocks
    play(d, "stay", "fold", "fold", "fold", "fold")  # seats 4, 5, 0, 1, 2
    assert d.folded[0].tolist() == [1, 1, 1, 0, 0, 1]
    assert d.forehand[0] == 3 and d.to_act[0] == 3


# ----------------------------------------------------------------------------- L8
def test_L8_exchange_draws_from_the_talon_front() -> None:
    """L8: from forehand, clockwise among those still in: stand or discard one/two and draw as many."""
    hands = {0: ["blaren", "krans", "5", "9", "gok"], 1: ["1", "1", "6", "10", "husar"],
             2: ["2", "3", "7", "11", "kille"]}
    d = start(3, deck_for(3, hands, talon=["kavall", "svin", "vardshus", "husar"]))
    play(d, "knacka", "stay", "stay")
    assert d.legal_moves(0) == [
        "stand", "discard:blaren", "discard:krans", "discard:5", "discard:9", "discard:gok",
        "discard:blaren,krans", "discard:blaren,5", "discard:blaren,9", "discard:blaren,gok", "discard:krans,5",
        "discard:krans,9", "discard:krans,gok", "discard:5,9", "discard:5,gok", "discard:9,gok"]
    play(d, "discard:9,gok")
    assert hand(d, 0) == ["blaren", "krans", "5", "kavall", "svin"]
    assert d.to_act[0] == 1 and "discard:1,1" in d.legal_moves(0)  # two copies: a pair of one rank
    play(d, "discard:1,1")
    assert hand(d, 1) == ["6", "10", "vardshus", "husar", "husar"]
    assert d.exchanged[0].tolist() == [2, 2, -1]
    assert d.discards[0, 0].tolist() == [11, 19] and d.discards[0, 1].tolist() == [3, 3]
    play(d, "stand")
    assert d.exchanged[0].tolist() == [2, 2, 0] and d.phase[0] == SECOND_CALL
    assert int(d.talon_pos[0]) == 15 + 4
    assert (d.card_census(0) == 2).all()


def test_L8_pair_of_one_rank_needs_both_copies() -> None:
    """L8 + L17: discard:X,X is legal only when both copies are held."""
    d = start(2, deck_for(2, {0: ["3", "4", "5", "6", "7"]}))
    play(d, "knacka", "stay")
    assert not any(m.startswith("discard:3,3") for m in d.legal_moves(0))
    with pytest.raises(IllegalMoveError, match=r"discards 3 twice which seat 0 does not hold"):
        play(d, "discard:3,3")


def test_L8_the_talon_always_suffices() -> None:
    """L8: with 6 players all in and all discarding two, the talon (12 cards) is used up exactly."""
    d = start(6, deck_for(6, {}))
    play(d, *["bud"] * 5, "knacka", *["stay"] * 5)
    for _ in range(6):
        moves = d.legal_moves(0)
        play(d, moves[-1])  # a two-card discard
    assert int(d.talon_pos[0]) == 42 and d.talon(0) == [] and d.phase[0] == SECOND_CALL
    assert (d.card_census(0) == 2).all()


# ----------------------------------------------------------------------------- L9, L12
def test_L9_second_call_among_those_still_in_and_no_folding() -> None:
    """L9: second call from forehand among players still in; nobody may fold; all bud: budrunda (L12)."""
    d = start(4, deck_for(4, {}), pot=8)
    play(d, "bud", "knacka", "stay", "fold", "stay", "stand", "stand", "stand")  # seat 3 folded
    assert d.phase[0] == SECOND_CALL and d.to_act[0] == 0
    with pytest.raises(IllegalMoveError, match="nobody may fold after the fold decisions"):
        play(d, "fold")
    speakers = []
    for _ in range(3):
        speakers.append(int(d.to_act[0]))
        play(d, "bud")
    assert speakers == [0, 1, 2]
    assert d.result(0) == {"outcome": "budrunda", "winner": None, "shower": None, "penalty": 0,
                           "money": [0, 0, 0, 0], "antes_next": [0, 0, 0, 1], "pot_next": 9}


def test_L12_budrunda_without_folds_after_the_second_call() -> None:
    """L12: a budrunda in the second call with nobody folded: every player antes 1."""
    d = start(3, deck_for(3, {}), pot=5)
    play(d, "knacka", "stay", "stay", "stand", "stand", "stand", "bud", "bud", "bud")
    assert d.result(0)["antes_next"] == [1, 1, 1] and d.result(0)["pot_next"] == 8


# ----------------------------------------------------------------------------- L10
def overtake_deal(next_hand: list[str]) -> DealBatch:
    """Four players at trick 1 after seat 0 led 7 and seat 1 played gok; seat 2 holds ``next_hand``."""
    hands = {0: ["7", "1", "2", "4", "5"], 1: ["gok", "6", "8", "9", "10"], 2: next_hand}
    d = start(4, deck_for(4, hands))
    to_tricks(d)
    play(d, "play:7", "play:gok")
    return d


def test_worked_example_overtake_or_lowest() -> None:
    """Worked example "Overtake or lowest" (L10): at least the highest so far if possible, else the lowest."""
    d = overtake_deal(["blaren", "gok", "kille", "krans", "blompotta"])
    assert d.to_act[0] == 2 and d.high[0] == 19
    assert d.legal_moves(0) == ["play:gok", "play:kille"]
    with pytest.raises(IllegalMoveError, match="must play one of those"):
        play(d, "play:blaren")
    play(d, "play:gok")  # equal to the highest, played last: it leads the trick now
    play(d, d.legal_moves(0)[0])
    assert d.trick_winner[0, 0] == 2 and d.trick_lead[0, 1] == 2 and d.to_act[0] == 2

    d = overtake_deal(["blaren", "3", "12", "krans", "blompotta"])
    assert d.legal_moves(0) == ["play:blaren"]
    with pytest.raises(IllegalMoveError, match=r"must play its lowest card blaren: no card can overtake gok \(L10\)"):
        play(d, "play:12")


def test_L10_leader_plays_any_card_and_ties_go_to_the_last() -> None:
    """L10: the leader may play any card; of equal highest ranks the one played last wins."""
    hands = {0: ["9", "9", "1", "2", "kille"], 1: ["3", "4", "5", "6", "7"]}
    d = start(2, deck_for(2, hands, dealer=1))
    to_tricks(d)
    assert d.legal_moves(0) == ["play:1", "play:2", "play:9", "play:kille"]
    play(d, "play:1")
    assert d.legal_moves(0) == ["play:3", "play:4", "play:5", "play:6", "play:7"]
    play(d, "play:3")  # seat 1 wins trick 1 and leads trick 2
    assert d.trick_winner[0, 0] == 1 and d.to_act[0] == 1
    play(d, "play:7", "play:9")  # seat 0 overtakes
    assert d.trick_winner[0, 1] == 0
    play(d, "play:9")
    assert d.legal_moves(0) == ["play:4"]  # seat 1 (4 5 6) cannot reach 9: its lowest
    d2 = start(2, deck_for(2, {0: ["9", "1", "2", "3", "4"], 1: ["9", "5", "6", "7", "8"]}, dealer=1))
    to_tricks(d2)
    play(d2, "play:9", "play:9")  # a tie: seat 1 played it last and wins
    assert d2.trick_winner[0, 0] == 1 and d2.to_act[0] == 1


def test_L10_four_tricks_leave_one_card_each() -> None:
    """L10: after four tricks every player still in holds exactly one card; show calls start (L11)."""
    d = start(4, deck_for(4, TIE_HANDS))
    to_tricks(d)
    for trick in TIE_TRICKS:
        for seat, card in trick:
            assert d.to_act[0] == seat
            play(d, f"play:{card}")
    assert d.phase[0] == SHOWING and d.hands[0].sum(axis=1).tolist() == [1, 1, 1, 1]
    assert d.trick_winner[0].tolist() == [2, 1, 0, 2] and d.trick_lead[0].tolist() == [0, 2, 1, 0]
    assert d.trick_cards[0, 0].tolist() == [3, 4, 20, 1]


# ----------------------------------------------------------------------------- L11, L13, L14
def tie_deal(pot: int = 8) -> DealBatch:
    """The "Showdown tie" position: show calls about to start with seat 2."""
    d = start(4, deck_for(4, TIE_HANDS), pot=pot)
    to_tricks(d)
    for trick in TIE_TRICKS:
        play(d, *[f"play:{c}" for _, c in trick])
    return d


def test_worked_example_showdown_tie() -> None:
    """Worked example "Showdown tie" (L11, L13, L14): seat 1, last of the blarens in the order 2,3,0,1, wins."""
    d = tie_deal(pot=8)
    assert d.to_act[0] == 2 and d.legal_moves(0) == ["bud", "show"]
    play(d, "bud", "show")  # seat 3 shows krans first
    assert d.result(0) == {"outcome": "showdown", "winner": 1, "shower": 3, "penalty": 8,
                           "money": [0, 16, 0, -8], "antes_next": [2, 0, 2, 2], "pot_next": 6}


def test_L14_the_shower_wins_below_everyone() -> None:
    """L14: the shower wins the pot without penalty when every other holds a higher rank."""
    d = tie_deal(pot=8)
    play(d, "bud", "bud", "show")  # seat 0 shows blaren; seat 1's blaren ties
    res = d.result(0)
    assert res["winner"] == 1 and res["penalty"] == 8 and res["money"] == [-8, 16, 0, 0]  # a tie goes against s
    d = tie_deal(pot=8)
    play(d, "show")  # seat 2 shows 5: blaren below it, seat 1 is last in the order 2,3,0,1
    assert d.result(0)["winner"] == 1 and d.result(0)["money"] == [0, 16, -8, 0]


def test_L11_all_bud_in_the_show_calls_is_a_budrunda() -> None:
    """L11 + L12: everybody says bud: budrunda, nobody folded so every player antes 1, the pot stays."""
    d = tie_deal(pot=8)
    for s in (2, 3, 0, 1):
        assert d.to_act[0] == s
        play(d, "bud")
    assert d.result(0) == {"outcome": "budrunda", "winner": None, "shower": None, "penalty": 0,
                           "money": [0, 0, 0, 0], "antes_next": [1, 1, 1, 1], "pot_next": 12}


def test_worked_example_two_at_the_showdown() -> None:
    """Worked example "Two at the showdown" (L14): pot 9, seats 1 and 3 folded, seat 0 shows 2 against kille."""
    hands = {0: ["2", "3", "5", "7", "9"], 2: ["kille", "4", "6", "blaren", "10"]}
    d = start(4, deck_for(4, hands), pot=9)
    play(d, "knacka", "fold", "stay", "fold", "stand", "stand", "knacka")
    play(d, "play:3", "play:4", "play:6", "play:7", "play:5", "play:10", "play:blaren", "play:9")
    assert d.phase[0] == SHOWING and d.to_act[0] == 0 and hand(d, 0) == ["2"] and hand(d, 2) == ["kille"]
    play(d, "show")
    assert d.result(0) == {"outcome": "showdown", "winner": 0, "shower": 0, "penalty": 0,
                           "money": [9, 0, 0, 0], "antes_next": [1, 1, 3, 1], "pot_next": 6}


def test_L14_two_at_the_showdown_the_shower_loses() -> None:
    """L14: two at the showdown, the shower loses: it pays the penalty and antes 3, the others 1."""
    hands = {0: ["2", "3", "5", "7", "9"], 2: ["kille", "4", "6", "blaren", "10"]}
    d = start(4, deck_for(4, hands), pot=9)
    play(d, "knacka", "fold", "stay", "fold", "stand", "stand", "knacka")
    play(d, "play:3", "play:4", "play:6", "play:7", "play:5", "play:10", "play:blaren", "play:9")
    play(d, "bud", "show")  # seat 2 shows kille
    assert d.result(0) == {"outcome": "showdown", "winner": 0, "shower": 2, "penalty": 9,
                           "money": [18, 0, -9, 0], "antes_next": [1, 1, 3, 1], "pot_next": 6}


# ----------------------------------------------------------------------------- L16, L17
def test_L16_pots_beyond_int16() -> None:
    """L16: a pot can grow over many budrundor; money is exact in int32 (penalty = pot)."""
    d = tie_deal(pot=100_000_000)
    play(d, "bud", "show")
    assert d.result(0)["money"] == [0, 200_000_000, 0, -100_000_000]


@pytest.mark.parametrize("players", range(2, 7))
def test_L17_longest_deal_fits_the_history(players: int) -> None:
    """L17: every decision is a move, forced ones too; the longest deal has 9P − 1 moves and fits the history."""
    d = start(players, deck_for(players, {}))
    while not d.done[0]:
        play(d, longest_policy(d))
    assert int(d.n_moves[0]) == 9 * players - 1 == Rules(players).max_moves == d.hist_action.shape[1]
    assert kernels.MAX_MOVES == 53
    assert (d.hist_action[0] >= 0).all() and (d.hist_seat[0] >= 0).all()
    assert d.result(0)["outcome"] == "showdown"
    assert d.moves(0)[-1] == "show" and d.moves(0).count("show") == 1


def test_history_records_who_did_what() -> None:
    """The per-deal history: every move with its seat, calls, folds, exchanges (public count, private ranks)."""
    d = start(4, deck_for(4, {}))
    play(d, "bud", "knacka", "stay", "fold", "stay", "discard:blaren", "stand", "discard:3,4")
    assert d.hist_seat[0, :8].tolist() == [0, 1, 2, 3, 0, 0, 1, 2]
    assert d.hist_action[0, :8].tolist() == [0, 1, 3, 2, 3, 6, 4, 27 + 5 * 21 - 10 + 1]
    assert d.moves(0)[-1] == "discard:3,4" and parse_move("discard:3,4") == 27 + 5 * 21 - 10 + 1
    assert d.call1[0].tolist() == [0, 1, -1, -1] and d.fold_calls[0].tolist() == [3, -1, 3, 2]
    assert d.exchanged[0].tolist() == [1, 0, 2, -1]
    assert d.discards[0].tolist() == [[0, -1], [-1, -1], [5, 6], [-1, -1]]
    assert d.hist_action[0, 8:].tolist() == [-1] * (35 - 8)


# ----------------------------------------------------------------------------- step API
def test_step_raises_naming_the_deal_and_changes_nothing() -> None:
    """step: an illegal action in deal i raises naming deal i, the move and the legal moves; no deal changes."""
    d = DealBatch(Rules(3), 3)
    d.reset(decks=np.tile(parse_deck(deck_for(3, {})), (3, 1)))
    before = snapshot(d)
    with pytest.raises(IllegalMoveError, match=r"deal 1: play:gok \(seat 0\): a move of the wrong kind.*"
                                               r"legal moves: bud, knacka"):
        d.step(np.array([0, 258 + 19, 1]))
    assert np.array_equal(d.state, before[0]) and np.array_equal(d.cash, before[1])
    with pytest.raises(IllegalMoveError, match="outside 0..278"):
        d.step(np.array([0, 999, 1]))
    with pytest.raises(ValueError, match="actions must be 3 integers"):
        d.step(np.array([0, 1]))
    d.step(np.array([0, 1, 0]))
    assert d.to_act.tolist() == [1, 1, 1] and d.phase.tolist() == [FIRST_CALL, FOLDING, FIRST_CALL]


def test_step_ignores_finished_deals_and_step_status_reports() -> None:
    """step skips finished deals (−1 is fine there); step_status applies the legal ones and returns codes."""
    d = DealBatch(Rules(2), 2)
    d.reset(decks=np.tile(parse_deck(deck_for(2, {})), (2, 1)))
    d.step(np.array([0, 1]))  # bud / knacka
    d.step(np.array([0, 2]))  # deal 0: budrunda; deal 1: seat 0 folds -> walkover for seat 1
    assert d.done.tolist() == [True, True]
    d.step(np.array([-1, -1]))  # nothing to do
    d.reset(decks=np.tile(parse_deck(deck_for(2, {})), (2, 1)))
    status = d.step_status(np.array([3, 1]))  # stay is illegal in the first call
    assert status.tolist() == [kernels.WRONG_KIND, kernels.OK] and d.phase.tolist() == [FIRST_CALL, FOLDING]
    # check applies nothing
    assert d.check(np.array([0, 2])).tolist() == [kernels.OK, kernels.OK] and d.phase[1] == FOLDING


def test_play_move_after_the_end() -> None:
    """A move after the end of the deal is refused with a clear message."""
    d = start(2, deck_for(2, {}))
    play(d, "bud", "bud")
    with pytest.raises(IllegalMoveError, match="after the end of the deal"):
        play(d, "bud")
    with pytest.raises(ValueError, match="not finished"):
        start(2, deck_for(2, {})).result(0)


def test_legal_masks_match_legal_moves_and_out_buffer() -> None:
    """legal_masks: one (N, 279) call equals the per-deal legal action lists; an out buffer is filled in place."""
    d = DealBatch(Rules(3), 70)  # the parallel path
    rng = np.random.default_rng(3)
    d.reset(rng=rng)
    out = np.ones((70, 279), np.bool_)
    for _ in range(12):
        m = d.legal_masks(out)
        assert m is out
        for i in range(70):
            assert np.flatnonzero(m[i]).tolist() == d.legal_actions(i)
        d.play_random(rng)
    with pytest.raises(ValueError, match="out must be a bool array"):
        d.legal_masks(np.zeros((70, 278), np.bool_))


def test_pickle_round_trip() -> None:
    """DealBatch pickle with their views rebound."""
    import pickle

    d = tie_deal()
    e = pickle.loads(pickle.dumps(d))
    assert np.array_equal(e.state, d.state) and e.legal_moves(0) == ["bud", "show"]
    play(e, "show")
    assert np.shares_memory(e.hands, e.state) and not d.done[0] and e.done[0]
