"""Throughput of the batched Kungsholmskille engine: ``bench_engine(batch, seconds, players=4, seed=0)``.

Measured exactly like Krypkasino's ``krypenv.bench.bench_engine``: B deals are dealt from
freshly shuffled decks (``Deals.reset(rng=...)``) and played to the end by
``Deals.play_random`` (one uniformly random legal move in every unfinished deal per call),
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

from krypenv.kungsholmskille.engine import Deals
from krypenv.kungsholmskille.rules import Rules


def _play_batch(deals: Deals, rng: np.random.Generator) -> int:
    """Deal every deal anew and play them all to the end; return the decisions made."""
    deals.reset(rng=rng)
    while deals.play_random(rng):  # returns how many deals are still unfinished
        pass
    return int(deals.n_moves.sum())


def bench_engine(batch: int, seconds: float, players: int = 4, seed: int = 0) -> dict[str, Any]:
    """Random play at one batch size for about ``seconds`` (at least one timed batch)."""
    deals = Deals(Rules(players), batch)
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
