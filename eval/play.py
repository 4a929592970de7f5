"""Playing the games of a schedule: batches of games on one :class:`~krypenv.krypkasino.batch.KrypkasinoBatch`,
over worker processes.

Games are cut into chunks of ``batch`` consecutive games; a chunk is played on one core
(every seat an external agent, ``KrypkasinoBatch.play_seated``) and returns each game's seat scores,
tabbes and, if asked, its game record as a JSON line.  With ``workers`` > 1 the chunks go to
a pool of spawned processes (each loads the agents from their specs and the numba kernels
from the on-disk cache, and uses ``cores // workers`` numba threads so the pool does not
oversubscribe the machine); results come back in game order whatever the number of workers.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from krypenv.eval.schedule import Schedule

from krypenv.agent_api import Agent
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.config import EXTERNAL, EnvConfig
from krypenv.krypkasino.records import record_from_deals
from krypenv.krypkasino.rules import Rules


@dataclass
class Chunk:
    """Games to play: their indices, deck and agent seeds, and agent index per seat."""

    games: np.ndarray  # (k,)
    deck_seeds: list[int]
    agent_seeds: list[int]
    seating: np.ndarray  # (k, P)


@dataclass
class Played:
    """Outcomes of played games, in game order: seat scores and tabbes, and the records if kept."""

    games: np.ndarray  # (k,)
    scores: np.ndarray  # (k, P) int64, K16/K17
    tabbes: np.ndarray  # (k, P) int64, a dubbeltabbe counting two
    records: list[str] | None = None  # JSON lines, handed to ``play``'s ``done`` callback only

    @staticmethod
    def concat(parts: list[Played]) -> Played:
        """The outcomes of several chunks as one, without their records."""
        return Played(np.concatenate([p.games for p in parts]), np.concatenate([p.scores for p in parts]),
                      np.concatenate([p.tabbes for p in parts]))


def load_agents(specs: list[str]) -> list[Agent]:
    """The agents named by spec strings (ValueError naming a bad spec)."""
    from krypenv import agents

    return [agents.load(spec) for spec in specs]


def play_chunk(chunk: Chunk, rules: Rules, agents: list[Agent], records: bool) -> Played:
    """Play one chunk of games to the end of their deal."""
    n, P = len(chunk.games), rules.players
    core = KrypkasinoBatch(EnvConfig(players=P, teams=rules.teams, two_player_deal=rules.two_player_deal,
                          set_aside=rules.set_aside, last_capture_point=rules.last_capture_point),
                n, seat=0, kinds=[EXTERNAL] * P)
    core.seed(chunk.deck_seeds)
    core.reset()  # deals the decks; no seat acts before the first external decision
    core.seed(chunk.agent_seeds)
    try:
        core.play_seated(chunk.seating, agents)
    except ValueError:  # an illegal action: the message names the agent, the game and the legal actions
        raise
    except Exception as exc:  # noqa: BLE001 - a broken user agent: one line naming it, not a worker traceback
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = f" at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb is not None else ""
        raise ValueError(f"an agent failed: {type(exc).__name__}: {exc}{where}") from None
    d = core.deals
    if not d.done.all():
        raise RuntimeError("games stopped before the end of their deal")
    recs = [json.dumps(record_from_deals(d, i)) for i in range(n)] if records else None
    return Played(chunk.games.copy(), d.scores().astype(np.int64), d.tabbes.astype(np.int64), recs)


# --------------------------------------------------------------------------- worker processes
_WORKER: dict[str, object] = {}


def _init_worker(specs: list[str], rules: Rules, records: bool, threads: int) -> None:
    """Load the agents once per worker and limit its numba (and torch) threads."""
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    _WORKER.update(agents=load_agents(specs), rules=rules, records=records)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


def _work(chunk: Chunk) -> Played:
    return play_chunk(chunk, _WORKER["rules"], _WORKER["agents"], _WORKER["records"])  # type: ignore[arg-type]


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


def play(schedule: Schedule, specs: list[str], agents: list[Agent], *, independent: bool = False,
         workers: int = 1, batch: int = 256, records: bool = True,
         done: Callable[[Played], None] | None = None, ray: str | None = None) -> Played:
    """Play every game of the schedule; ``done`` sees each chunk's outcome as it arrives, in game order.

    ``ray``: a Ray cluster address ('' for ``RAY_ADDRESS`` or a local Ray) to play the chunks on
    instead of local processes (:mod:`krypenv.eval.ray_pool`); None: local processes.
    """
    parts: list[Played] = []
    todo = chunks(schedule, batch, independent)
    n_chunks = -(-schedule.n_games // batch)
    workers = min(workers, n_chunks)
    pool: Any = None
    if ray is not None:
        from krypenv.eval.ray_pool import RayPool

        pool = RayPool(ray, _init_worker, (specs, schedule.rules, records, 1))
        results: Iterator[Played] = pool.imap(_work, todo)
    elif workers <= 1:
        results = (play_chunk(c, schedule.rules, agents, records) for c in todo)
    else:
        pool = multiprocessing.get_context("spawn").Pool(
            workers, _init_worker, (specs, schedule.rules, records, max(1, cores() // workers)))
        results = pool.imap(_work, todo)
    try:
        for part in results:
            if done is not None:
                done(part)
            parts.append(Played(part.games, part.scores, part.tabbes))
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return Played.concat(parts)
