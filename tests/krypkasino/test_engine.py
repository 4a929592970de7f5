"""The engine against the rules: dealing, turns, captures, sweeps, tabbes, scoring (RULES.md K5–K19, examples A–M).

Expected values are worked out by hand from RULES.md (or by the brute-force oracle in
``tests/krypkasino/oracle.py``), never by asking the engine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest

from krypenv.krypkasino.engine import DealBatch, IllegalMoveError, kernels
from krypenv.krypkasino.engine.state import FIELDS
from krypenv.krypkasino.rules import Rules
from tests.krypkasino import oracle as O

Counts = tuple[int, ...]
Move = tuple[int, Counts]
ALL_52 = [r + s for s in O.SUITS for r in O.RANKS]  # code order (K2)


# ----------------------------------------------------------------------------- helpers
def mv(card: str, *taken: str) -> Move:
    """An expected move: played card and the table cards it takes (none = creep)."""
    return (O.code(card), O.counts(taken))


def moves(d: DealBatch, i: int = 0) -> set[Move]:
    """The engine's legal moves of deal i as a set, after checking it lists no move twice (K11)."""
    listed = [(int(c), tuple(int(x) for x in cap)) for c, cap in d.legal_moves(i)]
    assert len(listed) == len(set(listed)), "legal_moves lists a move twice"
    return set(listed)


def play(d: DealBatch, card: str, *taken: str) -> None:
    """Play one move in a single deal with step_checked (raises if illegal)."""
    d.step_checked(np.array([O.code(card)]), np.array([O.counts(taken)], dtype=np.int8))


def try_move(d: DealBatch, card: int, cap: Sequence[int]) -> int:
    """Step a single deal and return its status code."""
    return int(d.step(np.array([card]), np.array([cap], dtype=np.int8))[0])


def names(v: Sequence[int]) -> list[str]:
    """Sorted card names of a count vector."""
    return O.names_of(v)


def position(players: int, hands: list[list[str]], table: list[str], **kw: object) -> DealBatch:
    """A hand-made single deal with default rules for the player count (rule kwargs allowed)."""
    rule_keys = {"teams", "two_player_deal", "set_aside", "last_capture_point"}
    rkw = {k: v for k, v in kw.items() if k in rule_keys}
    pkw = {k: v for k, v in kw.items() if k not in rule_keys}
    return DealBatch.position(Rules(players=players, **rkw), hands=hands, table=table, **pkw)  # type: ignore[arg-type]


def snapshot(d: DealBatch) -> dict[str, np.ndarray]:
    """Copies of every state array."""
    return {f: getattr(d, f).copy() for f in FIELDS}


def assert_unchanged(d: DealBatch, before: dict[str, np.ndarray]) -> None:
    """Every state array equals its snapshot."""
    for f in FIELDS:
        assert np.array_equal(getattr(d, f), before[f]), f"illegal move changed {f}"


def deck_with_prefix(prefix: list[str]) -> list[str]:
    """104 card names starting with ``prefix``, the rest of two decks after it in code order (K1)."""
    left = Counter({n: 2 for n in ALL_52})
    left.subtract(prefix)
    assert all(v >= 0 for v in left.values()), "prefix uses a card more than twice"
    return list(prefix) + [n for n in ALL_52 for _ in range(left[n])]


def dealt(rules: Rules, deck: list[str], dealer: int) -> DealBatch:
    """A deal reset from an explicit deck order and dealer (dealer passed as an array)."""
    d = DealBatch(rules, 1)
    d.reset(decks=np.array([[O.code(n) for n in deck]]), dealers=np.array([dealer]))
    return d


def hand_names(d: DealBatch, seat: int) -> list[str]:
    """Sorted names of a seat's hand in deal 0."""
    return names(d.hands[0, seat])


def sorted_names(cards: list[str]) -> list[str]:
    """Names sorted in code order, like names_from_counts."""
    return sorted(cards, key=O.code)


def first_move(d: DealBatch) -> None:
    """Play the first legal move (engine order) of deal 0."""
    card, cap = d.legal_moves(0)[0]
    assert try_move(d, card, cap) == 0


# ============================================================================= K5, K6, K8: the initial deal
def test_k6_three_players_exact_deal() -> None:
    """K6/K8: 3 players, dealer 2: P3 T3 P2 T2 from the deck front, seat 0 first; J/Q on the table set aside."""
    prefix = ["AC", "2C", "3C", "4D", "5D", "6D", "7H", "8H", "9H", "JS", "10S", "AH",
              "KD", "QC", "2S", "3S", "4S", "5S", "QH", "6C"]  # fmt: skip
    d = dealt(Rules(players=3), deck_with_prefix(prefix), dealer=2)
    assert hand_names(d, 0) == sorted_names(["AC", "2C", "3C", "KD", "QC"])
    assert hand_names(d, 1) == sorted_names(["4D", "5D", "6D", "2S", "3S"])
    assert hand_names(d, 2) == sorted_names(["7H", "8H", "9H", "4S", "5S"])
    assert names(d.table[0]) == sorted_names(["10S", "AH", "6C"])
    assert names(d.aside[0]) == sorted_names(["JS", "QH"])
    assert (int(d.pos[0]), int(d.turn[0]), int(d.dealer[0]), int(d.in_hands[0])) == (20, 0, 2, 15)
    assert (int(d.round[0]), int(d.last_capturer[0]), bool(d.done[0]), int(d.n_moves[0])) == (0, -1, False, 0)
    assert d.piles.sum() == 0 and d.tabbes.sum() == 0


def test_k6_three_players_dealer_0_starts_at_seat_1() -> None:
    """K5/K6: with dealer 0 the first packet goes to seat 1, the dealer's packet last; seat 1 leads (K9)."""
    prefix = ["AC", "2C", "3C", "4D", "5D", "6D", "7H", "8H", "9H", "JS", "10S", "AH",
              "KD", "QC", "2S", "3S", "4S", "5S", "QH", "6C"]  # fmt: skip
    d = dealt(Rules(players=3), deck_with_prefix(prefix), dealer=0)
    assert hand_names(d, 1) == sorted_names(["AC", "2C", "3C", "KD", "QC"])
    assert hand_names(d, 2) == sorted_names(["4D", "5D", "6D", "2S", "3S"])
    assert hand_names(d, 0) == sorted_names(["7H", "8H", "9H", "4S", "5S"])
    assert int(d.turn[0]) == 1


