"""pimc's labels on a GPU (``device=cuda``) against the CPU's: the same values, and labels per second of each.

    python experiments/device_labels.py --out results/labels                  # on a lent GPU (device_run.sh labels)
    NUMBA_ENABLE_CUDASIM=1 python experiments/device_labels.py --games 6 --samples 2 --steps 2 --out /tmp/l

The games are a distillation shard's (:func:`krypenv.training.distill.shard_seeds`, seed 1, iteration 0, shard 0):
``--games`` 2-player Krypkasino games, the teacher's own action played at every decision.  Each step labels every
game's pending decision with the teacher ``pimc:samples=S,z=1`` (today's ``champion`` without its last-round solver):

1. **the same labels**: at the first step, the device's values and actions against the CPU's (numba's threads, the
   same uniforms), every decision, bit for bit;
2. **labels per second**: the device's, step by step after the check, median and total; the CPU's over the first
   step (all its cores).  Both agents are first called on two other games (``first_call_s``: numba-cuda compiles
   the kernel there, or loads it from its disk cache), so no compile is timed.

A decision with one legal move is not searched (no label); the rates count the labels, as the labeller does.  The
table comes last; ``OUT/device_labels.json`` holds it.  The machine, the date and the command go with any figure
published from it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

from krypenv import agents
from krypenv.agent_api import check_actions
from krypenv.training import distill as D


def core_of(games: int):
    """The shard's games, reset (seed 1, iteration 0, shard 0)."""
    core = D.training_part("krypkasino").distill_core(2, "standard", games)
    core.seed(D.shard_seeds(1, 0, 0, games))
    core.reset()
    return core


def labels_in(values: np.ndarray) -> int:
    """Searched decisions (a row with a value): the labels a step makes."""
    return int((~np.isnan(values)).any(axis=1).sum())


def main(argv: list[str] | None = None) -> dict:
    """Run both measurements; print and write the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=2048, help="games of the shard: decisions per step (1 to 65,536)")
    p.add_argument("--samples", type=int, default=256, help="pimc's worlds per decision (1 to 256)")
    p.add_argument("--steps", type=int, default=6, help="steps labelled on the device after the check (1 to 200)")
    p.add_argument("--out", required=True, help="folder for device_labels.json")
    a = p.parse_args(argv)
    for name, lo, hi in (("games", 1, 65_536), ("samples", 1, 256), ("steps", 1, 200)):
        if not lo <= getattr(a, name) <= hi:
            p.error(f"--{name} must be from {lo:,} to {hi:,}, got {getattr(a, name)}")
    spec = f"pimc:samples={a.samples},z=1"
    cpu, gpu = agents.load(spec), agents.load(spec + ",device=cuda")
    core = core_of(a.games)
    status = np.empty(a.games, np.int64)
    command = "python experiments/device_labels.py " + " ".join(sys.argv[1:] if argv is None else argv)
    row: dict = {"teacher": spec, "games": a.games, "cpu_threads": numba.get_num_threads(),
                 "date": time.strftime("%Y-%m-%d"), "command": command}
    warm = core_of(2)  # first calls on two games: numba's CPU code loaded, the kernel compiled (or loaded)
    warm_batch = warm.decisions(*warm.pending())
    t = time.perf_counter()
    gpu.values(warm_batch)
    row["first_call_s"] = round(time.perf_counter() - t, 2)
    cpu.values(warm_batch)
    rates, labels, seconds = [], 0, 0.0
    for step in range(a.steps + 1):
        envs, seats = core.pending()
        if envs.size == 0:
            break
        batch = core.decisions(envs, seats)
        saved = core.rng.copy()
        t = time.perf_counter()
        values, acts = gpu.values(batch)  # the copy back to the host waits for the kernel
        dt = time.perf_counter() - t
        n = labels_in(values)
        if step == 0:  # the check, and the CPU's rate
            after = core.rng.copy()
            core.rng[:] = saved
            t = time.perf_counter()
            want, want_acts = cpu.values(batch)
            cpu_s = time.perf_counter() - t
            assert np.array_equal(core.rng, after)
            row["same_labels"] = bool(np.array_equal(want, values, equal_nan=True) and np.array_equal(want_acts, acts))
            row["checked_decisions"] = len(batch)
            row["cpu_labels_per_s"] = round(n / cpu_s, 1)
        else:
            rates.append(n / dt)
            labels += n
            seconds += dt
        played = check_actions("device_labels", batch, acts)
        core._act_external(envs, played, status[:envs.size])
    row["device_steps"] = len(rates)
    row["device_labels"] = labels
    row["device_labels_per_s_median"] = round(statistics.median(rates), 1) if rates else None
    row["device_labels_per_s_total"] = round(labels / seconds, 1) if seconds else None
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "device_labels.json").write_text(json.dumps(row, indent=1) + "\n")
    print("| " + " | ".join(row) + " |\n|" + "---|" * len(row) + "\n| " + " | ".join(str(v) for v in row.values())
          + " |")
    return row


if __name__ == "__main__":
    main()
