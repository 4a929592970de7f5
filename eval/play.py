"""Playing a schedule's games in chunks, for every game: here, over spawned worker processes, or as Ray tasks.

Games are cut into chunks of ``batch`` consecutive games (:func:`chunks`); a game's evaluation
part plays one chunk with its own ``play_chunk(chunk, config, agents)`` and returns the chunk's
outcome.  :func:`play_chunks` hands the chunks to that function in this process, to a pool of
``workers`` spawned processes (each loads the agents from their specs and the numba kernels
from the on-disk cache, and uses ``cores // workers`` numba threads so the pool does not
oversubscribe the machine) or to a Ray cluster (:mod:`krypenv.eval.ray_pool`), and yields the
outcomes in game order whatever the number of workers.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from krypenv.eval.schedule import Schedule

from krypenv.agent_api import Agent

ChunkPlayer = Callable[["Chunk", Any, list[Agent]], Any]  # a game's play_chunk(chunk, config, agents) -> outcome


@dataclass
class Chunk:
    """Games to play: their indices, deck and agent seeds, and agent index per seat."""

    games: np.ndarray  # (k,)
    deck_seeds: list[int]
    agent_seeds: list[int]
    seating: np.ndarray  # (k, P)


def chunks(schedule: Schedule, batch: int, independent: bool = False) -> Iterator[Chunk]:
    """The schedule's games in chunks of at most ``batch`` consecutive games."""
    seating = schedule.seating
    for lo in range(0, schedule.n_games, batch):
        games = np.arange(lo, min(lo + batch, schedule.n_games), dtype=np.int64)
        yield Chunk(games, schedule.deck_seeds(games, independent), schedule.agent_seeds(games),
                    seating[schedule.table_of(games)])


def cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def load_agents(specs: list[str], game: str) -> list[Agent]:
    """The agents named by spec strings, built for ``game`` (ValueError naming a bad spec)."""
    from krypenv import agents

    return [agents.load(spec, game=game) for spec in specs]


# --------------------------------------------------------------------------- worker processes
_WORKER: dict[str, Any] = {}


def init_worker(player: ChunkPlayer, specs: list[str], game: str, config: Any, threads: int) -> None:
    """Load the agents once per worker and limit its numba (and torch) threads."""
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    _WORKER.update(player=player, config=config, agents=load_agents(specs, game))
    if "torch" in sys.modules:
        from krypenv.threads import set_torch_threads

        set_torch_threads(threads)


def work(chunk: Chunk) -> Any:
    """Play one chunk in a worker set up by :func:`init_worker`."""
    return _WORKER["player"](chunk, _WORKER["config"], _WORKER["agents"])


def play_chunks(player: ChunkPlayer, todo: Iterator[Chunk], n_chunks: int, config: Any, game: str,
                agents: list[Agent], *, workers: int = 1, ray: str | None = None) -> Iterator[Any]:
    """``player(chunk, config, agents)`` of every chunk, in order: here, in worker processes or as Ray tasks.

    ``config`` is the game's evaluation configuration (its ``agents`` are the specs the workers load);
    ``ray``: a Ray cluster address ('' for ``RAY_ADDRESS`` or a local Ray) to play the chunks on instead
    of local processes; None: local processes.
    """
    workers = min(workers, n_chunks)
    specs = list(config.agents)
    pool: Any = None
    if ray is not None:
        from krypenv.eval.ray_pool import RayPool

        pool = RayPool(ray, init_worker, (player, specs, game, config, 1))
        results: Iterator[Any] = pool.imap(work, todo)
    elif workers <= 1:
        results = (player(chunk, config, agents) for chunk in todo)
    else:
        pool = multiprocessing.get_context("spawn").Pool(
            workers, init_worker, (player, specs, game, config, max(1, cores() // workers)))
        results = pool.imap(work, todo)
    try:
        yield from results
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
