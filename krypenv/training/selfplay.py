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

**The critic update** (``update="critic"``) is MMD's own closed-form step instead of PPO's surrogate: the
value head learns Q of every action (from the taken action's return), and at every sampled decision the
policy is fitted to ``log π' = (log π + η·Q + α·η·log ρ) / (1 + α·η)`` (:func:`mmd_targets`).  MMD's
annealing shrinks η and α as ``min(1, √(schedule_start / decisions))`` (``eta_schedule``, ``magnet_schedule``,
``lr_schedule`` = ``sqrt``; the learning rate from ``lr_start`` decisions when it is set);
``magnet_ema`` lets the magnet trail the policy.  ``eval_every`` measures the network's exact NashConv during
the run where OpenSpiel walks the game (:mod:`krypenv.openspiel.tree`).
``explore`` mixes the uniform policy into play, so the critic sees the actions
the policy has stopped playing (``off_policy`` weights its one-step targets back to the policy's Q);
``oracle_critic`` is a diagnostic that reads the tree, exact Q in MMD's step (:mod:`krypenv.training.critic`).
What these reached on ``tiny`` is the page "Learners on the small variants".  ``average`` keeps an average policy
beside the last iterate, measured and exported with it (:mod:`krypenv.training.average`).

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

**Speed.**  The network and its losses are :mod:`krypenv.training.mmdnet`; with ``compact`` (the default) every
pass runs on the observation columns and actions its batch uses, the same values at a third of the arithmetic on
``tiny`` (the page "Learners on the small variants", "The loop's speed", has the figures).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from torch import nn

from krypenv.games import DEFAULT_GAME, GAMES
from krypenv.threads import set_torch_threads
from krypenv.training import mmdnet
from krypenv.training.average import AVERAGES, Averager
from krypenv.training.critic import ExactNashConv, OracleCritic, opponent_ratios, policy_function
from krypenv.training.mmdnet import Policy, centered_mse, clipped_surrogate, mmd_targets, sample
from krypenv.training.monitor import Monitor, Stopwatch

T = TypeVar("T")
__all__ = ["Args", "Snapshot", "main", "schedule", "seat_advantages", "update_magnet"]


SCHEDULES = ("constant", "linear", "sqrt")
UPDATES = ("ppo", "critic")


@dataclass
class Args:
    """Everything a run depends on (each a flag: ``--num-envs 4096``)."""

    game: str = DEFAULT_GAME
    players: int = 2
    preset: str = "standard"
    rules: str = ""  # more rule keys on top of the preset, e.g. ranks=A-2-3,hand=2,table=2 (a smaller deal of tiny)
    reward: str = "relative"  # games with a reward keyword (Krypkasino): "relative" makes two players zero-sum
    device: str = "cuda" if torch.cuda.is_available() else "cpu"
    num_envs: int = 4096
    num_steps: int = 64  # decisions per game per rollout (all seats together)
    total_timesteps: int = 50_000_000  # decisions
    max_seconds: float = 0.0  # stop after this much training wall time (0: no limit)
    max_cpu_seconds: float = 0.0  # stop after this much training CPU time, all threads (0: no limit)
    update: str = "ppo"  # ppo (sampled: the clipped surrogate) or critic (MMD's closed form on a learned Q)
    eta: float = 1.0  # critic: MMD's step size η, in units of reward_scale · points
    eta_schedule: str = "constant"  # critic: constant, linear or sqrt (as magnet_schedule)
    logit_range: float = 15.0  # critic: targets' log-probabilities are kept within this of the best action's
    explore: float = dataclasses.field(default=0.0, metadata={"help": "critic: play (1 - e)·π + e·uniform over the "
                                       "legal actions (e this, shrunk by --magnet-schedule); the critic learns Q so"})
    oracle_critic: bool = dataclasses.field(default=False, metadata={"help": "critic, a DIAGNOSTIC that reads the "
                                            "whole tree (training.critic): MMD's step on the exact Q, not the critic"})
    off_policy: bool = False  # critic, explore, gae_lambda 0: the critic's errors weighted by π/μ (training.critic)
    learning_rate: float = 3e-4
    lr_schedule: str = "constant"  # constant, linear (to 0 at total_timesteps) or sqrt (below)
    gae_lambda: float = 0.95
    update_epochs: int = 2
    num_minibatches: int = 4
    clip_coef: float = 0.2  # the proximal step
    norm_adv: bool = True  # advantages standardized per minibatch (False: in units of reward_scale · points)
    magnet_coef: float = 0.05  # α: weight of KL(π ‖ magnet)
    magnet_schedule: str = "constant"  # constant, linear or sqrt: α·min(1, √(schedule_start / decisions))
    schedule_start: int = 1_000_000  # decisions after which the sqrt schedules shrink
    lr_start: int = 0  # decisions after which the sqrt schedule shrinks the learning rate (0: schedule_start)
    magnet_every: int = 50  # iterations between magnet renewals (0: never)
    magnet_ema: float = 0.0  # after every iteration magnet ← magnet + magnet_ema·(policy − magnet) (0: off)
    vf_coef: float = 0.5
    reward_scale: float = 0.1  # rewards are multiplied by this for learning (a deal moves ~10 points or kronor)
    max_grad_norm: float = 0.5
    hidden: int = 256
    layers: int = 2
    seed: int = 0
    torch_threads: int = 1  # on the CPU (numba's env threads and torch's pool slow each other down when both run)
    compact: bool = True  # the network computes on the inputs and actions a batch uses: the same values, less work
    average: str = "none"  # an average policy beside the last iterate: reservoir, ring or polyak (training.average)
    average_size: int = 200_000  # reservoir, ring: decisions the buffer holds
    average_lr: float = 1e-3  # reservoir, ring: the average network's Adam step
    average_steps: int = 8  # reservoir, ring: its Adam steps per iteration
    average_batch: int = 2048  # reservoir, ring: rows per step
    average_rate: float = 0.01  # polyak: avg ← avg + average_rate·(policy − avg) after every iteration
    checkpoint_every: int = 0  # iterations between checkpoints (0: only the final one)
    eval_every: int = 0  # iterations between exact NashConv measurements (a preset OpenSpiel traverses: tiny)
    resume: bool = False  # continue from OUT/state.pt (networks, optimizer, counters; the games restart)
    progress: bool = True  # a progress bar on stderr (tqdm)
    tensorboard: bool = True  # TensorBoard scalars in OUT/tb
    out: str = "runs/selfplay"

    def __post_init__(self) -> None:
        if self.update not in UPDATES:
            raise ValueError(f"update must be one of {', '.join(UPDATES)}, got {self.update!r}")
        if self.update != "critic" and (self.explore or self.oracle_critic):
            raise ValueError(f"explore and oracle_critic need update='critic', got update={self.update!r}")
        if not 0.0 <= self.explore < 1.0:
            raise ValueError(f"explore must be in [0, 1), got {self.explore!r}")
        if self.off_policy and not (self.explore and self.gae_lambda == 0):
            raise ValueError(f"off_policy needs explore > 0 and gae_lambda 0, got {self.explore}, {self.gae_lambda}")
        if self.average not in AVERAGES:
            raise ValueError(f"average must be one of {', '.join(AVERAGES)}, got {self.average!r}")
        if not 0.0 < self.average_rate <= 1.0:
            raise ValueError(f"average_rate must be in (0, 1], got {self.average_rate!r}")
        check_fields(self, schedules=("lr_schedule", "magnet_schedule", "eta_schedule"),
                     at_least_1=("num_envs", "num_steps", "total_timesteps", "update_epochs", "num_minibatches",
                                 "hidden", "layers", "schedule_start", "torch_threads", "average_size",
                                 "average_steps", "average_batch"),
                     at_least_0=("magnet_every", "checkpoint_every", "eval_every", "magnet_coef", "lr_start",
                                 "max_seconds", "eta", "max_cpu_seconds", "logit_range"),
                     positive=("learning_rate", "average_lr"))


def check_fields(args: Any, schedules: tuple[str, ...], at_least_1: tuple[str, ...], at_least_0: tuple[str, ...],
                 positive: tuple[str, ...]) -> None:
    """ValueError naming the first field out of its range: a schedule's name, ≥ 1, ≥ 0, > 0; ``magnet_ema`` in
    [0, 1] (the checks of :class:`Args` and of :class:`krypenv.training.treemmd.Args`)."""
    for name in schedules:
        if getattr(args, name) not in SCHEDULES:
            raise ValueError(f"{name} must be one of {', '.join(SCHEDULES)}, got {getattr(args, name)!r}")
    for names, ok, bound in ((at_least_1, lambda v: not v < 1, "at least 1"),
                             (at_least_0, lambda v: not v < 0, "at least 0"), (positive, lambda v: v > 0, "positive")):
        for name in names:
            if not ok(getattr(args, name)):
                raise ValueError(f"{name} must be {bound}, got {getattr(args, name)!r}")
    if not 0.0 <= args.magnet_ema <= 1.0:
        raise ValueError(f"magnet_ema must be in [0, 1], got {args.magnet_ema!r}")


def schedule(kind: str, start: float, decisions: int, total: int, origin: int) -> float:
    """``start`` shrunk by ``kind`` after ``decisions``: constant; linear to 0 at ``total``; sqrt,
    ``start · min(1, √(origin / decisions))`` (MMD's η, α ∝ 1/√t)."""
    if kind == "linear":
        return start * max(0.0, 1.0 - decisions / total)
    if kind == "sqrt":
        return start * min(1.0, (origin / max(decisions, 1)) ** 0.5)
    return start


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


def rule_keys(args: Args) -> dict[str, Any]:
    """``args.rules`` as the device env's keywords (names joined by ``-`` as tuples: ``ranks=A-2-3``)."""
    from krypenv.training.exploit import parse_rules

    return {k: tuple(v.split("-")) if isinstance(v, str) and k in ("ranks", "suits") else v
            for k, v in parse_rules(args.rules).items()}


def make_env(args: Args) -> Any:
    """The game's device env in self-play."""
    cls = GAMES[args.game].part("device").DeviceVecEnv
    kw: dict[str, Any] = {"players": args.players, "preset": args.preset, **rule_keys(args)}
    if "reward" in inspect.signature(cls).parameters:
        kw["reward"] = args.reward
    return cls(args.num_envs, device=args.device, opponents="self", seed=args.seed, **kw)


@dataclass
class Snapshot:
    """What a hook sees after an iteration: the log row, decisions so far and the policy's exact probabilities."""

    row: dict[str, Any]
    decisions: int
    probabilities: Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass
class Trained:
    """An iteration's decisions whose returns are known, flattened (on ``cols`` and ``acts`` when they are set)."""

    obs: torch.Tensor
    mask: torch.Tensor
    act: torch.Tensor  # the action's index in the mask's columns
    logp: torch.Tensor  # its log-probability when played
    adv: torch.Tensor
    ret: torch.Tensor
    log_legal: torch.Tensor  # log of the number of legal actions (the uniform magnet's −log π)
    targets: torch.Tensor | None  # the critic update's MMD step
    cols: torch.Tensor | None
    acts: torch.Tensor | None
    weight: torch.Tensor | None = None  # off_policy: each decision's critic error weight (training.critic)


def minibatch_loss(net: Policy, magnet: Policy | None, data: Trained, idx: torch.Tensor, alpha: float,
                   args: Args) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, its terms [entropy, KL to the magnet, policy loss, value loss], detached) of the rows ``idx`` of
    ``data`` (a minibatch; the magnet None: uniform)."""
    obs, mask, act = data.obs.index_select(0, idx), data.mask.index_select(0, idx), data.act[idx][:, None]
    logp, value, q = net.evaluate(obs, mask, data.cols, data.acts)
    p = mmdnet.probabilities(logp, mask)
    neg_entropy = (p * logp).sum(-1)
    if magnet is None:
        kl = (neg_entropy + data.log_legal[idx]).mean()
    else:
        with torch.no_grad():
            m_logp = magnet.evaluate(obs, mask, data.cols, data.acts)[0]
        kl = (p * (logp - m_logp)).sum(-1).mean()
    if data.targets is not None:  # the policy to MMD's step (log-probabilities up to a constant), Q to the returns
        pg = centered_mse(logp, data.targets.index_select(0, idx), mask)
        err = (q.gather(1, act)[:, 0] - data.ret[idx]).pow(2)
        v_loss = 0.5 * (err if data.weight is None else data.weight[idx] * err).mean()
        loss = pg + args.vf_coef * v_loss
    else:
        pg = clipped_surrogate(logp.gather(1, act)[:, 0] - data.logp[idx], data.adv[idx], args.clip_coef,
                               args.norm_adv)
        v_loss = 0.5 * (value - data.ret[idx]).pow(2).mean()
        loss = pg + args.vf_coef * v_loss + alpha * kl
    return loss, torch.stack([-neg_entropy.mean(), kl, pg, v_loss]).detach()


def update_magnet(magnet: Policy, net: Policy, args: Args, iteration: int) -> None:
    """After an iteration: the magnet renewed as a copy every ``magnet_every`` iterations, else moved
    ``magnet_ema`` of the way to the policy (parameters)."""
    if args.magnet_every and iteration % args.magnet_every == 0:
        magnet.load_state_dict(net.state_dict())
    elif args.magnet_ema:
        with torch.no_grad():
            for m, q in zip(magnet.parameters(), net.parameters()):
                m.lerp_(q, args.magnet_ema)


def main(args: Args, hook: Callable[[Snapshot], bool] | None = None, clock: Stopwatch | None = None) -> dict[str, Any]:
    """Train (module docstring); return the last log row.  ``hook(snapshot)`` after every iteration stops the run
    when it returns True (its time is off the clock); ``clock`` counts the training seconds (a new one by default)."""
    torch.manual_seed(args.seed)
    device, out = torch.device(args.device), Path(args.out)
    if device.type == "cpu":
        set_torch_threads(args.torch_threads)
    out.mkdir(parents=True, exist_ok=True)
    env = make_env(args)
    exact = ExactNashConv(args) if args.eval_every else None
    oracle = OracleCritic(args) if args.oracle_critic else None  # a diagnostic: reads the tree
    D, A, N, T, P = env.single_observation_space.shape[0], int(env.single_action_space.n), args.num_envs, \
        args.num_steps, args.players
    critic = args.update == "critic"
    net = Policy(D, A, args.hidden, args.layers, critic).to(device)
    magnet = Policy(D, A, args.hidden, args.layers, critic).to(device)
    magnet.load_state_dict(net.state_dict())
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    state_file, start = out / "state.pt", 0
    if args.resume and state_file.is_file():
        state = torch.load(state_file, map_location=device, weights_only=True)  # tensors and numbers only
        net.load_state_dict(state["net"])
        magnet.load_state_dict(state["magnet"])
        optimizer.load_state_dict(state["optimizer"])
        start = int(state["iteration"])
    deal_seed = args.seed + 1_000_003 * start  # resumed games are new deals (and a new average's buffer draws)
    obs, info = env.reset(seed=deal_seed)
    mask, seat = info["action_mask"], info["seat"]
    avg = None if args.average == "none" else Averager(
        net, args.average, args.average_size, args.average_lr, args.average_steps, args.average_batch,
        args.average_rate, obs.dtype, deal_seed)
    if avg is not None and start:
        avg.load_state_dict(state)
    b_obs = torch.zeros((T, N, D), dtype=obs.dtype, device=device)  # the env's dtype (int8: a quarter of the bytes)
    b_mask = torch.zeros((T, N, A), dtype=torch.bool, device=device)
    b_act, b_seat = (torch.zeros((T, N), dtype=torch.long, device=device) for _ in range(2))
    b_logp, b_val, b_lr = (torch.zeros((T, N), device=device) for _ in range(3))  # b_lr: log π/μ of the action
    b_rew, b_done = torch.zeros((T, N, P), device=device), torch.zeros((T, N), dtype=torch.bool, device=device)
    card = {"game": args.game, "players": P, "preset": args.preset, "rules": args.rules, "obs_size": D, "n_actions": A,
            "trained": {"method": "MMD self-play (krypenv.training.selfplay)", "args": dataclasses.asdict(args),
                        "command": " ".join(sys.argv), "device": str(device)}}
    iterations = max(1, args.total_timesteps // (N * T))
    monitor = Monitor(out, iterations * N * T, progress=args.progress, tensorboard=args.tensorboard, append=start > 0,
                      columns=["iteration", "decisions", "seconds", "cpu_seconds", "episodes", "lr", "magnet_coef",
                               "eta", "entropy", "kl_magnet", "pg_loss", "v_loss", "nash_conv", "eval_seconds"]
                      + ([] if avg is None else ["avg_loss", "nash_conv_avg"]) + (["explore"] if args.explore else []))
    clock = clock or Stopwatch()
    decisions, episodes, row = start * N * T, 0, {}
    if start:
        clock.cpu0 -= float(state["cpu_seconds"])
        clock.wall0 -= float(state["seconds"])
        episodes = int(state["episodes"])
        monitor.done = decisions
    uniform = args.magnet_every == 0 and args.magnet_ema == 0
    for it in range(start + 1, iterations + 1):
        lr = schedule(args.lr_schedule, args.learning_rate, decisions, iterations * N * T,
                      args.lr_start or args.schedule_start)
        alpha = schedule(args.magnet_schedule, args.magnet_coef, decisions, iterations * N * T, args.schedule_start)
        eta = schedule(args.eta_schedule, args.eta, decisions, iterations * N * T, args.schedule_start)
        eps = schedule(args.magnet_schedule, args.explore, decisions, iterations * N * T, args.schedule_start)
        for group in optimizer.param_groups:
            group["lr"] = lr
        seen_cols, seen_acts = (torch.zeros(n, dtype=torch.bool, device=device) for n in (D, A))
        for t in range(T):
            with torch.no_grad():
                o, m, cols, acts = obs, mask, None, None
                if args.compact:  # this step's columns and actions (mmdnet), and the iteration's so far
                    used, legal = mmdnet.used_columns(obs), mmdnet.used_columns(mask)
                    seen_cols |= used
                    seen_acts |= legal
                    o, m, cols, acts = mmdnet.compact(obs, mask, used.nonzero()[:, 0], mmdnet.padded(legal))
                logp, value, _ = net.evaluate(o, m, cols, acts)
                mu = mmdnet.behaviour(logp, m, eps) if eps else logp
                choice = sample(mu, m)
            action = acts[choice] if args.compact else choice
            b_obs[t], b_mask[t], b_act[t], b_seat[t], b_val[t] = obs, mask, action, seat, value
            b_logp[t] = logp.gather(1, choice[:, None])[:, 0]
            if args.off_policy:  # log π/μ of the action, for the opponents' importance weights
                b_lr[t] = b_logp[t] - mu.gather(1, choice[:, None])[:, 0]
            obs, rewards, terminated, truncated, info = env.step(action)
            mask, seat = info["action_mask"], info["seat"]
            b_rew[t], b_done[t] = rewards * args.reward_scale, terminated | truncated
        decisions += N * T
        episodes += int(b_done.sum())
        if avg is not None:  # every decision of the rollout, with the probabilities it was played by
            avg.visited(net, b_obs.reshape(T * N, D), b_mask.reshape(T * N, A))
        adv, ret, ok = seat_advantages(b_rew, b_done, b_seat, b_val, args.gae_lambda)
        idx_all = ok.reshape(-1).nonzero()[:, 0]
        f_obs, f_mask = (x.reshape(T * N, -1).index_select(0, idx_all) for x in (b_obs, b_mask))  # not x[idx]: slower
        f_act, f_logp, f_adv, f_ret = (x.reshape(-1)[idx_all] for x in (b_act, b_logp, adv, ret))
        f_log_legal = f_mask.sum(1).float().log()  # the uniform magnet's −log π: log of the number of legal actions
        cols = acts = None
        q_exact = oracle(net, f_obs, f_mask) if oracle is not None else None
        if args.compact:  # the iteration's columns and actions (mmdnet); an action's index among them
            f_obs, f_mask, cols, acts = mmdnet.compact(f_obs, f_mask, seen_cols.nonzero()[:, 0],
                                                       mmdnet.padded(seen_acts))
            f_act = torch.zeros(A, dtype=torch.long, device=device).index_copy_(
                0, acts, torch.arange(len(acts), device=device))[f_act]
            q_exact = None if q_exact is None else q_exact.index_select(1, acts)
        stats = []
        if critic:
            targets = mmd_targets(net, magnet if not uniform else None, f_obs, f_mask, eta, alpha,
                                  args.logit_range, cols=cols, acts=acts, q=q_exact)
        weight = opponent_ratios(b_lr, b_done, b_seat, P).reshape(-1)[idx_all] if args.off_policy else None
        data = Trained(f_obs, f_mask, f_act, f_logp, f_adv, f_ret, f_log_legal, targets if critic else None, cols, acts,
                       weight)
        for _ in range(args.update_epochs):
            for idx in torch.randperm(idx_all.numel(), device=device).chunk(args.num_minibatches):
                loss, stat = minibatch_loss(net, None if uniform else magnet, data, idx, alpha, args)
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                optimizer.step()
                stats.append(stat)
        update_magnet(magnet, net, args, it)
        if avg is not None:
            avg.updated(net)
        seconds = clock.wall()  # training time: the measurements left out
        ent, kl, pg, vl = torch.stack(stats).mean(0).tolist()
        row = {"iteration": it, "decisions": decisions, "seconds": round(seconds, 2), "eta": eta,
               "cpu_seconds": round(clock.cpu(), 2), "episodes": episodes,
               "lr": lr, "magnet_coef": alpha, "entropy": ent, "kl_magnet": kl, "pg_loss": pg, "v_loss": vl,
               **({} if avg is None else {"avg_loss": avg.loss}), **({"explore": eps} if args.explore else {})}
        last = it == iterations or bool(args.max_seconds and seconds >= args.max_seconds) \
            or bool(args.max_cpu_seconds and row["cpu_seconds"] >= args.max_cpu_seconds)
        if exact is not None and (it % args.eval_every == 0 or last):
            t0 = time.perf_counter()
            row["nash_conv"] = clock.skip(lambda: exact(net, device))
            if avg is not None:
                row["nash_conv_avg"] = clock.skip(lambda: exact(avg.net, device))
            row["eval_seconds"] = round(time.perf_counter() - t0, 3)
        if hook is not None:
            snapshot = Snapshot(row, decisions, policy_function(net, device))
            last = bool(clock.skip(lambda: hook(snapshot))) or last  # noqa: B023  (called at once)
        monitor.log(decisions, row)
        if (args.checkpoint_every and it % args.checkpoint_every == 0) or last:
            torch.save({"iteration": it, "episodes": episodes, "cpu_seconds": row["cpu_seconds"], "seconds": seconds,
                        "net": net.state_dict(), "magnet": magnet.state_dict(), "optimizer": optimizer.state_dict(),
                        **({} if avg is None else avg.state_dict())}, state_file)
            name = "final" if last else f"ckpt-{it:06d}"
            for policy, suffix, key in [(net, "", "nash_conv")] + ([] if avg is None else [(avg.net, "-avg",
                                                                                            "nash_conv_avg")]):
                policy.export(out / f"{name}{suffix}.npz", {**card, "trained": {
                    **card["trained"], "iteration": it, "decisions": decisions, "seconds": round(seconds, 1),
                    **({"policy": f"average ({args.average})"} if suffix else {}),
                    **({"nash_conv": row[key]} if key in row else {})}})
        if it % 10 == 0 or last:
            nc = f", NashConv {row['nash_conv']:.4f}" if "nash_conv" in row else ""
            nc += f" (average {row['nash_conv_avg']:.4f})" if "nash_conv_avg" in row else ""
            monitor.note(f"iteration {it}: {decisions:,} decisions, {decisions / seconds:,.0f}/s, entropy {ent:.3f}, "
                         f"KL to magnet {kl:.4f}, value loss {vl:.3f}{nc}")
        if last:
            break
    monitor.close()
    (out / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=1))
    return row


def parse(argv: list[str] | None = None) -> Args:
    """The ``Args`` fields as flags."""
    return parse_fields(Args, "python -m krypenv.training.selfplay", __doc__.split("\n\n")[0], argv)


def parse_fields(cls: type[T], prog: str, description: str, argv: list[str] | None) -> T:
    """A dataclass of flags, one per field (``--num-envs 64``; booleans true/false); a bad value exits naming it."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        kind = _boolean if isinstance(f.default, bool) else type(f.default)
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=kind, default=f.default, help=f.metadata.get("help"))
    try:
        return cls(**vars(parser.parse_args(argv)))
    except ValueError as exc:
        parser.error(str(exc))


def _boolean(text: str) -> bool:
    """A flag's true/false (1/0, yes/no)."""
    value = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}.get(text.lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return value


if __name__ == "__main__":
    main(parse())
