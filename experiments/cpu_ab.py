"""Before and after on a noisy machine: the engine and the VecEnv of two source trees, paired round by round.

    python experiments/cpu_ab.py --before /tmp/krypenv-before --after . [--rounds 8] [--core 1]

Each round runs both trees once, the order alternating, each in a fresh process on one pinned core with one numba
thread; a process does a fixed amount of work after a warm-up: ``--batches`` batches of 4,096 three-player
Krypkasino deals played out at random (the ``engine`` figure of ``krypenv bench``, decisions/s) and ``--steps``
steps of the 2-player VecEnv at 4,096 games with random legal actions (``vec_2p``, steps/s).  The table gives each
tree's median and the after ÷ before ratio taken pair by pair (median, min, max): a drift of the machine's speed
between rounds hits both of a pair alike, so the paired ratio is steadier than a ratio of medians.  A tree is
imported through ``PYTHONPATH`` (its ``krypenv`` package; the workload imports nothing from ``agents``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

WORK = r"""
import json, sys, time
import numpy as np
from krypenv.games import GAMES
from krypenv.krypkasino.bench import _play_batch
from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.rules import Rules
from krypenv.rng import k_pick_legal
batches, steps = int(sys.argv[1]), int(sys.argv[2])
deals, rng = DealBatch(Rules(), 4096), np.random.default_rng(0)
_play_batch(deals, rng)  # warm-up: loads the compiled functions
t = time.perf_counter()
engine = sum(_play_batch(deals, rng) for _ in range(batches)) / (time.perf_counter() - t)
env = GAMES["krypkasino"].part("entry").VecEnv(4096, players=2, seed=0)
env.reset()
actions = np.zeros(4096, np.int64)
def play(n):
    for _ in range(n):
        k_pick_legal(env.action_masks(), rng.random(4096), actions)
        env.step(actions)
play(5)
t = time.perf_counter()
play(steps)
print(json.dumps({"engine": engine, "vec_2p": steps * 4096 / (time.perf_counter() - t)}))
"""

FIGURES = ("engine", "vec_2p")


def measure(tree: Path, core: int, batches: int, steps: int) -> dict[str, float]:
    """One fresh process's figures for ``tree``."""
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONPATH=str(tree))
    done = subprocess.run(["taskset", "-c", str(core), sys.executable, "-c", WORK, str(batches), str(steps)],
                          env=env, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"cpu_ab: the work failed in {tree}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(before: Path, after: Path, rounds: int, core: int, batches: int, steps: int) -> dict[str, dict]:
    """Per figure: each tree's values by round and the paired ratios after ÷ before."""
    got: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for r in range(rounds):
        for name in ("before", "after") if r % 2 == 0 else ("after", "before"):
            got[name].append(measure(before if name == "before" else after, core, batches, steps))
    return {k: {"before": [g[k] for g in got["before"]], "after": [g[k] for g in got["after"]],
                "ratios": [a[k] / b[k] for a, b in zip(got["after"], got["before"], strict=True)]} for k in FIGURES}


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, checked: SystemExit with a one-line message naming a bad option."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", type=Path, required=True, help="the tree before the change")
    p.add_argument("--after", type=Path, default=Path("."), help="the tree after it")
    p.add_argument("--rounds", type=int, default=8, help="rounds, each tree once per round (1 to 100)")
    p.add_argument("--core", type=int, default=1, help="the processor both trees' processes are pinned to")
    p.add_argument("--batches", type=int, default=20, help="engine batches of 4,096 deals per process (1 to 1000)")
    p.add_argument("--steps", type=int, default=150, help="VecEnv steps per process (1 to 100000)")
    a = p.parse_args(argv)
    for flag, value, low, high in (("--rounds", a.rounds, 1, 100), ("--batches", a.batches, 1, 1000),
                                   ("--steps", a.steps, 1, 100_000)):
        if not low <= value <= high:
            raise SystemExit(f"cpu_ab: {flag} must be {low} to {high}")
    if a.core not in os.sched_getaffinity(0):
        raise SystemExit(f"cpu_ab: --core {a.core} is not one of this process's processors")
    for flag, tree in (("--before", a.before), ("--after", a.after)):
        if not (tree / "krypenv" / "__init__.py").is_file():
            raise SystemExit(f"cpu_ab: {flag} {tree} is not a krypenv source tree")
    return a


def main() -> None:
    """Print the table (module docstring)."""
    a = parse()
    result = compare(a.before.resolve(), a.after.resolve(), a.rounds, a.core, a.batches, a.steps)
    print("| figure (one core) | before, median | after, median | after ÷ before, paired median [min, max] |")
    print("|---|---:|---:|---:|")
    for k, r in result.items():
        ratios = r["ratios"]
        print(f"| {k} | {statistics.median(r['before']):,.0f} | {statistics.median(r['after']):,.0f} | "
              f"{statistics.median(ratios):.2f} [{min(ratios):.2f}, {max(ratios):.2f}] |")


if __name__ == "__main__":
    main()
