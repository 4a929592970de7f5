"""Train a Krypkasino or Kungsholmskille agent with PPO and action masking (sb3-contrib MaskablePPO), CleanRL style.

    python train.py                                   # Krypkasino, 2 players, about 10 minutes on 2 cores
    python train.py --players 3 --total-timesteps 3000000
    python train.py --game kungsholmskille            # 4 players, a pot per episode
    python train.py --help                            # every option, with its default

One file, read top to bottom: the arguments (:class:`Args`), the periodic evaluation's curve,
the training callback, then :func:`main`.  The learner plays a random seat of ``--num-envs``
games at once on the game's batched engine (Krypkasino: :class:`krypenv.krypkasino.vec.KrypkasinoVecEnv`);
every other seat is played by the league (:mod:`krypenv.agents.league`): the baselines named in
``--league`` plus frozen snapshots of the learner (``self``), drawn per seat for every episode.
The reward is the game's (Krypkasino: minus the change of the learner's score, so an episode,
one deal, returns minus its deal score; Kungsholmskille: the change of its money, so an
episode, one pot carried over deals until it goes out, returns its net money), multiplied by
``--reward-scale`` (a change of units, not shaping).  What differs between the games (defaults,
env, network, evaluations) is the game's training part, named by its declaration in the
registry of games (:mod:`krypenv.games`; Krypkasino's is :mod:`krypenv.training.krypkasino`,
the interface :mod:`krypenv.training.common`); ``--players``, ``--league`` and ``--policy``
default per game.  The warm starts (``--init-from`` a checkpoint or a distilled ``mlp`` student,
``--bc-teacher`` imitation) are in :mod:`krypenv.training.warm`.

The network (``--policy``): ``moves`` (default) reads the observation plus the *move
features* of every legal action (:mod:`krypenv.agents.krypkasino.move_features`: points taken, what is left
on the table, the chance that the next seat must sweep it, ...; public information only) and
scores each action with one shared scorer (:mod:`krypenv.agents.krypkasino.move_policy`); ``mlp`` is a plain MLP
on the observation alone, each entry scaled to [0, 1] (:class:`krypenv.agents.krypkasino.ppo.ScaledInput`).

Every ``--eval-every`` env steps the current policy plays duplicate deals against ``expert``
(Kungsholmskille: ``--eval-deals`` episodes at a table of experts, its money per episode)
through the evaluation harness (:mod:`krypenv.eval`); the score difference (learner − expert per
deal, 95% CI over decks; lower is better) goes to TensorBoard, ``eval.csv`` and
``learning_curve.png`` (against env steps and wall time), and the checkpoint is saved.  At the
end the trained agent meets every baseline (random, greedy, creeper, expert) in a duplicate
evaluation whose report is printed.

Outputs in ``runs/<run-name>/``: ``args.json``, ``machine.json`` (the processor, versions and the SIMD
level of torch's CPU kernels: training is deterministic on one machine, not across machines),
``tb/`` (TensorBoard: ``tensorboard --logdir runs``), ``eval.csv``, ``learning_curve.png``,
``checkpoints/latest.zip``, ``checkpoints/best.zip`` (the best periodic evaluation), ``final.zip``,
``final_eval.txt`` and ``summary.json``.  Checkpoints are SB3 zips with
a ``krypenv.json`` member; ``krypenv eval --agents ppo:runs/<run>/final.zip,expert`` plays them.
"""

from __future__ import annotations

import argparse
import copy
import csv
import dataclasses
import json
import math
import os
import random
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from krypenv.games import DEFAULT_GAME, GAMES
from krypenv.threads import set_torch_threads
from krypenv.training.common import Curve, machine, resolve, training_part
from krypenv.training.warm import imitate, init_checkpoint, load_weights, net_arch


def arg(default: Any, help: str) -> Any:
    """A dataclass field with its command-line help."""
    return field(default=default, metadata={"help": help})


def per_game(key: str) -> str:
    """Each game's training default of ``key``, for a help text: ``Krypkasino 2, Kungsholmskille 4``."""
    return ", ".join(f"{g.title} {g.part('training').DEFAULTS[key]}" for g in GAMES.values())


