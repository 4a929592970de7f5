"""Instructions per decision or env step (valgrind's callgrind), of one or two source trees: CPU speed that a shared,
noisy machine cannot spoil.

    python experiments/instructions.py --before /tmp/krypenv-before --after . [--workloads engine,vec_2p,aec]

Each workload runs in a fresh interpreter under ``valgrind --tool=callgrind --instr-atstart=no``: imports, the
numba cache's loading and a warm-up run at full speed without instrumentation, then a fixed amount of work between
``CALLGRIND_START_INSTRUMENTATION`` and ``CALLGRIND_STOP_INSTRUMENTATION`` (a tiny C helper, built here with the
system's cc and valgrind's header), so the count is that work's alone, numba's threads included (one thread:
``NUMBA_NUM_THREADS=1``, the per-core figure).  Same seeds, same work in both trees: the figures differ only by
the code.  Workloads (the units of ``krypenv bench``'s rows):

* ``engine``/``kille_engine``: 256 deals dealt and played out by uniformly random legal moves (``DealBatch``,
  Krypkasino with 3 players, Kungsholmskille with 4), per decision;
* ``vec_2p``/``vec``/``kille_vec``: the VecEnv (256 games; 2, 3 and 4 players), random legal actions from its
  masks, per step of one game;
* ``aec``/``kille_aec``: the PettingZoo AEC env with ``env.last()`` and observations, per step.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_compare import FINDER

HELPER = r"""
#include <valgrind/callgrind.h>
void start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void stop(void) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT("work"); }
"""

# One workload's set-up in a child process: ``name`` (argv[1]) and a function ``run()`` that does one unit of work and
# returns how many decisions or steps it made (experiments/profile_jit.py runs the same workloads under perf).
WORKLOAD = r'''
import os, sys
import numpy as np
from krypenv.games import GAMES
from krypenv.rng import k_pick_legal
name = sys.argv[1]
game = "kungsholmskille" if name.startswith("kille_") else "krypkasino"
kind = name.removeprefix("kille_")
entry = GAMES[game].part("entry")
rng = np.random.default_rng(0)
if kind == "engine":
    from krypenv.games import GAMES as G
    mod = __import__(f"krypenv.{game}.engine", fromlist=["DealBatch"])
    rules = __import__(f"krypenv.{game}.rules", fromlist=["Rules"]).Rules
    deals = mod.DealBatch(rules(3) if game == "krypkasino" else rules(4), 256)
    def run():
        deals.reset(rng=rng)
        while not deals.done.all():
            deals.play_random(rng)
        return int(deals.n_moves.sum())
elif kind.startswith("vec"):
    players = {"vec_2p": 2, "vec": 3}.get(kind, 4) if game == "krypkasino" else 4
    env = entry.VecEnv(256, players=players, seed=0)
    env.reset()
    actions = np.zeros(env.num_envs, np.int64)
    def run():
        for _ in range(8):
            k_pick_legal(env.action_masks(), rng.random(env.num_envs), actions)
            env.step(actions)
        return 8 * env.num_envs
else:
    env = entry.env(players=3 if game == "krypkasino" else 4)
    pick = np.zeros(1, np.int64)
    env.reset(seed=0)
    def run():
        steps = 0
        while steps < 400:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                if not env.agents:
                    env.reset()
                continue
            k_pick_legal(obs["action_mask"][None, :], rng.random(1), pick)
            env.step(int(pick[0]))
            steps += 1
        return steps
'''

CHILD = WORKLOAD + r'''
import ctypes
cg = ctypes.CDLL(os.environ["CALLGRIND_HELPER"])
units = int(sys.argv[2])
run()  # warm-up: the numba cache loads, first calls
done = 0
cg.start()
for _ in range(units):
    done += run()
cg.stop()
print("UNITS", done)
'''

WORKLOADS = ("engine", "vec_2p", "vec", "aec", "kille_engine", "kille_vec", "kille_aec")


def helper(folder: Path) -> Path:
    """The client-request helper as a shared library."""
    src, lib = folder / "cg.c", folder / "libcg.so"
    src.write_text(HELPER)
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


def count(tree: Path, workload: str, units: int, site: Path, lib: Path) -> tuple[int, int]:
    """(instructions, units of work) of ``workload`` in ``tree`` under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        env = dict(os.environ, KRYPENV_TREE=str(tree), PYTHONPATH=str(site), CALLGRIND_HELPER=str(lib),
                   NUMBA_NUM_THREADS="1")
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                               sys.executable, "-c", CHILD, workload, str(units)], cwd=tree, env=env,
                              capture_output=True, text=True, check=False)
        done = re.search(r"UNITS (\d+)", proc.stdout)
        dumps = [d.read_text() for d in sorted(Path(tmp).glob("cg.out*"))]
        totals = [int(m[1]) for d in dumps if (m := re.search(r"^totals: (\d+)", d, re.MULTILINE))
                  and re.search(r"^desc: Trigger: Client Request: work", d, re.MULTILINE)]
        if proc.returncode != 0 or not done or not totals:
            raise RuntimeError(f"{workload} in {tree}: {proc.stderr[-2000:]}")
        return totals[0], int(done[1])


def main() -> None:
    """Print instructions per unit for each workload and tree (and after/before)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path)
    parser.add_argument("--after", type=Path, default=Path("."))
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--units", type=int, default=2, help="runs of each workload's unit of work to count")
    args = parser.parse_args()
    trees = {k: v.resolve() for k, v in (("before", args.before), ("after", args.after)) if v is not None}
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp)
        (site / "sitecustomize.py").write_text(FINDER)
        lib = helper(site)
        print(f"{'workload':14} " + " ".join(f"{k + ' instr/unit':>20}" for k in trees) +
              ("  after/before" if len(trees) == 2 else ""), flush=True)
        for w in args.workloads.split(","):
            per = {}
            for label, tree in trees.items():
                instr, done = count(tree, w, args.units, site, lib)
                per[label] = instr / done
            ratio = f"  {per['after'] / per['before']:12.3f}" if len(per) == 2 else ""
            print(f"{w:14} " + " ".join(f"{v:20,.0f}" for v in per.values()) + ratio, flush=True)


if __name__ == "__main__":
    main()
