"""Magnetic mirror descent on a small game's whole tree: one network for every seat, exact action values.

    python -m krypenv.training.treemmd --preset tiny --max-seconds 1800 --out runs/treemmd-tiny

**What it is.**  The full-width counterpart of :mod:`krypenv.training.selfplay`: the same network
(:class:`krypenv.training.mmdnet.Policy`, the seat's env observation in, masked softmax out) and the same
update (MMD; Sokota et al., ICLR 2023), but each action's value is computed on the game's tree
(:class:`krypenv.openspiel.tree.GameTree`) instead of estimated from sampled games.  It needs a game
OpenSpiel can walk whole (``tiny``); the sampled learner is the one that scales.  Each iteration:

1. π, the network's exact probabilities at every distinct observation of the tree;
2. Q(o, a), the seat's expected return (the game's points) after ``a``, its histories weighted by chance's
   and the other seats' reach (one backward pass of on-policy values);
3. MMD's step at every observation, ``log π' = (log π + η·Q + α·η·log ρ) / (1 + α·η)`` up to a constant, with
   ρ the magnet (a second network: renewed as a copy of the policy every ``magnet_every`` iterations or
   trailing it by ``magnet_ema``; both 0: the uniform policy);
4. the network fitted to π' by ``fit_steps`` Adam steps on the centered squared error of the legal
   log-probabilities, each observation weighted by how often the current policy reaches it (plus
   ``floor`` times the mean weight, so unreached ones still move); ``sample_decisions``, an ablation, weights
   them instead by how often that many decisions of sampled play meet them (:func:`fit_weights`), as the
   sampled learner's fit does.

A fixed magnet makes the iterates converge to the quantal response equilibrium of temperature α (points);
a renewed or trailing magnet moves it towards a Nash equilibrium (proximal point).  The shipped policy
is the last network: exact probabilities, no table of information states.

**Out.**  ``OUT/log.csv`` (iteration, seconds, exact NashConv every ``eval_every`` iterations, fit loss,
entropy) and ``OUT/final.npz``, an ``mlp`` checkpoint (``krypenv exploit --agent mlp:OUT/final.npz``).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from krypenv.games import DEFAULT_GAME
from krypenv.threads import set_torch_threads
from krypenv.training.critic import TreeValues
from krypenv.training.mmdnet import Policy
from krypenv.training.monitor import Monitor, Stopwatch
from krypenv.training.selfplay import check_fields, parse_fields, schedule, update_magnet

__all__ = ["Args", "fit_weights", "main", "mmd_step", "parse"]


@dataclass
class Args:
    """Everything a run depends on (each a flag: ``--eta 0.3``)."""

    game: str = DEFAULT_GAME
    players: int = 2
    preset: str = "tiny"
    rules: str = ""  # more rule keys on top of the preset (as selfplay's)
    iterations: int = 2000
    max_seconds: float = 0.0  # stop after this much training wall time (0: no limit)
    eta: float = 0.3  # MMD's step size η, per point of return
    eta_schedule: str = "constant"  # constant, linear (to 0 at the last iteration) or sqrt: η·min(1, √(start/t))
    magnet_coef: float = 0.05  # α: the temperature of the magnet's pull, in points
    magnet_schedule: str = "constant"  # as eta_schedule
    schedule_start: int = 100  # iterations after which the sqrt schedules shrink
    magnet_every: int = 0  # iterations between magnet renewals (0: never)
    magnet_ema: float = 0.0  # after every iteration the magnet's parameters move this far to the policy's
    fit_steps: int = 10  # Adam steps on the whole tree per iteration
    learning_rate: float = 1e-3
    floor: float = 0.1  # each observation's fitting weight: its reach under π plus floor × the mean reach
    sample_decisions: int = 0  # > 0, an ablation: weights are sampled visit counts of that many decisions (fit_weights)
    hidden: int = 128
    layers: int = 2
    seed: int = 0
    torch_threads: int = 1
    eval_every: int = 10  # iterations between exact NashConv measurements (and at the last)
    progress: bool = True
    tensorboard: bool = True
    out: str = "runs/treemmd"

    def __post_init__(self) -> None:
        check_fields(self, schedules=("eta_schedule", "magnet_schedule"),
                     at_least_1=("players", "iterations", "fit_steps", "hidden", "layers", "schedule_start",
                                 "torch_threads", "eval_every"),
                     at_least_0=("max_seconds", "magnet_coef", "magnet_every", "floor", "sample_decisions"),
                     positive=("eta", "learning_rate"))


def mmd_step(logp: np.ndarray, q: np.ndarray, log_magnet: np.ndarray, legal: np.ndarray, eta: float,
             alpha: float) -> np.ndarray:
    """MMD's closed-form step at every row: ``(log π + η·Q + α·η·log ρ) / (1 + α·η)``, normalized, −∞ off ``legal``."""
    y = (logp + eta * q + alpha * eta * log_magnet) / (1.0 + alpha * eta)
    y = np.where(legal, y, -np.inf)
    top = y.max(1, keepdims=True)
    return y - top - np.log(np.exp(y - top).sum(1, keepdims=True))


def fit_weights(seen: np.ndarray, floor: float, sample_decisions: int, rng: np.random.Generator) -> np.ndarray:
    """Each observation's fitting weight: its reach plus ``floor`` × the mean reach; or, with ``sample_decisions``, how
    often it is met in that many decisions of sampled play (a Poisson count of mean ``sample_decisions`` × its share of
    the decisions, the sampled learner's weights; unmet observations are not fitted).  Not normalized."""
    if sample_decisions:
        return rng.poisson(sample_decisions * seen / seen.sum()).astype(np.float64)
    return seen + floor * seen.mean()


