"""What the OpenSpiel games declare, against what they do, over both games' configuration grids (issue 34).

A game declares its utility (zero-, constant- or general-sum, ``utility_sum``), utility bounds,
the number of actions and chance outcomes, the longest game and its tensors' shapes; its
chance nodes promise each deal's true probability (:mod:`krypenv.openspiel.deal`); its rewards
promise to add up to its returns however they are read (:mod:`krypenv.openspiel.rewards`), and
Krypkasino's to be our env's.  Every check runs on every configuration of
``tests/openspiel/helpers.py`` (players 2–6, presets, teams, reward modes, rule keys, pot bounds),
and Kungsholmskille's on every way a pot ends.
"""

from __future__ import annotations

from collections import Counter
from math import comb, prod
from typing import Any

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import krypenv.openspiel  # noqa: F401  (registers the games)
from krypenv import krypkasino_v0
from krypenv.kungsholmskille.actions import BUD, FOLD, KNACKA, SHOW
from krypenv.kungsholmskille.engine import kernels
from tests.openspiel.helpers import (
    KRYPKASINO,
    KRYPKASINO_GRID,
    KUNGSHOLMSKILLE,
    KUNGSHOLMSKILLE_GRID,
    episode_sum,
    game_string,
    k4_points,
    krypkasino_episode_sum,
    kungsholmskille_outcome,
    play_chance,
)

GRID = [(KRYPKASINO, p) for p in KRYPKASINO_GRID] + [(KUNGSHOLMSKILLE, p) for p in KUNGSHOLMSKILLE_GRID]
IDS = [game_string(n, p) for n, p in GRID]
Utility = pyspiel.GameType.Utility


@pytest.mark.parametrize(("name", "params"), GRID, ids=IDS)
def test_openspiel_random_simulation(name: str, params: dict) -> None:
    """OpenSpiel's own checks (returns against summed rewards at every decision, the declared utility's sum and
    bounds, tensor sizes, game length, serialization) pass on every configuration."""
    pyspiel.random_sim_test(pyspiel.load_game(name, params), num_sims=2, serialize=True, verbose=False)


def declared_utility(name: str, game: Any) -> tuple[Any, float | None]:
    """The utility the rules give: Krypkasino's deal scores sum to the deck's points (K16; zero-sum relative to the
    others' mean); a Kungsholmskille pot conserves money unless the env truncates it before its bound (L16, L21)."""
    params = game.get_parameters()
    if name == KRYPKASINO:
        relative = params["reward"] == "relative"
        return (Utility.ZERO_SUM if relative else Utility.CONSTANT_SUM), krypkasino_episode_sum(game)
    bound = params["pot_deals"] or (3 if params["preset"] == "small" else 0)  # L21, L22
    if bound and bound <= params["max_deals"]:
        return Utility.ZERO_SUM, 0.0
    return Utility.GENERAL_SUM, None


def utility_extremes(name: str, game: Any) -> tuple[float, float]:
    """The lowest and highest return the rules allow a seat.

    Krypkasino (K4, K14, K16–K18): a side's score is at most its cards' points plus 5 per tabbe
    it makes, at least −5 per tabbe of its neighbours, at most two tabbes (a dubbeltabbe) per
    card played; a relative return adds the others' mean.  Kungsholmskille (L3, L12, L14, L21):
    a seat pays its ante 2, at most 1 per budrunda and a penalty of at most the pot, and wins at
    most the pot and the penalty.
    """
    params = game.get_parameters()
    P = params["players"]
    if name == KRYPKASINO:
        deck = game.counts
        points = sum(int(deck[c]) * k4_points(c) for c in range(deck.shape[0])) + int(params["last_capture_point"])
        played = sum(len(slots) for who, _, slots in game.groups if who != "T")
        if params["reward"] == "relative":
            return -float(points + 20 * played), float(points + 20 * played)
        return -float(points + 10 * played), float(10 * played)
    deals = params["max_deals"]
    pot = 2 * P + (deals - 1) * P  # the antes, then every seat pays 1 per budrunda
    return float(-(2 + (deals - 1) + pot)), float(2 * pot - 2)


