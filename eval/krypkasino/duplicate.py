"""A Krypkasino duplicate evaluation from its configuration to its results: :class:`EvalConfig` → :func:`evaluate`
→ :class:`Results`.

:func:`evaluate` loads the agents, plays the games of the configuration's
:class:`~krypenv.eval.schedule.Schedule` (and, with ``independent``, the same tables again with
a fresh deck per game) and computes the statistics (:mod:`krypenv.eval.stats`).  Scores are
per side, a seat or a team with teams (K16, K18; lower is better).  :class:`Results` depends
only on the configuration's game-defining fields (agents, rules, decks, seed, seatings),
never on the number of workers or the batch size.

- **Won.** In each game the side(s) with the lowest score win; k tied sides get 1/k each.
  An agent's share is the mean over its sides, so an equal field wins 1/sides each.
- **Tabbes.** Taken: the side's own tabbes (K14, a dubbeltabbe counting two); set up: the
  tabbes of the seat to the left of each of the side's seats (the −5 side of K14).
- **Head to head.** Negative ``a − b`` means ``a`` scored less, i.e. played better.
- **Variance reduction.** The standard error of each head-to-head difference with
  independent deals (same tables, a fresh deck per game) divided by the duplicate one, squared:
  how many times more independent deals give the same precision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from krypenv.eval.krypkasino.config import GAME, EvalConfig
from krypenv.eval.krypkasino.play import Played, play
from krypenv.eval.play import load_agents
from krypenv.eval.report import EvalResults
from krypenv.eval.stats import Interval, agent_interval, mean_ci, met_pairs, ratings, side_means, unit_means

from krypenv.agent_api import Agent
from krypenv.krypkasino.rules import Rules


@dataclass
class GameValues:
    """Per game (rows) and agent (columns) values, NaN where the agent did not play."""

    score: np.ndarray  # mean side score
    won: np.ndarray  # win share
    taken: np.ndarray  # tabbes per side
    setup: np.ndarray  # tabbes set up per side


def game_values(rules: Rules, seating: np.ndarray, scores: np.ndarray, tabbes: np.ndarray, n_agents: int) -> GameValues:
    """Each agent's values in each game from seat agents (G, P), seat scores (G, P) and seat tabbes (G, P)."""
    sides = [list(t) for t in rules.teams] if rules.teams is not None else [[s] for s in range(rules.players)]
    side_agent = seating[:, [side[0] for side in sides]]
    setup_seat = np.roll(tabbes, -1, axis=1)  # seat s sets up the tabbes of seat s+1 (K14)
    side_score = np.stack([scores[:, side].sum(axis=1) for side in sides], axis=1).astype(np.float64)
    side_taken = np.stack([tabbes[:, side].sum(axis=1) for side in sides], axis=1).astype(np.float64)
    side_setup = np.stack([setup_seat[:, side].sum(axis=1) for side in sides], axis=1).astype(np.float64)
    lowest = side_score == side_score.min(axis=1, keepdims=True)
    side_won = lowest / lowest.sum(axis=1, keepdims=True)
    return GameValues(*(side_means(x, side_agent, n_agents) for x in (side_score, side_won, side_taken, side_setup)))


@dataclass
class AgentRow:
    """One agent's line of the results table."""

    agent: str
    games: int
    score: Interval
    won: float
    tabbes_taken: float
    tabbes_set_up: float
    rating_mu: float
    rating_sigma: float
    rating_ordinal: float

    def to_dict(self) -> dict[str, Any]:
        """Plain fields for CSV and JSON."""
        return {"agent": self.agent, "games": self.games, "decks": self.score.n, "mean_score": self.score.mean,
                "se": self.score.se, "ci_low": self.score.low, "ci_high": self.score.high, "won": self.won,
                "tabbes_taken": self.tabbes_taken, "tabbes_set_up": self.tabbes_set_up, "rating_mu": self.rating_mu,
                "rating_sigma": self.rating_sigma, "rating_ordinal": self.rating_ordinal}