def test_k8_spades_variant_initial_set_aside() -> None:
    """K8 variant set_aside='spades': spades leave the table, the court card QH stays."""
    prefix = ["AC", "2C", "3C", "4D", "5D", "6D", "7H", "8H", "9H", "JS", "10S", "AH",
              "KD", "QC", "2S", "3S", "4S", "5S", "QH", "6C"]  # fmt: skip
    d = dealt(Rules(players=3, set_aside="spades"), deck_with_prefix(prefix), dealer=2)
    assert names(d.table[0]) == sorted_names(["AH", "QH", "6C"])
    assert names(d.aside[0]) == sorted_names(["JS", "10S"])


def test_k6_two_player_five_plus_six_exact_deal() -> None:
    """K6 variant 5+6: P3 T3 P2 T3 — 5 cards each, 6 on the table (then K8 removes KH, JD)."""
    prefix = ["2H", "3H", "4H", "5C", "6C", "7C", "KH", "8D", "9D", "10H", "JH", "AS", "QS", "JD", "9S", "AD"]
    d = dealt(Rules(players=2, two_player_deal="5+6"), deck_with_prefix(prefix), dealer=1)
    assert hand_names(d, 0) == sorted_names(["2H", "3H", "4H", "10H", "JH"])
    assert hand_names(d, 1) == sorted_names(["5C", "6C", "7C", "AS", "QS"])
    assert names(d.table[0]) == sorted_names(["8D", "9D", "9S", "AD"])
    assert names(d.aside[0]) == sorted_names(["KH", "JD"])
    assert (int(d.pos[0]), int(d.turn[0]), int(d.in_hands[0])) == (16, 0, 10)


def test_k6_two_player_default_exact_deal() -> None:
    """K6 2 players: P3 T2 P3 T2 — 6 cards each, 4 on the table; aces stay on the table (K8)."""
    prefix = ["2H", "3H", "4H", "5C", "6C", "7C", "AH", "QD", "8H", "9H", "10H", "8C", "9C", "10C", "KC", "2D"]
    d = dealt(Rules(players=2), deck_with_prefix(prefix), dealer=1)
    assert hand_names(d, 0) == sorted_names(["2H", "3H", "4H", "8H", "9H", "10H"])
    assert hand_names(d, 1) == sorted_names(["5C", "6C", "7C", "8C", "9C", "10C"])
    assert names(d.table[0]) == sorted_names(["AH", "2D"])
    assert names(d.aside[0]) == sorted_names(["QD", "KC"])
    assert int(d.pos[0]) == 16


def test_k6_six_players_dealer_3_exact_deal() -> None:
    """K6 6 players, dealer 3, deck in code order: P3 T2 P2 starting at seat 4."""
    d = dealt(Rules(players=6), ALL_52 + ALL_52, dealer=3)
    expected = {
        4: ["AC", "2C", "3C", "8D", "9D"],
        5: ["4C", "5C", "6C", "10D", "JD"],
        0: ["7C", "8C", "9C", "QD", "KD"],
        1: ["10C", "JC", "QC", "AH", "2H"],
        2: ["KC", "AD", "2D", "3H", "4H"],
        3: ["3D", "4D", "5D", "5H", "6H"],
    }
    for seat, cards in expected.items():
        assert hand_names(d, seat) == sorted_names(cards), seat
    assert names(d.table[0]) == ["6D", "7D"]
    assert d.aside.sum() == 0
    assert (int(d.pos[0]), int(d.turn[0]), int(d.in_hands[0])) == (32, 4, 30)


def test_k7_six_players_second_round_hands() -> None:
    """K7: after round 0, each seat gets P2 P2 from deck index 32 on, from the dealer's left; nothing to the table."""
    d = dealt(Rules(players=6), ALL_52 + ALL_52, dealer=3)
    for _ in range(30):
        assert int(d.round[0]) == 0
        first_move(d)
    expected = {
        4: ["7H", "8H", "6S", "7S"],
        5: ["9H", "10H", "8S", "9S"],
        0: ["JH", "QH", "10S", "JS"],
        1: ["KH", "AS", "QS", "KS"],
        2: ["2S", "3S", "AC", "2C"],
        3: ["4S", "5S", "3C", "4C"],
    }
    for seat, cards in expected.items():
        assert hand_names(d, seat) == sorted_names(cards), seat
    assert (int(d.round[0]), int(d.pos[0]), int(d.turn[0]), int(d.in_hands[0])) == (1, 56, 4, 24)
    assert not any(d.table[0, c] for c in range(52) if c % 13 >= 10), "K8: court cards left on the table"


def test_k5_reset_scalar_dealer() -> None:
    """K5/K19: reset(dealers=<int>) makes that seat the dealer for every deal; its left neighbour leads."""
    d = DealBatch(Rules(players=4), 2)
    deck = [O.code(n) for n in ALL_52 + ALL_52]
    d.reset(decks=np.array([deck, deck]), dealers=2)
    assert d.dealer.tolist() == [2, 2]
    assert d.turn.tolist() == [3, 3]