def episode_deals(params: dict) -> int:
    """The most deals of a pot in the game: ``max_deals``, or the pot's bound (L21; ``small``: 3) if smaller."""
    bound = params.get("pot_deals") or (3 if params.get("preset") == "small" else 0)
    return min(params["max_deals"], bound) if bound else params["max_deals"]


def scripted(kind: str, rng: np.random.Generator) -> Any:
    """A player policy: ``uniform``; ``first``/``last`` legal action; Kungsholmskille: ``bud`` (bud whenever it may:
    a pot of budrundor, L12, truncated by L16 or settled by L21), ``long`` (bud until the pot's last deal, then
    knock, stay and show: the longest pots)."""
    def choose(state: Any) -> int:
        legal = state.legal_actions()
        if kind == "first":
            return legal[0]
        if kind == "last":
            return legal[-1]
        if kind in ("bud", "long") and state.get_game().get_type().short_name == KUNGSHOLMSKILLE:
            last = kind == "long" and len(state.decks) >= episode_deals(state.get_game().get_parameters())
            for wanted in ((KNACKA, SHOW) if last else (BUD,)):
                if wanted in legal:
                    return wanted
            return next((a for a in legal if a != FOLD), legal[0])
        return int(rng.choice(legal))
    return choose


def check_node(game: Any, state: Any, info_size: int, obs_size: int, tensors: bool = True) -> None:
    """Every seat's tensors have the declared sizes; legal actions and chance outcomes lie in the declared ranges."""
    for p in range(game.num_players() if tensors else 0):
        assert len(state.information_state_tensor(p)) == info_size
        assert len(state.observation_tensor(p)) == obs_size
        assert isinstance(state.information_state_string(p), str) and isinstance(state.observation_string(p), str)
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        codes = [c for c, _ in outcomes]
        assert codes == sorted(set(codes)) and all(0 <= c < game.max_chance_outcomes() for c in codes)
        assert sum(p for _, p in outcomes) == pytest.approx(1.0) and all(p > 0 for _, p in outcomes)
    elif not state.is_terminal():
        legal = state.legal_actions()
        assert legal and legal == sorted(set(legal)) and all(0 <= a < game.num_distinct_actions() for a in legal)


@pytest.mark.parametrize(("name", "params"), GRID, ids=IDS)
def test_declarations_hold_in_play(name: str, params: dict) -> None:
    """Utility type and sum, utility bounds (wide enough for the rules' extremes), tensor shapes at every node,
    action and chance ranges, and the longest game, over uniform, first-, last-legal and longest-pot play."""
    game = pyspiel.load_game(name, params)
    utility, total = declared_utility(name, game)
    assert game.get_type().utility == utility
    if total is not None:
        assert game.utility_sum() == pytest.approx(total)
    low, high = utility_extremes(name, game)
    assert game.min_utility() <= low and game.max_utility() >= high, (game.min_utility(), low, high)
    info_size = int(np.prod(game.information_state_tensor_shape()))
    obs_size = int(np.prod(game.observation_tensor_shape()))
    assert game.num_players() == params["players"]
    rng = np.random.default_rng(5)
    endings = Counter()
    stride = 1 if game.max_game_length() < 500 else 11  # the standard deck: every 11th node (10k-float tensors)
    for kind in ("uniform", "first", "last", "bud", "long", "uniform", "uniform"):
        choose = scripted(kind, rng)
        state = game.new_initial_state()
        length = 0
        while not state.is_terminal():
            if length % stride == 0 or not state.is_chance_node():
                check_node(game, state, info_size, obs_size, tensors=length % stride == 0)
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            else:
                state.apply_action(choose(state))
            length += 1
        check_node(game, state, info_size, obs_size)
        assert length <= game.max_game_length()
        returns = state.returns()
        assert sum(returns) == pytest.approx(episode_sum(game, state))
        assert all(game.min_utility() <= r <= game.max_utility() for r in returns)
        if name == KUNGSHOLMSKILLE:
            endings[kungsholmskille_outcome(state)] += 1
    if name == KUNGSHOLMSKILLE and utility == Utility.GENERAL_SUM:
        assert endings["truncated"], endings  # a pot of budrundor reaches the env's bound (L16)
    if name == KUNGSHOLMSKILLE and utility == Utility.ZERO_SUM:
        assert endings["settled"], endings  # and a bounded pot is settled (L21)