@dataclass
class PairRow:
    """The head-to-head difference ``a − b`` of two agents that met (negative: ``a`` better)."""

    a: str
    b: str
    games: int
    diff: Interval
    independent: Interval | None = None  # the same difference over independent deals

    @property
    def reduction(self) -> float | None:
        """Variance of the independent-deals estimate over the duplicate one (same number of games)."""
        if self.independent is None or not self.diff.se > 0:
            return None
        return (self.independent.se / self.diff.se) ** 2

    def to_dict(self) -> dict[str, Any]:
        """Plain fields for CSV and JSON."""
        d = {"a": self.a, "b": self.b, "games": self.games, "decks": self.diff.n, "diff": self.diff.mean,
             "se": self.diff.se, "ci_low": self.diff.low, "ci_high": self.diff.high,
             "significant": bool(self.diff.low > 0 or self.diff.high < 0)}
        if self.independent is not None:
            d.update(independent_diff=self.independent.mean, independent_se=self.independent.se,
                     variance_reduction=self.reduction)
        return d


@dataclass
class Results(EvalResults[EvalConfig, AgentRow, PairRow, Played]):
    """Everything an evaluation found: the table, the pairs, and the games themselves."""

    independent: Played | None = None

    def schedule_dict(self) -> dict[str, Any]:
        """The lineups, tables, decks and games of the schedule."""
        s = self.config.schedule
        labels = self.config.labels
        return {"lineups": [[labels[a] for a in lineup] for lineup in s.lineups], "tables": s.n_tables,
                "decks": s.decks, "games": s.n_games}


def summarise(config: EvalConfig, played: Played, independent: Played | None = None) -> Results:
    """The statistics of played games (and of the independent ones for the variance comparison)."""
    s, labels = config.schedule, config.labels
    n = len(labels)
    seating = s.seating[s.table_of(played.games)]
    values = game_values(config.rules, seating, played.scores, played.tabbes, n)
    decks = s.deck_of(played.games)
    per_deck = {k: unit_means(getattr(values, k), decks, s.decks) for k in ("won", "taken", "setup")}
    rates = ratings(values.score)
    rows = []
    for a in range(n):
        rows.append(AgentRow(
            agent=labels[a], games=int((~np.isnan(values.score[:, a])).sum()),
            score=agent_interval(values.score, decks, s.decks, a),
            won=float(np.nanmean(per_deck["won"][:, a])), tabbes_taken=float(np.nanmean(per_deck["taken"][:, a])),
            tabbes_set_up=float(np.nanmean(per_deck["setup"][:, a])),
            rating_mu=rates[a].mu, rating_sigma=rates[a].sigma, rating_ordinal=rates[a].ordinal))
    ind_values = None
    if independent is not None:
        ind_values = game_values(config.rules, s.seating[s.table_of(independent.games)], independent.scores,
                                 independent.tabbes, n)
    pairs = []
    for a, b, met, diff in met_pairs(values.score, decks, s.decks):
        ind = None
        if ind_values is not None:
            d = ind_values.score[:, a] - ind_values.score[:, b]
            ind = mean_ci(d[~np.isnan(d)])
        pairs.append(PairRow(labels[a], labels[b], met, diff, ind))
    return Results(config, rows, pairs, played, independent)


def evaluate(config: EvalConfig, agents: list[Agent] | None = None, progress: Callable[[int], None] | None = None,
             on_chunk: Callable[[Played, bool], None] | None = None) -> Results:
    """Play the configuration's games and compute the results.

    ``agents`` are the loaded specs (loaded here if None; worker processes load their own).
    ``progress(k)`` is told after every chunk how many more games finished; ``on_chunk(part,
    independent)`` sees every chunk's outcome in game order (e.g. to write records as they come).
    """
    agent_objs = load_agents(list(config.agents), GAME) if agents is None else agents

    def run(independent: bool) -> Played:
        def done(part: Played) -> None:
            if on_chunk is not None:
                on_chunk(part, independent)
            if progress is not None:
                progress(len(part.games))

        return play(config, agent_objs, independent, done)

    played = run(False)
    return summarise(config, played, run(True) if config.independent else None)
