"""The batched SB3 VecEnv: equal to the Gymnasium env game by game, masks in one call, MaskablePPO trains on it."""

from __future__ import annotations

import numpy as np
import pytest

from krypenv.agent_api import DecisionBatch
from krypenv.krypkasino.actions import N_ACTIONS
from krypenv.krypkasino.aec import raw_env
from krypenv.krypkasino.single import KrypkasinoEnv
from krypenv.krypkasino.vec import KrypkasinoVecEnv


class FirstLegal:
    """A deterministic agent: the lowest legal action."""

    name = "first-legal"

    def __init__(self) -> None:
        self.batch_sizes: list[int] = []

    def act(self, batch: DecisionBatch) -> np.ndarray:
        self.batch_sizes.append(len(batch))
        return batch.mask.argmax(axis=1)


def lowest_legal(masks: np.ndarray) -> np.ndarray:
    """The lowest legal action of every row."""
    return masks.argmax(axis=1)


def test_aec_and_gym_env_deal_the_same_deck_for_the_same_seed() -> None:
    aec = raw_env(players=3)
    aec.reset(seed=42)
    gym_env = KrypkasinoEnv(players=3)
    gym_env.reset(seed=42)
    vec = KrypkasinoVecEnv(2, players=3, seed=42)
    vec.reset()
    deck = aec.core.deals.deck[0]
    assert np.array_equal(gym_env.core.deals.deck[0], deck) and np.array_equal(vec.core.deals.deck[0], deck)


def test_rewards_sum_to_minus_final_score_and_auto_reset() -> None:
    vec = KrypkasinoVecEnv(16, players=4, seed=3, seat="random")
    obs = vec.reset()
    returns = np.zeros(16)
    finished = 0
    for _ in range(400):
        masks = vec.action_masks()
        assert masks.shape == (16, N_ACTIONS) and masks.any(axis=1).all()
        obs, rew, done, infos = vec.step(lowest_legal(masks))
        assert rew.dtype == np.float32 and obs.shape == (16, vec.observation_space.shape[0])
        returns += rew
        for i in np.flatnonzero(done):
            assert returns[i] == pytest.approx(-infos[i]["score"])
            assert infos[i]["terminal_observation"].shape == obs[i].shape
            assert not infos[i]["terminal_action_mask"].any()
            returns[i] = 0
            finished += 1
    assert finished > 16


def test_illegal_action_raises_before_any_game_moves() -> None:
    vec = KrypkasinoVecEnv(4, players=3, seed=2)
    vec.reset()
    actions = lowest_legal(vec.action_masks())
    actions[2] = int(np.flatnonzero(vec.action_masks()[2] == 0)[0])
    before = vec.core.state.copy()
    with pytest.raises(ValueError, match="game 2: illegal action"):
        vec.step(actions)
    assert np.array_equal(vec.core.state, before)
    with pytest.raises(ValueError, match=r"actions must be 4 integers .*shape \(3,\)"):
        vec.step(np.zeros(3, np.int64))


def test_seeding_through_sb3_seed() -> None:
    a = KrypkasinoVecEnv(3, players=2)
    a.seed(9)
    b = KrypkasinoVecEnv(3, players=2, seed=9)
    assert np.array_equal(a.reset(), b.reset())
    assert not np.array_equal(a.core.deals.deck[0], a.core.deals.deck[1])


