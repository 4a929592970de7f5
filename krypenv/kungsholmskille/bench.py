"""Kungsholmskille's benchmarks for ``krypenv bench`` (importing this registers them).

* ``kille_engine`` (batched, one row per ``--batches`` size): ``bench_engine(batch, seconds,
  players=4, seed=0)``, described below.
* ``kille_aec``: the PettingZoo AEC env (``kungsholmskille_v0.env(players=4)``, one game), a
  uniform random legal action from the observation's mask every step, with ``env.last()``
  as a user loop sees it: ``{"players", "steps_per_s"}``.
* ``kille_vec``: the batched VecEnv at 4096 games, 4 players, built-in random opponents,
  the learner's random legal actions picked from ``action_masks()``; every step returns
  observations, rewards, dones, infos and masks: ``{"batch", "players", "steps_per_s"}``.

The engine benchmark:

Measured as every game's engine (:func:`krypenv.bench.engine_row`): B deals are dealt from
freshly shuffled decks (``DealBatch.reset(rng=...)``) and played to the end by
``DealBatch.play_random`` (one uniformly random legal move in every unfinished deal per call),
over and over for about ``seconds``; one untimed batch first loads or compiles the kernels.
A *decision* is one move of one deal (a call, a fold decision, an exchange, a card played or
a show call, L17); dealing is part of the timed work.  Batches of at least 64 deals run on
numba's thread pool.  A deal's length varies (a budrunda in the first call takes P moves, a
showdown up to 9P − 1), so decisions/s and deals/s are both reported::

    >>> bench_engine(256, 3.0)
    {"batch": 256, "players": 4, "decisions_per_s": ..., "deals_per_s": ..., "bytes_per_deal": 832}
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from krypenv.bench import aec_row, engine_line, engine_row, gpu_engine, register, register_batched, vec_row
from krypenv.kungsholmskille.engine import DealBatch
from krypenv.kungsholmskille.rules import Rules

ENGINE_HEADER = "Kungsholmskille, uniformly random legal play, 4 players; a decision is one move (L17)"


def _play_batch(deals: DealBatch, rng: np.random.Generator) -> int:
    """Deal every deal anew and play them all to the end; return the decisions made."""
    deals.reset(rng=rng)
    while deals.play_random(rng):  # returns how many deals are still unfinished
        pass
    return int(deals.n_moves.sum())


def bench_engine(batch: int, seconds: float, players: int = 4, seed: int = 0) -> dict[str, Any]:
    """Random play at one batch size for about ``seconds`` (at least one timed batch)."""
    return engine_row(DealBatch(Rules(players), batch), _play_batch, seconds, seed, players=players)


# Each CUDA kernel's register and spill budget on Hopper (krypenv.eval.ptxas, tests/cuda/test_registers.py):
# kernel -> (the built-in policy compiled in, the env's kernel (EnvKernels part), most registers per thread, most
# spilled bytes). Today's use (issue 42, 2026-11-27): with each thread's scratch a local array the engine kernel fell
# from 236 to 128 registers (512 threads/SM); the env's one kernel then rose from 210 to 255 with 8 bytes spilled, and
# split in four (act, seats, finish, observe; docs/results/gpu.md) its parts use 60, 144, 136 and 128 registers with
# nothing spilled (384 to 1,024 threads/SM), the expert's seats 255 with 256 bytes spilled (from 1,152).
REGISTER_BUDGETS = {"env.act": (None, "act", 60, 0), "env.seats": (None, "seats", 144, 0),
                    "env.finish": (None, "finish", 136, 0), "env.observe": (None, "observe", 128, 0),
                    "env.expert.seats": ("expert", "seats", 255, 256), "engine": (None, None, 128, 0)}
GPU_PLAYERS = 4  # the table of the GPU rows of ``krypenv bench --device cuda`` (krypenv.bench_device)


def gpu_engine_setup(arrays: Any, batch: int, players: int, threads: int) -> tuple[dict[str, Any], Any, int]:
    """The GPU engine benchmark's arrays (krypenv.bench_device): ``batch`` deal records and cash rows, streams and
    decision counts for ``threads`` threads; the CPU twin's rate at 4096 deals; the bytes of state per deal."""

    from krypenv.kungsholmskille.engine import drivers

    d = DealBatch(Rules(players), 4096)
    st, cash = arrays.empty((batch, d.state.shape[1]), d.state.dtype), arrays.empty((batch, d.cash.shape[1]),
                                                                                     d.cash.dtype)
    rng, dec = arrays.empty(batch, np.uint64), arrays.empty(batch, np.int64)

    def launch_args(deals: int) -> tuple[Any, ...]:
        return (st, cash, rng, players, deals, threads, dec)

    def cpu_play(cpu_rng: np.ndarray, decisions: np.ndarray) -> None:
        drivers.play_deals_par(d.state, d.cash, cpu_rng, players, 1, decisions, d._chunks)

    return gpu_engine(rng, dec, launch_args, d.n, cpu_play, d.nbytes_per_deal)


register_batched("kille_engine", bench_engine, ENGINE_HEADER, engine_line("kille_engine"), game="kungsholmskille")
register("kille_aec", partial(aec_row, "kungsholmskille", players=4), game="kungsholmskille")
register("kille_vec", partial(vec_row, "kungsholmskille", players=4), game="kungsholmskille")
