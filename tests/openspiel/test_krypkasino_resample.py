"""``resample_from_infostate`` of python_krypkasino against a brute-force oracle, and what must vary (issue 34).

The oracle deals the cards a seat has not seen in every possible way (copies distinct, so each
deal counts with its probability under a uniformly shuffled deck), replays the history on the
engine and keeps the deals in which it is legal and the seat's information state unchanged:
the exact distribution that ``resample_from_infostate`` must sample.  Each chi-square test
runs at level 1e-3 with 3000 samples; its power against the two samplers one might write by
mistake (a played copy fixed in its hand without the C(m, p) correction; every consistent deal
equally likely, copies merged) is computed from the oracle and asserted to be at least 0.99.
"""

from __future__ import annotations

from collections import Counter
from itertools import permutations
from math import comb
from typing import Any

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
stats = pytest.importorskip("scipy.stats")

import krypenv.openspiel  # noqa: F401  (registers the games)
from krypenv.openspiel.krypkasino_resample import played_by_group
from tests.openspiel.helpers import KRYPKASINO, play_chance

# two copies of A 2 3 of hearts and spades (K20): 12 cards, hands of 2, 4 on the table, two rounds (K21)
TWO_COPIES = {"players": 2, "preset": "tiny", "ranks": "A-2-3", "suits": "H-S", "copies": 2, "hand": 2, "table": 4}
SAMPLES = 3000
LEVEL = 1e-3


def seen_groups(game: Any, player: int, rnd: int) -> list[bool]:
    """Per group: whether ``player`` has seen it in round ``rnd``: the table, and its own hands of rounds 0 … rnd."""
    return [who == "T" or (who == str(player) and r <= rnd) for who, r, _ in game.groups]


def groups_of(game: Any, cards: list[int]) -> list[tuple[int, ...]]:
    """A deal's cards per group (sorted, as drawn)."""
    starts = np.cumsum([0] + [len(s) for _, _, s in game.groups])
    return [tuple(cards[starts[g]:starts[g + 1]]) for g in range(len(game.groups))]


def consistent(game: Any, cards: list[int], actions: list[int], player: int, target: str) -> bool:
    """The history is legal in the deal ``cards`` and ``player``'s information state is ``target``."""
    state = game.new_initial_state()
    for c in cards:
        state.apply_action(c)
    try:
        for a in actions:
            state.apply_action(a)
    except (ValueError, RuntimeError):
        return False
    return state.information_state_string(player) == target


def oracle(game: Any, state: Any, player: int) -> dict[tuple[int, ...], float]:
    """The exact distribution of the whole deal given ``player``'s information: every placement of the cards of the
    groups it has not seen (copies distinct), weighted by how many placements give it, kept if consistent."""
    seen = seen_groups(game, player, int(state.env().deals.round[0]))
    own = groups_of(game, state.cards)
    hidden = [c for g, ok in enumerate(seen) if not ok for c in own[g]]
    weights: Counter = Counter()
    for order in permutations(range(len(hidden))):
        pool = [hidden[i] for i in order]
        cards: list[int] = []
        for g, ok in enumerate(seen):
            cards += own[g] if ok else sorted(pool.pop() for _ in own[g])
        weights[tuple(cards)] += 1
    target = state.information_state_string(player)
    kept = {deal: w for deal, w in weights.items() if consistent(game, list(deal), state.actions, player, target)}
    total = sum(kept.values())
    return {deal: w / total for deal, w in kept.items()}


def mistaken(game: Any, state: Any, exact: dict[tuple[int, ...], float], kind: str) -> dict[tuple[int, ...], float]:
    """A wrong sampler's distribution: ``fixed`` keeps played copies in their hands without the correction (each deal
    weighted by C(m, p) per group and card), ``flat`` makes every consistent deal equally likely."""
    if kind == "flat":
        return {deal: 1 / len(exact) for deal in exact}
    played = played_by_group(game.groups, game.rules.players, [int(c) for c in state.env().deals.hist_card[0]
                                                                 [:state.env().deals.n_moves[0]]])
    weights = {}
    for deal, p in exact.items():
        w = p
        for g, group in enumerate(groups_of(game, list(deal))):
            for card in set(played[g]):
                w *= comb(group.count(card), played[g].count(card))
        weights[deal] = w
    total = sum(weights.values())
    return {deal: w / total for deal, w in weights.items()}


def power(exact: dict, wrong: dict, n: int) -> float:
    """The chi-square test's power at LEVEL with ``n`` samples when the sampler follows ``wrong`` instead of ``exact``
    (noncentral chi-square with noncentrality n · Σ (q − p)² / p)."""
    df = len(exact) - 1
    if df == 0:
        return 0.0
    nc = n * sum((wrong[k] - p) ** 2 / p for k, p in exact.items())
    return float(stats.ncx2.sf(stats.chi2.isf(LEVEL, df), df, nc))


def chi_square_p(exact: dict, seen: Counter, n: int) -> float:
    """The p-value of the samples ``seen`` against ``exact`` (Pearson)."""
    stat = sum((seen[k] - n * p) ** 2 / (n * p) for k, p in exact.items())
    return float(stats.chi2.sf(stat, max(1, len(exact) - 1)))