def test_k5_default_dealer_is_last_seat() -> None:
    """K5: without dealers the dealer is seat n-1, so seat 0 leads."""
    for p in range(2, 7):
        d = DealBatch(Rules(players=p), 1)
        d.reset(rng=np.random.default_rng(p))
        assert (int(d.dealer[0]), int(d.turn[0])) == (p - 1, 0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"players": 2},
        {"players": 2, "two_player_deal": "5+6"},
        {"players": 3},
        {"players": 3, "set_aside": "spades"},
        {"players": 4},
        {"players": 5},
        {"players": 6},
    ],
)
def test_k6_k7_k8_whole_deal_matches_reference(kwargs: dict[str, object]) -> None:
    """K6–K9, K14, K15: whole deals (first legal move each turn, every dealer) match the reference deal state by
    state."""
    rules = Rules(**kwargs)  # type: ignore[arg-type]
    p = rules.players
    rng = np.random.default_rng(11 * p)
    for dealer in range(p):
        deck = rng.permutation(np.array(list(range(52)) * 2))
        d = DealBatch(rules, 1)
        d.reset(decks=deck[None, :], dealers=np.array([dealer]))
        ref = O.RefDeal(p, deck.tolist(), dealer, rules.two_player_deal == "5+6", rules.set_aside == "spades")
        rounds_seen = {0}
        while True:
            assert names(d.table[0]) == names(ref.table)
            assert names(d.aside[0]) == names(ref.aside)
            for s in range(p):
                assert names(d.hands[0, s]) == names(ref.hands[s])
                assert names(d.piles[0, s]) == names(ref.piles[s])
            assert d.tabbes[0].tolist() == ref.tabbes
            assert bool(d.done[0]) == ref.done
            if ref.done:
                break
            assert int(d.turn[0]) == ref.turn
            rounds_seen.add(int(d.round[0]))
            card, cap = d.legal_moves(0)[0]
            ref.play(card, tuple(int(x) for x in cap))
            assert try_move(d, card, cap) == 0
        assert int(d.taker[0]) == ref.taker
        assert d.scores()[0].tolist() == ref.scores()
        assert sum(ref.scores()) == 42
        assert rounds_seen == set(range(rules.rounds))
        assert int(d.n_moves[0]) == 104 - rules.table_size


# ============================================================================= K7, K8 on a hand-built position
def test_k7_k8_round_end_deals_p2_p2_and_sets_aside() -> None:
    """K7/K8: at round end courts (played ones too) go aside, then P2 P2 from the dealer's left, who leads."""
    rest = ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "AD", "2D", "3D"]
    d = position(3, [["2C"], ["QD"], ["3H"]], ["9H", "KH", "AC"], turn=1, dealer=0, deck_rest=rest)
    play(d, "QD")  # seat 1 creeps a queen (12: no combination in 9 13 1)
    play(d, "3H")  # seat 2 creeps (3: 1+...no)
    assert int(d.turn[0]) == 0
    play(d, "2C")  # dealer 0 plays last: 2 creeps (1+... no: 1, 3, 9 -> no 2)
    assert names(d.aside[0]) == sorted_names(["QD", "KH"])
    assert names(d.table[0]) == sorted_names(["AC", "2C", "3H", "9H"])
    assert hand_names(d, 1) == sorted_names(["2S", "3S", "8S", "9S"])
    assert hand_names(d, 2) == sorted_names(["4S", "5S", "10S", "AD"])
    assert hand_names(d, 0) == sorted_names(["6S", "7S", "2D", "3D"])
    assert (int(d.turn[0]), int(d.round[0]), int(d.pos[0]), bool(d.done[0])) == (1, 1, 104, False)
    assert d.tabbes.sum() == 0


def test_k8_spades_variant_round_end() -> None:
    """K8 spades variant at round end: the spades go aside, the court cards JH and KD stay on the table."""
    rest = ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C"]
    d = position(2, [["JH"], ["7S"]], ["KD", "AS"], deck_rest=rest, set_aside="spades")
    play(d, "JH")  # 11: 13, 1 -> no combination, creeps
    play(d, "7S")  # 7: no combination, creeps
    assert names(d.aside[0]) == sorted_names(["AS", "7S"])
    assert names(d.table[0]) == sorted_names(["JH", "KD"])
    assert hand_names(d, 0) == sorted_names(["2C", "3C", "6C", "7C"])
    assert hand_names(d, 1) == sorted_names(["4C", "5C", "8C", "9C"])


def test_k7_last_round_ends_the_deal() -> None:
    """K7/K15: when the deck is empty, the end of the round ends the deal (no more dealing)."""
    d = position(2, [["2C"], ["3D"]], ["9H"])
    play(d, "2C")
    assert not d.done[0]
    play(d, "3D")
    assert bool(d.done[0]) and d.hands.sum() == 0 and d.table.sum() == 0


# ============================================================================= K9 turn order
def test_k9_turn_order_whole_deal() -> None:
    """K9: play goes clockwise from the dealer's left every round; the dealer always plays last."""
    for p, dealer in [(4, 2), (5, 0), (2, 0)]:
        d = DealBatch(Rules(players=p), 1)
        d.reset(rng=np.random.default_rng(p), dealers=np.array([dealer]))
        k = 0
        while not d.done[0]:
            assert int(d.turn[0]) == (dealer + 1 + k) % p, (p, k)
            first_move(d)
            k += 1
        assert k == 104 - Rules(players=p).table_size


def test_k9_only_the_seat_to_play_can_play() -> None:
    """K9: a card held by another seat is 'not in hand' for the seat to play."""
    d = position(3, [["5C"], ["6D"], ["7H"]], ["9S"])
    before = snapshot(d)
    assert try_move(d, O.code("6D"), O.counts([])) == kernels.NOT_IN_HAND
    assert_unchanged(d, before)


# ============================================================================= K10–K12 captures and creeping
def test_k10_single_card_is_a_combination() -> None:
    """K10: a single table card of the played value is a combination; K11 takes every such card."""
    d = position(2, [["5H", "2C"], ["3C"]], ["5C", "5D", "9S"])
    assert moves(d) == {mv("5H", "5C", "5D"), mv("2C")}


def test_k11_identical_copies_are_one_move() -> None:
    """K11: two captures taking the same ranks and suits are the same move; different suits are different moves."""
    d = position(2, [["10H", "2C"], ["3C"]], ["4C", "4C", "6H"])
    assert moves(d) == {mv("10H", "4C", "6H"), mv("2C")}
    d = position(2, [["10H", "2C"], ["3C"]], ["4C", "4D", "6H"])
    assert moves(d) == {mv("10H", "4C", "6H"), mv("10H", "4D", "6H"), mv("2C")}


