"""A CleanRL-style PPO loop written directly on the batched VecEnv, with action masks from one call per step.

No SB3 here: the loop reads ``venv.action_masks()`` (the (N, 105) masks of all N games at once, never
one game at a time through ``env_method``), masks the logits, and updates a small actor-critic.
Run: ``python docs/tutorials/cleanrl_ppo_vecenv.py`` (``KRYPENV_TUTORIAL_STEPS`` sets the budget).
"""

from __future__ import annotations

import os

import numpy as np
import torch
from torch import nn

from krypenv import krypkasino_v0

STEPS = int(os.environ.get("KRYPENV_TUTORIAL_STEPS", "200000"))
NUM_ENVS, NUM_STEPS, EPOCHS, MINIBATCHES = 64, 32, 4, 4
GAMMA, LAM, CLIP, ENT, LR = 0.99, 0.95, 0.2, 0.01, 3e-4


class ActorCritic(nn.Module):
    """A shared body with a policy head (one logit per action) and a value head."""

    def __init__(self, obs_size: int, n_actions: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_size, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh())
        self.pi, self.v = nn.Linear(128, n_actions), nn.Linear(128, 1)

    def dist(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.distributions.Categorical, torch.Tensor]:
        """The masked action distribution and the value of each observation."""
        h = self.body(obs)
        logits = self.pi(h).masked_fill(~mask, -1e8)  # illegal actions get no probability
        return torch.distributions.Categorical(logits=logits), self.v(h).squeeze(-1)


def main() -> None:
    """Collect NUM_STEPS steps of NUM_ENVS games, compute GAE, update with the clipped objective; repeat."""
    torch.manual_seed(0)
    venv = krypkasino_v0.VecEnv(NUM_ENVS, players=2, opponents="random", seed=0)
    obs_size, n_actions = venv.observation_space.shape[0], int(venv.action_space.n)
    net = ActorCritic(obs_size, n_actions)
    optim = torch.optim.Adam(net.parameters(), lr=LR)
    obs = torch.as_tensor(venv.reset(), dtype=torch.float32)
    mask = torch.as_tensor(venv.action_masks())
    shape = (NUM_STEPS, NUM_ENVS)
    b_obs, b_mask = torch.zeros((*shape, obs_size)), torch.zeros((*shape, n_actions), dtype=torch.bool)
    b_act, b_logp, b_rew, b_done, b_val = (torch.zeros(shape) for _ in range(5))
    finished: list[float] = []
    for update in range(max(1, STEPS // (NUM_ENVS * NUM_STEPS))):
        for t in range(NUM_STEPS):
            with torch.no_grad():
                dist, value = net.dist(obs, mask)
                action = dist.sample()
            b_obs[t], b_mask[t], b_act[t], b_logp[t], b_val[t] = obs, mask, action, dist.log_prob(action), value
            next_obs, reward, done, infos = venv.step(action.numpy())
            b_rew[t], b_done[t] = torch.as_tensor(reward), torch.as_tensor(done, dtype=torch.float32)
            finished += [info["score"] for info in infos if "score" in info]
            obs, mask = torch.as_tensor(next_obs, dtype=torch.float32), torch.as_tensor(venv.action_masks())
        with torch.no_grad():  # generalized advantage estimation; a finished game's next value is 0
            _, next_value = net.dist(obs, mask)
            adv, last = torch.zeros(shape), torch.zeros(NUM_ENVS)
            for t in reversed(range(NUM_STEPS)):
                nxt = next_value if t == NUM_STEPS - 1 else b_val[t + 1]
                delta = b_rew[t] + GAMMA * nxt * (1 - b_done[t]) - b_val[t]
                last = delta + GAMMA * LAM * (1 - b_done[t]) * last
                adv[t] = last
            ret = adv + b_val
        flat = lambda x: x.reshape(NUM_STEPS * NUM_ENVS, *x.shape[2:])
        f_obs, f_mask, f_act, f_logp, f_adv, f_ret = map(flat, (b_obs, b_mask, b_act, b_logp, adv, ret))
        for _ in range(EPOCHS):
            for idx in torch.randperm(len(f_obs)).chunk(MINIBATCHES):
                dist, value = net.dist(f_obs[idx], f_mask[idx])
                ratio = (dist.log_prob(f_act[idx]) - f_logp[idx]).exp()
                a = (f_adv[idx] - f_adv[idx].mean()) / (f_adv[idx].std() + 1e-8)
                pg = -torch.min(ratio * a, ratio.clamp(1 - CLIP, 1 + CLIP) * a).mean()
                loss = pg + 0.5 * ((value - f_ret[idx]) ** 2).mean() - ENT * dist.entropy().mean()
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                optim.step()
        recent = finished[-200:]
        print(f"update {update}: {len(finished)} deals finished, mean learner score of the last "
              f"{len(recent)}: {np.mean(recent) if recent else float('nan'):.2f}")
    venv.close()


if __name__ == "__main__":
    main()
