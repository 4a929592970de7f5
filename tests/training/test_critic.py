"""krypenv.training.critic: the oracle critic (a diagnostic that reads the tree), the exploring behaviour policy.

Oracles: for the oracle critic, the tree's exact Q (:meth:`krypenv.training.critic.TreeValues.values`, itself held
to OpenSpiel's ``TreeWalkCalculator`` in test_treemmd.py) at the row of each decision found by a brute-force
search of the tree's distinct observations, times ``reward_scale``; the decisions are those the device env deals
and plays, not the tree's own rows.  For the behaviour policy, the mixture written out by hand; for the off-policy
weights, their definition as a loop over each env's steps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from krypenv.training.critic import opponent_ratios
from krypenv.training.mmdnet import Policy, behaviour, probabilities, sample
from krypenv.training.selfplay import Args, main, make_env

MICRO = "ranks=A-2-3,hand=2,table=2"


def test_the_oracle_critic_is_the_tree_s_q_at_each_played_decision() -> None:
    """Q of the network's policy at decisions the device env reaches: the tree's row of that observation and mask
    (found by brute force), × reward_scale, 0 off the legal actions."""
    pytest.importorskip("pyspiel")
    from krypenv.training.critic import OracleCritic

    args = Args(device="cpu", preset="tiny", rules=MICRO, update="critic", oracle_critic=True, num_envs=64,
                reward_scale=0.25)
    oracle = OracleCritic(args)
    tv = oracle.values
    torch.manual_seed(0)
    net = Policy(tv.obs.shape[1], tv.legal.shape[1], 16, 2, critic=True)
    env = make_env(args)
    obs, info = env.reset(seed=3)
    rows_obs, rows_mask = [], []
    for _ in range(6):
        rows_obs.append(obs.clone())
        rows_mask.append(info["action_mask"].clone())
        with torch.no_grad():
            action = sample(net(obs, info["action_mask"])[0], info["action_mask"])
        obs, _, _, _, info = env.step(action)
    obs, mask = torch.cat(rows_obs), torch.cat(rows_mask)
    got = oracle(net, obs, mask)
    with torch.no_grad():
        logp = net(torch.as_tensor(tv.obs).float(), torch.as_tensor(tv.legal))[0]
    probs = probabilities(logp, torch.as_tensor(tv.legal)).double().numpy()
    q, _ = tv.values(probs / probs.sum(1, keepdims=True))
    o_np, m_np = obs.numpy(), mask.numpy()
    for i in range(len(obs)):
        row = np.flatnonzero((tv.obs == o_np[i]).all(1) & (tv.legal == m_np[i]).all(1))
        assert len(row) == 1
        np.testing.assert_allclose(got[i].numpy(), 0.25 * q[row[0]], rtol=1e-5, atol=1e-6)
    assert (got[~mask] == 0).all() and got[mask].abs().max() > 0


def test_the_oracle_critic_refuses_a_decision_off_the_tree() -> None:
    """An observation the game never shows is an error naming the option, not a silent row."""
    pytest.importorskip("pyspiel")
    from krypenv.training.critic import OracleCritic

    oracle = OracleCritic(Args(device="cpu", preset="tiny", rules=MICRO, update="critic", oracle_critic=True))
    tv = oracle.values
    net = Policy(tv.obs.shape[1], tv.legal.shape[1], 8, 1, critic=True)
    obs = torch.as_tensor(tv.obs[:2]).clone()
    obs[1] = 7
    with pytest.raises(ValueError, match="oracle_critic: 1 sampled decisions"):
        oracle(net, obs, torch.as_tensor(tv.legal[:2]))


@pytest.mark.parametrize("explore", [0.0, 0.3, 1.0 - 1e-6])
def test_behaviour_is_the_mixture_with_the_uniform(explore: float) -> None:
    """exp(behaviour) = (1 − ε)·π + ε / (legal actions) on the legal actions, 0 off them; rows sum to 1."""
    g = torch.Generator().manual_seed(2)
    mask = torch.rand(5, 7, generator=g) < 0.5
    mask[:, 3] = True
    logp = torch.log_softmax(torch.randn(5, 7, generator=g).masked_fill(~mask, -1e9), -1)
    got = behaviour(logp, mask, explore).exp()
    want = (1 - explore) * probabilities(logp, mask) + explore * mask / mask.sum(1, keepdim=True)
    assert torch.allclose(got, want, atol=1e-6) and (got[~mask] == 0).all()
    assert torch.allclose(got.sum(1), torch.ones(5), atol=1e-6)


def _ratios_by_hand(log_ratio: np.ndarray, done: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """The definition, env by env: the product of exp(log_ratio) over the later steps of other seats, stopping at
    the decision's seat's next step or after the step that ends the episode."""
    T, N = log_ratio.shape
    out = np.ones((T, N))
    for i in range(N):
        for t in range(T):
            if done[t, i]:
                continue  # its episode ends with it: no later step counts
            for u in range(t + 1, T):
                if seat[u, i] == seat[t, i]:
                    break
                out[t, i] *= np.exp(log_ratio[u, i])
                if done[u, i]:
                    break
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 10), st.integers(1, 3), st.integers(2, 3), st.integers(0, 2**31 - 1))
def test_opponent_ratios_are_the_definition_s(T: int, N: int, P: int, seed: int) -> None:
    """Random rollouts (seats, episode ends, log-ratios): opponent_ratios equals the loop of its definition."""
    rng = np.random.default_rng(seed)
    log_ratio = rng.normal(0, 0.5, (T, N))
    done = rng.random((T, N)) < 0.25
    seat = rng.integers(0, P, (T, N))
    got = opponent_ratios(torch.tensor(log_ratio, dtype=torch.float32), torch.tensor(done), torch.tensor(seat), P)
    np.testing.assert_allclose(got.numpy(), _ratios_by_hand(log_ratio, done, seat), rtol=1e-5)


@pytest.mark.parametrize("kw", [{"explore": 0.0, "gae_lambda": 0.0}, {"explore": 0.1, "gae_lambda": 0.95},
                                {"explore": 0.1, "gae_lambda": 1e-9}])
def test_off_policy_needs_explore_and_one_step_targets(kw: dict) -> None:
    """off_policy's weights are right only for one-step targets of an exploring run: refused otherwise, named."""
    with pytest.raises(ValueError, match="off_policy needs explore > 0 and gae_lambda 0"):
        Args(update="critic", off_policy=True, **kw)
    Args(update="critic", off_policy=True, explore=1e-9, gae_lambda=0.0)


def test_off_policy_weights_the_critic_s_errors(tmp_path: Path) -> None:
    """An exploring run with and without the weights (same seed, the same games at the first iteration) ends on
    another network: the option is read."""
    kw = {"device": "cpu", "preset": "tiny", "num_envs": 16, "num_steps": 8, "hidden": 8, "progress": False,
          "tensorboard": False, "update": "critic", "explore": 0.5, "gae_lambda": 0.0, "total_timesteps": 3 * 128,
          "seed": 5}
    finals = []
    for k, off in enumerate([False, True]):
        main(Args(**kw, off_policy=off, out=str(tmp_path / str(k))))
        with np.load(tmp_path / str(k) / "final.npz") as z:
            finals.append({name: z[name].copy() for name in z.files if name != "card"})
    assert any(not np.array_equal(finals[0][name], finals[1][name]) for name in finals[0])
