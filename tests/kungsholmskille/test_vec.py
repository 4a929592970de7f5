"""Kungsholmskille's batched SB3 VecEnv: each finished game's return is the learner's net money (L3, L14, L15, L16).

What every game's VecEnv does (masks, auto-reset, seeding, errors, game ``i`` as the Gymnasium
env) is tested once in ``tests/envs/``.
"""

from __future__ import annotations

from krypenv.kungsholmskille.vec import KungsholmskilleVecEnv
from tests.envs.helpers import finished_returns


def test_each_finished_game_returns_the_learners_net_money() -> None:
    """The rewards of one game, summed until it ends or is truncated (max_deals), are the money in its final info."""
    finished = 0
    for total, info in finished_returns(KungsholmskilleVecEnv(16, players=4, seed=3, seat="random", max_deals=5), 300):
        assert total == info["money"]
        finished += 1
    assert finished > 16