def test_k11_several_disjoint_combinations() -> None:
    """K11: 9 on 4 5 3 6 8 A 7: either the three pairs 4+5 3+6 8+A, or 5+3+A (which leaves 4 6 8 7, no 9)."""
    table = ["4C", "5D", "3S", "6D", "8C", "AC", "7H"]
    expected = {mv("9H", "4C", "5D", "3S", "6D", "8C", "AC"), mv("9H", "5D", "3S", "AC")}
    assert {(O.code("9H"), cap) for cap in O.maximal_captures(table, "9H")} == expected
    d = position(2, [["9H"], ["2C"]], table)
    assert moves(d) == expected


def test_k13_sweep_with_three_pairs_is_forced() -> None:
    """K13: 9 on 4 5 3 6 8 A splits the whole table (4+5, 3+6, 8+A): only that sweep is legal, the 2 may not creep."""
    table = ["4C", "5D", "3S", "6D", "8C", "AC"]
    d = position(2, [["9H", "2D"], ["2C"]], table)
    assert moves(d) == {mv("9H", *table)}


def test_k12_creep_puts_card_on_table_and_ace_counts_one() -> None:
    """K12/K3: a creeping ace lies on the table as 1; then a played 3 takes A+2 (1+2)."""
    d = position(2, [["AH", "9C"], ["3D", "8C"]], ["2C"])
    assert moves(d) == {mv("AH"), mv("9C")}
    play(d, "AH")
    assert names(d.table[0]) == sorted_names(["AH", "2C"])
    # seat 1: 3 takes A+2 (a sweep, forced); 8 cannot.
    assert moves(d) == {mv("3D", "AH", "2C")}


def test_k12_empty_table_everything_creeps() -> None:
    """K12: on an empty table every card creeps and no sweep is possible."""
    d = position(2, [["AH", "5C", "KD"], ["3D"]], [])
    assert moves(d) == {mv("AH"), mv("5C"), mv("KD")}


def test_k13_sweep_forces_whole_table_even_if_other_maximal_captures_exist() -> None:
    """K13: 6 on A 5 2 4 3 3 has the maximal capture A 2 3 too, but a sweep exists, so only the sweep is legal."""
    table = ["AC", "5D", "2H", "4S", "3C", "3D"]
    assert O.counts(["AC", "2H", "3C"]) in O.maximal_captures(table, "6H")  # the oracle agrees it is maximal
    d = position(2, [["6H", "KC"], ["2C"]], table)
    assert moves(d) == {mv("6H", *table)}
    before = snapshot(d)
    assert try_move(d, O.code("6H"), O.counts(["AC", "2H", "3C"])) == kernels.MUST_TAKE_ALL
    assert try_move(d, O.code("KC"), O.counts(["5D", "4S", "3C", "AC"])) == kernels.SWEEP_FORCED
    assert_unchanged(d, before)


def test_k13_legal_captures_refuses_a_card_when_sweep_forced() -> None:
    """K13: legal_captures of a non-sweeping card raises IllegalMoveError while a sweep is forced."""
    d = position(2, [["8H", "3C"], ["2C"]], ["5D", "3S"])
    with pytest.raises(IllegalMoveError):
        d.legal_captures(0, O.code("3C"))
    assert [O.names_of(c) for c in d.legal_captures(0, O.code("8H"))] == [sorted_names(["5D", "3S"])]


# ============================================================================= K14 tabbe
def test_k14_tabbe_on_first_turn_of_deal_hits_dealer() -> None:
    """K14: the leader sweeps 2C 3D with 5H on the first turn of a deal: +5 to seat 0, −5 to the dealer (seat 2)."""
    prefix = ["5H", "9C", "9D", "4C", "4D", "4H", "6C", "6D", "6H", "2C", "JH", "KD",
              "10C", "7C", "8C", "8D", "7D", "7H", "3D", "QS"]  # fmt: skip
    d = dealt(Rules(players=3), deck_with_prefix(prefix), dealer=2)
    assert names(d.table[0]) == sorted_names(["2C", "3D"])
    assert moves(d) == {mv("5H", "2C", "3D")}
    play(d, "5H", "2C", "3D")
    assert d.tabbes[0].tolist() == [1, 0, 0]
    assert d.scores()[0].tolist() == [5, 0, -5]


def test_k14_tabbe_on_last_turn_of_deal() -> None:
    """K14/K15: the dealer sweeping 3 4 2 with 9 on the very last turn scores a tabbe, then takes the set-aside pile."""
    d = position(2, [[], ["9D"]], ["3H", "4S", "2C"], aside=["KC"], turn=1)
    assert moves(d) == {mv("9D", "3H", "4S", "2C")}
    play(d, "9D", "3H", "4S", "2C")
    assert bool(d.done[0]) and int(d.taker[0]) == 1
    assert d.tabbes[0].tolist() == [0, 1]
    assert names(d.piles[0, 1]) == sorted_names(["9D", "3H", "4S", "2C", "KC"])
    assert d.scores()[0].tolist() == [-5, 1 + 5]  # 4S is the only point card


def test_k14_dubbeltabbe_lone_card_taken_by_identical_card() -> None:
    """K14: a lone 7H taken with 7H is a dubbeltabbe: +10 to the sweeper, −10 to the seat on its right."""
    d = position(3, [["2C"], ["7H"], ["3C"]], ["7H"], turn=1)
    play(d, "7H", "7H")
    assert d.tabbes[0].tolist() == [0, 2, 0]
    assert d.scores()[0].tolist() == [-10, 10, 0]


def test_k14_lone_card_taken_by_same_rank_other_suit_is_single() -> None:
    """K14: a lone 7H taken with 7D is one tabbe."""
    d = position(3, [["2C"], ["7D"], ["3C"]], ["7H"], turn=1)
    play(d, "7D", "7H")
    assert d.tabbes[0].tolist() == [0, 1, 0]
    assert d.scores()[0].tolist() == [-5, 5, 0]


def test_k14_lone_ace_cannot_be_taken_by_ace() -> None:
    """K3/K14: a played ace (14) cannot take a lone table ace (1): it creeps, no tabbe."""
    d = position(2, [["AH"], ["2C"]], ["AH"])
    assert moves(d) == {mv("AH")}
    before = snapshot(d)
    assert try_move(d, O.code("AH"), O.counts(["AH"])) == kernels.NOT_MAXIMAL
    assert_unchanged(d, before)
    play(d, "AH")
    assert names(d.table[0]) == ["AH", "AH"]
    assert d.tabbes.sum() == 0
    # the next seat's 2 takes A+A (1+1) as a sweep
    assert moves(d) == {mv("2C", "AH", "AH")}


