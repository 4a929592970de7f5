"""python_krypkasino and python_kungsholmskille: OpenSpiel's own checks, and agreement with our envs (issue 26)."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import krypenv.openspiel  # noqa: F401  (registers the games)
from krypenv import krypkasino_v0, kungsholmskille_v0
from krypenv.openspiel.deal import next_card_outcomes
from krypenv.openspiel.krypkasino import deal_groups


def play_chance(state, rng: np.random.Generator) -> None:
    """Sample chance nodes until a decision or the end."""
    while state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(outcomes, p=probs)))


def test_sorted_packets_have_the_hypergeometric_probability() -> None:
    """Each sorted multiset of a packet gets C(n, m)-products / C(N, k): the whole-deal probability is exact."""
    import itertools
    from collections import Counter

    counts = np.array([2, 1, 0, 2, 1])
    items = [c for c in range(5) for _ in range(counts[c])]
    ref = Counter(tuple(sorted(items[i] for i in s)) for s in itertools.combinations(range(len(items)), 3))
    total = sum(ref.values())

    def walk(prefix: list[int], p: float) -> None:
        if len(prefix) == 3:
            assert p == pytest.approx(ref[tuple(prefix)] / total)
            return
        outcomes = next_card_outcomes(counts, 3, prefix)
        assert sum(q for _, q in outcomes) == pytest.approx(1.0)
        for c, q in outcomes:
            walk([*prefix, c], p * q)

    walk([], 1.0)


@pytest.mark.parametrize("params", [{"players": 2}, {"players": 4, "teams": 2, "reward": "relative"}])
def test_krypkasino_random_sim_test(params: dict) -> None:
    """OpenSpiel's random simulation checks (legal actions, chance, returns, tensors, serialization) pass."""
    game = pyspiel.load_game("python_krypkasino", params)
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("params", [{"players": 2, "max_deals": 3}, {"players": 4, "max_deals": 3},
                                    {"players": 3, "preset": "small"}])
def test_kungsholmskille_random_sim_test(params: dict) -> None:
    """One pot of Kungsholmskille (standard, and the small preset's bounded pot, L21, L22) passes OpenSpiel's checks."""
    game = pyspiel.load_game("python_kungsholmskille", params)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


@pytest.mark.parametrize(("preset", "total"), [("standard", 42), ("tiny", 7)])
def test_krypkasino_matches_the_aec_env_on_the_same_deal(preset: str, total: int) -> None:
    """Same deck and actions: every seat's observation tensor is the env's, returns are the env's summed rewards."""
    env = krypkasino_v0.env(players=2, preset=preset)
    env.reset(seed=7)
    deck = env.unwrapped.core.deals.deck[0].astype(int)
    game = pyspiel.load_game("python_krypkasino", {"players": 2, "preset": preset})
    state = game.new_initial_state()
    for _, _, slots in deal_groups(game.rules):
        for card in sorted(deck[s] for s in slots):
            assert card in dict(state.chance_outcomes())
            state.apply_action(int(card))
    rng = np.random.default_rng(0)
    totals = {a: 0.0 for a in env.possible_agents}
    while not state.is_terminal():
        for seat, agent in enumerate(env.possible_agents):
            obs = env.observe(agent)
            np.testing.assert_array_equal(np.asarray(state.observation_tensor(seat)), obs["observation"])
            dim = obs["observation"].shape[0]  # the information state tensor starts with the observation
            np.testing.assert_array_equal(np.asarray(state.information_state_tensor(seat))[:dim], obs["observation"])
        agent = env.agent_selection
        assert agent == f"player_{state.current_player()}"
        mask = env.observe(agent)["action_mask"]
        assert state.legal_actions() == list(np.flatnonzero(mask))
        action = int(rng.choice(state.legal_actions()))
        state.apply_action(action)
        env.step(action)
        for a in env.possible_agents:
            totals[a] += env.rewards.get(a, 0.0)
    assert state.returns() == pytest.approx([totals[a] for a in env.possible_agents])
    assert sum(state.returns()) == pytest.approx(-total)  # K16, K20: the deal scores sum to the deck's points


