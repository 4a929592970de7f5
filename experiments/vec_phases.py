"""Where a VecEnv step's time goes, phase by phase, per game step: the profile behind issue 42's CPU goal.

    python experiments/vec_phases.py [--games 4096] [--steps 100] [--rounds 5] [--players 2]

A VecEnv step (:class:`krypenv.envs.vec.GameVecEnv` with built-in opponents) is one compiled call, ``step_all``.  Its
phases are also drivers of their own, the ones the step takes when an opponent is an agent object: ``step`` (the
learners' actions, then the built-in opponents' moves and the deal's bookkeeping until a learner is to act again),
``finish`` (rewards, terminal observations, auto-reset) and ``observe`` (every game's observation and mask).  This
times each phase on its own over ``--steps`` steps of ``--games`` games (uniformly random legal actions, ``pick``:
the mask's read and the pick, as the benchmark's loop does), and ``step_all``, the fused call, on the same games,
on one numba thread.  It prints the median over ``--rounds`` rounds of nanoseconds per game step, for each game
at ``--players`` (Kungsholmskille at 4 when 2 is asked, its benchmark's table).

``--noalias`` compiles every function afresh (an empty cache folder of its own) with numba's ``noalias`` flag: each
array argument is declared to overlap no other, so LLVM may reorder any load and store.  That is not true of the
engines in general (two views of one record), so it is an experiment, never the library's setting: the bound on what
knowing that arrays do not overlap could give (docs/results/benchmark.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

if __name__ == "__main__":  # one numba thread, set before numba starts; never when a test imports this module (its
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # process's later reloads of numba's config would then fail)

import numpy as np

from krypenv.games import GAMES
from krypenv.rng import k_pick_legal

PHASES = ("pick", "step", "finish", "observe", "step_all")


def phases(game: str, games: int, steps: int, players: int, seed: int = 0) -> dict[str, float]:
    """Seconds per game step of each phase (:data:`PHASES`) over ``steps`` steps of ``games`` games."""
    env = GAMES[game].part("entry").VecEnv(games, players=players, seed=seed)
    env.reset()
    core, rng = env.core, np.random.default_rng(seed)
    actions = np.zeros(games, np.int64)
    spent = dict.fromkeys(PHASES, 0.0)
    for fused in (False, True):
        for _ in range(steps):
            t0 = time.perf_counter()
            k_pick_legal(env._masks.astype(bool), rng.random(games), actions)
            t1 = time.perf_counter()
            if fused:
                core.step_all(actions, False, env._status, env._rewards, env._ends, env._final, env._obs,
                              env._masks, env._term_obs, env._term_masks)
                spent["step_all"] += time.perf_counter() - t1
            else:
                core.step_learners(actions, False, env._status)
                t2 = time.perf_counter()
                core.finish(env._rewards, env._ends, env._final, env._term_obs, env._term_masks)
                t3 = time.perf_counter()
                core.observe_all(env._obs, env._masks)
                t4 = time.perf_counter()
                spent["pick"] += t1 - t0
                spent["step"] += t2 - t1
                spent["finish"] += t3 - t2
                spent["observe"] += t4 - t3
            core.episodes[env._dones()] += 1
    return {k: v / (steps * games) for k, v in spent.items()}


def compile_without_aliasing(cache: str) -> None:
    """From now on, compile every numba function with the ``noalias`` flag, caching in the folder ``cache``."""
    import numba
    from numba.core import cpu

    numba.config.CACHE_DIR = cache
    finalize = cpu.CPUTargetOptions.finalize

    def with_noalias(self: object, flags: object, options: object) -> None:
        finalize(self, flags, options)
        flags.noalias = True  # numba then marks every array argument's data pointer noalias (callconv)

    cpu.CPUTargetOptions.finalize = with_noalias


def main() -> None:
    """Print the table of the median nanoseconds per game step of each phase, per game."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=4096)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--noalias", action="store_true", help="compile with numba's noalias flag (an experiment)")
    a = p.parse_args()
    if min(a.games, a.steps, a.rounds) < 1:
        raise SystemExit("--games, --steps and --rounds must be at least 1")
    if a.noalias:
        compile_without_aliasing(tempfile.mkdtemp(prefix="noalias-"))
    print("| game | players | " + " | ".join(PHASES) + " | step + finish + observe |")
    print("|---|---:|" + "---:|" * (len(PHASES) + 1))
    for game in GAMES:
        players = a.players if game == "krypkasino" else 4
        phases(game, min(a.games, 64), 2, players)  # warm-up: loads the compiled drivers
        rounds = [phases(game, a.games, a.steps, players, seed=r) for r in range(a.rounds)]
        med = {k: statistics.median(r[k] for r in rounds) * 1e9 for k in PHASES}
        split = med["step"] + med["finish"] + med["observe"]
        print(f"| {game} | {players} | " + " | ".join(f"{med[k]:,.0f}" for k in PHASES) + f" | {split:,.0f} |")


if __name__ == "__main__":
    main()
