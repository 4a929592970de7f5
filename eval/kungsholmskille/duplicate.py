"""A Kungsholmskille duplicate evaluation from its configuration to its results: :class:`EvalConfig` →
:func:`evaluate` → :class:`Results`.

**The unit is an episode**: one pot carried over deals until it goes out (walkover L15 or
showdown L14: *finished*) or ``max_deals`` deals were dealt (L16: *truncated*, the pot
belongs to nobody).  ``deals`` counts *deck sets* (:mod:`krypenv.eval.kungsholmskille.play`);
every table plays every deck set, so two seatings of one deck set differ only by the
players' choices: as long as both tables' pots last, they see the same cards from the same
seats in turn.

**Statistics** per agent (mean over the seats it holds, :mod:`krypenv.eval.stats`): money per
episode with a 95% Student-t interval over deck sets (the tables of a deck set are averaged
first; higher is better; every seat pays 2 before the first deal, L3), money per deal (all its
money over all the deals it sat at), deals per episode, the share of pots it won (per seat; a
truncated pot is won by nobody) and openskill Plackett–Luce ratings updated per episode
(ranked by money); head to head per pair that met, ``money(a) − money(b)`` paired by deck
set.  Money of a finished episode sums to zero over the seats; of a truncated one to minus the
pot left.  Results do not depend on the workers, the batch size or Ray.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from krypenv.eval.kungsholmskille.config import GAME, EvalConfig
from krypenv.eval.kungsholmskille.play import Played, play
from krypenv.eval.play import load_agents
from krypenv.eval.report import EvalResults
from krypenv.eval.stats import Interval, agent_interval, met_pairs, ratings, side_means, unit_means

from krypenv.agent_api import Agent
from krypenv.kungsholmskille.config import POT_OUT


@dataclass
class AgentRow:
    """One agent's line of the results table."""

    agent: str
    episodes: int
    money: Interval
    per_deal: float
    deals: float
    pots_won: float
    rating_mu: float
    rating_sigma: float

    def to_dict(self) -> dict[str, Any]:
        """Plain fields for CSV and JSON."""
        m = self.money
        return {"agent": self.agent, "episodes": self.episodes, "deck_sets": m.n, "money_per_episode": m.mean,
                "se": m.se, "ci_low": m.low, "ci_high": m.high, "money_per_deal": self.per_deal,
                "deals_per_episode": self.deals, "pots_won": self.pots_won, "rating_mu": self.rating_mu,
                "rating_sigma": self.rating_sigma}


@dataclass
class PairRow:
    """The head-to-head difference ``a − b`` of two agents that met (positive: ``a`` better)."""

    a: str
    b: str
    episodes: int
    diff: Interval

    def to_dict(self) -> dict[str, Any]:
        """Plain fields for CSV and JSON."""
        d = self.diff
        return {"a": self.a, "b": self.b, "episodes": self.episodes, "deck_sets": d.n, "diff": d.mean, "se": d.se,
                "ci_low": d.low, "ci_high": d.high, "significant": bool(d.low > 0 or d.high < 0)}


@dataclass
class Results(EvalResults[EvalConfig, AgentRow, PairRow, Played]):
    """Everything an evaluation found: the table, the pairs, the episodes and the share of pots that went out."""

    finished: float  # share of episodes whose pot went out

    def schedule_dict(self) -> dict[str, Any]:
        """The tables, deck sets, episodes and deals played, and the share of pots that went out."""
        c = self.config
        return {"tables": [[c.labels[a] for a in t] for t in c.tables.tolist()], "deck_sets": c.deals,
                "episodes": c.n_episodes, "deals": int(self.played.deals.sum()), "finished": self.finished}


def summarise(config: EvalConfig, played: Played) -> Results:
    """The statistics of played episodes (see the module docstring)."""
    labels, n, tables = config.labels, len(config.agents), config.tables
    T = len(tables)
    seating = tables[played.episodes % T]
    units = played.episodes // T
    money = played.money.astype(np.float64)
    won = (np.arange(config.players)[None, :] == played.winner[:, None]).astype(np.float64)
    per_ep, won_ep = side_means(money, seating, n), side_means(won, seating, n)
    won_unit = unit_means(won_ep, units, config.deals)
    rates = ratings(-per_ep)
    out = []
    for a in range(n):
        at = ~np.isnan(per_ep[:, a])
        out.append(AgentRow(labels[a], int(at.sum()), agent_interval(per_ep, units, config.deals, a),
                             float(per_ep[at, a].sum() / played.deals[at].sum()),
                             float(played.deals[at].mean()), float(np.nanmean(won_unit[:, a])),
                             rates[a].mu, rates[a].sigma))
    pairs = [PairRow(labels[a], labels[b], met, diff) for a, b, met, diff in met_pairs(per_ep, units, config.deals)]
    return Results(config, out, pairs, played, float((played.over == POT_OUT).mean()))


def evaluate(config: EvalConfig, agents: list[Agent] | None = None,
             progress: Callable[[int], None] | None = None,
             on_chunk: Callable[[Played, bool], None] | None = None) -> Results:
    """Play the configuration's episodes and compute the results.

    ``agents`` are the loaded specs (loaded here if None; worker processes load their own).
    ``progress(k)`` is told after every chunk how many more episodes finished; ``on_chunk(part,
    False)`` sees every chunk's outcome in episode order (False: no independent deals in this game).
    """
    objs = load_agents(list(config.agents), GAME) if agents is None else agents

    def done(part: Played) -> None:
        if on_chunk is not None:
            on_chunk(part, False)
        if progress is not None:
            progress(len(part.episodes))

    return summarise(config, play(config, objs, done))
