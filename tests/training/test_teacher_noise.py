"""experiments/teacher_noise.py: the floor a search teacher's own noise puts under the distillation loss."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments"))

import teacher_noise as N


def test_entropy_in_nats_with_zeros() -> None:
    """H of a uniform over k legal actions is log k, a certain action 0; masked (zero) entries add nothing."""
    p = np.array([[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]])
    assert np.allclose(N.entropy(p), [np.log(2), 0.0, np.log(4)])


def test_jensen_gap_is_the_mean_kl_to_the_mean_target() -> None:
    """H(mean of the draws) − mean H(draw) equals the mean KL of each draw to their mean (an exact identity), and is
    0 when the draws agree."""
    rng = np.random.default_rng(1)
    t = rng.dirichlet(np.ones(5), size=(3, 40))  # (K, N, A)
    mean = t.mean(axis=0)
    kl = np.mean([(d * np.log(d / mean)).sum(axis=1).mean() for d in t])
    assert N.jensen_gap(t) == pytest.approx(kl, rel=1e-12)
    assert N.jensen_gap(np.stack([t[0]] * 4)) == pytest.approx(0.0, abs=1e-12)


def test_the_gap_of_k_draws_is_about_1_minus_1_over_k_of_the_floor() -> None:
    """Small noise: targets softmax(v + σ·ε) around one mean; the gap of k draws over many decisions nears
    (1 − 1/k) × the floor (the gap of very many draws), which the script's k/(k − 1) correction undoes."""
    rng = np.random.default_rng(7)
    v = rng.normal(size=(1, 2000, 6))
    draws = v + 0.05 * rng.normal(size=(64, 2000, 6))
    t = np.exp(draws) / np.exp(draws).sum(axis=2, keepdims=True)
    floor = N.jensen_gap(t)
    for k in (2, 4, 8):
        gap = np.mean([N.jensen_gap(t[j:j + k]) for j in range(0, 64, k)])
        assert gap * k / (k - 1) == pytest.approx(floor * 64 / 63, rel=0.05), k


def test_label_repeatedly_draws_other_worlds_and_plays_the_first_draw() -> None:
    """Each labelling of a decision draws other worlds (values differ somewhere); only decisions with two or more
    legal actions are kept, each legal action valued and no other; the same seed labels the same."""
    values, masks = N.label_repeatedly("pimc:samples=4", "krypkasino", 2, "standard", 1, 3, repeats=3)
    assert values.shape[0] == 3 and values.shape[1:] == masks.shape
    assert (masks.sum(axis=1) >= 2).all()
    assert not np.allclose(np.nan_to_num(values[0]), np.nan_to_num(values[1]))
    assert np.isnan(values[:, ~masks]).all() and not np.isnan(values[:, masks]).any()
    again, _ = N.label_repeatedly("pimc:samples=4", "krypkasino", 2, "standard", 1, 3, repeats=3)
    assert np.array_equal(np.nan_to_num(again), np.nan_to_num(values))


def test_self_disagreement_counts_other_draws_bests_and_the_value_lost() -> None:
    """Draw 0's best action against each later draw: counted as differing where that draw prefers another action,
    and the value lost is that draw's best minus its value of draw 0's choice; illegal actions (−inf) never win."""
    inf = -np.inf
    legal = np.array([[[1.0, 0.0, inf], [0.0, 2.0, inf]],  # draw 0: bests 0 and 1
                      [[1.0, 0.5, inf], [3.0, 2.0, inf]],  # draw 1: bests 0 (agrees) and 0 (differs, loses 1)
                      [[0.0, 2.0, inf], [0.0, 2.0, inf]]])  # draw 2: bests 1 (differs, loses 2) and 1 (agrees)
    miss, lost = N.self_disagreement(legal)
    assert miss == pytest.approx(2 / 4)
    assert lost == pytest.approx((0 + 1 + 2 + 0) / 4)
