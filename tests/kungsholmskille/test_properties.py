"""Property tests over random deals for 2–6 players, checked against the independent oracle (KILLE.md L1–L18).

Decks, dealers, pots and the players' choices are random; the choices lean towards knocking,
staying and showing by per-deal propensities so that every ending (budrunda in each call,
walkover, showdowns with 2 to 6 players) is reached.  Every test is derandomised
(hypothesis ``derandomize=True``), so the suite is deterministic.
"""

from __future__ import annotations

import json

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krypenv.kungsholmskille.actions import N_ACTIONS, parse_move
from krypenv.kungsholmskille.cards import RANKS, deck_names, shuffled_decks
from krypenv.kungsholmskille.engine import DealBatch, kernels
from krypenv.kungsholmskille.records import check_record, record_from_deals
from krypenv.kungsholmskille.rules import Rules
from tests.kungsholmskille.oracle import OracleDeal

SETTINGS = settings(deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])

deal_params = st.fixed_dictionaries({
    "players": st.integers(2, 6),
    "seed": st.integers(0, 2**32 - 1),
    "pot": st.integers(0, 500),
    "knock": st.floats(0.2, 0.95),  # propensity to knock in a call
    "stay": st.floats(0.2, 0.95),  # propensity to stay rather than fold
    "show": st.floats(0.1, 0.9),  # propensity to show
})  # fmt: skip


def choose(rng: np.random.Generator, legal: list[str], p: dict) -> str:
    """A random legal move, leaning by the deal's propensities in the two-way decisions."""
    if legal == ["bud", "knacka"]:
        return "knacka" if rng.random() < p["knock"] else "bud"
    if legal == ["fold", "stay"]:
        return "stay" if rng.random() < p["stay"] else "fold"
    if legal == ["bud", "show"]:
        return "show" if rng.random() < p["show"] else "bud"
    return legal[int(rng.integers(len(legal)))]


def counts(ranks: list[int]) -> list[int]:
    """Rank counts of a list of ranks."""
    return np.bincount(np.asarray(ranks, np.int64), minlength=21).tolist()


def assert_same_as_oracle(d: DealBatch, i: int, o: OracleDeal) -> None:
    """The engine's deal i and the oracle agree on everything observable."""
    assert d.legal_moves(i) == o.legal_moves()
    assert bool(d.done[i]) == o.done
    assert (None if d.to_act[i] < 0 else int(d.to_act[i])) == o.to_act
    assert d.hands[i].tolist() == o.hands
    assert d.talon(i) == o.talon
    assert d.folded[i].astype(bool).tolist() == o.folded
    assert d.discarded(i).tolist() == counts(o.discarded)
    assert d.played(i).tolist() == counts(o.played)


def assert_bookkeeping(res: dict, pot: int, players: int) -> None:
    """L18: sum(money) is the pot after walkover/showdown, 0 after budrunda; pot_next as L18 defines it."""
    went_out = res["outcome"] != "budrunda"
    assert sum(res["money"]) == (pot if went_out else 0)
    assert res["pot_next"] == (0 if went_out else pot) + sum(res["antes_next"])
    assert len(res["money"]) == len(res["antes_next"]) == players
    assert (res["winner"] is None) == (res["outcome"] == "budrunda")
    assert (res["shower"] is not None) == (res["outcome"] == "showdown")


@SETTINGS
@given(deal_params, st.integers(0, 5))
def test_single_deals_match_the_oracle_at_every_decision(p: dict, dealer_off: int) -> None:
    """L4–L15: legal moves, seat to act, hands, talon, folds, discards and played cards equal the oracle's at
    every decision, 42 cards are conserved, and the result equals the oracle's and keeps L18's bookkeeping."""
    players = p["players"]
    dealer = dealer_off % players
    rng = np.random.default_rng(p["seed"])
    deck = shuffled_decks(rng, 1)
    d = DealBatch(Rules(players), 1)
    d.reset(decks=deck, dealers=dealer, pots=p["pot"])
    o = OracleDeal(players, dealer, p["pot"], deck_names(deck[0]))
    while not o.done:
        assert_same_as_oracle(d, 0, o)
        assert (d.card_census(0) == 2).all()  # L1: hands + talon + discards + played
        assert int(d.talon_pos[0]) <= 42  # L8: the talon suffices
        mv = choose(rng, o.legal_moves(), p)
        d.play_move(0, mv)
        o.play(mv)
    assert_same_as_oracle(d, 0, o)
    assert d.result(0) == o.result()
    assert_bookkeeping(d.result(0), p["pot"], players)
    assert int(d.n_moves[0]) <= 9 * players - 1


