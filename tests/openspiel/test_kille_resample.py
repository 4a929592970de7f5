"""``resample_from_infostate`` of python_kungsholmskille: exact counting, a rejection oracle on the engine, IS-MCTS."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

pyspiel = pytest.importorskip("pyspiel")
chi2 = pytest.importorskip("scipy.stats").chi2

import krypenv.openspiel  # noqa: F401  (registers the games)
from krypenv.kungsholmskille.actions import (
    BUD,
    DISCARD1,
    FOLD,
    KNACKA,
    PLAY,
    SHOW,
    STAND,
    STAY,
    discard_action,
    discard_ranks,
)
from krypenv.kungsholmskille.cards import RANKS
from krypenv.kungsholmskille.engine import kernels
from krypenv.openspiel.kungsholmskille_resample import count_in_intervals, sample_in_intervals

GAME = "python_kungsholmskille"


def brute_force_ways(pool: list[int], groups: list[tuple[int, int, int]]) -> Counter:
    """Every way to give each group its cards (copies distinct), as a Counter of the groups' sorted rank tuples."""
    items = [r for r, n in enumerate(pool) for _ in range(n)]
    out: Counter = Counter()

    def give(g: int, free: frozenset, taken: tuple) -> None:
        if g == len(groups):
            out[taken] += 1
            return
        m, lo, hi = groups[g]
        for subset in combinations(sorted(i for i in free if lo <= items[i] <= hi), m):
            give(g + 1, free - set(subset), (*taken, tuple(sorted(items[i] for i in subset))))

    give(0, frozenset(range(len(items))), ())
    return out


@settings(max_examples=150, deadline=None)
@given(pool=st.lists(st.integers(0, 2), min_size=1, max_size=6),
       groups=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5), st.integers(0, 5)), max_size=3))
@example(pool=[1, 2], groups=[(1, 0, 1), (1, 0, 1), (1, 0, 1)])  # rank 0 to any of three groups: 6 ways
@example(pool=[2, 0, 0], groups=[(1, 0, 0)])  # only rank 0 fills it
def test_count_in_intervals_matches_brute_force(pool: list[int], groups: list[tuple[int, int, int]]) -> None:
    """The dynamic program counts exactly the disjoint choices of cards within each group's ranks; a draw exists
    exactly when a way does, and gives each group its count of cards within its ranks."""
    groups = [(m, min(a, b), max(a, b)) for m, a, b in groups]
    ways = sum(brute_force_ways(pool, groups).values())
    assert count_in_intervals(pool, groups) == ways
    if ways:
        drawn = sample_in_intervals(pool, groups, random.Random(0))
        assert [len(d) for d in drawn] == [m for m, _, _ in groups]
        assert all(lo <= r <= hi for d, (_, lo, hi) in zip(drawn, groups) for r in d)
        assert not Counter(r for d in drawn for r in d) - Counter({r: n for r, n in enumerate(pool)})
    else:
        with pytest.raises(ValueError, match="no cards"):
            sample_in_intervals(pool, groups, random.Random(0))


def test_sample_in_intervals_draws_every_way_equally() -> None:
    """Samples follow the brute-force distribution (a chi-square test); drawing group by group would not.

    Group 0 takes one card of ranks 0–2, group 1 two of ranks 0–1: group 0 takes the 2 in half of the ways
    (group 1 then has three choices, otherwise one); choosing group 0's card first and uniformly gives it a quarter.
    """
    pool, groups = [1, 2, 1, 2], [(1, 0, 2), (2, 0, 1)]
    ways = brute_force_ways(pool, groups)
    rng = random.Random(5)
    n = 20_000
    seen = Counter(tuple(tuple(g) for g in sample_in_intervals(pool, groups, rng)) for _ in range(n))
    assert set(seen) <= set(ways)
    total = sum(ways.values())
    stat = sum((seen[k] - n * w / total) ** 2 / (n * w / total) for k, w in ways.items())
    assert chi2.sf(stat, len(ways) - 1) > 1e-4, (seen, ways)
    with pytest.raises(ValueError, match="no cards"):
        sample_in_intervals([1, 0, 0], [(2, 0, 2)], rng)


def play_to(game, seed: int, stop) -> object:
    """Seeded play (nobody folds, calls mostly knock so tricks are played) until ``stop(state)`` or the end."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal() and not (not state.is_chance_node() and stop(state)):
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
            continue
        legal = state.legal_actions()
        choice = [a for a in legal if a != FOLD and (a == KNACKA or KNACKA not in legal)] or legal
        state.apply_action(int(rng.choice(choice)))
    return state


def under_play(state, seat: int, players: int) -> bool:
    """``seat`` played under the trick's highest rank in the current deal (L10: an inference about its hand)."""
    plays = [(s, a - PLAY) for s, a, _ in state.deal_log[-1] if a >= PLAY] if state.deal_log else []
    return any(s == seat and i % players and c < max(c2 for _, c2 in plays[i - i % players:i])
               for i, (s, c) in enumerate(plays))


