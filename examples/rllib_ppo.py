"""PPO with action masking in self-play on RLlib (new API stack), either game; its checkpoint plays as ``rllib:PATH``.

    python examples/rllib_ppo.py --out checkpoints/rllib-2p --timesteps 200000
    krypenv eval --agents rllib:checkpoints/rllib-2p,expert --players 2 --deals 200
    python examples/rllib_ppo.py --game kungsholmskille --players 4 --out runs/rllib-kille
    python examples/rllib_ppo.py --opponents random        # the learner against masked random play

Needs the ``ray`` extra (``pip install "krypenv[ray]"``); runs on a local Ray started here (or on
the cluster in ``RAY_ADDRESS``: ``--env-runners N`` then samples on N workers).  Read top to
bottom: the arguments, the RLlib configuration, the training loop, the checkpoint.

* The env is :class:`krypenv.rllib.KrypenvMultiAgentEnv`: observations ``{"observations",
  "action_mask"}`` as float32, each agent's rewards accumulated up to its next observation.
* The learner is RLlib's ``ActionMaskingTorchRLModule`` (PPO's default MLP whose logits of
  illegal actions are masked out).  With ``--opponents self`` (default) every seat is played
  by the learner, and all seats' experience trains it; with ``--opponents random`` one seat
  per episode is the learner and the others play :class:`krypenv.rllib.MaskedRandomRLModule`.
* At the end ``OUT`` holds RLlib's algorithm checkpoint (``algo.restore_from_path(OUT)``
  resumes it) and ``krypenv.json`` (the game, its keywords, spaces and the env steps), so
  ``rllib:OUT`` loads the learner's module as a krypenv agent (:mod:`krypenv.agents.rllib_agent`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from krypenv.games import DEFAULT_GAME, names


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", choices=names(), default=DEFAULT_GAME)
    p.add_argument("--players", type=int, default=2, help="players, 2 to 6 (default 2)")
    p.add_argument("--opponents", choices=("self", "random"), default="self",
                   help="self: the learner plays every seat; random: one seat, the others masked random")
    p.add_argument("--timesteps", type=int, default=100_000, help="env steps (all agents' decisions) to train on")
    p.add_argument("--batch", type=int, default=4000, help="env steps per training iteration")
    p.add_argument("--minibatch", type=int, default=500, help="minibatch size")
    p.add_argument("--epochs", type=int, default=4, help="passes over each batch")
    p.add_argument("--lr", type=float, default=3e-4, help="learning rate")
    p.add_argument("--entropy", type=float, default=0.01, help="entropy coefficient")
    p.add_argument("--hidden", default="128,128", help="hidden layer sizes")
    p.add_argument("--env-runners", type=int, default=0, help="sampling workers (0: sample in this process)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="runs/rllib-ppo", help="checkpoint folder (rllib:OUT plays it)")
    args = p.parse_args(argv)
    if not 2 <= args.players <= 6 or min(args.timesteps, args.batch, args.minibatch, args.epochs) < 1:
        p.error("players must be 2 to 6 and timesteps, batch, minibatch, epochs positive")
    return args


def build_config(args: argparse.Namespace) -> Any:
    """The PPO configuration: the env, the masking learner module, the opponents' mapping."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from krypenv.rllib import KrypenvMultiAgentEnv, MaskedRandomRLModule

    hidden = [int(h) for h in args.hidden.split(",")]
    modules = {"main": RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                    model_config={"fcnet_hiddens": hidden, "head_fcnet_hiddens": []})}
    if args.opponents == "random":
        modules["random"] = RLModuleSpec(module_class=MaskedRandomRLModule)

    def to_module(agent_id: str, episode: Any, **kwargs: Any) -> str:
        """Self-play: every seat is the learner; else the learner sits in one seat chosen per episode."""
        if args.opponents == "self":
            return "main"
        seat = zlib.crc32(str(episode.id_).encode()) % args.players
        return "main" if agent_id == f"player_{seat}" else "random"

    return (
        PPOConfig()
        # RLlib's env check steps unmasked random actions, which the game rejects as illegal: skip it
        .environment(KrypenvMultiAgentEnv, env_config={"game": args.game, "players": args.players},
                     disable_env_checking=True)
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=1)
        .learners(num_learners=0)
        .multi_agent(policies=set(modules), policy_mapping_fn=to_module, policies_to_train=["main"])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .training(lr=args.lr, entropy_coeff=args.entropy, train_batch_size_per_learner=args.batch,
                  minibatch_size=args.minibatch, num_epochs=args.epochs, gamma=1.0, lambda_=0.95)
        .debugging(seed=args.seed, log_level="ERROR")
    )


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Train, save the checkpoint and its ``krypenv.json``; returns the summary (also printed)."""
    import ray

    from krypenv.rllib import KrypenvMultiAgentEnv

    if not ray.is_initialized():  # the cluster in RAY_ADDRESS, else a local Ray with the CPUs the runners need
        local = {} if os.environ.get("RAY_ADDRESS") else {"address": "local", "include_dashboard": False,
                                                          "num_cpus": max(1, args.env_runners + 1)}
        ray.init(log_to_driver=False, logging_level="warning", **local)
    algo = build_config(args).build_algo()
    start, steps, it = time.perf_counter(), 0, 0
    while steps < args.timesteps:
        result = algo.train()
        it += 1
        steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        ret = result["env_runners"].get("agent_episode_returns_mean", {})
        print(f"iter {it:3d}  {steps:>9,} env steps  {steps / (time.perf_counter() - start):7,.0f} steps/s  "
              f"returns {json.dumps({k: round(v, 2) for k, v in sorted(ret.items())})}", flush=True)
    seconds = time.perf_counter() - start
    out = Path(args.out).resolve()
    algo.save_to_path(str(out))
    env = KrypenvMultiAgentEnv({"game": args.game, "players": args.players})
    meta = {"format": "krypenv-rllib/1", "game": args.game, "env_config": {"players": args.players},
            "module": "main", "obs_dim": int(env.observation_spaces["player_0"]["observations"].shape[0]),
            "actions": int(env.action_spaces["player_0"].n), "env_steps": steps, "train_s": seconds,
            "args": vars(args)}
    (out / "krypenv.json").write_text(json.dumps(meta, indent=1) + "\n")
    algo.stop()
    summary = {"out": str(out), "env_steps": steps, "train_s": seconds, "steps_per_s": steps / seconds}
    print(f"trained {steps:,} env steps in {seconds:.1f} s ({steps / seconds:,.0f} env steps/s); "
          f"saved {out} (krypenv eval --agents rllib:{args.out},expert)", flush=True)
    return summary


if __name__ == "__main__":
    main(parse_args())
    sys.exit(0)
