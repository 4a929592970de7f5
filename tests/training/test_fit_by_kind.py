"""experiments/fit_by_kind.py: the student's gap to its teacher per kind of decision, and the value its greedy play
loses."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments"))

import fit_by_kind as F


def test_gap_is_the_kl_from_target_to_student() -> None:
    """KL(t ‖ π) summed over the legal actions: 0 when the student is the target, the textbook value otherwise; the
    illegal actions (target 0, log-probability −inf) add nothing."""
    t = np.array([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]])
    pi = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]])
    with np.errstate(divide="ignore"):
        logp = np.log(pi)
    kl = 0.25 * np.log(0.25 / 0.5) + 0.75 * np.log(0.75 / 0.5)
    assert F.gaps(t, logp) == pytest.approx([0.0, kl], abs=1e-12)


def test_lost_value_is_the_best_minus_the_greedy_actions_value() -> None:
    """The student's most probable legal action (an illegal one is never taken, however probable) against the best
    legal value; 0 when it is the best."""
    values = np.array([[1.0, 3.0, np.nan], [2.0, -1.0, 5.0]])
    mask = np.array([[True, True, False], [True, True, False]])
    logp = np.log(np.array([[0.6, 0.4, 1e-9], [0.25, 0.05, 0.7]]))  # row 1: the illegal action is the most probable
    assert F.lost_value(values, mask, logp).tolist() == [2.0, 0.0]


def test_groups_split_card_and_capture_decisions_and_count_legal_actions() -> None:
    """A decision offering a card (0–51) is a card decision, else a capture choice; the legal-count groups are
    disjoint and cover every label."""
    mask = np.zeros((4, 105), bool)
    mask[0, [3, 7]] = True  # 2 cards
    mask[1, [52, 60, 104]] = True  # a capture choice of 3
    mask[2, [0, 1, 2, 3, 4]] = True  # 5 cards
    mask[3, list(range(52, 62))] = True  # a capture choice of 10
    g = F.groups(mask)
    assert g["card"].tolist() == [True, False, True, False]
    assert g["capture choice"].tolist() == [False, True, False, True]
    counts = [k for k in g if k.endswith("legal")]
    assert sum(g[k].astype(int) for k in counts).tolist() == [1, 1, 1, 1]
    assert g["2 legal"].tolist() == [True, False, False, False] and g["9–105 legal"].tolist() == [False] * 3 + [True]
    assert "card, last round" not in g


def test_the_last_round_splits_the_card_decisions() -> None:
    """With the observations' ``last_round`` flags the card decisions split into the last round's and the earlier
    ones; capture choices are in neither."""
    mask = np.zeros((4, 105), bool)
    mask[[0, 2], 3] = mask[[0, 2], 7] = True  # card decisions
    mask[[1, 3], 52] = mask[[1, 3], 104] = True  # capture choices
    g = F.groups(mask, np.array([1, 1, 0, 0], np.int8))
    assert g["card, last round"].tolist() == [True, False, False, False]
    assert g["card, earlier rounds"].tolist() == [False, False, True, False]
