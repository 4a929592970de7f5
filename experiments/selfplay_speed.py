"""The self-play trainer's speed on ``tiny`` (2 players, CPU): before and after, against its arithmetic bound.

    nice python experiments/selfplay_speed.py [--iterations 6] [--threads 1 2] [--before c647ee7]

In one run, alternating, for ``--rounds`` rounds:

* **before**: the trainer of commit ``--before`` (the last round's :mod:`krypenv.training.selfplay`, read
  with ``git show``) at the last round's CPU settings (512 games × 32 steps, hidden 128, 2 epochs of
  4 minibatches, PPO with the uniform magnet);
* **after**: today's trainer at each configuration of :data:`AFTER` (its update, batch, epochs and
  network), for each ``--threads`` (torch's threads; numba's env threads are the machine's);

each for ``--iterations`` iterations after one warm-up iteration (numba's compilation and the first
allocations left out).  Printed per configuration: decisions per wall second and per CPU second (this
process's, every thread), and the **bound**: the network's floating-point operations per decision
(2·Σ in·out of its layers per forward pass: one pass to act, one for the critic's targets, three per
epoch to train) against the matmul rate measured here at the update's shapes on the same threads.
``% of bound`` is the achieved rate over that bound.  On a shared machine the wall figures depend on
the neighbours: the CPU-second figures are the ones to compare, and a quiet machine gives both.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
BEFORE = {"num_envs": 512, "num_steps": 32, "hidden": 128, "update_epochs": 2, "num_minibatches": 4,
          "magnet_every": 0}
AFTER = {
    "ppo 4096x8, 1 epoch": {"num_envs": 4096, "num_steps": 8, "hidden": 128, "update_epochs": 1,
                            "num_minibatches": 2, "magnet_every": 0},
    "critic 2048x16, 2 epochs": {"update": "critic", "num_envs": 2048, "num_steps": 16, "hidden": 128,
                                 "update_epochs": 2, "num_minibatches": 2, "magnet_every": 0},
}


def old_module(commit: str) -> Any:
    """The selfplay module of ``commit`` (git show), imported under another name."""
    text = subprocess.run(["git", "show", f"{commit}:krypenv/training/selfplay.py"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "selfplay_before.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("selfplay_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["selfplay_before"] = module
    spec.loader.exec_module(module)
    return module


def flops_per_decision(obs: int, actions: int, hidden: int, layers: int, epochs: int, critic: bool) -> float:
    """Multiply-adds ×2 of the network per decision: acting, the critic's targets and training (fwd + bwd ≈ 3×)."""
    sizes = [obs] + [hidden] * layers
    heads = hidden * actions + hidden * (actions if critic else 1)
    forward = 2 * (sum(a * b for a, b in itertools.pairwise(sizes)) + heads)
    return forward * (1 + (1 if critic else 0) + 3 * epochs)


def matmul_rate(obs: int, hidden: int, batch: int) -> float:
    """Measured FLOP/s of the update's widest matmuls (forward and backward shapes) on this process's threads."""
    x, w, h = torch.randn(batch, obs), torch.randn(hidden, obs), torch.randn(batch, hidden)
    w2 = torch.randn(hidden, hidden)
    for _ in range(3):
        x @ w.T, h @ w2.T
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < 1.0:
        x @ w.T  # forward, layer 1
        h.T @ x  # its weight gradient
        h @ w2.T  # forward, layer 2
        n += 1
    flops = n * 2 * batch * (obs * hidden * 2 + hidden * hidden)
    return flops / (time.perf_counter() - start)


def measure(module: Any, settings: dict[str, Any], iterations: int, out: Path) -> tuple[float, float]:
    """(decisions per wall second, per CPU second) of ``iterations`` iterations after a warm-up one."""
    base = {"device": "cpu", "preset": "tiny", "out": str(out)}
    if "progress" in {f.name for f in module.Args.__dataclass_fields__.values()}:
        base.update(progress=False, tensorboard=False)
    per = settings["num_envs"] * settings["num_steps"]
    module.main(module.Args(**base, **settings, total_timesteps=per))  # warm-up: compilation, allocations
    wall, cpu = time.perf_counter(), time.process_time()
    module.main(module.Args(**base, **settings, total_timesteps=per * iterations))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return per * iterations / wall, per * iterations / cpu


def main() -> None:
    """Measure and print (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--before", default="c647ee7")
    args = parser.parse_args()
    from krypenv.training import selfplay

    old = old_module(args.before)
    out = Path(tempfile.mkdtemp())
    print(f"{'configuration':36} {'threads':>7} {'dec/s wall':>11} {'dec/CPU-s':>10} {'bound dec/s':>12} "
          f"{'% bound':>8}")
    for _ in range(args.rounds):
        for threads in args.threads:
            rows = [("before (" + args.before + ")", old, BEFORE)] + [(f"after: {k}", selfplay, v)
                                                                    for k, v in AFTER.items()]
            for name, module, settings in rows:
                torch.set_num_threads(threads)
                if module is selfplay:
                    settings = {**settings, "torch_threads": threads}
                wall, cpu = measure(module, settings, args.iterations, out / name.replace(" ", "_"))
                critic = settings.get("update") == "critic"
                batch = settings["num_envs"] * settings["num_steps"] // settings["num_minibatches"]
                bound = matmul_rate(344, settings["hidden"], min(batch, 8192)) / flops_per_decision(
                    344, 105, settings["hidden"], 2, settings["update_epochs"], critic)
                print(f"{name:36} {threads:>7} {wall:>11,.0f} {cpu:>10,.0f} {bound:>12,.0f} "
                      f"{100 * wall / bound:>7.0f}%", flush=True)


if __name__ == "__main__":
    main()
