"""Env conformance on the ``small`` preset (KILLE.md L20–L22): PettingZoo's api/seed tests, Gymnasium's and SB3's
``check_env``, the same game in all three interfaces, and the observation Box of the preset."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from krypenv import kungsholmskille_v0
from krypenv.games import GAMES
from krypenv.kungsholmskille.observation import layout, obs_size
from tests.envs.helpers import FirstLegal


@pytest.mark.parametrize("players", [2, 3])
def test_pettingzoo_api_and_seed_tests_on_small(players: int) -> None:
    """PettingZoo's API test and seed test on the small preset."""
    api_test(kungsholmskille_v0.env(players=players, preset="small"), num_cycles=200)
    seed_test(lambda: kungsholmskille_v0.env(players=players, preset="small"), num_cycles=200)


def test_gymnasium_and_sb3_check_env_on_small() -> None:
    """Gymnasium's checker (through ``gymnasium.make`` with ``preset``) and SB3's on the small preset."""
    env = gymnasium.make(GAMES["kungsholmskille"].gym_id, players=3, preset="small", illegal="lose",
                         render_mode="ansi")
    assert env.unwrapped.core.rules.preset_name == "small"
    check_env(env.unwrapped, skip_render_check=False)
    sb3_check_env(kungsholmskille_v0.GymEnv(players=2, preset="small"), warn=True)


def test_small_observation_box_states_the_preset() -> None:
    """L22: the layout is the standard one (75 + 23P); the highs of talon and the deal counters are the preset's."""
    env = kungsholmskille_v0.GymEnv(players=3, preset="small")
    space = env.observation_space
    lay = layout(3)
    assert space.shape == (obs_size(3),) == (144,)
    assert space.high[lay["talon"]][0] == 22 - 15 and space.high[lay["deals_left"]][0] == 2
    assert space.high[lay["hand"]].max() == 2 and space.high[lay["trick_cards"]].max() == 20


def test_aec_gym_and_vec_play_the_same_small_game() -> None:
    """Every seat plays the lowest legal action: the AEC env's seat 0, the Gymnasium env and VecEnv game 0 see the
    same observations and rewards on the small preset, and the episode ends within its 3 deals."""
    seed, kw = 4, {"players": 2, "preset": "small"}
    aec = kungsholmskille_v0.raw_env(**kw)
    aec.reset(seed=seed)
    seen_aec = []
    for agent in aec.agent_iter():
        obs, reward, term, trunc, _ = aec.last()
        if agent == "player_0":
            seen_aec.append((obs["observation"].tobytes(), reward, term, trunc))
        aec.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    env = kungsholmskille_v0.GymEnv(seat=0, opponents=FirstLegal(), **kw)
    vec = kungsholmskille_v0.VecEnv(1, seat=0, opponents=FirstLegal(), seed=seed, **kw)
    obs, info = env.reset(seed=seed)
    vec_obs = vec.reset()
    seen_gym = [(obs.tobytes(), 0.0, False, False)]
    while True:
        assert np.array_equal(vec_obs[0], obs)
        action = int(np.flatnonzero(info["action_mask"])[0])
        obs, reward, term, trunc, info = env.step(action)
        vec_obs, vec_rewards, _, vec_infos = vec.step(np.array([action]))
        assert vec_rewards[0] == np.float32(reward)
        seen_gym.append((obs.tobytes(), reward, term, trunc))
        if term or trunc:
            assert term and not trunc and info["deal"] <= 2
            assert np.array_equal(vec_infos[0]["terminal_observation"], obs)
            break
    assert [s[0] for s in seen_aec] == [s[0] for s in seen_gym]
    assert [s[1] for s in seen_aec[1:]] == [s[1] for s in seen_gym[1:]]