def _log_probs(net: Policy, obs: torch.Tensor, legal: torch.Tensor) -> np.ndarray:
    """The network's log-probabilities (float64, −∞ off the legal actions)."""
    with torch.no_grad():
        logp = net(obs, legal)[0].double()
    return torch.where(legal, logp - torch.logsumexp(logp.masked_fill(~legal, -torch.inf), 1, keepdim=True),
                       -torch.inf).numpy()


def main(args: Args) -> dict[str, Any]:
    """Train (module docstring); return the last log row."""
    from krypenv.openspiel.tree import GameTree
    from krypenv.training.exploit import parse_rules

    torch.manual_seed(args.seed)
    set_torch_threads(args.torch_threads)
    out = Path(args.out)
    tree = GameTree.load(args.game, args.preset, args.players, **parse_rules(args.rules))
    tv = TreeValues(tree)
    obs, legal = torch.as_tensor(tv.obs).float(), torch.as_tensor(tv.legal)
    choice = torch.as_tensor(tv.legal.sum(1) > 1)  # observations with something to learn
    c_obs, c_legal = obs[choice], legal[choice]
    D, A = obs.shape[1], legal.shape[1]
    net, magnet = Policy(D, A, args.hidden, args.layers), Policy(D, A, args.hidden, args.layers)
    magnet.load_state_dict(net.state_dict())
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
    uniform = args.magnet_every == 0 and args.magnet_ema == 0
    log_uniform = np.where(tv.legal, -np.log(tv.legal.sum(1, keepdims=True)), -np.inf)
    monitor = Monitor(out, args.iterations, unit="iterations", progress=args.progress, tensorboard=args.tensorboard,
                      columns=["iteration", "seconds", "cpu_seconds", "eta", "magnet_coef", "fit_loss", "entropy",
                               "nash_conv", "eval_seconds"])
    clock, row, rng = Stopwatch(), {}, np.random.default_rng(args.seed)
    for it in range(1, args.iterations + 1):
        eta = schedule(args.eta_schedule, args.eta, it - 1, args.iterations, args.schedule_start)
        alpha = schedule(args.magnet_schedule, args.magnet_coef, it - 1, args.iterations, args.schedule_start)
        logp = _log_probs(net, obs, legal)
        probs = np.exp(logp)
        q, seen = tv.values(probs)
        rho = log_uniform if uniform else _log_probs(magnet, obs, legal)
        target = torch.as_tensor(np.where(tv.legal, mmd_step(logp, q, rho, tv.legal, eta, alpha), 0.0)).float()
        weight = torch.as_tensor(fit_weights(seen, args.floor, args.sample_decisions, rng)).float()[choice]
        weight, c_target = weight / weight.sum().clamp_min(1e-30), target[choice]
        for _ in range(args.fit_steps):
            lp = net(c_obs, c_legal)[0]
            n = c_legal.sum(1, keepdim=True)
            a, b = torch.where(c_legal, lp, 0.0), torch.where(c_legal, c_target, 0.0)
            diff = torch.where(c_legal, (a - a.sum(1, keepdim=True) / n) - (b - b.sum(1, keepdim=True) / n), 0.0)
            loss = (weight * diff.pow(2).sum(1) / n[:, 0]).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        update_magnet(magnet, net, args, it)  # type: ignore[arg-type]  (the fields it reads are here too)
        entropy = float(-(np.where(tv.legal, probs * np.nan_to_num(logp, neginf=0.0), 0.0)).sum(1) @ seen
                        / max(seen.sum(), 1e-12))
        seconds = clock.wall()
        last = it == args.iterations or bool(args.max_seconds and seconds >= args.max_seconds)
        row = {"iteration": it, "seconds": round(seconds, 2), "cpu_seconds": round(clock.cpu(), 2), "eta": eta,
               "magnet_coef": alpha, "fit_loss": loss.item(), "entropy": entropy}
        if it % args.eval_every == 0 or last:
            t0 = time.perf_counter()
            row["nash_conv"] = clock.skip(lambda: tree.nash_conv(np.exp(_log_probs(net, obs, legal))[tv.back])
                                          ["nash_conv"])
            row["eval_seconds"] = round(time.perf_counter() - t0, 3)
            monitor.note(f"iteration {it}: {seconds:.0f} s, NashConv {row['nash_conv']:.4f}, entropy {entropy:.3f}")
        monitor.log(it, row)
        if last:
            break
    card = {"game": args.game, "players": args.players, "preset": args.preset, "rules": args.rules, "obs_size": D,
            "n_actions": A, "trained": {"method": "full-width MMD (krypenv.training.treemmd)",
                                        "args": dataclasses.asdict(args), "command": " ".join(sys.argv),
                                        "iteration": row["iteration"], "seconds": row["seconds"],
                                        "nash_conv": row.get("nash_conv")}}
    net.export(out / "final.npz", card)
    monitor.close()
    (out / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=1))
    return row


def parse(argv: list[str] | None = None) -> Args:
    """The ``Args`` fields as flags."""
    return parse_fields(Args, "python -m krypenv.training.treemmd", __doc__.split("\n\n")[0], argv)


if __name__ == "__main__":
    main(parse())