@pytest.mark.parametrize(("name", "params"), GRID, ids=IDS)
def test_rewards_add_up_to_returns_however_read(name: str, params: dict) -> None:
    """Rewards read after every transition, or only at decisions (OpenSpiel's tests), sum to ``returns()`` at every
    node; a chance node pays nothing; a seat is paid only where it is to act after acting, or at the end."""
    game = pyspiel.load_game(name, params)
    rng = np.random.default_rng(6)
    paid_mid_game = 0
    for _ in range(3):
        state = game.new_initial_state()
        summed = np.zeros(game.num_players())
        acted: set[int] = set()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            else:
                acted.add(state.current_player())
                state.apply_action(int(rng.choice(state.legal_actions())))
            rewards = np.asarray(state.rewards())
            summed += rewards
            assert summed == pytest.approx(state.returns(), abs=1e-9)
            if state.is_chance_node():
                assert not rewards.any()
            elif not state.is_terminal():
                paid = [p for p in range(game.num_players()) if rewards[p]]
                assert all(p == state.current_player() and p in acted for p in paid), (paid, acted)
                seat = state.current_player()
                if seat in acted:  # paid up to now: its return so far is its return in the game
                    assert state.returns()[seat] == pytest.approx(earned(name, state)[seat], abs=1e-9)
                    paid_mid_game += bool(rewards[seat])
        assert np.allclose(summed, state.returns()) and np.allclose(state.returns(), earned(name, state))
    assert paid_mid_game or name == KUNGSHOLMSKILLE, "Krypkasino's dense rewards are paid during the deal"


def earned(name: str, state: Any) -> list[float]:
    """Each seat's return in the game so far, read from the engine: minus its side's deal score (K16) or its money
    in the pot (L3, L18)."""
    if name == KUNGSHOLMSKILLE:
        return state.money()
    env = state.env()
    values = env.values(0)
    rules = state.get_game().rules
    return [-float(values[rules.team_of(s)]) for s in range(rules.players)]


def hypergeometric(counts: np.ndarray, group: list[int]) -> float:
    """The chance that k cards drawn from ``counts`` (copies per code) are the multiset ``group``."""
    want = Counter(group)
    return prod(comb(int(counts[c]), m) for c, m in want.items()) / comb(int(counts.sum()), len(group))


@pytest.mark.parametrize(("name", "params"), GRID, ids=IDS)
def test_chance_gives_every_deal_its_probability(name: str, params: dict) -> None:
    """The product of a drawn deal's chance probabilities is the deal's probability under a shuffled deck: each
    packet's multivariate hypergeometric probability (K6, K7, L4), then each talon card's (L8)."""
    game = pyspiel.load_game(name, params)
    rng = np.random.default_rng(7)
    for _ in range(3):
        state = game.new_initial_state()
        p = 1.0
        drawn: list[int] = []
        while state.is_chance_node():
            outcomes = dict(state.chance_outcomes())
            card = int(rng.choice(list(outcomes), p=list(outcomes.values())))
            p *= outcomes[card]
            drawn.append(card)
            state.apply_action(card)
        counts = game.counts.copy()
        expected = 1.0
        if name == KRYPKASINO:
            sizes = [len(slots) for _, _, slots in game.groups]
        else:
            P = params["players"]
            sizes = [5] * P + [1] * (len(drawn) - 5 * P)
        k = 0
        for size in sizes:
            group = drawn[k:k + size]
            assert group == sorted(group)  # each packet is drawn as a sorted multiset
            expected *= hypergeometric(counts, group)
            for c in group:
                counts[c] -= 1
            k += size
        assert k == len(drawn) and p == pytest.approx(expected, rel=1e-9)