def test_k14_table_emptied_by_initial_set_aside_is_no_tabbe() -> None:
    """K8/K14: a dealt table of court cards only is empty after setting aside: no tabbe, every card creeps."""
    prefix = ["2H", "3H", "4H", "5C", "6C", "7C", "JC", "QD", "8H", "9H", "10H", "8C", "9C", "10C", "KH", "KS"]
    d = dealt(Rules(players=2), deck_with_prefix(prefix), dealer=1)
    assert d.table.sum() == 0 and d.tabbes.sum() == 0
    assert names(d.aside[0]) == sorted_names(["JC", "QD", "KH", "KS"])
    assert moves(d) == {mv(c) for c in ["2H", "3H", "4H", "8H", "9H", "10H"]}


def test_k14_table_emptied_by_round_end_set_aside_is_no_tabbe() -> None:
    """K8/K14: a table of court cards set aside at round end leaves an empty table and no tabbe."""
    rest = ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C"]
    d = position(2, [["QH"], ["KD"]], [], deck_rest=rest)
    play(d, "QH")
    play(d, "KD")  # 13 cannot take 12
    assert d.table.sum() == 0 and d.tabbes.sum() == 0
    assert names(d.aside[0]) == sorted_names(["QH", "KD"])
    assert d.scores()[0].tolist() == [0, 0]


def test_k14_two_players_right_neighbour_is_the_other_seat() -> None:
    """K14/K16: with 2 players the seat on the sweeper's right is the other seat."""
    d = position(2, [["8C"], ["2D"]], ["8H"])
    play(d, "8C", "8H")
    assert d.scores()[0].tolist() == [5, -5]


# ============================================================================= K15 end of the deal, K17
def test_k15_last_capturer_takes_table_and_set_aside_pile() -> None:
    """K15: the last capturer (seat 0) takes the rest of the table and the set-aside pile; this is not a tabbe."""
    d = position(2, [["9C"], ["4D"]], ["5H", "4S", "2C"], aside=["KS", "QD"])
    play(d, "9C", "5H", "4S")
    play(d, "4D")  # creeps: 4 from 2 -> none
    assert bool(d.done[0]) and int(d.taker[0]) == 0
    assert names(d.piles[0, 0]) == sorted_names(["9C", "5H", "4S", "2C", "4D", "KS", "QD"])
    assert d.piles[0, 1].sum() == 0 and d.table.sum() == 0 and d.aside.sum() == 0
    assert d.tabbes[0].tolist() == [0, 0]
    assert d.card_points()[0].tolist() == [2, 0]
    assert d.scores()[0].tolist() == [2, 0]


def test_k15_nobody_captured_dealer_takes() -> None:
    """K15: if nobody captured during the deal, the dealer (seat 1 here) takes table and pile."""
    d = position(3, [["3C"], ["4D"], ["KS"]], ["9H"], aside=["AS"], turn=2, dealer=1)
    play(d, "KS")
    play(d, "3C")
    play(d, "4D")
    assert bool(d.done[0]) and int(d.taker[0]) == 1
    assert names(d.piles[0, 1]) == sorted_names(["9H", "KS", "3C", "4D", "AS"])
    assert d.scores()[0].tolist() == [0, 3, 0]


def test_k15_earlier_capture_counts_over_dealer() -> None:
    """K15: a capture earlier in the deal (last_capturer 2) beats the dealer when no one captures later."""
    d = position(3, [["3C"], ["4D"], ["KS"]], ["9H"], aside=["AS"], turn=2, dealer=1, last_capturer=2)
    for c in ["KS", "3C", "4D"]:
        play(d, c)
    assert int(d.taker[0]) == 2
    assert d.scores()[0].tolist() == [0, 0, 3]


def test_k17_last_capture_point() -> None:
    """K17: the last capturer gets one extra point."""
    d = position(2, [["9C"], ["4D"]], ["5H", "4S", "2C"], aside=["KS", "QD"], last_capture_point=True)
    play(d, "9C", "5H", "4S")
    assert d.scores()[0].tolist() == [1, 0]  # not yet finished: no bonus
    play(d, "4D")
    assert d.scores()[0].tolist() == [3, 0]


def test_k17_whole_deal_sums_to_43() -> None:
    """K16/K17: full deals with the variant sum to 43, without it to 42."""
    for lcp, total in [(True, 43), (False, 42)]:
        d = DealBatch(Rules(players=4, last_capture_point=lcp), 5)
        rng = np.random.default_rng(5)
        d.reset(rng=rng)
        while not d.done.all():
            d.play_random(rng)
        assert d.scores().sum(axis=1).tolist() == [total] * 5
        assert d.card_points().sum(axis=1).tolist() == [42] * 5


# ============================================================================= K16 scoring, K18 teams
def test_k16_score_formula() -> None:
    """K16: score = card points + 5 x own tabbes − 5 x left neighbour's tabbes (tabbes 2 0 1 1, 10D to seat 0)."""
    d = position(4, [[], [], [], []], [])
    d.tabbes[0] = [2, 0, 1, 1]
    d.piles[0, 0, O.code("10D")] = 1
    assert d.scores()[0].tolist() == [3 + 10, -5, 5 - 5, 5 - 10]


def test_k18_team_scores_four_players() -> None:
    """K18: 4 players, teams {0,2} {1,3}: seat 1's dubbeltabbe with 10D (6 points + 10) and seat 0's −10."""
    d = position(4, [["2C"], ["10D"], ["3C"], ["4C"]], ["10D"], turn=1, teams=[[0, 2], [1, 3]])
    play(d, "10D", "10D")
    assert d.scores()[0].tolist() == [-10, 16, 0, 0]
    assert d.team_scores()[0].tolist() == [-10, 16]


