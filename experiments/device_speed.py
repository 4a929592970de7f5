"""The GPU speed goals of issue 42 on one lent GPU, after the device check: ``python experiments/device_speed.py``.

    bash experiments/device_run.sh            # on the GPU machine: device_check.py as it is, then this
    python experiments/device_speed.py [--out DIR] [--batches 131072,1048576] [--repeats 15] [--seconds 2]

Each figure follows the device METHOD: an untimed warm-up (compilation or the disk cache's load, module load),
``torch.cuda.synchronize()`` around every timed region, the median of ``--repeats`` timed regions of about
``--seconds / repeats`` each (:mod:`krypenv.bench_device`'s ``engine_row`` and ``env_row``).  Rows and goals:

* Krypkasino's engine, 2 players, random legal play, decisions/s (goal 400M);
* Krypkasino's env, 2 players, observations and masks on the GPU, steps/s (goal 50M);
* Kungsholmskille's env, 4 players, the same (goal 50M);
* first use: a fresh process's ``DeviceVecEnv(65536, device="cuda")``, ``reset`` and first ``step``, timed from
  the process's start to the synchronized step, once per game, twice in a row (the second process finds every
  kernel in numba-cuda's disk cache, :func:`krypenv.envs.cuda.cached`; goal ≤ 10 s).

It prints each row as it comes, a short table last, and writes ``DIR/device_speed.json``.  In the CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``) it runs the same code on tiny batches (tests/cuda/test_device_speed.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOALS = {"krypkasino engine": 400e6, "krypkasino env": 50e6, "kungsholmskille env": 50e6, "first step": 10.0}

FIRST_STEP = r'''
import sys, time
start = float(sys.argv[2])
import torch
from krypenv.games import GAMES
env = GAMES[sys.argv[1]].part("device").DeviceVecEnv(int(sys.argv[3]), device="cuda", seed=0)
obs, info = env.reset()
mask = info["action_mask"]
env.step(mask.float().argmax(dim=1))
from krypenv.envs.cuda import SIMULATOR
if not SIMULATOR:
    torch.cuda.synchronize()
print("FIRST_STEP_SECONDS", time.time() - start)
'''


def first_step(game: str, envs: int) -> float:
    """Seconds from a fresh process's start to its first synchronized ``DeviceVecEnv`` step."""
    start = time.time()
    out = subprocess.run([sys.executable, "-c", FIRST_STEP, game, repr(start), str(envs)], cwd=ROOT,
                         capture_output=True, text=True, check=False, timeout=1200)
    line = next((x for x in out.stdout.splitlines() if x.startswith("FIRST_STEP_SECONDS")), None)
    if out.returncode != 0 or line is None:
        raise RuntimeError(f"first step of {game}: {out.stderr[-1500:]}")
    return float(line.split()[1])


def measure(batches: list[int], repeats: int, seconds: float, first_envs: int) -> dict[str, Any]:
    """Every row of the module docstring."""
    from krypenv.bench_device import engine_row, env_row

    rows: dict[str, Any] = {}

    def keep(name: str, row: dict[str, Any]) -> None:
        rows.setdefault(name, []).append(row)
        print(name, json.dumps(row), flush=True)

    for game in ("krypkasino", "kungsholmskille"):
        for b in batches:
            keep(f"{game} engine", engine_row(game, b, seconds, repeats=repeats, cpu=False))
            keep(f"{game} env", env_row(game, b, seconds, repeats=repeats))
    for game in ("krypkasino", "kungsholmskille"):
        for attempt in ("first process", "second process"):
            keep("first step", {"game": game, "process": attempt, "envs": first_envs,
                                "seconds": round(first_step(game, first_envs), 2)})
    return rows


def table(rows: dict[str, Any]) -> str:
    """The short table: each goal's best figure (first step: the second process's worst) against the goal."""
    lines = [f"{'goal':22} {'measured':>16} {'goal':>12}  verdict   (registers/thread)"]
    for name, goal in GOALS.items():
        got = rows.get(name, [])
        if name == "first step":
            second = [r["seconds"] for r in got if r["process"] == "second process"]
            value = max(second) if second else float("nan")
            ok = value <= goal
            lines.append(f"{name:22} {value:14.1f} s {goal:10.0f} s  {'MET' if ok else 'missed'}")
            continue
        key = "decisions_per_s" if "engine" in name else "steps_per_s"
        best = max(got, key=lambda r: r[key]) if got else {key: float("nan")}
        ok = best[key] >= goal
        lines.append(f"{name:22} {best[key] / 1e6:14.1f} M {goal / 1e6:10.0f} M  {'MET' if ok else 'missed'}   "
                     f"(batch {best.get('batch', '-')}, {best.get('regs_per_thread', '-')} registers)")
    return "\n".join(lines)


def main() -> int:
    """Measure, write the JSON, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "results")))
    parser.add_argument("--batches", default="131072,1048576")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--first-envs", type=int, default=65536)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    from krypenv.envs.cuda import require_cuda

    require_cuda("experiments/device_speed.py")
    rows = measure([int(b) for b in args.batches.split(",")], args.repeats, args.seconds, args.first_envs)
    (args.out / "device_speed.json").write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                                   time.gmtime()), **rows}, indent=1))
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
