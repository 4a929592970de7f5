"""Compile krypenv's CPU kernels into numba's on-disk cache, in parallel processes, before a timed job uses them.

    python experiments/warm_numba.py            # every CPU group at once, one process each
    python experiments/warm_numba.py vec-krypkasino device-kungsholmskille
    python experiments/warm_numba.py --cuda     # on a GPU: every CPU group and every CUDA kernel group at once

numba compiles a CPU kernel on its first call and caches the machine code on disk for the next
process (keyed by the CPU, so a new machine compiles afresh: two to three minutes of one core for
everything).  Each group below exercises one path on a tiny batch; run side by side, the groups
use every core, so a job that follows (experiments/device_check.py on a lent GPU) loads instead of
compiling.  Prints each group's seconds.

The ``cuda-*`` groups do the same for the GPU's kernels (numba-cuda's disk cache,
:func:`krypenv.envs.cuda.cached`): each compiles, in its own process, the kernels of one built-in
policy of one game (the device env with random, ``expert`` or no built-in seats; the engine's
benchmark kernel with the action-picking one), the ones experiments/device_check.py and
experiments/device_speed.py launch.  Compiled one after another they took most of a lease's
minutes (docs/results/gpu.md); side by side they take as long as the slowest.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np


def _vec(game: str, n: int, **kw: object) -> None:
    """The SB3 VecEnv's paths (serial and parallel drivers), random opponents."""
    from krypenv.games import GAMES
    from krypenv.rng import k_pick_legal

    for size in (4, n):
        env = GAMES[game].part("entry").VecEnv(size, seed=0, **kw)
        env.reset()
        acts = np.zeros(size, np.int64)
        for _ in range(3):
            k_pick_legal(env.action_masks(), np.random.default_rng(0).random(size), acts)
            env.step(acts)


def _device(game: str, opponents: object = "self") -> None:
    """The device env's CPU drivers (serial and parallel), self-play and external agents."""
    from krypenv import agents
    from krypenv.games import GAMES

    cls = GAMES[game].part("device").DeviceVecEnv
    for size in (4, 128):
        for opp in (opponents, [agents.load("expert", game=game), "random"]):
            env = cls(size, device="cpu", players=3, opponents=opp, seed=0)
            _, info = env.reset()
            for _ in range(3):
                _, *_, info = env.step(info["action_mask"].numpy().argmax(1))


def _engines() -> None:
    """The engine benchmark's CPU twins and the expert agents on the VecEnv."""
    from krypenv import agents
    from krypenv.games import GAMES

    for game in GAMES:
        bench = GAMES[game].part("bench")
        setup = getattr(bench, "gpu_engine_setup", None)
        del setup  # the CPU twin compiles inside the GPU benchmark's setup; warm it directly below
        entry = GAMES[game].part("entry")
        env = entry.VecEnv(64, players=3, opponents=[agents.load("expert", game=game), "random"], seed=0)
        env.reset()
        for _ in range(2):
            env.step(env.action_masks().argmax(1).astype(np.int64))
    from krypenv.krypkasino.engine import DealBatch, kernels
    from krypenv.krypkasino.engine.captures import new_scratch
    from krypenv.krypkasino.rules import Rules
    from krypenv.kungsholmskille.engine import DealBatch as KilleDeals
    from krypenv.kungsholmskille.engine import drivers
    from krypenv.kungsholmskille.rules import Rules as KilleRules
    from krypenv.rng import seed_range

    d = DealBatch(Rules(players=2), 64)
    ik, isz, lk, lsz = *(np.asarray(a, np.int64) for a in d._initial), *(np.asarray(a, np.int64) for a in d._later)
    kernels.play_deals_par(d.state, seed_range(0, 64), 2, 104, ik, isz, lk, lsz, False, 1, np.zeros(64, np.int64),
                           np.stack([new_scratch() for _ in range(2)]))
    k = KilleDeals(KilleRules(4), 64)
    drivers.play_deals_par(k.state, k.cash, seed_range(0, 64), 4, 1, np.zeros(64, np.int64), 2)


def _cuda_env(game: str, opponents: str) -> None:
    """The device env's CUDA kernel for one kind of built-in seats, launched on a GPU (RESET, STEP, OBSERVE)."""
    from krypenv import agents
    from krypenv.games import GAMES

    opp: object = [agents.load("expert", game=game), "random"] if opponents == "expert" else opponents
    env = GAMES[game].part("device").DeviceVecEnv(256, device="cuda", players=3, opponents=opp, seed=0)
    _, info = env.reset()
    for _ in range(3):
        _, *_, info = env.step(info["action_mask"].float().argmax(1))


def _cuda_engine(game: str) -> None:
    """The engine benchmark's kernel and the action-picking kernel of the env benchmark, on a GPU."""
    from krypenv.bench_device import engine_row, env_row

    engine_row(game, 256, 0.01, repeats=1, cpu=False)
    env_row(game, 256, 0.01, repeats=1)


GROUPS: dict[str, Callable[[], None]] = {
    "vec-krypkasino": lambda: _vec("krypkasino", 128, players=2),
    "vec-kungsholmskille": lambda: _vec("kungsholmskille", 128, players=4),
    "device-krypkasino": lambda: _device("krypkasino"),
    "device-kungsholmskille": lambda: _device("kungsholmskille"),
    "engines": _engines,
}
CUDA_GROUPS: dict[str, Callable[[], None]] = {
    f"cuda-{game}-{kind}": (lambda game=game, kind=kind: _cuda_engine(game) if kind == "engine"
                            else _cuda_env(game, kind))
    for game in ("krypkasino", "kungsholmskille") for kind in ("random", "expert", "self", "engine")
}


def main(argv: list[str]) -> int:
    """Run the named groups (all by default), each in its own process at once; the exit status is the worst."""
    if len(argv) == 2 and argv[0] == "--group":
        start = time.perf_counter()
        {**GROUPS, **CUDA_GROUPS}[argv[1]]()
        print(f"{argv[1]}: {time.perf_counter() - start:.0f} s", flush=True)
        return 0
    names = [*GROUPS, *CUDA_GROUPS] if argv == ["--cuda"] else argv or list(GROUPS)
    unknown = sorted(set(names) - set(GROUPS) - set(CUDA_GROUPS))
    if unknown:
        print(f"warm_numba: unknown group(s) {unknown}; groups: {[*GROUPS, *CUDA_GROUPS]}", file=sys.stderr)
        return 2
    procs = [subprocess.Popen([sys.executable, __file__, "--group", name]) for name in names]
    return max(p.wait() for p in procs)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