def states_to_test() -> list[tuple[Any, int]]:
    """(state, player) in both rounds of seeded deals of TWO_COPIES, where a played card has a copy still hidden."""
    game = pyspiel.load_game(KRYPKASINO, TWO_COPIES)
    picks = []
    for seed in (0, 3, 6):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        play_chance(state, rng)
        while not state.is_terminal():
            if len(state.actions) in (1, 3, 5):  # round 0 (after one and three cards) and round 1 (K7)
                picks.append((state.clone(), state.current_player()))
            state.apply_action(int(rng.choice(state.legal_actions())))
    return picks


@pytest.fixture(scope="module")
def cases() -> list[tuple[Any, Any, int, dict]]:
    """(game, state, player, oracle) for every state to test."""
    game = pyspiel.load_game(KRYPKASINO, TWO_COPIES)
    return [(game, state, player, oracle(game, state, player)) for state, player in states_to_test()]


@pytest.mark.slow
def test_resampled_deals_follow_the_oracle(cases: list) -> None:
    """Chi-square at level 1e-3 per state; the tests together have power ≥ 0.99 against either mistaken sampler."""
    best = {"fixed": 0.0, "flat": 0.0}
    for game, state, player, exact in cases:
        seen = Counter(tuple(state.resample_from_infostate(player, np.random.default_rng(k).random).cards)
                       for k in range(SAMPLES))
        assert set(seen) <= set(exact), "a resampled deal the oracle calls inconsistent"
        assert chi_square_p(exact, seen, SAMPLES) > LEVEL, (str(state), player, seen, exact)
        for kind, most in list(best.items()):
            best[kind] = max(most, power(exact, mistaken(game, state, exact, kind), SAMPLES))
    assert min(best.values()) >= 0.99, best  # the test can tell each mistake from the truth


@pytest.mark.slow
def test_exactly_the_unseen_groups_vary(cases: list) -> None:
    """The groups the seat has seen (the table, its hands so far) never change; every other group takes every value
    the oracle gives it (each with probability ≥ 1 %, so 3000 samples miss one with odds below 1e-13)."""
    varying = 0
    for game, state, player, exact in cases:
        seen_mask = seen_groups(game, player, int(state.env().deals.round[0]))
        truth = groups_of(game, state.cards)
        values: list[set] = [set() for _ in game.groups]
        for k in range(SAMPLES):
            again = groups_of(game, state.resample_from_infostate(player, np.random.default_rng(k).random).cards)
            for g, group in enumerate(again):
                values[g].add(group)
        for g, ok in enumerate(seen_mask):
            support = Counter()
            for deal, p in exact.items():
                support[groups_of(game, list(deal))[g]] += p
            if ok:
                assert values[g] == {truth[g]} == set(support), (g, values[g])
            else:
                likely = {v for v, p in support.items() if p >= 0.01}
                assert likely <= values[g] <= set(support), (g, values[g], support)
                varying += len(support) > 1
    assert varying >= 10, varying  # the states really leave groups open, in both rounds


def test_resample_is_seeded_by_the_sampler_and_works_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same sampler draws give the same deal, others another, none fresh entropy; during the deal (a chance node)
    the state itself comes back as an independent copy; at the end of the deal every hidden card is dealt again too;
    a deal that cannot be found is one RuntimeError naming the tries."""
    from krypenv.openspiel import krypkasino_resample

    game = pyspiel.load_game(KRYPKASINO, {"players": 2})
    rng = np.random.default_rng(7)
    state = game.new_initial_state()
    for _ in range(20):
        state.apply_action(int(rng.choice([c for c, _ in state.chance_outcomes()])))
    copy = state.resample_from_infostate(0, np.random.default_rng(0).random)
    assert copy.history() == state.history()
    copy.apply_action(copy.chance_outcomes()[0][0])
    assert len(copy.history()) == len(state.history()) + 1  # independent
    play_chance(state, rng)
    for _ in range(6):
        state.apply_action(int(rng.choice(state.legal_actions())))
    player = state.current_player()

    def deal(sampler: object) -> str:
        return str(state.resample_from_infostate(player, sampler).cards)

    assert deal(np.random.default_rng(1).random) == deal(np.random.default_rng(1).random)
    assert len({deal(np.random.default_rng(k).random) for k in range(4)}) > 1
    assert len({deal(None) for _ in range(4)}) > 1
    while not state.is_terminal():
        state.apply_action(int(rng.choice(state.legal_actions())))
    for seat in range(2):
        other = state.resample_from_infostate(seat, np.random.default_rng(seat).random)
        assert other.is_terminal() and other.information_state_string(seat) == state.information_state_string(seat)
    monkeypatch.setattr(krypkasino_resample, "RESAMPLE_TRIES", 0)
    with pytest.raises(RuntimeError) as exc:
        state.resample_from_infostate(0, None)
    assert str(exc.value) == "no consistent deal found in 0 tries"
