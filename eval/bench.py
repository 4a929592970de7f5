"""Evaluation throughput: the ``eval`` key of ``krypenv bench``.

For each cheap baseline (random, greedy, creeper, expert) a two-player mirror match (the
agent against itself) is played through the duplicate harness exactly as ``krypenv eval
--agents A,A --no-records`` plays it: in this process, batches of 1024 deals on numba's
thread pool (all cores), deals scored and summarised.  One short untimed run first loads
the kernels; then the number of decks is chosen from a calibration run so that the timed
run takes about the requested seconds.  Result::

    {"players": 2, "batch": 1024, "deals_per_s": {"random": ..., "greedy": ..., "creeper": ..., "expert": ...}}

The CLI registers this benchmark (``krypenv`` itself never imports ``eval``).
"""

from __future__ import annotations

import time
from typing import Any

from krypenv.eval.duplicate import EvalConfig, evaluate
from krypenv.eval.play import load_agents

CHEAP_AGENTS = ("random", "greedy", "creeper", "expert")
BATCH = 1024


def _rate(spec: str, decks: int, players: int) -> float:
    """DealBatch per second of one mirror-match evaluation with ``decks`` duplicate decks."""
    config = EvalConfig(agents=(spec, spec), players=players, deals=decks, records=False, batch=BATCH)
    agents = load_agents(list(config.agents))
    start = time.perf_counter()
    evaluate(config, agents)
    return config.schedule.n_games / (time.perf_counter() - start)


def bench_eval(seconds: float, players: int = 2) -> dict[str, Any]:
    """DealBatch/s of duplicate evaluation for each cheap baseline in a mirror match."""
    rates: dict[str, float] = {}
    for spec in CHEAP_AGENTS:
        _rate(spec, 2, players)  # warm-up: loads or compiles the agent's kernels
        guess = _rate(spec, 64, players)
        decks = max(2, int(guess * seconds / players))  # a mirror match has `players` tables per deck
        rates[spec] = _rate(spec, decks, players)
    return {"players": players, "batch": BATCH, "deals_per_s": rates}
