"""Property tests over random variant decks and deals, against the brute-force oracle (RULES.md K20–K23).

Hypothesis draws a random rank subset, suit subset, number of copies, player count and a
``hand``/``table`` deal that fits the deck (K21); a random deal of it must conserve the
variant deck at every step, offer exactly the oracle's legal moves (K11–K13), follow the
reference deal (tests/krypkasino/oracle.py, extended to K21) move for move and end with the
deck's total points (K16, K20).  Derandomised and small: a few seconds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krypenv.krypkasino.cards import POINTS, RANKS, SUITS
from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.rules import Rules
from tests.krypkasino import oracle as O
from tests.krypkasino.test_properties import play_beside_reference

SETTINGS = settings(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow], database=None)


@st.composite
def variant_rules(draw: Any) -> Rules:
    """A random valid variant (K20, K21): ranks, suits, copies, players, and a hand/table deal in whole rounds."""
    ranks = draw(st.lists(st.sampled_from(RANKS), min_size=2, max_size=13, unique=True))  # at least 2 cards
    suits = draw(st.lists(st.sampled_from(SUITS), min_size=1, max_size=4, unique=True))
    copies = draw(st.sampled_from([1, 2]))
    size = len(ranks) * len(suits) * copies
    players = draw(st.integers(2, min(6, size)))
    hand = draw(st.integers(1, min(8, size // players)))
    rounds = draw(st.integers(1, size // (players * hand)))  # the table takes what the rounds leave (K21)
    table = size - rounds * players * hand
    set_aside = draw(st.sampled_from(["court", "spades"]))
    return Rules(players=players, ranks=ranks, suits=suits, copies=copies, hand=hand, table=table,
                 set_aside=set_aside, last_capture_point=draw(st.booleans()))


@settings(SETTINGS, max_examples=25)
@given(rules=variant_rules(), seed=st.integers(0, 2**32 - 1))
def test_k20_k23_random_variant_deal_against_reference(rules: Rules, seed: int) -> None:
    """K20–K23: a random deal of a random variant conserves its deck, has the oracle's legal moves and the reference
    state after every move, plays every card not laid out and ends with the deck's total points."""
    rng = np.random.default_rng(seed)
    d = DealBatch(rules, 1)
    d.reset(rng=rng, dealers=np.array([seed % rules.players]))
    assert sorted(d.deck[0].tolist()) == sorted(np.repeat(np.arange(52), rules.deck_counts).tolist())
    ref = O.RefDeal(rules.players, d.deck[0].tolist(), int(d.dealer[0]), spades=rules.set_aside == "spades",
                    last_capture_point=rules.last_capture_point, hand=rules.hand, table=rules.table)
    n = play_beside_reference(d, ref, rng, rules.deck_counts)  # K20: the variant deck conserved; K11–K13 on its cards
    assert n == rules.decisions_per_deal == rules.deck_size - rules.table
    assert int(d.taker[0]) == ref.taker
    total = rules.total_points + (1 if rules.last_capture_point else 0)  # K16, K17 with K20's total
    assert d.scores()[0].tolist() == ref.scores() and int(d.scores()[0].sum()) == total
    assert int(d.card_points()[0].sum()) == rules.total_points == int(POINTS @ rules.deck_counts)


@settings(SETTINGS, max_examples=4)
@given(rules=variant_rules(), seed=st.integers(0, 2**32 - 1))
def test_k20_batched_variant_play_is_seeded_and_conserves(rules: Rules, seed: int) -> None:
    """K20: serial and parallel batches of a variant conserve its deck and replay the same deals from one seed."""
    runs = []
    for n in (3, 64):  # 64 takes the parallel kernels
        rng = np.random.default_rng(seed)
        d = DealBatch(rules, n)
        d.reset(rng=rng)
        while not d.done.all():
            d.play_random(rng)
            assert n == 64 or (d.card_census() == rules.deck_counts).all()
        assert (d.card_census() == rules.deck_counts).all()
        assert (d.card_points().sum(axis=1) == rules.total_points).all()
        runs.append(d.deck[:3].copy())
    assert np.array_equal(*runs)  # a deal's deck does not depend on the batch size
