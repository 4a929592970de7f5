"""Property tests of Kungsholmskille variants on random small configurations (KILLE.md L20–L23).

Random player counts, deck sizes (L20), pot bounds (L21), decks and choices: the engine equals
the independent oracle at every decision, cards are conserved in the variant's deck, money is
conserved in every deal and every pot, and a bounded pot ends within its bound.  Derandomised.
"""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from krypenv.kungsholmskille.cards import deck_names, shuffled_decks
from krypenv.kungsholmskille.engine import DealBatch
from krypenv.kungsholmskille.records import check_record, record_from_deals
from krypenv.kungsholmskille.rules import Rules, min_ranks
from tests.kungsholmskille.oracle import OracleDeal
from tests.kungsholmskille.test_properties import SETTINGS, assert_same_as_oracle, choose


@st.composite
def small_rules(draw: st.DrawFn) -> Rules:
    """A random variant: 2–6 players, any legal deck size (L20), a pot bound of 1–4 deals or none (L21)."""
    players = draw(st.integers(2, 6))
    ranks = draw(st.integers(min_ranks(players), 21))
    return Rules(players, ranks, draw(st.one_of(st.none(), st.integers(1, 4))))


props = st.fixed_dictionaries({
    "knock": st.floats(0.05, 0.95), "stay": st.floats(0.2, 0.95), "show": st.floats(0.1, 0.9),
})  # fmt: skip


@SETTINGS
@given(small_rules(), st.integers(0, 2**32 - 1), props, st.integers(0, 3), st.integers(0, 200))
def test_variant_deals_match_the_oracle(rules: Rules, seed: int, p: dict, deal_no: int, pot: int) -> None:
    """L20, L21: every decision equals the oracle's, the census is the deck's, L18's bookkeeping holds (settled
    included), and the record replays."""
    rng = np.random.default_rng(seed)
    deal_no = deal_no % (rules.max_deals or 4)
    last = rules.is_last_deal(deal_no)
    deck = shuffled_decks(rng, 1, rules.ranks)
    dealer = int(rng.integers(rules.players))
    d = DealBatch(rules, 1)
    d.reset(decks=deck, dealers=dealer, pots=pot, deals=deal_no)
    o = OracleDeal(rules.players, dealer, pot, deck_names(deck[0]), last=last)
    while not o.done:
        assert_same_as_oracle(d, 0, o)
        assert d.card_census(0).tolist() == rules.deck_counts.tolist()
        mv = choose(rng, o.legal_moves(), p)
        d.play_move(0, mv)
        o.play(mv)
    assert_same_as_oracle(d, 0, o)
    res = d.result(0)
    assert res == o.result()
    went_out = res["outcome"] != "budrunda"
    assert went_out == bool(d.pot_settled[0])
    assert sum(res["money"]) == (pot if went_out else 0)
    assert res["outcome"] != "settled" or last
    out = check_record(json.loads(json.dumps(record_from_deals(d, 0))))
    assert out.ok and out.result == res


@SETTINGS
@given(small_rules(), st.integers(0, 2**32 - 1), props)
def test_a_bounded_pot_ends_within_its_bound_and_conserves_money(rules: Rules, seed: int, p: dict) -> None:
    """L21, L3, L12: a pot played deal after deal (dealer to the left, antes into the pot) ends within max_deals;
    the seats' net gains sum to 0 and every seat's money is what it won minus what it paid in."""
    if rules.max_deals is None:
        rules = Rules(rules.players, rules.ranks, 3)
    rng = np.random.default_rng(seed)
    P = rules.players
    d = DealBatch(rules, 1)
    net = np.full(P, -2, np.int64)  # L3
    dealer, pot = P - 1, rules.initial_pot
    for k in range(rules.max_deals):  # type: ignore[arg-type]
        d.reset(rng=rng, dealers=dealer, pots=pot, deals=k)
        while not d.done[0]:
            d.play_move(0, choose(rng, d.legal_moves(0), p))
        res = d.result(0)
        if d.pot_settled[0]:
            net += np.asarray(res["money"])
            break
        net -= np.asarray(res["antes_next"])
        dealer, pot = (dealer + 1) % P, res["pot_next"]
    else:
        raise AssertionError("the pot outlived max_deals")
    assert net.sum() == 0