@pytest.mark.parametrize(
    ("teams", "expected"),
    [([[0, 3], [1, 4], [2, 5]], [-10, 14, 0]), ([[0, 2, 4], [1, 3, 5]], [14, -10])],
)
def test_k18_team_scores_six_players(teams: list[list[int]], expected: list[int]) -> None:
    """K18: 6 players, seat 4 takes a lone 2S with 2S (4 points + dubbeltabbe); seat 3 gets −10."""
    d = position(6, [["3C"], ["4C"], ["5C"], ["6C"], ["2S"], ["7C"]], ["2S"], turn=4, teams=teams)
    play(d, "2S", "2S")
    assert d.scores()[0].tolist() == [0, 0, 0, -10, 14, 0]
    assert d.team_scores()[0].tolist() == expected


def test_k18_no_teams_team_scores_are_seat_scores() -> None:
    """K18: without teams, team_scores equals scores."""
    d = position(3, [["2C"], ["7D"], ["3C"]], ["7H"], turn=1)
    play(d, "7D", "7H")
    assert d.team_scores()[0].tolist() == [-5, 5, 0]


# ============================================================================= K19 match
def test_k19_match_dealer_rotates_and_totals_sum() -> None:
    """K19: a 3-deal match with the deal passing left (dealers 0, 1, 2); each deal sums to 42, the match to 126."""
    d = DealBatch(Rules(players=3), 1)
    rng = np.random.default_rng(19)
    totals = np.zeros(3, np.int64)
    for k in range(3):
        dealer = k % 3
        d.reset(rng=rng, dealers=np.array([dealer]))
        assert (int(d.dealer[0]), int(d.turn[0])) == (dealer, (dealer + 1) % 3)
        while not d.done[0]:
            d.play_random(rng)
        assert int(d.scores()[0].sum()) == 42
        totals += d.scores()[0]
    assert int(totals.sum()) == 126


def test_k19_batched_match_with_dealer_array() -> None:
    """K19: deals of one batch may have different dealers; each seat deals once in a 4-deal 4-player match."""
    d = DealBatch(Rules(players=4, teams=[[0, 2], [1, 3]]), 4)
    rng = np.random.default_rng(4)
    d.reset(rng=rng, dealers=np.array([0, 1, 2, 3]))
    assert d.turn.tolist() == [1, 2, 3, 0]
    while not d.done.all():
        d.play_random(rng)
    assert d.scores().sum(axis=1).tolist() == [42] * 4
    assert d.team_scores().sum(axis=1).tolist() == [42] * 4
    ts = d.team_scores()
    s = d.scores()
    assert np.array_equal(ts[:, 0], s[:, 0] + s[:, 2]) and np.array_equal(ts[:, 1], s[:, 1] + s[:, 3])


# ============================================================================= illegal moves
def _illegal(d: DealBatch, card: str, taken: Sequence[str] | Sequence[int], code: int) -> None:
    """Check that a move is refused with ``code``, changes nothing, and step_checked raises with a message."""
    cap = O.counts(taken) if not taken or isinstance(taken[0], str) else tuple(taken)  # type: ignore[arg-type]
    c = O.code(card)
    before = snapshot(d)
    assert try_move(d, c, cap) == code
    assert_unchanged(d, before)
    with pytest.raises(IllegalMoveError) as err:
        d.step_checked(np.array([c]), np.array([cap], dtype=np.int8))
    assert isinstance(err.value, ValueError) and "illegal" in str(err.value)
    assert_unchanged(d, before)


def test_illegal_card_not_in_hand() -> None:
    """K9: a card the seat does not hold is refused."""
    d = position(2, [["8S", "6H"], ["2C"]], ["8C", "9D", "JH"])
    _illegal(d, "7S", [], kernels.NOT_IN_HAND)
    _illegal(d, "8C", ["8C"], kernels.NOT_IN_HAND)  # on the table, not in the hand


def test_illegal_non_maximal_capture() -> None:
    """K11: in example B, 8 taking only 8 (or only A+7) leaves combinations behind: refused."""
    d = position(2, [["8H", "6S"], ["2C"]], ["AC", "2D", "6H", "7S", "8C", "9D", "JH"])
    _illegal(d, "8H", ["8C"], kernels.NOT_MAXIMAL)
    _illegal(d, "8H", ["AC", "7S"], kernels.NOT_MAXIMAL)
    _illegal(d, "8H", ["AC", "2D", "6H", "7S", "8C", "9D"], kernels.NOT_MAXIMAL)  # 9 is not part of a combination


def test_illegal_wrong_sum_capture() -> None:
    """K10: a capture whose cards do not split into combinations of the played value is refused."""
    d = position(2, [["3H", "9S"], ["2C"]], ["5C", "9D"])
    _illegal(d, "3H", ["5C"], kernels.NOT_MAXIMAL)
    _illegal(d, "9S", ["5C", "9D"], kernels.NOT_MAXIMAL)


def test_illegal_creep_when_capture_exists() -> None:
    """K11/K12: example A, the 8 must take the 8; creeping it is refused."""
    d = position(2, [["8S", "6H"], ["2C"]], ["8C", "9D", "JH"])
    _illegal(d, "8S", [], kernels.NOT_MAXIMAL)


def test_illegal_skipping_forced_sweep() -> None:
    """K13: example K's table 6 10 4 with a 10 in hand: playing the 3 (creep) or 2 is refused."""
    d = position(2, [["10S", "3C", "2C"], ["5D"]], ["6D", "10H", "4C"])
    _illegal(d, "3C", [], kernels.SWEEP_FORCED)
    _illegal(d, "2C", [], kernels.SWEEP_FORCED)


def test_illegal_forced_sweep_not_taking_whole_table() -> None:
    """K13: example H's 6 4 2 with a 6 in hand: 6 taking only 6, or only 4+2, is refused."""
    d = position(2, [["6S", "5C"], ["2D"]], ["6C", "4D", "2S"])
    _illegal(d, "6S", ["6C"], kernels.MUST_TAKE_ALL)
    _illegal(d, "6S", ["4D", "2S"], kernels.MUST_TAKE_ALL)
    _illegal(d, "6S", [], kernels.MUST_TAKE_ALL)


