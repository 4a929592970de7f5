"""A CleanRL-style PPO loop that never leaves the device: the device env's tensors go straight into the network.

``DeviceVecEnv`` (krypenv.envs.device) keeps every game's state, observation, mask and reward on the GPU
and hands them to PyTorch without a copy; the rollout buffers, the masked policy, GAE and the updates
stay there too, so nothing crosses to the host but a few scalars for the log.  The same script runs
on the CPU (``--device cpu``, the compiled CPU drivers behind the same API).  Run::

    python docs/tutorials/cleanrl_ppo_device.py --device cuda --num-envs 65536
    python docs/tutorials/cleanrl_ppo_device.py --device cpu --num-envs 256 --total-timesteps 200000

Every ``Args`` field is a flag (``--num-steps 16``, ``--opponent expert``); ``KRYPENV_TUTORIAL_STEPS``
overrides ``--total-timesteps`` (the test suite runs it tiny).  It prints the steps per second, counted
as the SB3 VecEnv counts them (one learner decision in one game), end to end: stepping, inference and
updates together.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from dataclasses import dataclass

import torch
from torch import nn

from krypenv import agents
from krypenv.games import GAMES


@dataclass
class Args:
    """Everything the run depends on."""

    game: str = "krypkasino"  # a registered game
    players: int = 2
    opponent: str = "random"  # "random", or a compiled baseline played inside the kernels ("expert", "greedy", …)
    device: str = "cuda" if torch.cuda.is_available() else "cpu"
    num_envs: int = 4096  # games stepped together
    num_steps: int = 16  # steps per game per rollout
    total_timesteps: int = 10_000_000
    learning_rate: float = 3e-4
    gamma: float = 1.0  # an episode is one deal (or pot): undiscounted
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 2
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 256
    seed: int = 0


class Agent(nn.Module):
    """An actor-critic MLP whose policy masks illegal actions out."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_size, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.pi, self.v = nn.Linear(hidden, n_actions), nn.Linear(hidden, 1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.distributions.Categorical, torch.Tensor]:
        """The masked action distribution and the value of each observation (int observations, cast here)."""
        h = self.body(obs.float())
        logits = self.pi(h).masked_fill(~mask, -1e9)  # illegal actions get no probability
        return torch.distributions.Categorical(logits=logits), self.v(h).squeeze(-1)


def parse() -> Args:
    """The ``Args`` fields as flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for f in dataclasses.fields(Args):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    args = Args(**vars(parser.parse_args()))
    if os.environ.get("KRYPENV_TUTORIAL_STEPS"):
        args.total_timesteps = int(os.environ["KRYPENV_TUTORIAL_STEPS"])
    return args


def main(args: Args) -> dict[str, float]:
    """Train; return the final figures (steps/s, mean return of the last episodes)."""
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    opponent = args.opponent if args.opponent == "random" else agents.load(args.opponent, game=args.game)
    env = GAMES[args.game].part("device").DeviceVecEnv(args.num_envs, device=device, players=args.players,
                                                         opponents=opponent, seed=args.seed)
    obs_size, n_actions = env.single_observation_space.shape[0], int(env.single_action_space.n)
    agent = Agent(obs_size, n_actions, args.hidden).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    N, T = args.num_envs, args.num_steps
    obs, info = env.reset(seed=args.seed)
    mask = info["action_mask"]
    obs_buf = torch.zeros((T, N, obs_size), dtype=obs.dtype, device=device)  # int8 or int16, as the env's
    mask_buf = torch.zeros((T, N, n_actions), dtype=torch.bool, device=device)
    act_buf, logp_buf, rew_buf, done_buf, val_buf = (torch.zeros((T, N), device=device) for _ in range(5))
    episode_return, returns = torch.zeros(N, device=device), []
    iterations = max(1, args.total_timesteps // (N * T))
    batch, minibatch = N * T, N * T // args.num_minibatches
    start = time.perf_counter()
    for iteration in range(iterations):
        for t in range(T):  # rollout: the env's tensors in, actions out, all on the device
            with torch.no_grad():
                dist, value = agent(obs, mask)
                action = dist.sample()
            obs_buf[t], mask_buf[t], act_buf[t], logp_buf[t], val_buf[t] = obs, mask, action, dist.log_prob(action), \
                value
            obs, reward, terminated, truncated, info = env.step(action)
            mask, done = info["action_mask"], terminated | truncated
            rew_buf[t], done_buf[t] = reward, done.float()
            episode_return += reward
            returns.append(episode_return[done])
            episode_return = episode_return * (~done)
        with torch.no_grad():  # GAE; an episode's last step bootstraps nothing (same-step autoreset)
            _, next_value = agent(obs, mask)
            adv, last = torch.zeros_like(rew_buf), torch.zeros(N, device=device)
            for t in reversed(range(T)):
                nonterminal = 1.0 - done_buf[t]
                following = next_value if t == T - 1 else val_buf[t + 1]
                delta = rew_buf[t] + args.gamma * following * nonterminal - val_buf[t]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                adv[t] = last
            ret = adv + val_buf
        b_obs, b_mask = obs_buf.reshape(batch, obs_size), mask_buf.reshape(batch, n_actions)
        b_act, b_logp, b_adv, b_ret = act_buf.reshape(-1), logp_buf.reshape(-1), adv.reshape(-1), ret.reshape(-1)
        for _ in range(args.update_epochs):
            for idx in torch.randperm(batch, device=device).split(minibatch):
                dist, value = agent(b_obs[idx], b_mask[idx])
                ratio = (dist.log_prob(b_act[idx]) - b_logp[idx]).exp()
                a = (b_adv[idx] - b_adv[idx].mean()) / (b_adv[idx].std() + 1e-8)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * (value - b_ret[idx]).pow(2).mean()
                loss = pg + args.vf_coef * v_loss - args.ent_coef * dist.entropy().mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        if iteration % 10 == 0 or iteration == iterations - 1:
            recent = torch.cat(returns[-T * 10:]) if returns else torch.zeros(0)
            sps = (iteration + 1) * batch / (time.perf_counter() - start)
            print(f"iteration {iteration + 1}/{iterations}: {sps:,.0f} steps/s, mean return "
                  f"{recent.mean().item() if recent.numel() else float('nan'):+.2f} over {recent.numel()} episodes",
                  flush=True)
    elapsed = time.perf_counter() - start
    recent = torch.cat(returns[-T * 10:]) if returns else torch.zeros(0)
    result = {"steps_per_s": iterations * batch / elapsed, "steps": iterations * batch, "seconds": elapsed,
              "mean_return": recent.mean().item() if recent.numel() else float("nan")}
    print(f"done: {result['steps']:,} steps in {elapsed:.1f} s, {result['steps_per_s']:,.0f} steps/s on {device}; "
          f"mean return of the last episodes {result['mean_return']:+.2f}")
    return result


if __name__ == "__main__":
    main(parse())
