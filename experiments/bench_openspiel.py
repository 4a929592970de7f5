"""The CPU goals of issue 42, per core, side by side with OpenSpiel in one run (one or two source trees).

    python experiments/bench_openspiel.py --before /tmp/krypenv-before --after . --rounds 3 --seconds 3

Every round, interleaved (the order alternating between rounds, so a drift of the machine's speed hits all alike):
``krypenv bench --json --batches 4096`` of each tree on one numba thread (``NUMBA_NUM_THREADS=1``), then the two
OpenSpiel references on one core:

* **OpenSpiel C++**: Hearts (4 players) played by OpenSpiel's C++ uniform random bots in C++
  (``pyspiel.evaluate_bots``), decisions per second (64 a game: three passed cards each and 52 played);
* **OpenSpiel Python with observations**: Hearts stepped from Python as a user loop does it, the acting player's
  ``information_state_tensor`` (Hearts has no ``observation_tensor`` in OpenSpiel: ``ObservationTensorShape
  unimplemented``) and ``legal_actions`` at every decision, a uniform random legal action, decisions/s.

Goals (issue 42): the engine (Krypkasino, 3 players, batch 4096) ≥ 2.0× OpenSpiel C++; the VecEnv (2 players,
4096 games) ≥ 0.5× OpenSpiel C++; the AEC env (3 players, observations) ≥ 10× OpenSpiel Python.  The table gives
each figure's median over rounds, the spread (max/min − 1) and the ratio to its reference per tree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_compare import FINDER, bench, figures, interleaved

GOALS = {  # figure of `krypenv bench --json` -> (reference, goal ratio)
    "engine[4096].decisions_per_s": ("openspiel_cpp", 2.0),
    "vec_2p.steps_per_s": ("openspiel_cpp", 0.5),
    "aec.steps_per_s": ("openspiel_python", 10.0),
}

REFERENCE = r'''
import sys, time
import numpy as np
import pyspiel
seconds, which = float(sys.argv[1]), sys.argv[2]
game = pyspiel.load_game("hearts")
rng = np.random.default_rng(0)
decisions, start = 0, time.perf_counter()
if which == "openspiel_cpp":
    bots = [pyspiel.make_uniform_random_bot(p, 100 + p) for p in range(game.num_players())]
    k = 0
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        pyspiel.evaluate_bots(state, bots, k)
        decisions += 64  # 4 x 3 passed cards + 52 played (every Hearts game)
        k += 1
else:
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(outcomes[int(rng.integers(len(outcomes)))])
                continue
            player = state.current_player()
            state.information_state_tensor(player)
            legal = state.legal_actions(player)
            state.apply_action(legal[int(rng.integers(len(legal)))])
            decisions += 1
print(decisions / (time.perf_counter() - start))
'''


def reference(which: str, seconds: float) -> float:
    """Decisions/s of one OpenSpiel reference on one core, in a fresh interpreter."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", REFERENCE, str(seconds), which], env=env, check=True,
                         capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    """Run the rounds and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path)
    parser.add_argument("--after", type=Path, default=Path("."))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    trees = {k: v.resolve() for k, v in (("before", args.before), ("after", args.after)) if v is not None}
    os.environ["NUMBA_NUM_THREADS"] = "1"  # per core: numba's pool of one thread (bench() passes the environment on)
    runs: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp)
        (site / "sitecustomize.py").write_text(FINDER)
        for tree in trees.values():  # warm-up: compile and cache every kernel, untimed
            bench(tree, 0.2, "4096", site)

        def measure(label: str) -> dict[str, float] | float:
            """A tree's figures, or a reference's decisions/s."""
            if label in trees:
                return figures(bench(trees[label], args.seconds, "4096", site))
            return reference(label, args.seconds)

        measured = interleaved(list(trees) + ["openspiel_cpp", "openspiel_python"], args.rounds, measure)
    for label, values in measured.items():
        if label in trees:
            for name in GOALS:
                runs[f"{label}:{name}"] = [flat[name] for flat in values]
        else:
            runs[label] = values
    med = {k: statistics.median(v) for k, v in runs.items()}
    noise = {k: max(v) / min(v) - 1 for k, v in runs.items()}
    load = os.getloadavg()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {args.rounds} rounds of {args.seconds} s, one core "
          f"each; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for ref in ("openspiel_cpp", "openspiel_python"):
        print(f"{ref:40} {med[ref]:14,.0f} decisions/s  noise {noise[ref]:5.0%}")
    for name, (ref, goal) in GOALS.items():
        for label in trees:
            key = f"{label}:{name}"
            ratio = med[key] / med[ref]
            print(f"{key:40} {med[key]:14,.0f} /s  noise {noise[key]:5.0%}  {ratio:5.2f}x {ref} "
                  f"(goal {goal}x: {'MET' if ratio >= goal else 'missed'})")


if __name__ == "__main__":
    main()
