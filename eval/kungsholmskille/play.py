"""Playing Kungsholmskille's scheduled episodes: one chunk of episodes on one core whose agents have streams of
their own.

Deck set ``d`` is a seeded stream of decks, ``SeedSequence([seed, 0, d])``, from which deal
``k`` of the episode takes the ``k``-th deck (the environment's Fisher–Yates over 41
uniforms); only the dealing draws from it, so deal ``k``'s deck never depends on the agents,
whose uniforms (``batch.uniforms``) come from a second stream per episode,
``SeedSequence([seed, 2, d, t])``.  Every table plays every deck set from seat 0 on, dealer
``players - 1`` (L2).  :func:`play` spreads the chunks over worker processes or Ray
(:func:`krypenv.eval.play.play_chunks`) and returns the outcomes in episode order.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from krypenv.eval.kungsholmskille.config import GAME, EvalConfig
from krypenv.eval.play import Chunk, chunks, play_chunks

from krypenv.agent_api import Agent


@dataclass
class Played:
    """Per episode: seat money, deals dealt, how it ended (1 pot out or settled, 2 truncated), pot left, winning seat
    (−1: none, e.g. a settled pot, L21)."""

    episodes: np.ndarray
    money: np.ndarray
    deals: np.ndarray
    over: np.ndarray
    pot_left: np.ndarray
    winner: np.ndarray
    first_decks: list[list[str]] = field(default_factory=list)  # deal 0's deck per episode (for tests)
    records: list[str] | None = None

    @staticmethod
    def concat(parts: list[Played]) -> Played:
        """The outcomes of several chunks as one, without their records."""
        cat = lambda name: np.concatenate([getattr(p, name) for p in parts])
        return Played(cat("episodes"), cat("money"), cat("deals"), cat("over"), cat("pot_left"), cat("winner"),
                       [d for p in parts for d in p.first_decks])


def _duplicate_core(cfg: Any, n: int) -> Any:
    """A batch whose ``rng`` only deals (the deck streams) and whose agents draw from ``agent_rng``."""
    from krypenv.kungsholmskille.batch import KungsholmskilleBatch
    from krypenv.kungsholmskille.config import EXTERNAL
    from krypenv.rng import k_uniforms, seed_state

    class DuplicateCore(KungsholmskilleBatch):
        """A core whose agents draw their uniforms from streams of their own."""

        def seed_agents(self, seeds: list[int]) -> None:
            """Seed the agents' streams, one per environment."""
            self.agent_rng = np.array([seed_state(s) for s in seeds], np.uint64)

        def uniforms(self, idx: np.ndarray, k: int = 1) -> np.ndarray:
            """(len(idx), k) uniforms from the agents' streams of environments ``idx``."""
            idx = np.asarray(idx, np.int64)
            out = np.empty((idx.shape[0], k), np.float64)
            k_uniforms(self.agent_rng, idx, out)
            return out

    return DuplicateCore(cfg, n, seat=0, kinds=[EXTERNAL] * cfg.players)


def play_chunk(chunk: Chunk, config: EvalConfig, agents: list[Agent]) -> Played:
    """Play a chunk of episodes to their end; every deal's record if ``config.records``."""
    from krypenv.agent_api import check_actions
    from krypenv.kungsholmskille.cards import deck_names
    from krypenv.kungsholmskille.config import POT_OUT, RUNNING
    from krypenv.kungsholmskille.engine import DealBatch
    from krypenv.kungsholmskille.env_kernels import k_act_external
    from krypenv.kungsholmskille.records import record_from_deals

    n = len(chunk.games)
    core = _duplicate_core(config.env_config, n)
    core.seed(chunk.deck_seeds)
    core.seed_agents(chunk.agent_seeds)
    core.reset()
    first = [deck_names(core.deals.deck[i]) for i in range(n)]
    recs: list[list[str]] = [[] for _ in range(n)]
    prev = DealBatch(core.rules, 1)
    status = np.empty(n, np.int64)
    seating = chunk.seating
    while True:
        envs, seats = core.pending()
        if envs.size == 0:
            break
        who = seating[envs, seats]
        for a in np.unique(who):
            sel, sel_seats = envs[who == a], seats[who == a]
            agent = agents[int(a)]
            batch = core.decisions(sel, sel_seats)
            try:
                actions = check_actions(getattr(agent, "name", repr(agent)), batch, agent.act(batch))
            except ValueError:
                raise
            except Exception as exc:  # noqa: BLE001  (a broken agent: one line naming it)
                name = getattr(agent, "name", agent)
                raise ValueError(f"agent {name!r} failed: {type(exc).__name__}: {exc}") from None
            before = core.deal_no[sel].copy()
            k_act_external(*core._arrays(), sel, actions, status[:sel.size])
            if config.records:
                for i in sel[core.deal_no[sel] != before]:  # a budrunda ended: prev_state holds that deal
                    prev.state[0] = core.prev_state[i]
                    prev.cash[0] = core.prev_cash[i]
                    recs[i].append(json.dumps(record_from_deals(prev, 0)))
    over = core.over.copy()
    if (over == RUNNING).any():
        raise RuntimeError("episodes stopped before their end")
    winner = np.full(n, -1, np.int64)
    for i in np.flatnonzero(over == POT_OUT):
        won = core.deals.result(int(i))["winner"]
        winner[i] = -1 if won is None else won  # None: the pot was settled (L21)
    if config.records:
        for i in range(n):
            recs[i].append(json.dumps(record_from_deals(core.deals, i)))
    return Played(chunk.games.copy(), core.money.copy(), core.deal_no + 1, over, core.pot.copy(), winner, first,
                   [line for r in recs for line in r] if config.records else None)


def play(config: EvalConfig, agents: list[Agent], done: Callable[[Played], None] | None = None) -> Played:
    """Every episode of the configuration, in order, over workers or Ray as configured; ``done`` sees each chunk."""
    todo = chunks(config.schedule, config.batch)
    parts = []
    for part in play_chunks(play_chunk, todo, -(-config.n_episodes // config.batch), config, GAME, agents,
                            workers=config.workers, ray=config.ray):
        if done is not None:
            done(part)
        part.records = None
        parts.append(part)
    return Played.concat(parts)
