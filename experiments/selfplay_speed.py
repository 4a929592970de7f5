"""The self-play trainer's speed on ``tiny`` (2 players, CPU): before and after, against its arithmetic bound.

    taskset -c 1 nice python experiments/selfplay_speed.py [--iterations 8] [--rounds 2] [--threads 1] \\
        [--before 846a5ee] [--configs critic ppo] [--numba-threads 0]

In one run, alternating, for ``--rounds`` rounds, for each ``--threads`` (torch's threads; the env's are
``--numba-threads``, numba's default the machine's cores) and each configuration of :data:`CONFIGS`
(``--configs``):

* **before**: the trainer of commit ``--before`` (:mod:`krypenv.training.selfplay` read with ``git show``;
  846a5ee is the one the page "Learners on the small variants" measured its runs with);
* **after**: today's trainer (its defaults: ``compact`` on);

each for ``--iterations`` iterations; the rates are over the iterations after the first (the seconds and CPU
seconds of the trainer's own clock, as its log has them: the env's and networks' construction and the first
iteration's allocations left out).  Printed per row: decisions per wall second and per CPU second (this
process's, every thread), and the **bound**: one more iteration run under a dispatch mode that records every
matrix product (``mm``, ``addmm``: forward and backward, acting, the critic's targets and the update) gives
the network's floating-point operations per decision (2·m·k·n each); those products alone, replayed on random
tensors of the same shapes and strides on the same threads, give the matmul rate here and so the decisions per
CPU second (and per wall second) that the products alone would allow.  ``% bound`` is the achieved rate over
that bound.  On a shared machine the wall figures depend on the neighbours: the CPU-second figures are the
ones to compare, and a quiet machine gives both.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from krypenv.threads import set_torch_threads

ROOT = Path(__file__).resolve().parents[1]
BASE = {"device": "cpu", "preset": "tiny", "hidden": 128, "magnet_every": 0, "progress": False, "tensorboard": False}
CONFIGS = {  # name: (what it is, the trainer's settings)
    "critic": ("the page's sampled learner: MMD's critic update, 2,048 games x 16, 4 epochs of 4 minibatches",
               {"update": "critic", "num_envs": 2048, "num_steps": 16, "update_epochs": 4, "num_minibatches": 4,
                "learning_rate": 1e-3}),
    "ppo": ("the benchmark's ppo default: PPO's loss, no magnet, 512 games x 32, 2 epochs of 4 minibatches",
            {"num_envs": 512, "num_steps": 32, "magnet_coef": 0.0, "learning_rate": 3e-4}),
    "critic-2e": ("the critic update, 4,096 games x 16, 2 epochs of 2 minibatches (not the page's learner)",
                  {"update": "critic", "num_envs": 4096, "num_steps": 16, "update_epochs": 2, "num_minibatches": 2,
                   "learning_rate": 1e-3}),
    "ppo-1e": ("PPO's loss, no magnet, 4,096 games x 16, 1 epoch of 2 minibatches (not the benchmark's ppo)",
               {"num_envs": 4096, "num_steps": 16, "update_epochs": 1, "num_minibatches": 2, "magnet_coef": 0.0,
                "learning_rate": 3e-4}),
}
MATMULS = (torch.ops.aten.mm.default, torch.ops.aten.addmm.default)


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


class Products(TorchDispatchMode):
    """Records every matrix product run under it: (op, its arguments' shapes and strides or values)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[Any, tuple[Any, ...]]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        """Run ``func``; note it if it is a matrix product."""
        if func in MATMULS:
            self.calls.append((func, tuple((tuple(a.shape), a.stride()) if isinstance(a, torch.Tensor) else a
                                           for a in args)))
        return func(*args, **(kwargs or {}))


def flops(calls: list[tuple[Any, tuple[Any, ...]]]) -> float:
    """2·m·k·n summed over the products (the bias of addmm left out)."""
    total = 0.0
    for func, args in calls:
        (m, k), (_, n) = (args[0][0], args[1][0]) if func is MATMULS[0] else (args[1][0], args[2][0])
        total += 2.0 * m * k * n
    return total


def replay(calls: list[tuple[Any, tuple[Any, ...]]], seconds: float = 2.0) -> tuple[float, float]:
    """(CPU, wall) seconds of one pass over the products, on random tensors of their shapes and strides."""
    made: dict[tuple[int, ...], torch.Tensor] = {}

    def tensor(shape: tuple[int, ...], stride: tuple[int, ...]) -> torch.Tensor:
        key = shape + stride
        if key not in made:
            size = 1 + sum((n - 1) * s for n, s in zip(shape, stride))  # broadcast (stride 0) ones too
            made[key] = torch.randn(size).as_strided(shape, stride)
        return made[key]

    runs = [(f, [tensor(*a) if isinstance(a, tuple) else a for a in args]) for f, args in calls]
    for f, args in runs:
        f(*args)
    passes, cpu, wall = 0, time.process_time(), time.perf_counter()
    while time.perf_counter() - wall < seconds:
        for f, args in runs:
            f(*args)
        passes += 1
    return (time.process_time() - cpu) / passes, (time.perf_counter() - wall) / passes


def measure(module: Any, settings: dict[str, Any], iterations: int, out: Path) -> dict[str, float]:
    """Decisions per wall and CPU second after the first iteration; FLOPs per decision and the bound."""
    rows: list[dict[str, Any]] = []
    per = settings["num_envs"] * settings["num_steps"]

    def hook(snapshot: Any) -> bool:
        rows.append(snapshot.row)
        return False

    module.main(module.Args(**settings, total_timesteps=per * iterations, out=str(out)), hook=hook)
    first, last = rows[0], rows[-1]
    decisions = last["decisions"] - first["decisions"]
    got = {"wall": decisions / (last["seconds"] - first["seconds"]),
           "cpu": decisions / (last["cpu_seconds"] - first["cpu_seconds"])}
    products = Products()
    with products:
        module.main(module.Args(**settings, total_timesteps=per, out=str(out / "flops")))
    cpu, wall = replay(products.calls)
    got["mflop"] = flops(products.calls) / per / 1e6
    got["gflops"] = flops(products.calls) / cpu / 1e9
    got["bound_cpu"], got["bound_wall"] = per / cpu, per / wall
    return got


def main() -> None:
    """Measure and print (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, nargs="+", default=[1])
    parser.add_argument("--before", default="846a5ee")
    parser.add_argument("--configs", nargs="+", default=["critic", "ppo"], choices=list(CONFIGS))
    parser.add_argument("--numba-threads", type=int, default=0, help="the env's threads (0: numba's default)")
    args = parser.parse_args()
    if args.numba_threads:
        import numba

        numba.set_num_threads(args.numba_threads)
    from krypenv.training import selfplay

    old = old_module(args.before)
    out = Path(tempfile.mkdtemp())
    import numba

    for name in args.configs:
        print(f"{name}: {CONFIGS[name][0]}")
    print(f"numba's threads: {numba.get_num_threads()}; torch {torch.__version__}")
    print(f"{'configuration':12} {'trainer':16} {'threads':>7} {'dec/s wall':>10} {'dec/CPU-s':>10} "
          f"{'MFLOP/dec':>9} {'GFLOP/CPU-s':>11} {'bound CPU':>10} {'% bound':>7} {'bound wall':>10} {'% wall':>6}",
          flush=True)
    for r in range(args.rounds):
        for threads in args.threads:
            for name in args.configs:
                for label, module in (("before " + args.before, old), ("after", selfplay)):
                    settings = {**BASE, **CONFIGS[name][1], "torch_threads": threads}
                    set_torch_threads(threads)
                    g = measure(module, settings, args.iterations, out / f"{r}-{threads}-{name}-{label[:5]}")
                    print(f"{name:12} {label:16} {threads:>7} {g['wall']:>10,.0f} {g['cpu']:>10,.0f} "
                          f"{g['mflop']:>9.3f} {g['gflops']:>11.1f} {g['bound_cpu']:>10,.0f} "
                          f"{100 * g['cpu'] / g['bound_cpu']:>6.0f}% {g['bound_wall']:>10,.0f} "
                          f"{100 * g['wall'] / g['bound_wall']:>5.0f}%", flush=True)


if __name__ == "__main__":
    main()
