"""The PettingZoo AEC environment: PettingZoo's own tests, rewards, illegal actions, matches, teams, rendering."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test

import krypenv
from krypenv.krypkasino.actions import CONFIRM, N_ACTIONS, TAKE
from krypenv.krypkasino.aec import ILLEGAL_PENALTY, raw_env
from krypenv.krypkasino.observation import split
from tests.envs.helpers import live_decisions, play_episode, random_legal


def test_pettingzoo_api_test_with_teams_and_a_match() -> None:
    api_test(krypenv.env(players=4, teams=[[0, 2], [1, 3]], deals=2), num_cycles=400, verbose_progress=False)


def test_metadata_and_spaces() -> None:
    env = krypenv.env(players=4)
    assert env.metadata["name"] == "krypkasino_v0"
    assert set(env.metadata["render_modes"]) == {"ansi", "human"}
    assert env.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    for agent in env.possible_agents:
        assert env.action_space(agent).n == N_ACTIONS
        assert env.observation_space(agent)["observation"].shape == (325 + 7 * 4 + 5,)
        assert env.observation_space(agent)["action_mask"].shape == (N_ACTIONS,)


@pytest.mark.parametrize("players,kw", [(2, {}), (3, {"last_capture_point": True}), (5, {"set_aside": "spades"})])
def test_returns_are_minus_the_deal_scores(players: int, kw: dict) -> None:
    """K16: each agent's return is minus its own deal score, tabbe credits and the K15 take included."""
    env = raw_env(players=players, **kw)
    env.reset(seed=players)
    returns = play_episode(env, random_legal(np.random.default_rng(players)))
    scores = env.core.deals.scores()[0]
    assert [returns[a] for a in env.possible_agents] == pytest.approx([-float(s) for s in scores])
    assert sum(scores) == (43 if kw.get("last_capture_point") else 42)


def test_relative_rewards_sum_to_zero_every_step() -> None:
    env = raw_env(players=3, reward="relative")
    env.reset(seed=4)
    sums = []
    returns = play_episode(env, random_legal(np.random.default_rng(1)),
                           on_step=lambda e, _agent: sums.append(sum(e.rewards.values())))
    assert np.allclose(sums, 0.0)
    scores = env.core.deals.scores()[0].astype(float)
    expected = [-(scores[s] - (scores.sum() - scores[s]) / 2) for s in range(3)]
    assert [returns[a] for a in env.possible_agents] == pytest.approx(expected)


def test_team_rewards() -> None:
    """K18: with teams every agent is rewarded with its team's score change; partners get equal returns."""
    env = raw_env(players=4, teams=[[0, 2], [1, 3]])
    env.reset(seed=9)
    returns = play_episode(env, random_legal(np.random.default_rng(2)))
    team = env.core.deals.team_scores()[0]
    assert returns["player_0"] == returns["player_2"] == pytest.approx(-team[0])
    assert returns["player_1"] == returns["player_3"] == pytest.approx(-team[1])


def test_match_of_several_deals_rotates_the_dealer() -> None:
    """K19: deals=3 is one episode of three deals, the dealer passing left; returns are minus the match totals."""
    env = raw_env(players=3, deals=3)
    env.reset(seed=5)
    dealers, totals = [], []

    def watch(e, _agent: str = "") -> None:
        d = e.core.deals
        if not dealers or dealers[-1] != int(d.dealer[0]):
            dealers.append(int(d.dealer[0]))

    watch(env)
    returns = play_episode(env, random_legal(np.random.default_rng(3)), on_step=watch)
    core = env.core
    totals = core.totals[0] + core.deals.scores()[0]
    assert dealers == [2, 0, 1]
    assert [returns[a] for a in env.possible_agents] == pytest.approx([-float(t) for t in totals])
    assert int(totals.sum()) == 3 * 42


def test_illegal_action_names_the_action_and_the_legal_ones() -> None:
    """Krypkasino's message: the action's number and move, then every legal action's."""
    env = krypenv.env(players=3)
    env.reset(seed=1)
    obs, *_ = env.last()
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    legal = ", ".join(rf"{a} \(play \w+\)" for a in np.flatnonzero(obs["action_mask"]))
    with pytest.raises(ValueError, match=rf"^illegal action {bad} \(play \w+\) for player_0; legal actions: {legal}$"):
        env.step(bad)


def test_illegal_lose_ends_the_episode_with_a_penalty() -> None:
    env = raw_env(players=3, illegal="lose")
    env.reset(seed=1)
    agent = env.agent_selection
    obs = env.observe(agent)
    env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert all(env.terminations.values())
    assert env.rewards[agent] == -ILLEGAL_PENALTY
    assert sum(r for a, r in env.rewards.items() if a != agent) == 0


def test_non_acting_agents_see_their_state_but_have_no_decision() -> None:
    """The mask means 'legal for you now'; the turn is explicit in to_act and in infos."""
    env = raw_env(players=3)
    env.reset(seed=2)
    actor = env.agent_selection
    for agent in env.agents:
        obs = env.observe(agent)
        f = split(obs["observation"], 3)
        acting = agent == actor
        assert obs["action_mask"].any() == acting
        assert f["to_act"][0] == int(acting) and f["hand_size"][0] > 0
        assert env.infos[agent]["to_act"] == acting


def test_capture_choice_keeps_the_same_agent() -> None:
    """A card with several captures: the same agent acts again, choosing table cards (no one-answer questions)."""
    env = raw_env(players=2)
    rng = np.random.default_rng(0)
    for seed in range(40):
        env.reset(seed=seed)
        for agent, mask in live_decisions(env):
            if mask[TAKE:].any():
                assert not mask[:TAKE].any() and mask.sum() >= 2
                env.step(int(rng.choice(np.flatnonzero(mask))))
                assert env.agent_selection == agent or env.core.choice[0, 0] < 0
                return
            env.step(int(rng.choice(np.flatnonzero(mask))))
    pytest.fail("no capture choice in 40 random deals")


def test_render_talks_like_the_rule_texts() -> None:
    env = raw_env(players=3, render_mode="ansi")
    env.reset(seed=0)
    lines = []
    play_episode(env, random_legal(np.random.default_rng(5)), on_step=lambda e, _agent: lines.append(e.render()))
    text = "\n".join(lines)
    assert "table:" in text and "set aside:" in text and "score" in text
    assert "tabbe på" in text and "sistan" in text and "takes the rest of the table" in text
    assert raw_env(players=3).render() is None


def test_confirm_is_only_offered_when_the_fixed_cards_are_a_capture() -> None:
    env = raw_env(players=2)
    for seed in range(60):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _agent, mask in live_decisions(env):
            if mask[CONFIRM]:
                assert env.core.choice[0, 0] >= 0 and mask[TAKE:CONFIRM].any()
            env.step(int(rng.choice(np.flatnonzero(mask))))
