"""Krypkasino's batched SB3 VecEnv: each finished game's return is minus its deal score (K16).

What every game's VecEnv does (masks, auto-reset, seeding, errors, game ``i`` as the Gymnasium
env) is tested once in ``tests/envs/``.
"""

from __future__ import annotations

import pytest

from krypenv.krypkasino.vec import KrypkasinoVecEnv
from tests.envs.helpers import finished_returns


def test_each_finished_game_returns_minus_its_deal_score() -> None:
    """K16: the rewards of one game, summed until it is done, are minus the learner's score in its final info."""
    finished = 0
    for total, info in finished_returns(KrypkasinoVecEnv(16, players=4, seed=3, seat="random"), 400):
        assert total == pytest.approx(-info["score"])
        finished += 1
    assert finished > 16