def test_kungsholmskille_returns_are_the_money() -> None:
    """A pot's returns are every seat's net money; they add up to minus what a truncated pot keeps (L16)."""
    game = pyspiel.load_game("python_kungsholmskille", {"players": 3, "max_deals": 2})
    rng = np.random.default_rng(3)
    for _ in range(5):
        state = game.new_initial_state()
        while not state.is_terminal():
            play_chance(state, rng)
            if not state.is_terminal():
                state.apply_action(int(rng.choice(state.legal_actions())))
        env = state.env()
        assert state.returns() == [float(m) for m in env.money[0]]
        assert sum(state.returns()) <= 0


def test_kungsholmskille_observation_is_the_env_vector() -> None:
    """The observation tensor of every seat is the env's int16 observation as floats."""
    game = pyspiel.load_game("python_kungsholmskille", {"players": 2, "max_deals": 2})
    state = game.new_initial_state()
    play_chance(state, np.random.default_rng(1))
    env = kungsholmskille_v0.env(players=2)  # the same layout: only the size is compared here
    assert len(state.observation_tensor(0)) == env.observation_space("player_0")["observation"].shape[0]
    obs, _ = state.env().observe(0, 1)
    np.testing.assert_array_equal(np.asarray(state.observation_tensor(1)), obs)


def test_information_state_is_perfect_recall_of_moves() -> None:
    """The information state string holds every move; states differing in a past move differ in it."""
    game = pyspiel.load_game("python_krypkasino", {"players": 2})
    state = game.new_initial_state()
    play_chance(state, np.random.default_rng(5))
    first = state.legal_actions()
    a, b = state.child(first[0]), state.child(first[-1])
    assert a.information_state_string(1) != b.information_state_string(1)
    assert "| moves: " in a.information_state_string(0)


def test_serialization_round_trip() -> None:
    """deserialize_state(serialize()) gives the same state (history, tensors, returns)."""
    for name, params in (("python_krypkasino", {"players": 2}), ("python_kungsholmskille", {"players": 2})):
        game = pyspiel.load_game(name, params)
        state = game.new_initial_state()
        rng = np.random.default_rng(2)
        for _ in range(60):
            play_chance(state, rng)
            if state.is_terminal():
                break
            state.apply_action(int(rng.choice(state.legal_actions())))
        again = game.deserialize_state(state.serialize())
        assert again.history() == state.history()
        assert again.information_state_string(0) == state.information_state_string(0)
        assert again.returns() == state.returns()
        assert state.clone().history() == state.history()


def test_resample_from_infostate_keeps_the_information_state() -> None:
    """A resampled state has the player's information state and legal moves, other hands dealt again."""
    game = pyspiel.load_game("python_krypkasino", {"players": 2})
    state = game.new_initial_state()
    rng = np.random.default_rng(11)
    play_chance(state, rng)
    for _ in range(5):
        state.apply_action(int(rng.choice(state.legal_actions())))
    player = state.current_player()
    seen_other = set()
    for k in range(5):
        other = state.resample_from_infostate(player, np.random.default_rng(k).random)
        assert other.information_state_string(player) == state.information_state_string(player)
        assert other.legal_actions() == state.legal_actions()
        seen_other.add(other.information_state_string(1 - player))
    assert len(seen_other) > 1  # the opponent's hand really is dealt again


def test_bad_parameters_are_refused() -> None:
    """An unknown parameter or a bad rule value is one clear error naming it."""
    with pytest.raises(Exception, match="bogus"):
        pyspiel.load_game("python_krypkasino", {"bogus": 1})
    with pytest.raises(Exception, match="set_aside"):
        pyspiel.load_game("python_krypkasino", {"set_aside": "hearts"})