@dataclass
class Args:
    """Everything a run depends on; ``python train.py --help`` lists them with their defaults."""

    # the run
    run_name: str = arg("", "name of the run folder under --out-dir (default: <players>p-s<seed>-<timestamp>)")
    out_dir: str = arg("runs", "folder of the run folders")
    seed: int = arg(1, "seed of everything: the games' decks, the league's draws, torch and numpy")
    save_to: str = arg("", "also save the final policy here without the optimizer state (e.g. checkpoints/ppo-2p.zip)")
    torch_threads: int = arg(1, "torch CPU threads (the engine's numba kernels use their own; 2 thrashed on a busy "
                                "2-core machine, about 2.5x slower in a measured run)")
    time_limit: float = arg(0.0, "stop training after this many minutes of wall time (0: no limit; a limit makes "
                                 "the number of steps, and so the result, depend on the machine's speed)")
    # the game
    game: str = arg(DEFAULT_GAME, f"the game: {' or '.join(GAMES)}")
    players: int = arg(0, f"number of players, 2 to 6 (0: the game's default, {per_game('players')})")
    max_deals: int = arg(50, "Kungsholmskille: deals before a pot that never goes out is cut off (L16)")
    teams: str = arg("none", "teams: none, a number of teams (2, or 3 with 6 players) or seat lists like 0,2/1,3")
    two_player_deal: str = arg("6+4", "two-player deal variant: 6+4 or 5+6 (K6)")
    set_aside: str = arg("court", "set-aside variant: court or spades (K8)")
    last_capture_point: bool = arg(False, "variant K17: the last capturer gets one more point")
    preset: str = arg("standard", "the deck and deal: standard, or Krypkasino's tiny (2 players) or small (2-3 "
                                  "players), RULES.md K22; a non-standard preset names the run folder")
    # the league of opponents
    league: str = arg("", "opponent weights: agent specs and 'self' (snapshots of the learner); empty: the game's "
                          f"default, {per_game('league')}")
    snapshot_every: int = arg(500_000, "env steps between snapshots of the learner added to the league")
    max_snapshots: int = arg(5, "snapshots kept in the league (the oldest leaves)")
    # behaviour cloning warm start
    bc_decisions: int = arg(0, "teacher decisions to imitate before PPO (0: start from random weights); the critic "
                               "learns the teacher's returns at the same time")
    bc_teacher: str = arg("expert", "agent spec of the teacher for --bc-decisions")
    bc_epochs: int = arg(2, "passes over each rollout of teacher decisions")
    init_from: str = arg("", "start from this checkpoint's policy and critic weights (a fresh optimizer), e.g. "
                             "checkpoints/ppo-2p.zip; with --bc-teacher champion, a round of expert iteration: "
                             "clone the search over the policy, then PPO (same game, players, network, features); "
                             "or an mlp student (.npz, e.g. checkpoints/exit-2p-endgame.npz with --net-arch 256,256): "
                             "PPO fine-tunes it, its critic and scorer sizes kept")
    # PPO
    total_timesteps: int = arg(1_500_000, "learner decisions to train on (env steps over all games)")
    num_envs: int = arg(256, "games played at once")
    n_steps: int = arg(32, "steps per game per rollout (a rollout has num_envs * n_steps steps)")
    batch_size: int = arg(2048, "minibatch size")
    n_epochs: int = arg(4, "passes over each rollout")
    learning_rate: float = arg(3e-4, "Adam learning rate")
    anneal_lr: bool = arg(True, "decay the learning rate linearly to 0 over the run")
    gamma: float = arg(1.0, "discount (1: the return is exactly minus the deal score)")
    gae_lambda: float = arg(0.95, "GAE lambda")
    clip_range: float = arg(0.2, "PPO clip range")
    ent_coef: float = arg(0.02, "entropy bonus coefficient")
    vf_coef: float = arg(0.5, "value loss coefficient")
    max_grad_norm: float = arg(0.5, "gradient clipping norm")
    target_kl: float = arg(0.0, "stop an update's epochs early above this KL (0: never)")
    policy: str = arg("", "network: 'moves' scores every action from its move features with one shared scorer "
                          "(krypenv.agents.krypkasino.move_policy; Krypkasino's default), 'mlp' is a plain MLP on the "
                          "observation alone (Kungsholmskille's only one)")
    net_arch: str = arg("128,128", "hidden layer sizes of the policy and (separate) value networks")
    reward_scale: float = arg(0.1, "reward multiplier (units: 0.1 = tens of points)")
    # evaluation
    eval_every: int = arg(250_000, "env steps between evaluations against expert (0: only at the end)")
    eval_deals: int = arg(200, "duplicate decks per periodic evaluation (each played from both seats in 2p)")
    eval_seed: int = arg(1000, "seed of the periodic evaluations' decks")
    final_deals: int = arg(3000, "duplicate decks of the final evaluation against each baseline "
                                 "(0: skip it; 3000 take about a minute and a half)")
    final_seed: int = arg(2000, "seed of the final evaluation's decks")


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, an option per field (``--total-timesteps 100000``, ``--no-anneal-lr``)."""
    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # one line, not the whole usage
            self.exit(2, f"train.py: error: {message} (python train.py --help lists the options)\n")

    parser = Parser(prog="train.py", description=__doc__.split("\n\n")[0],
                    formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        if f.type in ("bool", bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=f.metadata["help"])
        else:
            kind = {"int": int, "float": float, "str": str}[f.type if isinstance(f.type, str) else f.type.__name__]
            parser.add_argument(flag, type=kind, default=f.default, help=f.metadata["help"],
                                metavar=kind.__name__.upper())
    return Args(**vars(parser.parse_args(argv)))


def check_args(args: Args) -> None:
    """ValueError with a one-line message for a bad combination of arguments."""
    positive = ("total_timesteps", "num_envs", "n_steps", "batch_size", "n_epochs", "snapshot_every", "max_snapshots",
                "torch_threads", "bc_epochs")
    for name in positive:
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    for name in ("eval_every", "final_deals", "eval_seed", "final_seed", "seed", "time_limit", "ent_coef", "vf_coef",
                 "target_kl", "bc_decisions"):
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(args, name)}")
    if not 2 <= args.players <= 6:
        raise ValueError(f"--players must be 2 to 6, got {args.players}")
    if args.eval_deals < 2 or (args.final_deals and args.final_deals < 2):
        raise ValueError("--eval-deals and --final-deals need at least 2 decks (for a confidence interval)")
    if not 0 < args.learning_rate < 1 or not 0 < args.gamma <= 1 or not 0 <= args.gae_lambda <= 1:
        raise ValueError("need 0 < --learning-rate < 1, 0 < --gamma <= 1 and 0 <= --gae-lambda <= 1")
    if not 0 < args.clip_range < 1 or args.max_grad_norm <= 0 or args.reward_scale <= 0:
        raise ValueError("need 0 < --clip-range < 1, --max-grad-norm > 0 and --reward-scale > 0")
    if args.batch_size > args.num_envs * args.n_steps:
        raise ValueError(f"--batch-size {args.batch_size} is larger than a rollout "
                         f"(--num-envs x --n-steps = {args.num_envs * args.n_steps})")
    net_arch(args.net_arch)
    if args.max_deals < 1:
        raise ValueError(f"--max-deals must be at least 1, got {args.max_deals}")
    policies = training_part(args.game).POLICIES
    if args.policy not in policies:
        raise ValueError(f"--policy must be {' or '.join(policies)}, got {args.policy!r}")
    if args.run_name and (os.sep in args.run_name or args.run_name in (".", "..")):
        raise ValueError(f"--run-name must be a plain folder name, got {args.run_name!r}")


# --------------------------------------------------------------------------- evaluation
def plot_curve(rows: list[dict[str, Any]], path: Path, curve: Curve, title: str) -> None:
    """learning_curve.png: the game's periodic value (Krypkasino: learner − expert per deal; 95% CI) against
    env steps and wall minutes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), dpi=100, sharey=True)
    y = np.array([r["diff"] for r in rows])
    lo, hi = np.array([r["ci_low"] for r in rows]), np.array([r["ci_high"] for r in rows])
    for ax, key, label in ((axes[0], "env_steps", "env steps (learner decisions)"),
                           (axes[1], "wall_min", "wall time (minutes, evaluations included)")):
        x = np.array([r[key] for r in rows], np.float64)
        ax.plot(x, y, "o-", label=curve.label)
        ax.fill_between(x, lo, hi, alpha=0.25, label="95% CI over decks")
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(curve.y_label)
    axes[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# --------------------------------------------------------------------------- the training callback
def make_callback(args: Args, run_dir: Path, league: Any, meta: dict[str, Any], start: float,
                  report: Any = None) -> Any:
    """The SB3 callback: per-opponent training scores, snapshots, periodic evaluations, checkpoints, time limit."""
    from krypenv.agents.checkpoint import add_metadata
    from stable_baselines3.common.callbacks import BaseCallback

    part = training_part(args.game)
    PPOAgent, curve = part.agent_class(), part.CURVE
    sign = -1.0 if curve.higher_better else 1.0  # the best checkpoint has the lowest sign * value

    class TrainCallback(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.deals_done = np.zeros(args.num_envs, np.int64)
            self.scores: dict[str, list[float]] = {}
            self.next_snapshot = args.snapshot_every
            self.next_eval = args.eval_every if args.eval_every else math.inf
            self.rows: list[dict[str, Any]] = []
            self.best = math.inf  # of sign * the evaluation's value: lower is better
            self.eval_seconds = 0.0

        def save(self, path: Path) -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.model.save(path)
            add_metadata(path, meta | {"env_steps": int(self.num_timesteps), "run": run_dir.name})

        def _on_step(self) -> bool:
            for i in np.flatnonzero(self.locals["dones"]):
                who = league.assignment(int(i), int(self.deals_done[i]))
                self.deals_done[i] += 1
                label = "/".join(sorted(set(who))) if who else "?"
                self.scores.setdefault(label, []).append(self.locals["infos"][i][part.EPISODE_VALUE])
            n = self.num_timesteps
            if n >= self.next_snapshot:
                self.next_snapshot += args.snapshot_every
                snap = PPOAgent(copy.deepcopy(self.model.policy), meta)
                league.add_snapshot(snap, f"self@{n}")
            if n >= self.next_eval:
                self.next_eval += args.eval_every
                self.evaluate()
            if args.time_limit and time.time() - start > 60 * args.time_limit:
                print(f"time limit of {args.time_limit} min reached after {n:,} env steps", flush=True)
                return False
            return True

        def _on_rollout_end(self) -> None:
            for label, values in sorted(self.scores.items()):
                self.logger.record(f"train_score_vs/{label}", float(np.mean(values)))
            allv = [v for vs in self.scores.values() for v in vs]
            if allv:
                self.logger.record("train/deal_score", float(np.mean(allv)))
            self.scores = {}
            self.logger.record("time/wall_min", (time.time() - start) / 60)

        def evaluate(self) -> None:
            t0 = time.time()
            d = part.evaluate(PPOAgent(self.model.policy, meta), args)  # the game's periodic evaluation
            scores = d.scores
            self.eval_seconds += time.time() - t0
            row = {"env_steps": int(self.num_timesteps), "wall_min": (time.time() - start) / 60,
                   "train_min": (time.time() - start - self.eval_seconds) / 60, "diff": d.mean, "ci_low": d.low,
                   "ci_high": d.high, **scores, "eval_s": time.time() - t0}
            self.rows.append(row)
            for k in ("diff", "ci_low", "ci_high", *scores):
                self.logger.record(f"eval_vs_expert/{k}", row[k])
            self.logger.dump(self.num_timesteps)
            with open(run_dir / "eval.csv", "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=list(row))
                w.writeheader()
                w.writerows(self.rows)
            plot_curve(self.rows, run_dir / "learning_curve.png", curve,
                       f"{run_dir.name}: {args.players} players, {args.eval_deals} {curve.points} per point")
            self.save(run_dir / "checkpoints" / "latest.zip")
            if sign * d.mean < self.best:
                self.best = sign * d.mean
                shutil.copyfile(run_dir / "checkpoints" / "latest.zip", run_dir / "checkpoints" / "best.zip")
            if report is not None:  # e.g. Ray Tune's report (examples/tune_sweep.py)
                report(row)
            print(f"[{row['wall_min']:5.1f} min] {row['env_steps']:>10,} steps  {curve.label} "
                  f"{d.mean:+6.2f} [{d.low:+.2f}, {d.high:+.2f}] per {curve.unit}  "
                  f"(eval {row['eval_s']:.0f} s)", flush=True)

    return TrainCallback()


# --------------------------------------------------------------------------- main
def main(args: Args, report: Any = None) -> dict[str, Any]:
    """Train, evaluate and save; returns a summary (paths and the final numbers); ``report(row)`` sees every
    evaluation."""
    args = resolve(args)  # the game's defaults for --players, --league and --policy
    check_args(args)
    start = time.time()
    part = training_part(args.game)  # what is the game's own: env, network, metadata, evaluations
    part.game_config(args)  # checks the game's rules options (Krypkasino: the teams too)

    # the league of opponents and the cloning teacher (built first: a bad spec fails before anything is written)
    from krypenv.agents.league import build_league, parse_weights

    from krypenv import agents

    league = build_league(parse_weights(args.league), seed=args.seed, max_snapshots=args.max_snapshots, game=args.game)
    teacher = agents.load(args.bc_teacher, game=args.game) if args.bc_decisions else None
    init = init_checkpoint(args) if args.init_from else None

    # seeding: python, numpy and torch here; the games' streams by the env seed; the league by its own
    import torch

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    set_torch_threads(args.torch_threads)
    # the move scorer's gather/scatter gradients sum in thread order unless told otherwise (measured: weights
    # differed by 1e-7 after 4 updates of two runs with the same seed, then the runs diverged)
    torch.use_deterministic_algorithms(True)

    from krypenv.agents.checkpoint import play_only_copy
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecEnvWrapper

    preset = "" if args.preset == "standard" else f"{args.preset}-"
    run_name = args.run_name or (f"{part.RUN_PREFIX}{preset}{args.players}p-s{args.seed}-"
                                 f"{time.strftime('%Y%m%d-%H%M%S')}")
    run_dir = Path(args.out_dir) / run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=1) + "\n")
    host = machine()
    (run_dir / "machine.json").write_text(json.dumps(host, indent=1) + "\n")
    print(f"run {run_dir}  (tensorboard --logdir {args.out_dir})", flush=True)
    print(f"machine: {host['cpu']}, {host['cpus']} cores, torch {host['torch']} at {host['cpu_capability']} "
          "(the figures are this machine's: machine.json)", flush=True)

    # the games: the learner in a random seat, the league in the others
    env = part.make_env(args, league)

    class ScaleReward(VecEnvWrapper):
        """Rewards times --reward-scale (a change of units); masks and infos pass through."""

        def reset(self) -> np.ndarray:
            return self.venv.reset()

        def step_wait(self) -> Any:
            obs, rew, done, infos = self.venv.step_wait()
            return obs, rew * np.float32(args.reward_scale), done, infos

    # the learner's network (Krypkasino's move scorer sees each action's move features, an MLP the observation only)
    shapes = init.shapes() if init is not None else {}  # a warm start fixes the critic's and scorer's sizes
    inner, policy, policy_kwargs, features = part.network(args, env, net_arch(args.net_arch), **shapes)
    venv = ScaleReward(inner)
    meta = part.metadata(args, features)
    lr = (lambda frac: args.learning_rate * frac) if args.anneal_lr else args.learning_rate
    model = MaskablePPO(
        policy, venv, learning_rate=lr, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.n_epochs,
        gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip_range, ent_coef=args.ent_coef,
        vf_coef=args.vf_coef, max_grad_norm=args.max_grad_norm, target_kl=args.target_kl or None,
        policy_kwargs=policy_kwargs, tensorboard_log=str(run_dir / "tb"), seed=args.seed, device="cpu", verbose=0)
    if init is not None:
        load_weights(model, init)
    params = sum(p.numel() for p in model.policy.parameters())
    print(f"{args.game}, {args.players} players, league {league.probabilities()}, {params:,} parameters, "
          f"{args.total_timesteps:,} env steps", flush=True)

    callback = make_callback(args, run_dir, league, meta, start, report)
    if teacher is not None:
        callback.deals_done = imitate(model, env, teacher, args)
        print(f"[{(time.time() - start) / 60:5.1f} min] behaviour cloning done", flush=True)
    model.learn(total_timesteps=args.total_timesteps, callback=callback, tb_log_name="ppo", progress_bar=False,
                reset_num_timesteps=teacher is None)
    train_s = time.time() - start
    if not callback.rows or callback.rows[-1]["env_steps"] != model.num_timesteps:
        callback.evaluate()  # the curve always ends with the final policy
    final = run_dir / "final.zip"
    callback.save(final)
    if args.save_to:
        Path(args.save_to).parent.mkdir(parents=True, exist_ok=True)
        play_only_copy(final, args.save_to)
        print(f"saved {args.save_to}", flush=True)
    print(f"trained {model.num_timesteps:,} env steps in {train_s / 60:.1f} min "
          f"({model.num_timesteps / train_s:,.0f} steps/s, periodic evaluations included)", flush=True)

    # the final table: the trained agent against every baseline
    summary: dict[str, Any] = {"run_dir": str(run_dir), "final": str(final), "env_steps": int(model.num_timesteps),
                               "train_s": train_s, "machine": host, "curve": callback.rows}
    if args.final_deals:
        table, final_vs_expert = part.final_table(part.agent_class().load(final), args)
        summary["final_vs_expert"] = final_vs_expert
        (run_dir / "final_eval.txt").write_text(table + "\n")
        print(part.SPREAD_NOTE, flush=True)  # one run is one sample: where the spread over seeds is published
        print(table, flush=True)
    summary["total_s"] = time.time() - start
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=1, default=float) + "\n")
    print(f"done in {summary['total_s'] / 60:.1f} min: {run_dir}", flush=True)
    env.close()
    return summary


if __name__ == "__main__":
    try:
        main(parse_args())
    except ValueError as exc:
        print(f"train.py: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