def env_keywords(params: dict) -> dict:
    """The env keywords of a python_krypkasino configuration, written from the parameters' docs (teams: seat s in
    team s mod k, K18; ``two_player_deal`` written with ``x``; names joined by ``-``; 0 or "" the preset's)."""
    kw = {k: v for k, v in params.items() if k not in ("teams", "two_player_deal", "ranks", "suits")}
    k = params.get("teams", 0)
    if k:
        kw["teams"] = tuple(tuple(s for s in range(params["players"]) if s % k == t) for t in range(k))
    if "two_player_deal" in params:
        kw["two_player_deal"] = params["two_player_deal"].replace("x", "+")
    for key in ("ranks", "suits"):
        if params.get(key):
            kw[key] = tuple(params[key].split("-"))
    return kw


@pytest.mark.parametrize("params", KRYPKASINO_GRID, ids=[game_string(KRYPKASINO, p) for p in KRYPKASINO_GRID])
def test_krypkasino_is_the_env_on_every_configuration(params: dict) -> None:
    """The env's deck dealt through the chance nodes: every seat's observation, the legal actions and the seat to act
    are the env's at every step, and the returns are the env's summed rewards."""
    env = krypkasino_v0.env(**env_keywords(params))
    env.reset(seed=11)
    deck = env.unwrapped.core.deals.deck[0].astype(int)
    game = pyspiel.load_game(KRYPKASINO, params)
    state = game.new_initial_state()
    for _, _, slots in game.groups:
        for card in sorted(deck[s] for s in slots):
            state.apply_action(int(card))
    rng = np.random.default_rng(0)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    while not state.is_terminal():
        for seat, agent in enumerate(env.possible_agents):
            np.testing.assert_array_equal(np.asarray(state.observation_tensor(seat)), env.observe(agent)["observation"])
        assert env.agent_selection == f"player_{state.current_player()}"
        assert state.legal_actions() == list(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))
        action = int(rng.choice(state.legal_actions()))
        state.apply_action(action)
        env.step(action)
        for a in env.possible_agents:
            totals[a] += env.rewards.get(a, 0.0)
    assert state.returns() == pytest.approx([totals[a] for a in env.possible_agents])


@pytest.mark.parametrize("params", KUNGSHOLMSKILLE_GRID, ids=[game_string(KUNGSHOLMSKILLE, p) for p in
                                                                KUNGSHOLMSKILLE_GRID])
def test_kungsholmskille_deals_the_drawn_hands(params: dict) -> None:
    """Each deal of a pot (budrundor first): the j-th drawn hand is the hand of seat forehand + j, forehand the left
    neighbour of a dealer that passes left every deal (L2, L4); the engine holds exactly ``dealt_hands``."""
    game = pyspiel.load_game(KUNGSHOLMSKILLE, params)
    P = params["players"]
    rng = np.random.default_rng(9)
    choose = scripted("bud", rng)
    state = game.new_initial_state()
    deals = 0
    while not state.is_terminal() and deals < 3:
        drawn: list[int] = []
        while state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            drawn.append(int(rng.choice(outcomes, p=probs)))
            state.apply_action(drawn[-1])
        if state.is_terminal():
            break
        deal = len(state.decks) - 1
        dealer = (P - 1 if params.get("first_dealer", -1) < 0 else params["first_dealer"]) + deal
        hands = state.dealt_hands(deal)
        row = state.env().state[0]
        for j in range(P):
            seat = (dealer + 1 + j) % P
            assert hands[seat] == drawn[5 * j:5 * j + 5]
            held = row[kernels.HANDS + 21 * seat:kernels.HANDS + 21 * seat + 21]
            assert [r for r in range(21) for _ in range(int(held[r]))] == hands[seat]
        assert state.decks[deal][5 * P:] == drawn[5 * P:]  # the talon in drawn order (L8)
        while not state.is_terminal() and not state.is_chance_node():
            state.apply_action(choose(state))
        deals += 1
    assert deals >= 2


