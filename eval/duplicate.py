"""A duplicate evaluation from its configuration to its results: :class:`EvalConfig` → :func:`evaluate` →
:class:`Results`.

:func:`evaluate` loads the agents, builds the :class:`~krypenv.eval.schedule.Schedule`, plays its
games (and, with ``independent``, the same tables again with a fresh deck per game) and
computes the statistics of :mod:`krypenv.eval.stats`.  :class:`Results` depends only on the
configuration's game-defining fields (agents, rules, decks, seed, seatings), never on the
number of workers or the batch size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from krypenv.eval.play import Played, load_agents, play
from krypenv.eval.schedule import SEATINGS, Schedule, agent_labels
from krypenv.eval.stats import Interval, agent_interval, game_values, mean_ci, pair_interval, ratings, unit_means

from krypenv.agent_api import Agent
from krypenv.krypkasino.rules import Rules


@dataclass(frozen=True)
class EvalConfig:
    """What to evaluate and how; ValueError naming the field on bad values."""

    agents: tuple[str, ...]
    players: int = 2
    deals: int = 100  # duplicate decks; each is played at every table
    seed: int = 0
    teams: tuple[tuple[int, ...], ...] | None = None
    two_player_deal: str = "6+4"
    set_aside: str = "court"
    last_capture_point: bool = False
    seatings: str = "rotations"
    independent: bool = False  # also play independent deals and compare the variance
    workers: int = 1
    batch: int = 256
    records: bool = True
    ray: str | None = None  # Ray cluster address ('' for RAY_ADDRESS or a local Ray); None: local processes

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", tuple(s.strip() for s in self.agents))
        if len(self.agents) < 2 or not all(self.agents):
            raise ValueError("give at least two agent specs (the same one twice for a mirror match), "
                             f"got {self.agents}")
        object.__setattr__(self, "teams", self.rules.teams)
        for name in ("deals", "workers", "batch"):
            value, least = getattr(self, name), 2 if name == "deals" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an integer of at least {least}, got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if self.seatings not in SEATINGS:
            raise ValueError(f"seatings must be one of {SEATINGS}, got {self.seatings!r}")

    @property
    def rules(self) -> Rules:
        """The rule set of every game."""
        return Rules(self.players, self.teams, self.two_player_deal, self.set_aside, self.last_capture_point)

    @property
    def labels(self) -> list[str]:
        """One name per agent: its spec, with ``#2``, ``#3`` … on repeated specs."""
        return agent_labels(self.agents)

    @property
    def schedule(self) -> Schedule:
        """The games to play."""
        return Schedule(self.rules, len(self.agents), self.deals, self.seed, self.seatings)

    def games_dict(self) -> dict[str, Any]:
        """The fields that define the games and so the results (not workers, batch or records)."""
        return {"agents": list(self.agents), "rules": self.rules.to_dict(), "deals": self.deals, "seed": self.seed,
                "seatings": self.seatings, "independent": self.independent}


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
class Results:
    """Everything an evaluation found: the table, the pairs, and the games themselves."""

    config: EvalConfig
    rows: list[AgentRow]
    pairs: list[PairRow]
    played: Played
    independent: Played | None = None

    def to_dict(self) -> dict[str, Any]:
        """The results as one JSON-able object (independent of workers and batching)."""
        s = self.config.schedule
        labels = self.config.labels
        return {
            "config": self.config.games_dict(),
            "schedule": {"lineups": [[labels[a] for a in lineup] for lineup in s.lineups], "tables": s.n_tables,
                         "decks": s.decks, "games": s.n_games},
            "agents": [r.to_dict() for r in self.rows],
            "head_to_head": [p.to_dict() for p in self.pairs],
        }


def summarise(config: EvalConfig, played: Played, independent: Played | None = None) -> Results:
    """The statistics of played games (and of the independent ones for the variance comparison)."""
    s, labels = config.schedule, config.labels
    n = len(labels)
    seating = s.seating[s.table_of(played.games)]
    values = game_values(s.rules, seating, played.scores, played.tabbes, n)
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
        ind_values = game_values(s.rules, s.seating[s.table_of(independent.games)], independent.scores,
                                 independent.tabbes, n)
    pairs = []
    for a in range(n):
        for b in range(a + 1, n):
            diff = pair_interval(values.score, decks, s.decks, a, b)
            if diff is None:
                continue
            met = int((~np.isnan(values.score[:, a] - values.score[:, b])).sum())
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
    agent_objs = load_agents(list(config.agents)) if agents is None else agents
    schedule = config.schedule

    def run(independent: bool) -> Played:
        def done(part: Played) -> None:
            if on_chunk is not None:
                on_chunk(part, independent)
            if progress is not None:
                progress(len(part.games))

        return play(schedule, list(config.agents), agent_objs, independent=independent, workers=config.workers,
                    batch=config.batch, records=config.records, done=done, ray=config.ray)

    played = run(False)
    return summarise(config, played, run(True) if config.independent else None)
