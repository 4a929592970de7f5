"""Kungsholmskille's Gymnasium env: money as rewards (L3, L12, L14, L15), truncation (L16), fine, config errors.

What every game's Gymnasium env does is tested once in ``tests/envs/``.
"""

from __future__ import annotations

import numpy as np
import pytest

from krypenv.kungsholmskille.actions import BUD
from krypenv.kungsholmskille.aec import ILLEGAL_FINE
from krypenv.kungsholmskille.single import KungsholmskilleEnv
from krypenv.kungsholmskille.vec import KungsholmskilleVecEnv


@pytest.mark.parametrize("players,seat", [(2, 1), (4, 0), (6, 3)])
def test_return_is_the_learners_net_money(players: int, seat: int) -> None:
    """Every money change of the learner reaches its own rewards, also those in opponents' turns (L3, L12, L14, L15)."""
    env = KungsholmskilleEnv(players=players, seat=seat)
    rng = np.random.default_rng(players)
    for seed in range(8):
        _obs, info = env.reset(seed=seed)
        total = 0.0
        while True:
            a = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _obs, r, term, trunc, info = env.step(a)
            total += r
            if term or trunc:
                break
        assert total == env.core.money[0, seat] == info["money"][seat]
        if term:
            assert sum(info["money"]) == 0


def test_truncation_after_max_deals() -> None:
    """L16: everybody says bud; after max_deals budrundor the episode is truncated with the antes paid so far."""
    bud = type("Bud", (), {"act": lambda self, b: np.where(b.mask[:, BUD] == 1, BUD, b.mask.argmax(axis=1))})()
    env = KungsholmskilleEnv(players=3, opponents=bud, max_deals=4)
    _obs, info = env.reset(seed=0)
    rewards = []
    while True:
        _obs, r, term, trunc, info = env.step(BUD if info["action_mask"][BUD] else int(info["action_mask"].argmax()))
        rewards.append(r)
        if term or trunc:
            break
    assert trunc and not term and sum(rewards) == -2 - 3 and info["deal"] == 3
    with pytest.raises(ValueError, match="reset"):
        env.step(BUD)


def test_illegal_lose_the_learner_pays_the_fine_to_each_opponent() -> None:
    """``illegal="lose"``: the learner loses its L3 ante and ILLEGAL_FINE to each opponent; no decision is left."""
    env = KungsholmskilleEnv(players=3, illegal="lose")
    _obs, info = env.reset(seed=1)
    _obs, r, term, _trunc, info = env.step(278)
    assert term and r == -2 - 2 * ILLEGAL_FINE == -2 - 2 * 20 and not info["action_mask"].any()


@pytest.mark.parametrize("kw,field", [
    ({"seat": 3, "players": 3}, "seat"), ({"opponents": "greedy"}, "opponents"),
    ({"opponents": ["random"] * 3, "players": 3}, "opponents"), ({"max_deals": 0}, "max_deals"),
    ({"players": 7}, "players"),
])
def test_bad_config_names_the_field(kw: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        KungsholmskilleEnv(**kw)
    with pytest.raises(ValueError, match=field):
        KungsholmskilleVecEnv(2, **kw)
