"""Self-play with magnetic mirror descent on the device env: every seat learns, the last iterate nears equilibrium.

    python -m krypenv.training.selfplay --game krypkasino --players 2 --preset tiny --device cuda \\
        --num-envs 65536 --max-seconds 120 --checkpoint-every 20 --out runs/mmd-tiny

**Method.**  One network plays every seat (its observation is the seat's, seats relative to it), in
``DeviceVecEnv(opponents="self")``: the caller acts for whoever is to act, and every seat's reward
arrives each step (:mod:`krypenv.envs.device`).  The update is magnetic mirror descent (MMD; Sokota
et al., *A Unified Approach to Reinforcement Learning, Quantal Response Equilibria, and Two-Player
Zero-Sum Games*, ICLR 2023) in its deep-RL form, PPO's loss plus a magnet::

    loss = PPO's clipped surrogate (the proximal step: stay near the previous iterate)
         + magnet_coef · KL(π(·|o) ‖ ρ(·|o))   (the magnet ρ: the uniform policy over the legal actions, or a
                                                 frozen earlier iterate, renewed every ``magnet_every`` iterations)
         + vf_coef · value loss

With a fixed uniform magnet the last iterate of MMD converges to the quantal response equilibrium
of temperature ``magnet_coef`` (a regularized equilibrium, near Nash for a small coefficient);
renewing the magnet with the current policy moves that equilibrium towards a Nash equilibrium of
the game itself (the paper's magnet-update scheme).  Unlike plain self-play PPO, whose iterates
cycle in zero-sum games, the regularized dynamics contract to the fixed point, so the *last*
network is the one to ship: no averaging of policies, no tabular lookup.

**Credit.**  A seat's reward for a decision is everything it is paid from that decision to its
next one in the episode (or the episode's end); advantages are GAE along each seat's own
decisions, bootstrapped by its value at its next decision.  Decisions whose seat has not acted
again when the rollout stops are left out of the loss (their return is not known yet).

**Out.**  ``OUT/ckpt-ITERATION.npz`` checkpoints (:mod:`krypenv.agents.mlp`: numpy, no pickle;
``mlp:PATH`` plays them everywhere, ``krypenv exploit`` measures them exactly on ``tiny``), every
``checkpoint_every`` iterations and at the end (``final.npz``), and ``OUT/log.csv`` (iteration,
decisions, seconds, entropy, KL to the magnet, losses).  Exploitability against samples and wall
time is measured afterwards on these files (``experiments/mmd_curve.py``).  Runs on CPU too (the
same script, smaller ``--num-envs``).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import inspect
import itertools
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from krypenv.agents.mlp import save
from krypenv.games import DEFAULT_GAME, GAMES

__all__ = ["Args", "Policy", "main", "seat_advantages"]


@dataclass
class Args:
    """Everything a run depends on (each a flag: ``--num-envs 4096``)."""

    game: str = DEFAULT_GAME
    players: int = 2
    preset: str = "standard"
    reward: str = "relative"  # games with a reward keyword (Krypkasino): "relative" makes two players zero-sum
    device: str = "cuda" if torch.cuda.is_available() else "cpu"
    num_envs: int = 4096
    num_steps: int = 64  # decisions per game per rollout (all seats together)
    total_timesteps: int = 50_000_000  # decisions
    max_seconds: float = 0.0  # stop after this wall time (0: no limit)
    learning_rate: float = 3e-4
    gae_lambda: float = 0.95
    update_epochs: int = 2
    num_minibatches: int = 4
    clip_coef: float = 0.2  # the proximal step
    magnet_coef: float = 0.05  # α: weight of KL(π ‖ magnet)
    magnet_every: int = 50  # iterations between magnet renewals (0: the uniform magnet for ever)
    vf_coef: float = 0.5
    reward_scale: float = 0.1  # rewards are multiplied by this for learning (a deal moves ~10 points or kronor)
    max_grad_norm: float = 0.5
    hidden: int = 256
    layers: int = 2
    seed: int = 0
    checkpoint_every: int = 0  # iterations between checkpoints (0: only the final one)
    out: str = "runs/selfplay"


class Policy(nn.Module):
    """An MLP with a policy head (logits over every action) and a value head (the seat's return)."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int, layers: int) -> None:
        super().__init__()
        sizes = [obs_size] + [hidden] * layers
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(sizes))
        self.pi, self.v = nn.Linear(sizes[-1], n_actions), nn.Linear(sizes[-1], 1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(log-probabilities with the illegal actions at −∞ in effect, value) of each observation."""
        h = obs.float()
        for layer in self.hidden:
            h = torch.relu(layer(h))
        logits = self.pi(h).masked_fill(~mask, -1e9)
        return torch.log_softmax(logits, dim=-1), self.v(h).squeeze(-1)

    def export(self, path: Path, card: dict[str, Any]) -> Path:
        """Write the policy as an ``mlp`` checkpoint (numpy arrays and a JSON card)."""
        hidden = [(layer.weight.detach().cpu().numpy(), layer.bias.detach().cpu().numpy()) for layer in self.hidden]
        policy = (self.pi.weight.detach().cpu().numpy(), self.pi.bias.detach().cpu().numpy())
        return save(path, {**card, "layers": len(self.hidden), "activation": "relu"}, hidden, policy)


def seat_advantages(rew: torch.Tensor, done: torch.Tensor, seat: torch.Tensor, value: torch.Tensor,
                    lam: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """GAE along each seat's own decisions (module docstring): (advantages, returns, known) of shape (T, N).

    ``rew`` (T, N, P) every seat's reward at each step; ``done`` (T, N) the episode ended at that step; ``seat``
    (T, N) who acted; ``value`` (T, N) the actor's value.  Undiscounted (an episode is one deal or pot).
    """
    T, N, P = rew.shape
    acc = torch.zeros((N, P), device=rew.device)  # a seat's rewards since its decision being credited
    nxt = torch.zeros((N, P), device=rew.device)  # its value at its next decision (0 after the episode's end)
    gae = torch.zeros((N, P), device=rew.device)
    known = torch.zeros((N, P), dtype=torch.bool, device=rew.device)  # is its next decision (or the end) seen?
    adv, ret, ok = torch.zeros((T, N), device=rew.device), torch.zeros((T, N), device=rew.device), \
        torch.zeros((T, N), dtype=torch.bool, device=rew.device)
    col = torch.arange(N, device=rew.device)
    for t in reversed(range(T)):
        d = done[t]
        acc[d], nxt[d], gae[d], known[d] = 0.0, 0.0, 0.0, True  # the episode ended here: nothing later counts
        acc += rew[t]
        a = seat[t]
        good = known[col, a]
        g = torch.where(good, acc[col, a] + nxt[col, a] - value[t] + lam * gae[col, a], torch.zeros_like(value[t]))
        adv[t], ret[t], ok[t] = g, g + value[t], good
        acc[col, a], nxt[col, a], gae[col, a], known[col, a] = 0.0, value[t], g, True
    return adv, ret, ok


def make_env(args: Args) -> Any:
    """The game's device env in self-play."""
    cls = GAMES[args.game].part("device").DeviceVecEnv
    kw: dict[str, Any] = {"players": args.players, "preset": args.preset}
    if "reward" in inspect.signature(cls).parameters:
        kw["reward"] = args.reward
    return cls(args.num_envs, device=args.device, opponents="self", seed=args.seed, **kw)


def main(args: Args) -> dict[str, Any]:
    """Train (module docstring); return the last log row."""
    torch.manual_seed(args.seed)
    device, out = torch.device(args.device), Path(args.out)
    if device.type == "cpu":  # numba's env threads and torch's OpenMP pool slow each other down badly
        torch.set_num_threads(1)
    out.mkdir(parents=True, exist_ok=True)
    env = make_env(args)
    D, A, N, T, P = env.single_observation_space.shape[0], int(env.single_action_space.n), args.num_envs, \
        args.num_steps, args.players
    net = Policy(D, A, args.hidden, args.layers).to(device)
    magnet = Policy(D, A, args.hidden, args.layers).to(device)
    magnet.load_state_dict(net.state_dict())
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    obs, info = env.reset(seed=args.seed)
    mask, seat = info["action_mask"], info["seat"]
    b_obs = torch.zeros((T, N, D), dtype=obs.dtype, device=device)
    b_mask = torch.zeros((T, N, A), dtype=torch.bool, device=device)
    b_act, b_seat = (torch.zeros((T, N), dtype=torch.long, device=device) for _ in range(2))
    b_logp, b_val = (torch.zeros((T, N), device=device) for _ in range(2))
    b_rew, b_done = torch.zeros((T, N, P), device=device), torch.zeros((T, N), dtype=torch.bool, device=device)
    card = {"game": args.game, "players": P, "preset": args.preset, "obs_size": D, "n_actions": A,
            "trained": {"method": "MMD self-play (krypenv.training.selfplay)", "args": dataclasses.asdict(args),
                        "command": " ".join(sys.argv), "device": str(device)}}
    log = (out / "log.csv").open("w", newline="")
    writer = csv.writer(log)
    writer.writerow(["iteration", "decisions", "seconds", "episodes", "entropy", "kl_magnet", "pg_loss", "v_loss"])
    iterations, start, decisions, episodes, row = max(1, args.total_timesteps // (N * T)), time.perf_counter(), 0, 0, {}
    uniform = args.magnet_every == 0
    for it in range(1, iterations + 1):
        for t in range(T):
            with torch.no_grad():
                logp, value = net(obs, mask)
                action = torch.distributions.Categorical(logits=logp).sample()
            b_obs[t], b_mask[t], b_act[t], b_seat[t], b_val[t] = obs, mask, action, seat, value
            b_logp[t] = logp.gather(1, action[:, None])[:, 0]
            obs, rewards, terminated, truncated, info = env.step(action)
            mask, seat = info["action_mask"], info["seat"]
            b_rew[t], b_done[t] = rewards * args.reward_scale, terminated | truncated
        decisions += N * T
        episodes += int(b_done.sum())
        adv, ret, ok = seat_advantages(b_rew, b_done, b_seat, b_val, args.gae_lambda)
        idx_all = ok.reshape(-1).nonzero()[:, 0]
        f_obs, f_mask = b_obs.reshape(T * N, D)[idx_all], b_mask.reshape(T * N, A)[idx_all]
        f_act, f_logp, f_adv, f_ret = (x.reshape(-1)[idx_all] for x in (b_act, b_logp, adv, ret))
        stats = []
        for _ in range(args.update_epochs):
            for idx in torch.randperm(idx_all.numel(), device=device).chunk(args.num_minibatches):
                logp, value = net(f_obs[idx], f_mask[idx])
                p = logp.exp()
                with torch.no_grad():
                    m_logp = torch.log_softmax(torch.zeros_like(logp).masked_fill(~f_mask[idx], -1e9), dim=-1) \
                        if uniform else magnet(f_obs[idx], f_mask[idx])[0]
                kl = (p * (logp - m_logp)).sum(-1).mean()
                ratio = (logp.gather(1, f_act[idx][:, None])[:, 0] - f_logp[idx]).exp()
                a = f_adv[idx]
                a = (a - a.mean()) / (a.std(correction=0) + 1e-8)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * (value - f_ret[idx]).pow(2).mean()
                loss = pg + args.vf_coef * v_loss + args.magnet_coef * kl
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                optimizer.step()
                stats.append(torch.stack([-(p * logp).sum(-1).mean(), kl, pg, v_loss]).detach())
        if args.magnet_every and it % args.magnet_every == 0:
            magnet.load_state_dict(net.state_dict())
        seconds = time.perf_counter() - start
        ent, kl, pg, vl = torch.stack(stats).mean(0).tolist()
        row = {"iteration": it, "decisions": decisions, "seconds": round(seconds, 2), "episodes": episodes,
               "entropy": ent, "kl_magnet": kl, "pg_loss": pg, "v_loss": vl}
        writer.writerow(list(row.values()))
        log.flush()
        last = it == iterations or (args.max_seconds and seconds >= args.max_seconds)
        if (args.checkpoint_every and it % args.checkpoint_every == 0) or last:
            net.export(out / ("final.npz" if last else f"ckpt-{it:06d}.npz"),
                       {**card, "trained": {**card["trained"], "iteration": it, "decisions": decisions,
                                            "seconds": round(seconds, 1)}})
        if it % 10 == 0 or last:
            print(f"iteration {it}: {decisions:,} decisions, {decisions / seconds:,.0f}/s, entropy {ent:.3f}, "
                  f"KL to magnet {kl:.4f}, value loss {vl:.3f}", flush=True)
        if last:
            break
    log.close()
    (out / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=1))
    return row


def parse(argv: list[str] | None = None) -> Args:
    """The ``Args`` fields as flags."""
    parser = argparse.ArgumentParser(prog="python -m krypenv.training.selfplay", description=__doc__.split("\n\n")[0])
    for f in dataclasses.fields(Args):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    return Args(**vars(parser.parse_args(argv)))


if __name__ == "__main__":
    main(parse())
