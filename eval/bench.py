"""Evaluation throughput: the ``eval`` key of ``krypenv bench``.

For each cheap baseline of the default game (its evaluation part's ``BENCH_AGENTS``: for
Krypkasino random, greedy, creeper, expert) a two-player mirror match (the agent against
itself) is played through the duplicate harness exactly as ``krypenv eval --agents A,A
--no-records`` plays it: in this process, batches of 1024 deals on numba's thread pool (all
cores), deals scored and summarised.  One short untimed run first loads the kernels; then the
number of decks is chosen from a calibration run so that the timed run takes about the
requested seconds.  Result::

    {"players": 2, "batch": 1024, "deals_per_s": {"random": ..., "greedy": ..., "creeper": ..., "expert": ...}}

The CLI registers this benchmark (``krypenv`` itself never imports ``eval``).
"""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

from krypenv.eval.play import load_agents

from krypenv.games import DEFAULT_GAME, game

BATCH = 1024


def _rate(evaluation: ModuleType, spec: str, decks: int, players: int) -> float:
    """Games per second of one mirror-match evaluation with ``decks`` duplicate decks."""
    config = evaluation.EvalConfig(agents=(spec, spec), players=players, deals=decks, records=False, batch=BATCH)
    agents = load_agents(list(config.agents), DEFAULT_GAME)
    start = time.perf_counter()
    evaluation.evaluate(config, agents)
    return config.schedule.n_games / (time.perf_counter() - start)


def bench_eval(seconds: float, players: int = 2) -> dict[str, Any]:
    """Deals/s of duplicate evaluation for each cheap baseline of the default game in a mirror match."""
    evaluation = game(DEFAULT_GAME).part("eval")
    rates: dict[str, float] = {}
    for spec in evaluation.BENCH_AGENTS:
        _rate(evaluation, spec, 2, players)  # warm-up: loads or compiles the agent's kernels
        guess = _rate(evaluation, spec, 64, players)
        decks = max(2, int(guess * seconds / players))  # a mirror match has `players` tables per deck
        rates[spec] = _rate(evaluation, spec, decks, players)
    return {"players": players, "batch": BATCH, "deals_per_s": rates}