def features(state, seat: int) -> tuple:
    """What is hidden from the other seat: ``seat``'s hand now, its discards, and the deal's talon."""
    row = state.env().state[0]
    hand = row[kernels.HANDS + 21 * seat:kernels.HANDS + 21 * seat + 21]
    discards = [a for s, a, _ in state.deal_log[-1] if s == seat and DISCARD1 <= a < PLAY]
    return (tuple(r for r in range(21) for _ in range(int(hand[r]))), tuple(discards),
            tuple(state.decks[-1][10:]))


def rejection_oracle(game, state, player: int, n: int, rng: random.Random) -> list[tuple]:
    """``n`` deals the player cannot tell apart, by rejection on the engine: the other cards shuffled, kept when
    every move is legal and the player's information state is the same (another seat's discards: a uniform
    subset of its hand).  Two players, one deal; the player's own hand stays, its drawn cards stay in the places
    it drew from, in either order (it knows what it drew, not the talon's order)."""
    deck, moves = state.decks[-1], state.deal_log[-1]
    target = state.information_state_string(player)
    forehand = state.forehand(len(state.decks) - 1)
    own = {nth * 2 + (player - forehand) % 2 for nth in range(5)}
    talon_at, mine = 10, set()
    for s, a, _ in moves:
        if a == STAND or DISCARD1 <= a < PLAY:
            k = len(discard_ranks(a))
            if s == player:
                mine |= set(range(talon_at, talon_at + k))
            talon_at += k
    free = [i for i in range(len(deck)) if i not in own | mine]
    out = []
    while len(out) < n:
        cards = [deck[i] for i in free]
        rng.shuffle(cards)
        trial = list(deck)
        for i, c in zip(free, cards):
            trial[i] = c
        drawn = [deck[i] for i in sorted(mine)]
        rng.shuffle(drawn)
        for i, c in zip(sorted(mine), drawn):
            trial[i] = c
        hands = {s: [trial[nth * 2 + (s - forehand) % 2] for nth in range(5)] for s in range(2)}
        again = game.new_initial_state()
        for c in sorted(hands[forehand]) + sorted(hands[1 - forehand]) + trial[10:]:
            again.apply_action(c)
        for s, a, _ in moves:
            if s != player and DISCARD1 <= a < PLAY:
                a = discard_action(*rng.sample(hands[s], len(discard_ranks(a))))
            if a not in again.legal_actions():
                break
            again.apply_action(a)
        else:
            if again.information_state_string(player) == target:
                out.append(features(again, 1 - player))
    return out


@pytest.mark.parametrize("when", ["after an under-play", "after the exchange"])
def test_resample_agrees_with_a_rejection_oracle_on_the_engine(when: str) -> None:
    """After the opponent played under (L10), or after the exchange (L8, no trick yet: every rank possible), resampled
    deals follow the oracle's distribution (chi-square tests)."""
    game = pyspiel.load_game(GAME, {"players": 2, "ranks": 7, "max_deals": 1})
    if when == "after an under-play":
        state = play_to(game, 0, lambda s: s.current_player() == 0 and under_play(s, 1, 2))
        assert under_play(state, 1, 2) and not state.is_terminal()
    else:
        state = play_to(game, 1, lambda s: s.current_player() == 0 and any(a >= PLAY for a in s.legal_actions())
                        and not any(a >= PLAY for _, a, _ in s.deal_log[-1]))
    oracle = rejection_oracle(game, state, 0, 400, random.Random(1))
    ours = [features(state.resample_from_infostate(0, np.random.default_rng(k).random), 1) for k in range(4000)]
    for part in range(3):  # the opponent's hand, its discards, the talon's order
        expected, seen = Counter(f[part] for f in ours), Counter(f[part] for f in oracle)
        assert set(seen) <= set(expected), part
        if len(expected) > 1:
            stat = sum((seen[k] - len(oracle) * e / len(ours)) ** 2 / (len(oracle) * e / len(ours))
                       for k, e in expected.items())
            assert chi2.sf(stat, len(expected) - 1) > 1e-4, (part, seen, expected)


@pytest.mark.parametrize("params", [{"players": 2, "preset": "small"}, {"players": 4, "max_deals": 3},
                                    {"players": 6, "max_deals": 2}])