@settings(SETTINGS, max_examples=6)
@given(st.integers(2, 6), st.integers(0, 2**32 - 1))
def test_a_parallel_batch_matches_the_oracle(players: int, seed: int) -> None:
    """A batch of 70 deals (the prange path) stepped together through legal_masks/step equals 70 oracles."""
    n = 70
    rng = np.random.default_rng(seed)
    decks = shuffled_decks(rng, n)
    dealers = rng.integers(0, players, n)
    pots = rng.integers(0, 100, n)
    d = DealBatch(Rules(players), n)
    d.reset(decks=decks, dealers=dealers, pots=pots)
    oracles = [OracleDeal(players, int(dealers[i]), int(pots[i]), deck_names(decks[i])) for i in range(n)]
    props = {"knock": 0.7, "stay": 0.7, "show": 0.5}
    while not all(o.done for o in oracles):
        masks = d.legal_masks()
        actions = np.full(n, -1, np.int64)
        for i, o in enumerate(oracles):
            legal = o.legal_moves()
            assert [parse_move(m) for m in legal] == np.flatnonzero(masks[i]).tolist()
            if not o.done:
                mv = choose(rng, legal, props)
                actions[i] = parse_move(mv)
                o.play(mv)
        d.step(actions)
    for i, o in enumerate(oracles):
        assert_same_as_oracle(d, i, o)
        assert d.result(i) == o.result()
    assert d.done.all()


@settings(SETTINGS, max_examples=12)
@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.sampled_from([5, 70]))
def test_a_batch_equals_separate_single_deals(players: int, seed: int, n: int) -> None:
    """Batch of N (serial or parallel) = N separate one-deal runs, record for record; same deck → same deal."""
    rng = np.random.default_rng(seed)
    d = DealBatch(Rules(players), n)
    d.reset(rng=rng, dealers=rng.integers(0, players, n), pots=rng.integers(0, 50, n))
    start_state = d.state.copy()
    d.play_random_to_end(rng)
    for i in range(n):
        one = DealBatch(Rules(players), 1)
        one.reset(decks=start_state[i:i + 1, :42], dealers=int(d.dealer[i]), pots=int(d.pot[i]))
        assert np.array_equal(one.state[0], start_state[i])  # same deck, dealer, pot: the same deal
        for a in d.hist_action[i, :d.n_moves[i]]:
            one.step(np.array([a]))
        assert np.array_equal(one.state[0], d.state[i]) and np.array_equal(one.cash[0], d.cash[i])


@settings(SETTINGS, max_examples=25)
@given(deal_params)
def test_check_codes_agree_with_the_legal_mask(p: dict) -> None:
    """At every decision, the move check accepts exactly the 279 actions of the legal mask (L5–L11)."""
    rng = np.random.default_rng(p["seed"])
    d = DealBatch(Rules(p["players"]), 1)
    d.reset(rng=rng)
    everything = np.arange(N_ACTIONS)
    while not d.done[0]:
        mask = d.legal_masks()[0]
        codes = np.array([kernels.check(d.state[0], int(a)) for a in everything])
        assert np.array_equal(codes == kernels.OK, mask) and mask.any()
        assert set(codes[~mask].tolist()) <= {kernels.WRONG_KIND, kernels.NOT_HELD, kernels.MUST_OVERTAKE,
                                              kernels.MUST_LOWEST}
        for a in np.flatnonzero(~mask)[::37]:
            assert d.why_illegal(0, int(a))
        d.play_move(0, choose(rng, d.legal_moves(0), p))
    assert (np.array([kernels.check(d.state[0], int(a)) for a in everything]) == kernels.DEAL_OVER).all()


@settings(SETTINGS, max_examples=30)
@given(deal_params, st.floats(0, 1))
def test_records_round_trip_through_check_record(p: dict, cut: float) -> None:
    """L18/L19: record_from_deals, as JSON, replays through check_record with ok=True and the same result;
    a partial record (cut short) replays ok with no result."""
    rng = np.random.default_rng(p["seed"])
    d = DealBatch(Rules(p["players"]), 1)
    d.reset(rng=rng, pots=p["pot"])
    records = []
    while not d.done[0]:
        records.append(record_from_deals(d, 0))
        d.play_move(0, choose(rng, d.legal_moves(0), p))
    full = json.loads(json.dumps(record_from_deals(d, 0)))
    out = check_record(full, legal=True)
    assert out.ok and out.error is None and out.failed_move is None
    assert out.result == full["result"] == d.result(0)
    assert out.moves_played == len(full["moves"]) == int(d.n_moves[0])
    assert len(out.legal_moves) == len(full["moves"])
    assert all(mv in legal for mv, legal in zip(full["moves"], out.legal_moves))
    partial = records[int(cut * (len(records) - 1))]
    assert "result" not in partial
    out = check_record(partial)
    assert out.ok and out.result is None and out.moves_played == len(partial["moves"])
    assert all(isinstance(x, str) and x in RANKS for x in full["deck"])