def test_information_states_have_perfect_recall() -> None:
    """Two histories a seat can tell apart (a different public move) give it different information states; deals it
    cannot tell apart (another seat's hidden cards) give it the same (both games)."""
    for name, params in ((KRYPKASINO, {"players": 3, "preset": "small"}), (KUNGSHOLMSKILLE, {"players": 3})):
        game = pyspiel.load_game(name, params)
        rng = np.random.default_rng(8)
        state = game.new_initial_state()
        play_chance(state, rng)
        for _ in range(4):
            legal = state.legal_actions()
            seat = state.current_player()
            if len(legal) > 1:
                a, b = state.child(legal[0]), state.child(legal[-1])
                for p in range(game.num_players()):
                    if name == KRYPKASINO or p == seat:  # Kungsholmskille's discards are face down (L8)
                        assert a.information_state_string(p) != b.information_state_string(p)
                    if name == KRYPKASINO:  # its tensor holds every move too
                        assert a.information_state_tensor(p) != b.information_state_tensor(p)
            state.apply_action(int(rng.choice(legal)))
            play_chance(state, rng)
        for p in range(game.num_players()):
            other = state.resample_from_infostate(p, np.random.default_rng(p).random)
            assert other.information_state_string(p) == state.information_state_string(p)
            assert other.information_state_tensor(p) == state.information_state_tensor(p)


def same_state(a: Any, b: Any) -> None:
    """Two states of a game are the same: history, player, legal actions, rewards, returns, every seat's strings."""
    assert a.history() == b.history() and a.current_player() == b.current_player()
    assert a.rewards() == b.rewards() and a.returns() == b.returns()
    if not a.is_chance_node():
        assert a.legal_actions() == b.legal_actions()
    for p in range(a.num_players()):
        assert a.information_state_string(p) == b.information_state_string(p)
        assert a.observation_tensor(p) == b.observation_tensor(p)


@pytest.mark.parametrize(("name", "params"), [(KRYPKASINO, {"players": 3, "preset": "small"}),
                                              (KUNGSHOLMSKILLE, {"players": 3, "preset": "small"})])
def test_copies_are_the_state_and_independent(name: str, params: dict) -> None:
    """At every node (Kungsholmskille's later decks included): OpenSpiel's clone, ``copy.deepcopy`` and
    deserialization give the same state, and playing on a copy leaves the original as it was; the initial state has
    paid nothing (rewards and returns 0)."""
    import copy

    game = pyspiel.load_game(name, params)
    rng = np.random.default_rng(10)
    state = game.new_initial_state()
    assert state.rewards() == [0.0] * game.num_players() == state.returns()
    while not state.is_terminal():
        for other in (state.clone(), copy.deepcopy(state), game.deserialize_state(state.serialize())):
            same_state(other, state)
            before = (state.history(), state.rewards(), state.returns())
            if not other.is_terminal():
                other.apply_action(other.legal_actions()[0] if not other.is_chance_node()
                                   else other.chance_outcomes()[0][0])
            assert (state.history(), state.rewards(), state.returns()) == before
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        elif name == KUNGSHOLMSKILLE and len(state.decks) == 1 and BUD in state.legal_actions():
            state.apply_action(BUD)  # a budrunda (L12): the next deck is drawn mid-pot
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
