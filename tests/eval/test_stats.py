"""The statistics every game's evaluation shares (krypenv.eval.stats): t intervals, pairs, side means, ratings."""

from __future__ import annotations

import math

import numpy as np
import pytest
from krypenv.eval.stats import mean_ci, pair_interval, ratings, side_means, t_quantile, unit_means


def test_t_quantiles() -> None:
    for p in (0.9, 0.975, 0.995):
        assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9)
        assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-9)
    assert t_quantile(0.975, 4) == pytest.approx(2.7764451, abs=1e-6)
    assert t_quantile(0.975, 10) == pytest.approx(2.2281389, abs=1e-6)
    assert t_quantile(0.975, 1000) == pytest.approx(1.9623391, abs=1e-6)
    assert t_quantile(0.025, 10) == pytest.approx(-2.2281389, abs=1e-6)


def test_mean_ci_by_hand() -> None:
    ci = mean_ci(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    se = math.sqrt(2.5) / math.sqrt(5)  # sd of 1..5 is sqrt(2.5)
    assert (ci.mean, ci.n) == (3.0, 5)
    assert ci.se == pytest.approx(se)
    assert ci.low == pytest.approx(3 - 2.7764451 * se) and ci.high == pytest.approx(3 + 2.7764451 * se)
    assert math.isnan(mean_ci(np.array([4.0])).half)


def test_head_to_head_is_paired_by_deck() -> None:
    # 2 decks x 2 games; agent 2 only meets agent 0 in the second game of each deck
    score = np.array([[10.0, 20.0, np.nan],
                      [16.0, np.nan, 10.0],
                      [30.0, 12.0, np.nan],
                      [20.0, np.nan, 24.0]])
    units = np.array([0, 0, 1, 1])
    d01 = pair_interval(score, units, 2, 0, 1)
    assert d01 is not None and d01.mean == pytest.approx(4.0)  # deck diffs -10 and 18
    assert d01.se == pytest.approx(14.0)
    d02 = pair_interval(score, units, 2, 0, 2)
    assert d02 is not None and d02.mean == pytest.approx(1.0)  # deck diffs 6 and -4
    assert pair_interval(score, units, 2, 1, 2) is None  # never at the same table
    assert unit_means(score, units, 2)[:, 0].tolist() == [13.0, 25.0]


def test_ratings_follow_results_deterministically() -> None:
    score = np.array([[10.0, 20.0, 30.0]] * 20 + [[25.0, 20.0, np.nan]] * 2)
    r = ratings(score)
    assert r[0].mu > r[1].mu > r[2].mu
    assert ratings(score) == r
    before = ratings(score[:20])
    assert r[0].mu < before[0].mu and r[1].mu > before[1].mu  # agent 1 won the last two deals
    assert r[2] == before[2]  # an agent is rated only on the deals it played
    assert ratings(score[::-1]) != r  # per-deal updates depend on the (fixed) order


def test_side_means_average_the_sides_an_agent_holds() -> None:
    values = np.array([[10.0, 22.0, 12.0], [1.0, 2.0, 3.0]])
    held = np.array([[0, 1, 0], [2, 1, 1]])  # agent 0 holds two sides of game 0; agent 2 one of game 1
    means = side_means(values, held, 3)
    assert means[0].tolist()[:2] == [11.0, 22.0] and math.isnan(means[0, 2])
    assert math.isnan(means[1, 0]) and means[1, 1:].tolist() == [2.5, 1.0]
