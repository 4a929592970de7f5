"""The Kungsholmskille PettingZoo AEC env: PettingZoo's tests, money as rewards, episodes, folds, options, errors."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test

from krypenv import kungsholmskille_v0
from krypenv.kungsholmskille.actions import BUD, FOLD, KNACKA, N_ACTIONS, SHOW, STAND, STAY, action_name
from krypenv.kungsholmskille.aec import ILLEGAL_FINE, raw_env
from krypenv.kungsholmskille.observation import split
from tests.envs.helpers import Choose, live_decisions, play_episode, random_legal


@pytest.mark.parametrize("players,kw", [(6, {"skip_forced": True}), (3, {"max_deals": 2})])
def test_pettingzoo_api_test_with_kille_options(players: int, kw: dict) -> None:
    """PettingZoo's API test with forced plays skipped (L10, L17) and a match of two deals (L16)."""
    api_test(kungsholmskille_v0.env(players=players, **kw), num_cycles=300, verbose_progress=False)


def test_metadata_and_spaces() -> None:
    env = kungsholmskille_v0.env(players=5)
    assert env.metadata["name"] == "kungsholmskille_v0"
    assert env.possible_agents == [f"player_{s}" for s in range(5)]
    for agent in env.possible_agents:
        assert env.action_space(agent).n == N_ACTIONS == 279
        space = env.observation_space(agent)
        assert space["observation"].shape == (75 + 23 * 5,) and space["observation"].dtype == np.int16
        assert space["action_mask"].shape == (N_ACTIONS,)


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_returns_are_net_money_and_sum_to_zero_when_the_pot_goes_out(players: int) -> None:
    """L3, L14, L15: each return is the seat's net money; a pot that went out leaves the returns summing to 0."""
    env = raw_env(players=players)
    outcomes = set()
    for seed in range(12):
        env.reset(seed=seed)
        returns = play_episode(env, random_legal(np.random.default_rng(seed)))
        core = env.core
        assert [returns[a] for a in env.possible_agents] == core.money[0].tolist()
        if env.core.over[0] == 1:  # POT_OUT
            assert sum(returns.values()) == 0
            outcomes.add(int(core.deals.outcome[0]))
    assert 2 in outcomes and (players > 3 or 1 in outcomes)  # showdowns seen; walkovers too with few seats


def scripted(moves: dict[int, int]) -> Choose:
    """A policy that plays a fixed action per phase (phase code → action), else the first legal action."""
    def policy(env: raw_env, agent: str, mask: np.ndarray) -> int:
        a = moves.get(int(env.core.deals.phase[0]))
        return a if a is not None and mask[a] else int(np.flatnonzero(mask)[0])
    return policy


def test_walkover_knocker_takes_the_pot() -> None:
    """L15: forehand knocks, everybody folds: forehand's return is the pot minus its own ante."""
    env = raw_env(players=4)
    env.reset(seed=0)
    returns = play_episode(env, scripted({0: KNACKA, 1: FOLD}))
    assert env.terminations == {} and env.core.deals.outcome[0] == 1
    assert returns == {"player_0": 6.0, "player_1": -2.0, "player_2": -2.0, "player_3": -2.0}


def test_budrunda_antes_reach_every_seat_and_truncation_at_max_deals() -> None:
    """L12: all bud, every seat antes 1 per budrunda (a negative reward to each, also off turn); L16: after
    max_deals deals the episode is truncated, the antes of the deal never dealt are not paid, the pot is nobody's."""
    env = raw_env(players=3, max_deals=3)
    env.reset(seed=1)
    dealers: list[int] = []
    step_rewards: list[dict[str, float]] = []

    def watch(e: raw_env, agent: str) -> None:
        step_rewards.append(dict(e.rewards))
        if e.core.over[0] == 0:
            dealers.append(int(e.core.deals.dealer[0]))

    returns = play_episode(env, scripted({0: BUD}), on_step=watch)
    assert returns == {"player_0": -4.0, "player_1": -4.0, "player_2": -4.0}  # −2 (L3), −1, −1
    assert step_rewards[0] == {a: -2.0 for a in env.possible_agents}  # the L3 ante arrives with the first step
    assert step_rewards[2] == {a: -1.0 for a in env.possible_agents}  # the third bud ends deal 0 (L12)
    assert step_rewards[-1] == {a: 0.0 for a in env.possible_agents}  # truncation: no antes for a fourth deal
    assert sorted(set(dealers)) == [0, 1, 2] and dealers[0] == 2 and dealers[3] == 0  # L2: the deal passes left
    assert env.truncations == {} and int(env.core.pot[0]) == 6 + 3 + 3  # nobody's pot


