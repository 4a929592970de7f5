"""krypenv.training.oracle (a diagnostic that reads the tree) and the critic update's exploring behaviour policy.

Oracles: for the oracle critic, the tree's exact Q (:meth:`krypenv.training.treemmd.TreeValues.values`, itself held
to OpenSpiel's ``TreeWalkCalculator`` in test_treemmd.py) at the row of each decision found by a brute-force
search of the tree's distinct observations, times ``reward_scale``; the decisions are those the device env deals
and plays, not the tree's own rows.  For the behaviour policy, the mixture written out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from krypenv.training.mmdnet import Policy, behaviour, probabilities, sample
from krypenv.training.selfplay import Args, make_env

MICRO = "ranks=A-2-3,hand=2,table=2"


def test_the_oracle_critic_is_the_tree_s_q_at_each_played_decision() -> None:
    """Q of the network's policy at decisions the device env reaches: the tree's row of that observation and mask
    (found by brute force), × reward_scale, 0 off the legal actions."""
    pytest.importorskip("pyspiel")
    from krypenv.training.oracle import OracleCritic

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
    from krypenv.training.oracle import OracleCritic

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
