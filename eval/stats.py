"""The statistics every game's evaluation shares: means with 95% intervals, head-to-head differences, ratings.

A game's evaluation turns each game into one value per *side* (a seat, or a team with teams)
and the agent holding it; an agent's value in a game is the mean over the sides it holds
(:func:`side_means`: one side unless the lineup repeats it).

- **Units.** In duplicate play the deck (or deck set) is the unit of independence: an agent's
  values are first averaged over all games of a unit, then the mean over units gets a
  Student-t 95% interval ``mean ± t(0.975, n−1) · sd / √n``.  With independent deals each
  game is a unit.
- **Head to head.** For every pair of agents that met (sat at the same table), per unit the
  mean of ``value(a) − value(b)`` over the games where both played, then a t interval over
  units (paired by unit).
- **Ratings.** openskill's Plackett–Luce model, updated once per game in game order (unit by
  unit, table by table) from the ranking of the agents at the table by their value (lower is
  better: a game where higher is better passes the negated values), ties tied; ``ordinal`` is
  μ − 3σ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


# --------------------------------------------------------------------------- Student t
def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile (0 < p < 1) of Student's t with ``df`` > 0 degrees of freedom, by bisection."""
    if not 0.0 < p < 1.0 or not df > 0:
        raise ValueError(f"t_quantile needs 0 < p < 1 and df > 0, got p={p}, df={df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class Interval:
    """A mean with its standard error and 95% t interval over ``n`` units."""

    mean: float
    se: float
    half: float
    n: int

    @property
    def low(self) -> float:
        """Lower end of the 95% interval."""
        return self.mean - self.half

    @property
    def high(self) -> float:
        """Upper end of the 95% interval."""
        return self.mean + self.half


def mean_ci(x: np.ndarray, level: float = 0.95) -> Interval:
    """Mean of the units ``x`` with its standard error and Student-t interval (NaN half-width below 2 units)."""
    x = np.asarray(x, np.float64)
    n = int(x.size)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    mean = float(x.mean())
    if n < 2:
        return Interval(mean, math.nan, math.nan, 1)
    se = float(x.std(ddof=1)) / math.sqrt(n)
    return Interval(mean, se, t_quantile(0.5 + level / 2.0, n - 1) * se, n)


# --------------------------------------------------------------------------- per-game values
def side_means(side_values: np.ndarray, side_agent: np.ndarray, n_agents: int) -> np.ndarray:
    """(G, A) each agent's mean over the sides it held in each game (NaN where it did not play).

    ``side_values`` and ``side_agent`` are (G, S): a value and the agent of every side (seat or team) of each game.
    """
    out = np.full((side_agent.shape[0], n_agents), np.nan)
    for a in range(n_agents):
        held = side_agent == a
        count = held.sum(axis=1)
        rows = count > 0
        out[rows, a] = (side_values * held).sum(axis=1)[rows] / count[rows]
    return out


def unit_means(x: np.ndarray, units: np.ndarray, n_units: int) -> np.ndarray:
    """(n_units, A) mean of the non-NaN rows of ``x`` (G, A) per unit (NaN where an agent has none)."""
    ok = ~np.isnan(x)
    sums = np.zeros((n_units, x.shape[1]))
    counts = np.zeros((n_units, x.shape[1]))
    np.add.at(sums, units, np.where(ok, x, 0.0))
    np.add.at(counts, units, ok)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts


def agent_interval(x: np.ndarray, units: np.ndarray, n_units: int, agent: int) -> Interval:
    """The interval of one agent's values, aggregated per unit first."""
    per_unit = unit_means(x[:, [agent]], units, n_units)[:, 0]
    return mean_ci(per_unit[~np.isnan(per_unit)])


def pair_interval(score: np.ndarray, units: np.ndarray, n_units: int, a: int, b: int) -> Interval | None:
    """The interval of ``value(a) − value(b)`` over the games where both played, paired by unit; None if they
    never met."""
    diff = (score[:, a] - score[:, b])[:, None]
    if np.isnan(diff).all():
        return None
    per_unit = unit_means(diff, units, n_units)[:, 0]
    return mean_ci(per_unit[~np.isnan(per_unit)])


def met_pairs(score: np.ndarray, units: np.ndarray, n_units: int) -> list[tuple[int, int, int, Interval]]:
    """(a, b, games where both played, interval of ``value(a) − value(b)``) for every pair a < b that met."""
    pairs = []
    for a in range(score.shape[1]):
        for b in range(a + 1, score.shape[1]):
            diff = pair_interval(score, units, n_units, a, b)
            if diff is not None:
                pairs.append((a, b, int((~np.isnan(score[:, a] - score[:, b])).sum()), diff))
    return pairs


# --------------------------------------------------------------------------- ratings
@dataclass(frozen=True)
class Rating:
    """An openskill rating."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """μ − 3σ, a conservative skill estimate."""
        return self.mu - 3.0 * self.sigma


def ratings(score: np.ndarray) -> list[Rating]:
    """Plackett–Luce ratings updated per game (row order) from the ranking by value (lower is better, ties tied)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    current = [model.rating(name=str(a)) for a in range(score.shape[1])]
    for row in score:
        present = np.flatnonzero(~np.isnan(row))
        if present.size < 2:
            continue
        values = row[present]
        ranks = [int(np.searchsorted(np.unique(values), v)) + 1 for v in values]
        new = model.rate([[current[a]] for a in present], ranks=ranks)
        for a, team in zip(present, new):
            current[a] = team[0]
    return [Rating(float(r.mu), float(r.sigma)) for r in current]
