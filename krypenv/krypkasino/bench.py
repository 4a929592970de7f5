"""Krypkasino's benchmarks for ``krypenv bench`` (:mod:`krypenv.bench` runs them; importing this registers them).

* ``engine`` (batched: one row per ``--batches`` size B): B three-player deals (``Rules()``)
  are dealt from freshly shuffled decks (``DealBatch.reset(rng=...)``) and played to the end by
  ``DealBatch.play_random`` (a uniformly random legal card, then a uniformly random legal capture
  of it), over and over for about S seconds.  Batches of at least 64 deals run on numba's
  thread pool, i.e. on all cores.  A *decision* is one card played; dealing is part of the
  timed work.  One untimed batch per size first loads or compiles the kernels.  Row:
  ``{"batch", "decisions_per_s", "deals_per_s", "bytes_per_deal"}``.
* ``aec``: the PettingZoo AEC env (``krypenv.env(players=3)``, one game), every step a
  uniform random legal action chosen from the observation's mask, with ``env.last()``,
  observations and masks as a user loop sees them: ``{"players", "steps_per_s"}``.
* ``vec``: the batched VecEnv at 4096 games, 3 players, built-in random opponents, the
  learner's uniform random legal actions picked from ``action_masks()``; every step returns
  observations, rewards, dones, infos and masks: ``{"batch", "players", "steps_per_s"}``
  (a step is one learner decision in one game).  ``vec_2p`` is the same for 2 players.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from krypenv.bench import aec_row, engine_line, engine_row, gpu_engine, register, register_batched, vec_row
from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.rules import Rules

ENGINE_HEADER = "uniformly random legal play, 3 players (Rules()); a decision is one card played"


def _play_batch(deals: DealBatch, rng: np.random.Generator) -> int:
    """Deal every deal anew and play them all to the end; return the decisions played."""
    deals.reset(rng=rng)
    while not deals.done.all():
        deals.play_random(rng)
    return int(deals.n_moves.sum())


def bench_engine(batch: int, seconds: float, rules: Rules | None = None, seed: int = 0) -> dict[str, Any]:
    """Random play at one batch size for about ``seconds`` (at least one batch); one ``engine`` row."""
    return engine_row(DealBatch(rules or Rules(), batch), _play_batch, seconds, seed)


# Each CUDA kernel's register and spill budget on Hopper (krypenv.eval.ptxas, tests/cuda/test_registers.py):
# kernel -> (the built-in policy compiled in, the env's kernel (EnvKernels part), most registers per thread, most
# spilled bytes); today's use (issue 42, 2026-11-27: the engine kernel and the env's act, finish and observe kernels
# within the goal of 128 registers without spills; the built-in seats' loop, ``seats``, still above it: 240 since
# 2026-11-29's one-pass value keys, the same 256 threads per SM as its 231 before; pimc's search, 2026-11-30: its
# buffers, 63 KB of local memory, and spills; one thread searches whole decisions, agents/krypkasino/pimc_cuda.py)
REGISTER_BUDGETS = {"env.act": (None, "act", 128, 0), "env.seats": (None, "seats", 240, 0),
                    "env.finish": (None, "finish", 128, 0), "env.observe": (None, "observe", 128, 0),
                    "env.expert.seats": ("expert", "seats", 255, 16), "engine": (None, None, 125, 0),
                    "search.pimc": (None, None, 255, 5318)}  # pimc's search (device=cuda): its buffers are local
GPU_PLAYERS = 2  # the table of the GPU rows of ``krypenv bench --device cuda`` (krypenv.bench_device)


def gpu_engine_setup(arrays: Any, batch: int, players: int, threads: int) -> tuple[dict[str, Any], Any, int]:
    """The GPU engine benchmark's arrays (krypenv.bench_device): ``batch`` deal records, streams and decision counts
    for ``threads`` threads; the CPU twin's rate at 4096 deals; the bytes of state per deal."""

    from krypenv.krypkasino.engine import kernels
    from krypenv.krypkasino.engine.captures import new_scratch

    rules = Rules(players=players)
    d = DealBatch(rules, 4096)
    ik, isz, lk, lsz = *(np.asarray(a, np.int64) for a in d._initial), *(np.asarray(a, np.int64) for a in d._later)
    st, rng = arrays.empty((batch, d.width), np.int8), arrays.empty(batch, np.uint64)
    dec = arrays.empty(batch, np.int64)
    const = [arrays.to_device(a) for a in (ik, isz, lk, lsz)]

    def launch_args(deals: int) -> tuple[Any, ...]:
        return (st, rng, players, rules.deck_size, *const, False, threads, deals, dec)

    scr_rows = np.stack([new_scratch() for _ in range(d._scr.shape[0])])

    def cpu_play(cpu_rng: np.ndarray, decisions: np.ndarray) -> None:
        kernels.play_deals_par(d.state, cpu_rng, players, rules.deck_size, ik, isz, lk, lsz, False, 1, decisions,
                               scr_rows)

    return gpu_engine(rng, dec, launch_args, d.n, cpu_play, d.nbytes_per_deal)


register_batched("engine", bench_engine, ENGINE_HEADER, engine_line("engine"), game="krypkasino")
register("aec", partial(aec_row, "krypkasino", players=3), game="krypkasino")
register("vec", partial(vec_row, "krypkasino", players=3), game="krypkasino")
register("vec_2p", partial(vec_row, "krypkasino", players=2), game="krypkasino")
