"""Env conformance of the ``tiny`` and ``small`` presets (RULES.md K22): PettingZoo, Gymnasium, VecEnv == Gym.

The generic suite (tests/envs/test_conformance.py) runs every game's standard deck; this runs the
same checks, cheaply, on the smaller decks and deals, and pins the presets' spaces and episodes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from krypenv import krypkasino_v0
from krypenv.krypkasino.observation import layout
from krypenv.krypkasino.rules import Rules
from tests.envs.helpers import FirstLegal, first_legal_trajectory, lowest_legal

TABLES = [("tiny", 2), ("small", 2), ("small", 3)]


@pytest.mark.parametrize(("preset", "players"), TABLES)
def test_k22_pettingzoo_api_and_seed_tests(preset: str, players: int) -> None:
    """K22: PettingZoo's API and seed tests pass on the preset's table."""
    api_test(krypkasino_v0.env(players=players, preset=preset), num_cycles=200)
    seed_test(lambda: krypkasino_v0.env(players=players, preset=preset), num_cycles=100)


@pytest.mark.parametrize(("preset", "players"), TABLES)
def test_k22_gymnasium_check_env_and_spaces(preset: str, players: int) -> None:
    """K22: Gymnasium's checker passes (illegal="lose"); the layout is the standard one, the highs the preset's."""
    env = krypkasino_v0.GymEnv(players=players, preset=preset, illegal="lose", render_mode="ansi")
    check_env(env, skip_render_check=False)
    standard = krypkasino_v0.GymEnv(players=players)
    assert env.observation_space.shape == standard.observation_space.shape
    assert env.action_space == standard.action_space
    rules = Rules.from_preset(preset, players=players)
    high, lay = env.observation_space.high, layout(players)
    assert int(high[lay["points"]].max()) == rules.total_points and int(high[lay["hand"]].max()) == rules.copies
    assert int(high[lay["deck_left"]][0]) == max(1, rules.deck_size - players * rules.hand - rules.table)


@pytest.mark.parametrize(("preset", "players"), TABLES)
def test_k22_one_episode_is_one_deal_of_the_preset(preset: str, players: int) -> None:
    """K21/K22: an episode plays every card of the preset's deal; the return is minus the learner's score."""
    rules = Rules.from_preset(preset, players=players)
    env = krypkasino_v0.GymEnv(players=players, preset=preset, opponents=FirstLegal())
    obs, info = env.reset(seed=4)
    assert env.observation_space.contains(obs)
    total, steps, term = 0.0, 0, False
    while not term:
        obs, reward, term, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert env.observation_space.contains(obs)
        total += reward
        steps += 1
    d = env.core.deals
    assert int(d.n_moves[0]) == rules.decisions_per_deal and steps >= rules.decisions_per_deal // players
    assert total == -float(d.scores()[0, 0]) and int(d.scores()[0].sum()) == rules.total_points


@pytest.mark.parametrize(("preset", "players"), TABLES)
def test_k22_vec_game_i_is_the_gym_env_seeded_seed_plus_i(preset: str, players: int) -> None:
    """K22: game i of ``VecEnv(seed=s, preset=...)`` plays as the preset's GymEnv reset with ``s + i``."""
    seed, steps = 30, 40
    vec = krypkasino_v0.VecEnv(3, players=players, preset=preset, seed=seed, seat="random")
    obs = vec.reset()
    seen: list[list[Any]] = [[], [], []]
    for _ in range(steps):
        actions = lowest_legal(vec.action_masks())
        next_obs, rewards, dones, _ = vec.step(actions)
        for i in range(3):
            seen[i].append((obs[i].tobytes(), int(actions[i]), float(rewards[i]), bool(dones[i])))
        obs = next_obs
    for i in range(3):
        env = krypkasino_v0.GymEnv(players=players, preset=preset, seat="random")
        trajectory = first_legal_trajectory(env, seed + i, steps)
        assert trajectory == seen[i], f"game {i} differs"