def test_resample_keeps_the_information_state_and_deals_the_rest_again(params: dict) -> None:
    """At every decision of seeded pots: same information state and legal moves, other seats' cards dealt again."""
    game = pyspiel.load_game(GAME, params)
    changed = under = shows = 0
    for seed in range(3):
        state = play_to(game, seed, lambda s: False)
        history = state.history()
        replay = game.new_initial_state()
        for a in history:
            if not replay.is_chance_node() and not replay.is_terminal():
                player = replay.current_player()
                others = {replay.resample_from_infostate(player, np.random.default_rng(k).random)
                          .information_state_string((player + 1) % game.num_players()) for k in range(3)}
                for other in [replay.resample_from_infostate(player, np.random.default_rng(9).random)]:
                    assert other.information_state_string(player) == replay.information_state_string(player)
                    assert other.legal_actions() == replay.legal_actions()
                    assert len(other.history()) == len(replay.history())
                changed += len(others) > 1
                under += under_play(replay, (player + 1) % game.num_players(), game.num_players())
            replay.apply_action(a)
        assert replay.is_terminal()
        for seat in range(game.num_players()):  # a finished pot: the shown cards (L14) stay, the rest is dealt again
            other = replay.resample_from_infostate(seat, np.random.default_rng(seat).random)
            assert other.information_state_string(seat) == replay.information_state_string(seat)
            assert other.returns() == replay.returns()
            shows += any(a == SHOW for _, a, _ in replay.deal_log[-1])
    assert changed and under and shows  # hands really are dealt again, and states after an under-play were resampled


def test_ismcts_plays_kungsholmskille_tricks() -> None:
    """OpenSpiel's Python IS-MCTS plays pots of the small preset, tricks included (it resamples at every simulation)."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game(GAME, {"players": 3, "preset": "small"})
    rng = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), uct_c=2.0, max_simulations=10,
                           random_state=rng)
    uniforms = np.random.default_rng(3)  # the bot samples with OpenSpiel's unseeded sampler: seeded here, same game
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, uniforms.random))
    plays = 0
    for seed in range(2):
        state = play_to(game, seed, lambda s: True)
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            elif state.current_player() == 0:
                action = bot.step(state)
                plays += action >= PLAY
                state.apply_action(action)
            else:
                legal = [a for a in state.legal_actions() if a != FOLD] or state.legal_actions()
                state.apply_action(int(rng.choice(legal)))
        assert sum(state.returns()) <= 0  # money only leaves the seats into a pot left standing (L16)
    assert plays >= 4, plays


def drawn_cards(state, deal: int, seat: int) -> Counter:
    """The cards ``seat`` drew from the talon in deal ``deal`` (L8): its hand after the exchange less what it kept."""
    for s, a, hand in state.deal_log[deal]:
        if s == seat and DISCARD1 <= a < PLAY:
            after = Counter(RANKS.index(n) for n in hand.split(","))
            return after - (Counter(state.dealt_hands(deal)[seat]) - Counter(discard_ranks(a)))
    return Counter()


def public_moves(state, deal: int, player: int) -> list:
    """The moves of deal ``deal`` as ``player`` saw them: another seat's discard only as how many cards (L8)."""
    return [(s, len(discard_ranks(a)) if s != player and DISCARD1 <= a < PLAY else a)
            for s, a, _ in state.deal_log[deal]]


@pytest.mark.parametrize("params", [{"players": 2, "ranks": 7, "max_deals": 3}, {"players": 3, "preset": "small"},
                                    {"players": 4, "max_deals": 3}])
def test_every_deal_of_the_pot_is_dealt_again_and_only_the_hidden_cards(params: dict) -> None:
    """In every deal of a pot (budrundor first, L12): the seat's own hand, its draw and every public move stay; the
    other seats' hands and the talon (but what the seat drew) are dealt again, in every deal, at every decision."""
    game = pyspiel.load_game(GAME, params)
    P = game.num_players()

    def calls_bud_once(s) -> int:  # every seat says bud in the first deal (a budrunda, L12), then plays on
        legal = s.legal_actions()
        if len(s.decks) == 1 and BUD in legal:
            return BUD
        return next((a for a in legal if a not in (FOLD, BUD)), legal[0])

    varied: dict[tuple, set] = {}
    for seed in range(2):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                continue
            player = state.current_player()
            if len(state.decks) >= 2:  # from the second deal on, so an earlier deal of the pot is checked too
                for k in range(6):
                    other = state.resample_from_infostate(player, np.random.default_rng(100 * seed + k).random)
                    assert len(other.decks) == len(state.decks)
                    for d in range(len(state.decks)):
                        assert other.dealt_hands(d)[player] == state.dealt_hands(d)[player]  # its own hand: fixed
                        assert drawn_cards(other, d, player) == drawn_cards(state, d, player)  # what it drew: fixed
                        assert public_moves(other, d, player) == public_moves(state, d, player)
                        for seat in range(P):
                            if seat != player:
                                varied.setdefault(("hand", d, seed, len(state.history()), seat), set()).add(
                                    tuple(other.dealt_hands(d)[seat]))
                        varied.setdefault(("talon", d, seed, len(state.history())), set()).add(
                            tuple(other.decks[d][5 * P:]))
            state.apply_action(calls_bud_once(state))
        assert len(state.decks) >= 2, "the pot had no budrunda"
    for kind in ("hand", "talon"):  # dealt again (six resamples, at least two values) in the budrunda's deal and
        for d in range(2):  # in the next, at most decisions
            sets = [v for k, v in varied.items() if k[:2] == (kind, d)]
            assert sets and sum(len(v) > 1 for v in sets) >= 0.8 * len(sets), (kind, d, [len(v) for v in sets])