def test_illegal_capture_of_cards_not_on_table() -> None:
    """K10: capturing a card that is not on the table (or a second copy of one) is refused."""
    d = position(2, [["8S", "6H"], ["2C"]], ["8C", "9D", "JH"])
    _illegal(d, "8S", ["8D"], kernels.NOT_ON_TABLE)
    _illegal(d, "8S", ["8C", "8C"], kernels.NOT_ON_TABLE)
    _illegal(d, "6H", ["AC", "5C"], kernels.NOT_ON_TABLE)


def test_illegal_negative_counts() -> None:
    """A capture vector with a negative count is refused."""
    d = position(2, [["8S", "6H"], ["2C"]], ["8C", "9D", "JH"])
    cap = [0] * 52
    cap[O.code("8C")] = 1
    cap[O.code("9D")] = -1
    _illegal(d, "8S", cap, kernels.BAD_COUNTS)


def test_illegal_move_after_deal_is_over() -> None:
    """A finished deal accepts no more moves."""
    d = position(2, [["2C"], ["3D"]], ["9H"])
    play(d, "2C")
    play(d, "3D")
    _illegal(d, "3D", [], kernels.DEAL_OVER)
    assert d.legal_moves(0) == []


def test_illegal_move_in_batch_leaves_other_deals_playing() -> None:
    """A batch step applies the legal move of one deal and refuses the other without touching it."""
    d = DealBatch(Rules(players=3), 2)
    deck = [O.code(n) for n in ALL_52 + ALL_52]
    d.reset(decks=np.array([deck, deck]), dealers=np.array([2, 2]))
    card, cap = d.legal_moves(0)[0]
    before = snapshot(d)
    status = d.step(np.array([card, O.code("KS")]), np.array([cap, np.zeros(52)], dtype=np.int8))
    assert status.tolist() == [0, kernels.NOT_IN_HAND]
    for f in FIELDS:
        assert np.array_equal(getattr(d, f)[1], before[f][1]), f
    assert int(d.n_moves[0]) == 1 and int(d.n_moves[1]) == 0


def test_inactive_deals_are_not_stepped() -> None:
    """step(active=...) leaves inactive deals exactly as they were."""
    d = DealBatch(Rules(players=2), 2)
    deck = [O.code(n) for n in ALL_52 + ALL_52]
    d.reset(decks=np.array([deck, deck]), dealers=np.array([1, 1]))
    card, cap = d.legal_moves(1)[0]
    before = snapshot(d)
    status = d.step(np.array([card, card]), np.array([cap, cap], dtype=np.int8), active=np.array([False, True]))
    assert status.tolist() == [0, 0]
    for f in FIELDS:
        assert np.array_equal(getattr(d, f)[0], before[f][0]), f
    assert int(d.n_moves[1]) == 1


# ============================================================================= worked examples A–M
def test_example_A() -> None:
    """Example A (K11, K12): table 8 9 J, hand 8 6: 6 creeps; 8 takes 8."""
    d = position(2, [["8S", "6H"], ["2C"]], ["8C", "9D", "JH"])
    assert moves(d) == {mv("6H"), mv("8S", "8C")}


def test_example_B() -> None:
    """Example B (K11): table A 2 6 7 8 9 J, hand 8 6: 6 takes 6; 8 takes A 2 6 7 8 (A+7, 2+6, 8)."""
    d = position(2, [["8H", "6S"], ["2C"]], ["AC", "2D", "6H", "7S", "8C", "9D", "JH"])
    assert moves(d) == {mv("6S", "6H"), mv("8H", "AC", "2D", "6H", "7S", "8C")}
    play(d, "8H", "AC", "2D", "6H", "7S", "8C")
    assert names(d.table[0]) == sorted_names(["9D", "JH"])
    assert names(d.piles[0, 0]) == sorted_names(["8H", "AC", "2D", "6H", "7S", "8C"])
    assert d.tabbes.sum() == 0


def test_example_C() -> None:
    """Example C (K3, K11): table 2 3 4 5 8 10, a played A (14) has three moves: 10 4 / 8 4 2 / 5 4 3 2."""
    d = position(2, [["AH"], ["2S"]], ["2C", "3D", "4H", "5S", "8C", "10D"])
    assert moves(d) == {
        mv("AH", "10D", "4H"),
        mv("AH", "8C", "4H", "2C"),
        mv("AH", "5S", "4H", "3D", "2C"),
    }


def test_example_D() -> None:
    """Example D (K3, K13): table A 4 6 Q, hand A 7 J: 7 takes 6 A; J takes 6 4 A; A creeps; no sweep forced."""
    d = position(2, [["AD", "7C", "JH"], ["2S"]], ["AC", "4D", "6H", "QS"])
    assert moves(d) == {mv("AD"), mv("7C", "6H", "AC"), mv("JH", "6H", "4D", "AC")}


def test_example_E() -> None:
    """Example E (K12, K13, K3): table A 8, 5 creeps; then a played A sweeps A 8 5 (1+8+5 = 14), forced."""
    d = position(2, [["5C", "KD"], ["AS", "3D"]], ["AH", "8D"])
    assert mv("5C") in moves(d)
    play(d, "5C")
    assert moves(d) == {mv("AS", "AH", "8D", "5C")}
    play(d, "AS", "AH", "8D", "5C")
    assert d.tabbes[0].tolist() == [0, 1]
    assert d.scores()[0].tolist() == [-5, 3 + 5]  # AS 2 + AH 1


def test_example_F() -> None:
    """Example F (K12, K13): table 2 6 5, 3 creeps; then 8 sweeps (6+2, 5+3)."""
    d = position(2, [["3S", "9C"], ["8C", "4D"]], ["2C", "6D", "5H"])
    assert mv("3S") in moves(d)
    play(d, "3S")
    assert moves(d) == {mv("8C", "2C", "6D", "5H", "3S")}


