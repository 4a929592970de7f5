"""Playing Krypkasino's scheduled games: one chunk of deals on one :class:`~krypenv.krypkasino.batch.KrypkasinoBatch`.

A chunk (:func:`krypenv.eval.play.chunks`) is played on one core, every seat an external
agent (``KrypkasinoBatch.play_seated``), and returns each game's seat scores, tabbes and, if asked, its
game record as a JSON line; :func:`play` spreads the chunks over worker processes or Ray
(:func:`krypenv.eval.play.play_chunks`) and returns the outcomes in game order.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from krypenv.eval.krypkasino.config import GAME, EvalConfig
from krypenv.eval.play import Chunk, chunks, play_chunks

from krypenv.agent_api import Agent
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.config import EXTERNAL, EnvConfig
from krypenv.krypkasino.records import record_from_deals


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


def play_chunk(chunk: Chunk, config: EvalConfig, agents: list[Agent]) -> Played:
    """Play one chunk of games to the end of their deal."""
    rules = config.rules
    n, P = len(chunk.games), rules.players
    config_env = EnvConfig.from_rules(rules)
    core = KrypkasinoBatch(config_env, n, seat=0, kinds=[EXTERNAL] * P)
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
    recs = [json.dumps(record_from_deals(d, i)) for i in range(n)] if config.records else None
    return Played(chunk.games.copy(), d.scores().astype(np.int64), d.tabbes.astype(np.int64), recs)


def play(config: EvalConfig, agents: list[Agent], independent: bool = False,
         done: Callable[[Played], None] | None = None) -> Played:
    """Play every game of the configuration's schedule (with a fresh deck per game if ``independent``).

    ``done`` sees each chunk's outcome as it arrives, in game order, records included.
    """
    schedule = config.schedule
    todo = chunks(schedule, config.batch, independent)
    parts: list[Played] = []
    for part in play_chunks(play_chunk, todo, -(-schedule.n_games // config.batch), config, GAME, agents,
                            workers=config.workers, ray=config.ray):
        if done is not None:
            done(part)
        parts.append(Played(part.games, part.scores, part.tabbes))
    return Played.concat(parts)
