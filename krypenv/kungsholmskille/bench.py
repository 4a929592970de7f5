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

Measured exactly like Krypkasino's ``krypenv.bench.bench_engine``: B deals are dealt from
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

import time
from typing import Any

import numpy as np

from krypenv.bench import aec_steps_per_s, register, register_batched, vec_steps_per_s
from krypenv.kungsholmskille.engine import DealBatch
from krypenv.kungsholmskille.rules import Rules


def _play_batch(deals: DealBatch, rng: np.random.Generator) -> int:
    """Deal every deal anew and play them all to the end; return the decisions made."""
    deals.reset(rng=rng)
    while deals.play_random(rng):  # returns how many deals are still unfinished
        pass
    return int(deals.n_moves.sum())


def bench_engine(batch: int, seconds: float, players: int = 4, seed: int = 0) -> dict[str, Any]:
    """Random play at one batch size for about ``seconds`` (at least one timed batch)."""
    deals = DealBatch(Rules(players), batch)
    rng = np.random.default_rng(seed)
    _play_batch(deals, rng)  # warm-up, not timed: loads or compiles the kernels
    decisions = finished = 0
    start = time.perf_counter()
    while True:
        decisions += _play_batch(deals, rng)
        finished += batch
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    return {
        "batch": batch,
        "players": players,
        "decisions_per_s": decisions / elapsed,
        "deals_per_s": finished / elapsed,
        "bytes_per_deal": deals.nbytes_per_deal,
    }


ENGINE_HEADER = "Kungsholmskille, uniformly random legal play, 4 players; a decision is one move (L17)"


def engine_line(row: dict[str, Any]) -> str:
    """The text line of one ``kille_engine`` row."""
    return (f"kille_engine batch {row['batch']:>5}: {row['decisions_per_s']:>12,.0f} decisions/s  "
            f"{row['deals_per_s']:>10,.0f} deals/s  {row['bytes_per_deal']:>6} bytes/deal")


def bench_aec(seconds: float, players: int = 4, seed: int = 0) -> dict[str, Any]:
    """Steps per second of the AEC env under uniform random legal play (after an untimed warm-up episode)."""
    from krypenv.kungsholmskille.aec import env as aec_env

    return {"players": players, "steps_per_s": aec_steps_per_s(aec_env(players=players), seconds, seed)}


def bench_vec(seconds: float, batch: int = 4096, players: int = 4, seed: int = 0) -> dict[str, Any]:
    """Steps per second of the VecEnv (one step = one learner decision in one game) under random play."""
    from krypenv.kungsholmskille.vec import KungsholmskilleVecEnv

    env = KungsholmskilleVecEnv(batch, players=players, seed=seed)
    return {"batch": batch, "players": players, "steps_per_s": vec_steps_per_s(env, seconds, seed)}


register_batched("kille_engine", bench_engine, ENGINE_HEADER, engine_line)
register("kille_aec", bench_aec)
register("kille_vec", bench_vec)
