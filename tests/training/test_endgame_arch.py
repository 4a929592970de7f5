"""experiments/endgame_arch.py: the card-set tokens hold the position exactly, each value and move feature lands on
its card's token, and the published metric is fit_by_kind's on the same decisions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments"))

import endgame_arch as A
import fit_by_kind as F
import torch

from krypenv.krypkasino.engine import kernels as K
from krypenv.training.krypkasino import distill_core, label_features
from krypenv.training.labels import LabelSet

STUDENT = str(ROOT / "checkpoints" / "exit-2p-endgame.npz")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A label set of two iterations (one shard of 16 games each), as endgame_labels.py writes it."""
    out = tmp_path_factory.mktemp("eg")
    for it in (0, 1):
        subprocess.run([sys.executable, str(ROOT / "experiments" / "endgame_labels.py"), STUDENT, "--out", str(out),
                        "--shards", "1", "--games-per-shard", "16", "--iteration", str(it)], check=True,
                       capture_output=True, timeout=600)
    return out


def test_tokens_hold_both_hands_the_table_and_the_pile(run: Path) -> None:
    """Scattering the tokens' copies back by card code gives the mover's hand, the other hand and the table of every
    stored state; the global token has the pile's points and cards, the last capturer and the hand sizes."""
    labels, _ = LabelSet(run / "labels").load([0])
    st, seat = labels.state.astype(np.int64), labels.seat.astype(np.int64)
    tok, pad, codes = A.tokens(labels.state, seat)
    for r in range(len(st)):
        back = np.zeros((3, 52))
        for t, c in enumerate(codes[r]):
            if c >= 0:
                back[:, c] = tok[r, 1 + t, :3] * 2
                assert np.array_equal(tok[r, 1 + t, 3:], A.FACTS[c]) and not pad[r, 1 + t]
            else:
                assert pad[r, 1 + t] and not tok[r, 1 + t].any()
        s = seat[r]
        assert np.array_equal(back[0], st[r, K.HANDS + 52 * s:K.HANDS + 52 * s + 52])
        assert np.array_equal(back[1], st[r, K.HANDS + 52 * (1 - s):K.HANDS + 52 * (1 - s) + 52])
        assert np.array_equal(back[2], st[r, K.TABLE:K.TABLE + 52])
        aside = st[r, K.ASIDE:K.ASIDE + 52]
        last = st[r, K.LAST_CAPTURER]
        assert tok[r, 0, 0] == pytest.approx((aside * A.POINTS).sum() / 10) and tok[r, 0, 1] == pytest.approx(
            aside.sum() / 10)
        assert list(tok[r, 0, 2:5]) == [last == s, 0 <= last != s, last < 0]
        assert tok[r, 0, 5] * 4 == back[0].sum() and tok[r, 0, 6] * 4 == back[1].sum()
    assert not pad[:, 0].any()


def test_values_and_move_features_land_on_their_cards_tokens(run: Path) -> None:
    """Every legal card's value and move features sit on its own token; the other tokens carry none."""
    data = A.card_set(str(run), 0, move_features=True)
    labels, _ = LabelSet(run / "labels").load([0])
    card = np.flatnonzero(labels.mask[:, 52:].sum(axis=1) == 0)
    _, _, codes = A.tokens(labels.state[card], labels.seat[card].astype(np.int64))
    feats = label_features(distill_core(2, "standard", 1), labels.state[card])
    base = A.N_CARD_FEATS
    for r, i in enumerate(card):
        for t, c in enumerate(codes[r]):
            legal = c >= 0 and bool(labels.mask[i, c])
            assert data["legal"][r, t] == legal
            if legal:
                assert data["values"][r, t] == labels.values[i, c]
            mine = c >= 0 and labels.state[i, K.HANDS + 52 * int(labels.seat[i]) + c] > 0
            want = feats[r, c] if mine else np.zeros(feats.shape[2])
            assert np.array_equal(data["tok"][r, 1 + t, base:], want)