@pytest.mark.parametrize("players", [3, 4])
def test_resample_after_a_fold(players: int) -> None:
    """A seat folds after the knock (L6) and the others play their tricks short of it (L10): at every decision the
    resampled pot keeps the seat's information state (the follow rule's inferences count the players still in)."""
    game = pyspiel.load_game(GAME, {"players": players, "max_deals": 2})
    plays_after_fold = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        folded = False
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                continue
            legal = state.legal_actions()
            if KNACKA in legal:
                action = KNACKA
            elif FOLD in legal and not folded:
                action, folded = FOLD, True
            elif STAY in legal:
                action = STAY
            else:
                action = int(rng.choice([a for a in legal if a != FOLD] or legal))
            plays_after_fold += folded and action >= PLAY
            player = state.current_player()
            for k in range(2):
                other = state.resample_from_infostate(player, np.random.default_rng(k).random)
                assert other.information_state_string(player) == state.information_state_string(player)
            state.apply_action(action)
    assert plays_after_fold > 50


def test_resample_is_seeded_by_the_sampler() -> None:
    """The same sampler draws give the same deal, others another; no sampler draws fresh entropy."""
    game = pyspiel.load_game(GAME, {"players": 3, "preset": "small"})
    state = play_to(game, 4, lambda s: any(a >= PLAY for _, a, _ in s.deal_log[-1]) if s.deal_log else False)
    player = state.current_player()

    def deal(sampler) -> str:
        return str(state.resample_from_infostate(player, sampler).history())

    assert deal(np.random.default_rng(1).random) == deal(np.random.default_rng(1).random)
    assert len({deal(np.random.default_rng(k).random) for k in range(5)}) > 1
    assert len({deal(None) for _ in range(5)}) > 1


def test_resample_while_a_deck_is_drawn() -> None:
    """At chance nodes: before anything is drawn the state itself (a copy); while the first or a later deck is drawn
    (after a budrunda, L12) the drawn cards are drawn afresh (the seat has seen none), earlier deals dealt again."""
    game = pyspiel.load_game(GAME, {"players": 3, "preset": "small"})
    state = game.new_initial_state()
    for seat in range(3):
        copy = state.resample_from_infostate(seat, np.random.default_rng(seat).random)
        assert copy.history() == [] and copy.is_chance_node()
        copy.apply_action(copy.chance_outcomes()[0][0])
        assert state.history() == []  # the copy is independent
    rng = np.random.default_rng(5)
    checked = 0
    while not state.is_terminal() and checked < 2:
        if state.is_chance_node():
            if len(state.cards) in (3, 17):  # in a hand, in the talon
                for seat in range(3):
                    others = {str(state.resample_from_infostate(seat, np.random.default_rng(k).random).cards)
                              for k in range(6)}
                    again = state.resample_from_infostate(seat, np.random.default_rng(9).random)
                    assert again.information_state_string(seat) == state.information_state_string(seat)
                    assert len(again.cards) == len(state.cards) and len(again.decks) == len(state.decks)
                    assert len(others) > 1
                checked += len(state.decks) > 0 and len(state.cards) == 17
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            legal = state.legal_actions()
            state.apply_action(BUD if BUD in legal else legal[0])
    assert checked, "no later deck was drawn"


def test_a_resample_that_loses_the_information_state_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The result is checked: a deal that changes the seat's own hand (a bug of the sampler) is a RuntimeError naming
    the seat, never a wrong state."""
    from krypenv.openspiel import kungsholmskille_resample

    game = pyspiel.load_game(GAME, {"players": 2, "preset": "small"})
    state = play_to(game, 0, lambda s: True)  # the first decision
    sample = kungsholmskille_resample.resample_deal

    def swapped_hands(*args: object, **kwargs: object) -> tuple[list[int], list[int]]:
        cards, actions = sample(*args, **kwargs)
        return cards[5:10] + cards[:5] + cards[10:], actions

    monkeypatch.setattr(kungsholmskille_resample, "resample_deal", swapped_hands)
    player = state.current_player()
    if state.dealt_hands(0)[0] == state.dealt_hands(0)[1]:
        pytest.skip("both hands alike")
    with pytest.raises(RuntimeError, match=f"^resampled state of seat {player} lost its information state: "):
        state.resample_from_infostate(player, np.random.default_rng(0).random)
