"""Krypkasino's Gymnasium env: its config keywords, honest rewards (K16), opponents in batches, penalty, render.

What every game's Gymnasium env does is tested once in ``tests/envs/``.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from krypenv.agent_api import DecisionBatch
from krypenv.krypkasino.actions import N_ACTIONS
from krypenv.krypkasino.aec import ILLEGAL_PENALTY
from krypenv.krypkasino.single import KrypkasinoEnv


class Counting:
    """The lowest legal action; counts how often and with how many decisions it was asked."""

    name = "counting"

    def __init__(self) -> None:
        self.calls, self.decisions = 0, 0

    def act(self, batch: DecisionBatch) -> np.ndarray:
        self.calls += 1
        self.decisions += len(batch)
        assert all(v.legal_moves for v in batch.views())
        return batch.mask.argmax(axis=1)


def run_episode(env: gymnasium.Env, seed: int, policy=None) -> tuple[list[int], list[float], dict]:
    """Play one episode (learner: ``policy(obs, mask)`` or the lowest legal action); actions and rewards."""
    obs, info = env.reset(seed=seed)
    actions, rewards = [], []
    while True:
        mask = info["action_mask"]
        a = int(np.flatnonzero(mask)[0]) if policy is None else policy(obs, mask)
        obs, r, term, trunc, info = env.step(a)
        actions.append(a)
        rewards.append(r)
        assert not trunc
        if term:
            return actions, rewards, info


def test_registered_id_and_config_keywords() -> None:
    env = gymnasium.make("krypenv/Krypkasino-v0", seat=1, opponents="random", players=4, teams=[[0, 2], [1, 3]],
                         set_aside="spades", last_capture_point=True, reward="relative", deals=2)
    obs, info = env.reset(seed=0)
    assert obs.shape == (325 + 7 * 4 + 5,) and info["seat"] == 1
    assert env.action_space.n == N_ACTIONS


@pytest.mark.parametrize("kw,match", [
    ({"players": 7}, "players"), ({"teams": [[0, 1], [2, 3]], "players": 4}, "teams"),
    ({"reward": "money"}, "reward"), ({"deals": 0}, "deals"), ({"illegal": "ignore"}, "illegal"),
    ({"seat": 3, "players": 3}, "seat"), ({"opponents": "greedy"}, "opponent"),
    ({"opponents": ["random"] * 3, "players": 3}, "opponents"), ({"render_mode": "rgb_array"}, "render_mode"),
])
def test_bad_config_names_the_problem(kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        KrypkasinoEnv(**kw)


@pytest.mark.parametrize("players,seat", [(2, 0), (2, 1), (3, 2), (4, 1), (6, 5)])
def test_return_is_minus_the_learners_final_score(players: int, seat: int) -> None:
    """PettingZoo#1147 cannot happen: everything the learner's score changed reaches its own rewards,
    including the tabbe credit for a sweep the next seat makes, changes before its first decision and K15."""
    env = KrypkasinoEnv(players=players, seat=seat)
    total_tabbe_credit = 0
    for seed in range(6):
        _, rewards, _ = run_episode(env, seed)
        d = env.core.deals
        assert sum(rewards) == pytest.approx(-float(d.scores()[0][seat]))
        total_tabbe_credit += int(d.tabbes[0][(seat + 1) % players])
    assert total_tabbe_credit > 0  # the credit path was exercised


def test_reward_arrives_during_opponents_turns() -> None:
    """A sweep made by the seat after the learner shows up in the learner's very next reward as +5."""
    env = KrypkasinoEnv(players=2, seat=0)
    for seed in range(60):
        _obs, info = env.reset(seed=seed)
        while True:
            d = env.core.deals
            before = int(d.tabbes[0, 1])
            points_before = int(d.card_points()[0, 0])
            a = int(np.flatnonzero(info["action_mask"])[0])
            tabbes_before_own = int(d.tabbes[0, 0])
            _obs, r, term, _, info = env.step(a)
            if term:
                break
            gained = int(d.tabbes[0, 1]) - before
            own = int(d.tabbes[0, 0]) - tabbes_before_own
            taken = int(d.card_points()[0, 0]) - points_before
            assert r == pytest.approx(5 * gained - taken - 5 * own)
            if gained:
                return
    pytest.fail("the opponent never swept in 60 deals")


def test_external_opponents_act_in_batches_and_see_views() -> None:
    agent = Counting()
    env = KrypkasinoEnv(players=3, opponents=agent)
    run_episode(env, 0)
    assert agent.calls == agent.decisions > 0


def test_illegal_lose_costs_the_learner_the_penalty() -> None:
    """``illegal="lose"``: the learner's reward is minus ILLEGAL_PENALTY (50) and it has no decision left."""
    env = KrypkasinoEnv(players=3, illegal="lose")
    _obs, info = env.reset(seed=1)
    _obs, r, term, _trunc, info = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert term and r == -ILLEGAL_PENALTY == -50.0 and not info["action_mask"].any()


def test_human_render_prints(capsys: pytest.CaptureFixture[str]) -> None:
    env = KrypkasinoEnv(players=2, render_mode="human")
    run_episode(env, 3)
    out = capsys.readouterr().out
    assert "table:" in out and "player_1 plays" in out and "took last" in out
