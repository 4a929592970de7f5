"""Sweep ``train.py``'s learning rate, entropy bonus and network width with Ray Tune; prints the best configuration.

    python examples/tune_sweep.py --samples 8 --total-timesteps 1000000        # on a local Ray
    RAY_ADDRESS=10.0.0.5:6379 python examples/tune_sweep.py --samples 32      # on a cluster

Needs the ``ray`` extra (``pip install "krypenv[ray]"``).  Each trial is one ``train.main(Args)``
run (:mod:`train`) in a Ray worker (one CPU, one torch thread).  Every periodic evaluation of
``train.py`` (``--eval-every`` env steps: duplicate deals against ``expert``) is reported to
Tune as ``diff`` (learner − expert points per deal, lower is better) with its 95% interval;
the ASHA scheduler stops trials whose ``diff`` trails the others' at the same evaluation
(rungs of ``--grace`` evaluations), and the best configuration by its last ``diff`` is
printed at the end.  Each trial's own run folder (``eval.csv``, checkpoints, TensorBoard) is
under ``--out-dir``; Tune's results are under ``--storage``.

The search space (edit :func:`search_space`): ``learning_rate`` log-uniform in [1e-4, 1e-3],
``ent_coef`` in {0.0, 0.01, 0.02, 0.05}, ``net_arch`` in {64,64; 128,128; 256,256}.  Any other
``train.py`` option can be fixed for all trials with ``--set NAME=VALUE`` (repeatable), e.g.
``--set players=3``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # train.py sits at the root; a local Ray's workers share this sys.path
    sys.path.insert(0, str(ROOT))

import train


def search_space() -> dict[str, Any]:
    """The swept ``train.Args`` fields."""
    from ray import tune

    return {"learning_rate": tune.loguniform(1e-4, 1e-3), "ent_coef": tune.choice([0.0, 0.01, 0.02, 0.05]),
            "net_arch": tune.choice(["64,64", "128,128", "256,256"])}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=8, help="trials (configurations drawn from the search space)")
    p.add_argument("--total-timesteps", type=int, default=1_000_000, help="train.py --total-timesteps per trial")
    p.add_argument("--eval-every", type=int, default=100_000, help="train.py --eval-every: one report per evaluation")
    p.add_argument("--eval-deals", type=int, default=200, help="train.py --eval-deals per report")
    p.add_argument("--grace", type=int, default=2, help="evaluations a trial gets before ASHA may stop it")
    p.add_argument("--concurrent", type=int, default=0, help="trials at once (0: one per CPU of the cluster)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="fix another train.py option")
    p.add_argument("--out-dir", default=str(ROOT / "runs" / "tune"), help="train.py --out-dir of the trials")
    p.add_argument("--storage", default=str(ROOT / "runs" / "tune-results"), help="Tune's results folder")
    p.add_argument("--seed", type=int, default=1, help="seed of the sampled configurations and of every trial")
    args = p.parse_args(argv)
    fields = {f.name: f for f in dataclasses.fields(train.Args)}
    fixed: dict[str, Any] = {}
    for item in args.set:
        name, _, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if name not in fields or not _:
            p.error(f"--set {item!r}: give NAME=VALUE with a train.py option (python train.py --help)")
        kind = {"int": int, "float": float, "str": str, "bool": lambda v: v.lower() in ("1", "true", "yes")}
        type_name = fields[name].type if isinstance(fields[name].type, str) else fields[name].type.__name__
        fixed[name] = kind[type_name](value)
    args.fixed = fixed
    return args


def trial_args(config: dict[str, Any], args: argparse.Namespace, name: str) -> train.Args:
    """The ``train.Args`` of one trial: the sampled values over the sweep's fixed ones."""
    fixed = {"total_timesteps": args.total_timesteps, "eval_every": args.eval_every, "eval_deals": args.eval_deals,
             "final_deals": 0, "torch_threads": 1, "seed": args.seed, "out_dir": args.out_dir, "run_name": name}
    chosen = train.resolve(train.Args(**(fixed | args.fixed | config)))  # the game's defaults (players, league)
    train.check_args(chosen)
    return chosen


def make_trainable(args: argparse.Namespace) -> Any:
    """The Tune function trainable: ``train.main`` reporting each periodic evaluation."""
    from ray import tune

    def trainable(config: dict[str, Any]) -> None:
        name = f"trial-{tune.get_context().get_trial_id()}"
        keys = ("diff", "ci_low", "ci_high", "env_steps", "learner_score", "expert_score", "wall_min")
        train.main(trial_args(config, args, name), report=lambda row: tune.report({k: row[k] for k in keys}))

    return trainable


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run the sweep; returns (and prints) the best configuration and its last ``diff``."""
    import ray
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler

    trial_args({}, args, "check")  # a bad --set fails here, before any trial starts
    if not ray.is_initialized():  # the cluster in RAY_ADDRESS, else a new local Ray
        ray.init(address=os.environ.get("RAY_ADDRESS") or "local", log_to_driver=False, logging_level="warning")
    evaluations = max(1, args.total_timesteps // args.eval_every)
    scheduler = ASHAScheduler(max_t=evaluations, grace_period=min(args.grace, evaluations), reduction_factor=2)
    space = search_space()
    tuner = tune.Tuner(
        tune.with_resources(make_trainable(args), {"cpu": 1}),
        param_space=space,
        tune_config=tune.TuneConfig(metric="diff", mode="min", scheduler=scheduler, num_samples=args.samples,
                                    max_concurrent_trials=args.concurrent or None,
                                    search_alg=tune.search.BasicVariantGenerator(random_state=args.seed)),
        run_config=tune.RunConfig(name="krypenv-sweep", storage_path=args.storage, verbose=1),
    )
    results = tuner.fit()
    best = results.get_best_result(metric="diff", mode="min", scope="last")
    chosen = {k: best.config[k] for k in space}
    m = best.metrics
    summary = {"best_config": chosen, "diff": m["diff"], "ci": [m["ci_low"], m["ci_high"]],
               "env_steps": best.metrics["env_steps"], "trials": len(results), "errors": len(results.errors)}
    print(f"best of {len(results)} trials: {chosen}  learner - expert {summary['diff']:+.2f} "
          f"[{summary['ci'][0]:+.2f}, {summary['ci'][1]:+.2f}] per deal after {summary['env_steps']:,} env steps",
          flush=True)
    return summary


if __name__ == "__main__":
    main(parse_args())