def test_the_metric_is_fit_by_kinds_on_the_same_decisions(run: Path) -> None:
    """measure()'s value lost, greedy ≠ best and gap equal fit_by_kind's lost_value and gaps over the 105 actions,
    the policy a softmax over the legal cards only, for the same network (a fixed random one's)."""
    data = A.card_set(str(run), 1)
    torch.manual_seed(3)
    model = A.CardSetPolicy(data["tok"].shape[2], 16, 1, 2)
    got = A.measure(model, data, 0.5)  # a temperature other than 1, so that ignoring it shows
    with torch.no_grad():
        logit = model(torch.from_numpy(data["tok"]), torch.from_numpy(data["pad"])).numpy()
    labels, _ = LabelSet(run / "labels").load([1])
    card = np.flatnonzero(labels.mask[:, 52:].sum(axis=1) == 0)
    _, _, codes = A.tokens(labels.state[card], labels.seat[card].astype(np.int64))
    full = np.full((len(card), 105), -1e9)
    for r in range(len(card)):
        for t, c in enumerate(codes[r]):
            if c >= 0:
                full[r, c] = logit[r, t]
    lost = F.lost_value(labels.values[card], labels.mask[card], full)
    assert got["lost"] == pytest.approx(float(lost.mean()), abs=1e-5)
    assert got["not_best"] == pytest.approx(float((lost > 1e-6).mean()))
    assert got["gap"] > 0
    mask = labels.mask[card]
    z = np.where(mask, full, -np.inf)
    logp = z - z.max(axis=1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
    gap = F.gaps(A.policy_targets(labels.values[card], mask, 0.5), logp)
    assert got["gap"] == pytest.approx(float(gap.mean()), rel=1e-4)


def test_targets_are_the_softmax_of_values_over_temperature() -> None:
    """The targets it trains towards (the student's policy_targets): softmax(values / T) over the legal tokens, zero
    elsewhere; a numpy oracle at two temperatures."""
    values = np.array([[1.0, -2.0, np.nan, 0.5]], np.float32)
    legal = ~np.isnan(values)
    for temp in (1.0, 0.25):
        e = np.exp(np.array([1.0, -2.0, 0.5]) / temp)
        want = np.array([e[0], e[1], 0.0, e[2]]) / e.sum()
        assert np.allclose(A.policy_targets(values, legal, temp)[0], want, atol=1e-6)


def test_main_trains_and_reports_each_epoch(run: Path) -> None:
    """The script end to end: one JSON line of sizes, one per epoch with the held-out measure; --limit caps the
    training decisions."""
    out = subprocess.run([sys.executable, str(ROOT / "experiments" / "endgame_arch.py"), str(run), "--epochs", "2",
                          "--threads", "1", "--width", "16", "--layers", "1", "--limit", "50", "--move-features"],
                         check=True, capture_output=True, text=True, timeout=600).stdout.splitlines()
    head, *epochs = (json.loads(x) for x in out)
    assert head["train"] == 50 and head["test"] > 0 and len(epochs) == 2
    assert [e["epoch"] for e in epochs] == [1, 2] and all(0 <= e["test"]["lost"] for e in epochs)


def test_too_many_card_codes_is_refused() -> None:
    """A position with more distinct card codes than MAX_TOKENS is an error that says so, never a silent cut."""
    st = np.zeros((1, K.HANDS + 52 * 2 + 52 * 2 + 2), np.int8)
    st[0, K.TABLE:K.TABLE + A.MAX_TOKENS + 1] = 1
    st[0, K.LAST_CAPTURER] = -1
    with pytest.raises(ValueError, match="card codes"):
        A.tokens(st, np.zeros(1, np.int64))
    st[0, K.TABLE + A.MAX_TOKENS] = 0
    A.tokens(st, np.zeros(1, np.int64))
