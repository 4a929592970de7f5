"""Observation encoding: pinned layout, field values, bounds, card counting and no hidden leaks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from krypenv.krypkasino.actions import CHOOSING, MOVED
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.cards import card_code, counts_from_names
from krypenv.krypkasino.config import EnvConfig
from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.observation import layout, obs_size, split
from krypenv.krypkasino.rules import Rules

PINNED_P3 = [
    ("hand", 0, 52), ("table", 52, 104), ("aside", 104, 156), ("seen", 156, 208), ("playing", 208, 260),
    ("chosen", 260, 312), ("sweep", 312, 325), ("hand_size", 325, 328), ("points", 328, 331),
    ("tabbes", 331, 334), ("team", 334, 337), ("dealer", 337, 340), ("last_capturer", 340, 343),
    ("to_act", 343, 346), ("deck_left", 346, 347), ("round", 347, 348), ("last_round", 348, 349),
    ("choosing", 349, 350), ("deals_left", 350, 351),
]


def test_layout_is_pinned() -> None:
    lay = layout(3)
    assert [(k, s.start, s.stop) for k, s in lay.items()] == PINNED_P3
    assert obs_size(3) == 351
    for p in range(2, 7):
        lay = layout(p)
        stops = sorted((s.start, s.stop) for s in lay.values())
        assert stops[0][0] == 0 and stops[-1][1] == obs_size(p) == 325 + 7 * p + 5
        assert all(a[1] == b[0] for a, b in itertools.pairwise(stops))  # contiguous, no gaps


def test_docstring_table_lists_every_field() -> None:
    import krypenv.krypkasino.observation as mod

    for name in layout(3):
        assert f"| {name} " in mod.__doc__


def core_with(deals: DealBatch, **cfg) -> KrypkasinoBatch:
    """A one-env core holding the given position."""
    core = KrypkasinoBatch(EnvConfig(players=deals.rules.players, **cfg), 1)
    core.load(deals)
    return core


def test_fields_of_a_hand_built_position() -> None:
    rules = Rules(players=3)
    d = DealBatch.position(rules, hands=[["5H", "9C"], ["2S", "3S", "KD"], ["AS"]], table=["5C", "9D"],
                       turn=1, dealer=0, deck_rest=["7H"] * 3, aside=["QC"], last_capturer=2)
    d.piles[0, 2] = counts_from_names(["AD", "10D"])
    d.tabbes[0, 0] = 2
    core = core_with(d)
    obs, mask = core.observe(0, 1)  # seat 1 is to act
    f = split(obs, 3)
    assert np.array_equal(f["hand"], counts_from_names(["2S", "3S", "KD"]))
    assert np.array_equal(f["table"], counts_from_names(["5C", "9D"]))
    assert np.array_equal(f["aside"], counts_from_names(["QC"]))
    seen = counts_from_names(["2S", "3S", "KD", "5C", "9D", "QC", "AD", "10D"])
    assert np.array_equal(f["seen"], seen)
    # relative seats from observer 1: r=0 seat 1, r=1 seat 2, r=2 seat 0
    assert f["hand_size"].tolist() == [3, 1, 2]
    assert f["points"].tolist() == [0, 4, 0]  # AD 1 + 10D 3 in seat 2's pile
    assert f["tabbes"].tolist() == [0, 0, 2]
    assert f["dealer"].tolist() == [0, 0, 1]
    assert f["last_capturer"].tolist() == [0, 1, 0]
    assert f["to_act"].tolist() == [1, 0, 0]
    assert f["team"].tolist() == [1, 0, 0]
    # table 5 + 9 = 14: only a played ace (14) sweeps (worked example G)
    assert f["sweep"].tolist() == [0] * 12 + [1]
    assert f["deck_left"][0] == 3 and f["round"][0] == 0 and f["last_round"][0] == 0
    assert f["choosing"][0] == 0 and f["deals_left"][0] == 0
    assert mask[:52].sum() == 3
    # seat 0 is not to act: full observation, zero mask, to_act says who acts
    obs0, mask0 = core.observe(0, 0)
    f0 = split(obs0, 3)
    assert not mask0.any() and f0["to_act"].tolist() == [0, 1, 0]
    assert f0["tabbes"].tolist() == [2, 0, 0]
    assert np.array_equal(f0["hand"], counts_from_names(["5H", "9C"]))


def test_teams_flags() -> None:
    core = KrypkasinoBatch(EnvConfig(players=6, teams=[[0, 3], [1, 4], [2, 5]]), 1)
    core.seed([0])
    core.reset()
    f = split(core.observe(0, 1)[0], 6)
    assert f["team"].tolist() == [1, 0, 0, 1, 0, 0]


def test_choosing_fields_and_public_pending_card() -> None:
    rules = Rules(players=2)
    d = DealBatch.position(rules, hands=[["10C", "4H"], ["2C"]], table=["5H", "5D", "5S"], deck_rest=["7H"])
    core = core_with(d)
    assert core.act(0, card_code("10C")) == CHOOSING
    f = split(core.observe(0, 0)[0], 2)
    assert f["choosing"][0] == 1 and f["playing"][card_code("10C")] == 1 and f["playing"].sum() == 1
    assert f["hand"][card_code("10C")] == 0 and f["hand_size"][0] == 1
    assert f["seen"][card_code("10C")] == 1
    g = split(core.observe(0, 1)[0], 2)  # the opponent sees the card being played
    assert g["playing"][card_code("10C")] == 1 and g["hand_size"][1] == 1 and g["seen"][card_code("10C")] == 1
    assert core.act(0, 52 + card_code("5S")) == CHOOSING
    f = split(core.observe(0, 0)[0], 2)
    assert f["chosen"][card_code("5S")] == 1


def unseen_truth(core: KrypkasinoBatch, observer: int) -> np.ndarray:
    """Copies of each card the observer cannot have seen: other hands (minus a card being played) and the deck."""
    d = core.deals
    hidden = np.zeros(52, np.int64)
    for s in range(d.rules.players):
        if s != observer:
            hidden += d.hands[0, s]
    pending = int(core.choice[0, 0])
    if pending >= 0 and d.turn[0] != observer:
        hidden[pending] -= 1
    hidden += np.bincount(d.deck[0, d.pos[0]:].astype(np.int64), minlength=52)
    return hidden


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_bounds_and_card_counting_along_random_play(players: int) -> None:
    from gymnasium import spaces

    core = KrypkasinoBatch(EnvConfig(players=players, last_capture_point=True), 1)
    box = spaces.Box(core.low, core.high, dtype=np.int8)
    core.seed([players])
    core.reset()
    rng = np.random.default_rng(0)
    while not core.deals.done[0]:
        for observer in range(players):
            obs, mask = core.observe(0, observer)
            assert obs in box
            f = split(obs, players)
            assert np.array_equal(2 - f["seen"], unseen_truth(core, observer))
            assert mask.any() == (observer == core.deals.turn[0])
        _, mask = core.observe(0, int(core.deals.turn[0]))
        assert core.act(0, int(rng.choice(np.flatnonzero(mask)))) in (MOVED, CHOOSING)
    for observer in range(players):
        obs, mask = core.observe(0, observer)
        assert obs in box and not mask.any()
        f = split(obs, players)
        assert (f["seen"] == 2).all() and f["to_act"].sum() == 0 and f["hand_size"].sum() == 0


def test_no_hidden_information_leaks() -> None:
    """Two deals with different hidden cards but the same public history and own hand look the same."""
    rng = np.random.default_rng(7)
    core = KrypkasinoBatch(EnvConfig(players=4), 1)
    core.seed([11])
    core.reset()
    for _ in range(23):  # some public history: captures, creeps, a new round
        _, mask = core.observe(0, int(core.deals.turn[0]))
        core.act(0, int(rng.choice(np.flatnonzero(mask))))
    d = core.deals
    observer = int(d.turn[0])
    # redistribute every card the observer cannot see among the other hands and the deck
    pool = []
    for s in range(4):
        if s != observer:
            pool += [c for c in range(52) for _ in range(d.hands[0, s, c])]
    pool += d.deck[0, d.pos[0]:].tolist()
    pool = rng.permutation(pool)
    twin = KrypkasinoBatch(EnvConfig(players=4), 1)
    twin.state[:] = core.state
    twin.ints[:] = core.ints
    k = 0
    for s in range(4):
        if s != observer:
            n = int(d.hands[0, s].sum())
            twin.deals.hands[0, s] = np.bincount(pool[k:k + n], minlength=52)
            k += n
    twin.deals.deck[0, d.pos[0]:] = pool[k:]
    assert not np.array_equal(twin.deals.hands[0], d.hands[0])  # the hidden cards really differ
    assert np.array_equal(twin.deals.hist_card, d.hist_card) and np.array_equal(twin.deals.cap_log, d.cap_log)
    o1, m1 = core.observe(0, observer)
    o2, m2 = twin.observe(0, observer)
    assert np.array_equal(o1, o2) and np.array_equal(m1, m2)
    # the test can fail: another seat's observation does change
    other = (observer + 1) % 4
    assert not np.array_equal(core.observe(0, other)[0], twin.observe(0, other)[0])