@pytest.mark.parametrize(
    ("played", "taken", "leaves", "sweeper"),
    [
        ("3S", ["3C"], ["5D", "9H"], "AD"),
        ("5S", ["5D"], ["3C", "9H"], "QD"),
        ("8S", ["3C", "5D"], ["9H"], "9D"),
        ("9S", ["9H"], ["3C", "5D"], "8D"),
        ("QS", ["3C", "9H"], ["5D"], "5C"),
        ("AS", ["5D", "9H"], ["3C"], "3D"),
    ],
)
def test_example_G(played: str, taken: list[str], leaves: list[str], sweeper: str) -> None:
    """Example G (K11, K13): table 3 5 9 — each capture and what it leaves, and the card that then sweeps the rest."""
    d = position(2, [[played], ["2C"]], ["3C", "5D", "9H"])
    assert moves(d) == {mv(played, *taken)}
    play(d, played, *taken)
    assert names(d.table[0]) == sorted_names(leaves)
    d2 = position(2, [[sweeper, "2C"], ["2D"]], leaves)
    assert moves(d2) == {mv(sweeper, *leaves)}


def test_example_H() -> None:
    """Example H (K11, K13): table J 6 4 2, J takes J; the rest 6 4 2 is swept by a 6 (6, 4+2) or a Q."""
    d = position(2, [["JS"], ["2D"]], ["JH", "6C", "4D", "2S"])
    assert moves(d) == {mv("JS", "JH")}
    play(d, "JS", "JH")
    assert d.tabbes.sum() == 0
    d2 = position(2, [["6H", "QH", "3C"], ["2D"]], ["6C", "4D", "2S"])
    assert moves(d2) == {mv("6H", "6C", "4D", "2S"), mv("QH", "6C", "4D", "2S")}


def test_example_I() -> None:
    """Example I (K14): 3 takes 3H; lone 5S taken by 5S is a dubbeltabbe; with 5S and 5D either sweeps, 5D single."""
    d = position(2, [["3C"], ["9D"]], ["3H", "5S"])
    assert moves(d) == {mv("3C", "3H")}
    play(d, "3C", "3H")
    assert d.tabbes.sum() == 0
    for card, tabbes, score in [("5S", 2, 2 + 10), ("5D", 1, 1 + 5)]:
        d = position(2, [["5S", "5D"], ["9D"]], ["5S"])
        assert moves(d) == {mv("5S", "5S"), mv("5D", "5S")}
        play(d, card, "5S")
        assert d.tabbes[0].tolist() == [tabbes, 0]
        assert d.scores()[0].tolist() == [score, -5 * tabbes]


def test_example_J() -> None:
    """Example J (K14): JD sweeping 4C 7S JD takes three cards: a single tabbe, not a dubbeltabbe."""
    d = position(2, [["JD"], ["9D"]], ["4C", "7S", "JD"])
    assert moves(d) == {mv("JD", "4C", "7S", "JD")}
    play(d, "JD", "4C", "7S", "JD")
    assert d.tabbes[0].tolist() == [1, 0]
    assert d.scores()[0].tolist() == [1 + 5, -5]


def test_example_K() -> None:
    """Example K (K8, K13, K14): dealer's last 4 creeps on 6 10 J K; J K go aside; the leader must sweep with 10;
    dealer −5."""
    rest = ["10S", "2C", "7C", "8C", "5C", "5D", "3H", "9D", "7D", "8D", "5H", "6S"]
    d = position(3, [[], [], ["4C"]], ["6D", "10H", "JS", "KC"], turn=2, dealer=2, deck_rest=rest)
    play(d, "4C")
    assert names(d.aside[0]) == sorted_names(["JS", "KC"])
    assert names(d.table[0]) == sorted_names(["6D", "10H", "4C"])
    assert hand_names(d, 0) == sorted_names(["10S", "2C", "3H", "9D"])
    assert (int(d.turn[0]), int(d.round[0])) == (0, 1)
    assert moves(d) == {mv("10S", "6D", "10H", "4C")}
    play(d, "10S", "6D", "10H", "4C")
    assert d.tabbes[0].tolist() == [1, 0, 0]
    assert d.scores()[0].tolist() == [1 + 5, 0, -5]


def test_example_L() -> None:
    """Example L (K16): tabbes A1 B3 C1 D0 E0 (seats 0..4 clockwise): A −10, B +10, C +5, D 0, E −5."""
    d = position(5, [[], [], [], [], []], [])
    d.tabbes[0] = [1, 3, 1, 0, 0]
    assert d.scores()[0].tolist() == [-10, 10, 5, 0, -5]


def test_example_M() -> None:
    """Example M (K4, K11, K12): table 2H 6C QS, hand 7D 8S JD KC: 7, J, K creep; 8S takes 6 2 (1 point), leaves Q."""
    d = position(2, [["7D", "8S", "JD", "KC"], ["2C"]], ["2H", "6C", "QS"])
    assert moves(d) == {mv("7D"), mv("8S", "6C", "2H"), mv("JD"), mv("KC")}
    play(d, "8S", "6C", "2H")
    assert names(d.table[0]) == ["QS"]
    assert d.card_points()[0].tolist() == [1, 0]
    assert d.tabbes.sum() == 0


def test_pick_card_is_the_kth_legal_card_in_card_order() -> None:
    """``pick_card`` picks the ⌊u·n⌋-th of the n playable cards (the forced sweep values' only, K13) in card order,
    against a list built by hand: random hands of 0–2 copies, every forced value set size, u at 0, 1⁻, 1 (the last
    card) and the edges between two picks."""
    from krypenv.krypkasino.cards import HAND_VALUE

    rng = np.random.default_rng(11)
    for trial in range(600):
        hand = (rng.random(52) < rng.choice([0.0, 0.05, 0.2, 0.6, 1.0])) * rng.integers(1, 3, 52)
        hand = hand.astype(np.int8)
        forced = 0 if trial % 3 == 0 else int(sum(1 << v for v in range(2, 15) if rng.random() < 0.3))
        legal = [c for c in range(52) if hand[c] and (forced == 0 or forced >> int(HAND_VALUE[c]) & 1)]
        n = len(legal)
        us = [0.0, np.nextafter(1.0, 0.0), 1.0, *rng.random(4)] + [k / n for k in range(n)] + [np.nextafter(k / n, 0.0)
                                                                                          for k in range(1, n)]
        for u in us:
            want = legal[min(int(u * n), n - 1)] if n else -1
            assert kernels.pick_card(hand, forced, u) == want, (hand.tolist(), forced, u)
