"""The RLlib adapter (both games), the masked random module, and ``examples/rllib_ppo.py`` → ``rllib:PATH``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.ray.helpers import NO_RAY

ray = pytest.importorskip("ray", reason=NO_RAY)

from krypenv.eval.krypkasino import EvalConfig, evaluate

from krypenv import agents
from krypenv.rllib import KrypenvMultiAgentEnv, MaskedRandomRLModule

ROOT = Path(__file__).resolve().parents[2]


def play_episode(env: KrypenvMultiAgentEnv, seed: int) -> tuple[dict[str, float], int]:
    """One episode of random legal play, checking every step's dicts; returns each agent's return and the steps."""
    rng = np.random.default_rng(seed)
    obs, _infos = env.reset(seed=seed)
    returns = {a: 0.0 for a in env.possible_agents}
    steps = 0
    while True:
        (agent, o), = obs.items()
        space = env.observation_spaces[agent]
        assert set(o) == {"observations", "action_mask"} and o["observations"].dtype == np.float32
        assert o["action_mask"].dtype == np.float32 and space.contains(o)
        legal = np.flatnonzero(o["action_mask"])
        obs, rewards, terms, truncs, _infos = env.step({agent: int(rng.choice(legal))})
        steps += 1
        assert set(rewards) <= set(obs), "a reward without an observation"
        if not (terms["__all__"] or truncs["__all__"]):
            (nxt,) = obs
            # the reward owed equals what PettingZoo's last() would hand the agent now
            assert rewards[nxt] == pytest.approx(env.aec._cumulative_rewards[nxt])
        for a, r in rewards.items():
            returns[a] += r
        if terms["__all__"] or truncs["__all__"]:
            assert set(obs) == set(env.possible_agents), "every agent gets a final observation"
            assert set(terms) == set(truncs) == set(env.possible_agents) | {"__all__"}
            return returns, steps


def test_krypkasino_returns_are_minus_the_deal_scores() -> None:
    env = KrypenvMultiAgentEnv({"game": "krypkasino", "players": 3})
    for seed in range(3):
        returns, steps = play_episode(env, seed)
        scores = env.aec.core.deals.scores()[0]
        assert steps > 20
        assert [returns[f"player_{s}"] for s in range(3)] == pytest.approx([-float(x) for x in scores])


def test_kungsholmskille_returns_are_net_money_and_sum_to_zero() -> None:
    env = KrypenvMultiAgentEnv({"game": "kungsholmskille", "players": 4})
    for seed in range(3):
        returns, _ = play_episode(env, seed)
        if all(env.aec.terminations.values()):
            assert sum(returns.values()) == pytest.approx(0.0)


def test_unknown_game_and_wrong_agent_are_errors() -> None:
    with pytest.raises(ValueError, match="unknown game 'poker'; known games: krypkasino, kungsholmskille"):
        KrypenvMultiAgentEnv({"game": "poker"})
    env = KrypenvMultiAgentEnv({"players": 2})
    obs, _ = env.reset(seed=0)
    other = next(a for a in env.possible_agents if a not in obs)
    with pytest.raises(ValueError, match=f"it is .*'s turn, but the actions are for \\['{other}'\\]"):
        env.step({other: 0})


def test_masked_random_module_plays_only_legal_actions_uniformly() -> None:
    import gymnasium as gym

    env = KrypenvMultiAgentEnv({"players": 2})
    module = MaskedRandomRLModule(observation_space=env.observation_spaces["player_0"],
                                  action_space=gym.spaces.Discrete(105))
    mask = np.zeros((3000, 105), np.float32)
    mask[:, [4, 50, 104]] = 1
    acts = module.forward_inference({"obs": {"observations": np.zeros((3000, 10), np.float32),
                                             "action_mask": mask}})["actions"]
    counts = np.bincount(acts, minlength=105)
    assert set(np.flatnonzero(counts)) == {4, 50, 104} and counts[[4, 50, 104]].min() > 850


@pytest.mark.slow
def test_rllib_ppo_example_checkpoint_plays_as_an_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # a local Ray of its own
    spec = importlib.util.spec_from_file_location("rllib_ppo", ROOT / "examples" / "rllib_ppo.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)  # type: ignore[union-attr]
    ray.shutdown()
    try:
        out = tmp_path / "ck"
        summary = example.main(example.parse_args(["--timesteps", "400", "--batch", "200", "--minibatch", "100",
                                                   "--epochs", "1", "--hidden", "32", "--out", str(out)]))
        kille = example.main(example.parse_args(["--game", "kungsholmskille", "--players", "3", "--opponents",
                                                 "random", "--timesteps", "200", "--batch", "200", "--minibatch",
                                                 "100", "--epochs", "1", "--hidden", "32",
                                                 "--out", str(tmp_path / "kille")]))
    finally:
        ray.shutdown()
    assert summary["env_steps"] >= 400 and kille["env_steps"] >= 200
    agent = agents.load(f"rllib:{out}")
    assert agent.meta["game"] == "krypkasino" and agent.meta["obs_dim"] == 344
    res = evaluate(EvalConfig(agents=(f"rllib:{out}", "expert"), deals=3, seed=1))
    assert res.rows[0].games == 6
    assert agents.load(f"rllib:{tmp_path / 'kille'}", game="kungsholmskille").meta["actions"] == 279
    with pytest.raises(ValueError, match="trained on kungsholmskille with observations of"):
        evaluate(EvalConfig(agents=(f"rllib:{tmp_path / 'kille'}", "random"), deals=2))
    with pytest.raises(ValueError, match="no such checkpoint folder"):
        agents.load(f"rllib:{tmp_path / 'nothing'}")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "krypenv.json").write_text("{")
    with pytest.raises(ValueError, match=r"^rllib:.*bad: unreadable krypenv\.json"):
        agents.load(f"rllib:{tmp_path / 'bad'}")
    assert sys.modules.get("ray") is ray