def test_after_a_fold_only_folders_ante_and_folded_seats_are_never_selected() -> None:
    """L6/L12: seat 1 folds, the rest stay, stand and say bud twice: only seat 1 antes 1 into the next pot.
    The folded seat is not selected during the deal, stays in agents, and gets its reward."""
    env = raw_env(players=4, max_deals=2)
    env.reset(seed=2)
    selected_while_folded = []

    def policy(e: raw_env, agent: str, mask: np.ndarray) -> int:
        d, s = e.core.deals, int(agent[-1])
        if d.folded[0, s]:
            selected_while_folded.append(agent)
        ph = int(d.phase[0])
        if e.core.deal_no[0] == 0:
            return ({0: KNACKA, 1: FOLD if s == 1 else STAY, 2: STAND, 3: BUD}[ph] if ph < 4
                    else int(np.flatnonzero(mask)[0]))
        return BUD if mask[BUD] else int(np.flatnonzero(mask)[0])

    seen: list[dict[str, float]] = []
    play_episode(env, policy, on_step=lambda e, a: seen.append(dict(e.rewards)) if e.core.deal_no[0] == 1 and
         len(seen) == 0 else None)
    assert not selected_while_folded
    assert seen[0] == {"player_0": 0.0, "player_1": -1.0, "player_2": 0.0, "player_3": 0.0}


def test_skip_forced_makes_single_move_decisions_and_records_them() -> None:
    """skip_forced=False (default) asks every forced play (L10, L17); True never asks one but records it."""
    counts = {}
    for skip in (False, True):
        env = raw_env(players=3, skip_forced=skip, max_deals=1)
        single, asked, recorded = 0, 0, 0
        for seed in range(6):
            env.reset(seed=seed)
            for _agent, mask in live_decisions(env):
                single += int(mask.sum() == 1)
                asked += 1
                a = KNACKA if mask[KNACKA] and env.core.deals.phase[0] == 0 else (
                    STAY if mask[STAY] else (SHOW if mask[SHOW] else int(np.flatnonzero(mask)[-1])))
                env.step(a)
            recorded += int(env.core.deals.n_moves[0])
        counts[skip] = (single, asked, recorded)
    assert counts[False][0] > 0 and counts[True][0] == 0
    assert counts[False][2] == counts[False][1]  # one decision per record move
    assert counts[True][2] > counts[True][1]  # forced plays are in the record without being asked


def test_illegal_action_names_the_move_and_the_legal_moves() -> None:
    """Kungsholmskille's message names moves (L5's first call: bud or knacka); the episode and state stay put."""
    env = kungsholmskille_v0.env(players=4)
    env.reset(seed=3)
    agent = env.agent_selection
    core = env.unwrapped.core
    before = (core.state.copy(), core.episode.copy())
    with pytest.raises(ValueError,
                       match=r"illegal move 'play:gok' \(action 277\) for player_0; legal moves: bud, knacka"):
        env.step(277)
    with pytest.raises(ValueError, match=rf"illegal move 'action {N_ACTIONS} \(outside 0\.\.278\)'"):
        env.step(N_ACTIONS)
    assert np.array_equal(core.state, before[0]) and np.array_equal(core.episode, before[1])
    assert env.agent_selection == agent
    env.step(BUD)  # still works


def test_illegal_lose_ends_the_episode_and_the_offender_pays_everyone() -> None:
    env = raw_env(players=4, illegal="lose")
    env.reset(seed=4)
    agent = env.agent_selection
    env.step(FOLD)  # no fold in the first call (L5)
    assert all(env.terminations.values())
    assert env.rewards[agent] == -2 - 3 * ILLEGAL_FINE
    assert all(env.rewards[a] == -2 + ILLEGAL_FINE for a in env.agents if a != agent)
    assert not any(env.observe(a)["action_mask"].any() for a in env.agents)


@pytest.mark.parametrize("kw,field", [
    ({"players": 7}, "players"), ({"players": 1}, "players"), ({"first_dealer": 4}, "first_dealer"),
    ({"max_deals": 0}, "max_deals"), ({"max_deals": 1001}, "max_deals"), ({"skip_forced": "yes"}, "skip_forced"),
    ({"illegal": "ignore"}, "illegal"), ({"render_mode": "rgb_array"}, "render_mode"),
])
def test_bad_config_names_the_field(kw: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        raw_env(**kw)


def test_only_the_agent_to_act_has_a_mask_and_to_act_is_explicit() -> None:
    env = raw_env(players=4)
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(25):
        actor = env.agent_selection
        for agent in env.agents:
            obs = env.observe(agent)
            acting = agent == actor
            assert obs["action_mask"].any() == acting == env.infos[agent]["to_act"]
            assert split(obs["observation"], 4)["to_act"][0] == int(acting)
        env.step(int(rng.choice(np.flatnonzero(env.observe(actor)["action_mask"]))))
        if any(env.terminations.values()):
            break


def test_render_shows_hands_pot_money_calls_and_results(capsys: pytest.CaptureFixture[str]) -> None:
    env = raw_env(players=3, render_mode="ansi")
    texts = []
    for seed in range(4):
        env.reset(seed=seed)
        play_episode(env, random_legal(np.random.default_rng(seed)), on_step=lambda e, a: texts.append(e.render()))
    text = "\n".join(texts)
    for word in ("pot", "money", "hand:", "calls:", "tricks:", "current trick:", "legal:", "knacka", "play:"):
        assert word in text, word
    assert "showdown (L14)" in text or "walkover (L15)" in text
    assert raw_env(players=3).render() is None
    human = raw_env(players=2, render_mode="human")
    human.reset(seed=0)
    assert human.render() is None and "player_1" in capsys.readouterr().out
    assert action_name(KNACKA) == "knacka"
