"""Kungsholmskille observations: the layout table pinned against the code, field values, bounds, no hidden leaks."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

import krypenv.kungsholmskille.observation as O
from krypenv.kungsholmskille.batch import KungsholmskilleBatch
from krypenv.kungsholmskille.cards import parse_deck, rank_index
from krypenv.kungsholmskille.config import EXTERNAL, RUNNING, EnvConfig
from krypenv.kungsholmskille.observation import bounds, layout, obs_size, split
from tests.kungsholmskille.helpers import deck_for

PINNED_P4 = [
    ("hand", 0, 21), ("discards", 21, 42), ("played", 42, 63), ("trick_cards", 63, 79), ("trick_lead", 79, 95),
    ("trick_winner", 95, 111), ("money", 111, 115), ("folded", 115, 119), ("call1", 119, 123),
    ("fold_call", 123, 127), ("exchanged", 127, 131), ("call2", 131, 135), ("show_call", 135, 139),
    ("shown", 139, 143), ("dealer", 143, 147), ("forehand", 147, 151), ("to_act", 151, 155), ("phase", 155, 161),
    ("pot", 161, 162), ("trick", 162, 163), ("high", 163, 164), ("talon", 164, 165), ("deal", 165, 166),
    ("deals_left", 166, 167),
]  # fmt: skip


def docstring_table() -> list[tuple[str, str, str]]:
    """(field, size, values) of every row of the module docstring's layout table."""
    rows = []
    for line in O.__doc__.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 4 and cells[0] and cells[0] not in ("field",) \
                and not cells[0].startswith("-"):
            rows.append((cells[0], cells[1], cells[2]))
    return rows


def test_layout_is_pinned() -> None:
    assert [(k, s.start, s.stop) for k, s in layout(4).items()] == PINNED_P4
    assert obs_size(4) == 167
    for p in range(2, 7):
        spans = sorted((s.start, s.stop) for s in layout(p).values())
        assert spans[0][0] == 0 and spans[-1][1] == obs_size(p) == 75 + 23 * p
        assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))  # contiguous, no gaps


@pytest.mark.parametrize("players", [2, 4, 6])
def test_docstring_table_matches_the_code(players: int) -> None:
    """The table's rows are the fields in vector order, with the sizes and value ranges of the code."""
    rows = docstring_table()
    lay = layout(players)
    assert [r[0] for r in rows] == list(lay)
    low, high = bounds(players, 1000)
    for name, size, values in rows:
        n = {"P": players, "4P": 4 * players}.get(size) or int(size)
        assert lay[name].stop - lay[name].start == n, name
        m = re.fullmatch(r"(−?\d+)–(\d+)", values) or re.fullmatch(r"±(\d+)", values)
        lo, hi = (-int(m[1]), int(m[1])) if values.startswith("±") else (int(m[1].replace("−", "-")), int(m[2]))
        if name == "talon":
            hi = 42 - 5 * players  # the table gives the largest talon (P = 2)
        assert (int(low[lay[name]].min()), int(high[lay[name]].max())) == (lo, hi), name
    size_line = "``75 + 23 P``"
    assert size_line in O.__doc__


def scripted_core(players: int, hands: dict[int, list[str]], talon: list[str], dealer: int | None = None,
                  pot: int = 8) -> KungsholmskilleBatch:
    """A one-env core (every seat external) whose episode is running on a deck dealing the given hands."""
    core = KungsholmskilleBatch(EnvConfig(players=players), 1)
    deck = parse_deck(deck_for(players, hands, dealer=dealer, talon=talon))
    core.deals.reset(decks=deck[None, :], dealers=dealer, pots=pot)
    core.episode[0, :] = 0
    core.episode[0, 2] = 0  # learner seat 0
    core.money[0] = [-2] * players
    core.over[0] = RUNNING
    return core


def ranks(*names: str) -> np.ndarray:
    """(21,) counts of rank names."""
    out = np.zeros(21, np.int64)
    for n in names:
        out[rank_index(n)] += 1
    return out


def test_fields_along_a_scripted_deal() -> None:
    """4 players, dealer 3: seat 0 says bud, seat 1 knocks, seat 3 folds (worked example 'Fold and forehand')."""
    hands = {0: ["blaren", "3", "7", "gok", "kille"], 1: ["krans", "4", "8", "husar", "svin"]}
    core = scripted_core(4, hands, talon=["12", "vardshus"])
    d = core.deals
    for mv in ["bud", "knacka", "stay", "fold", "stay"]:  # seats 0, 1 | folds: seats 2, 3, 0
        d.play_move(0, mv)
    # L7: forehand 0 stayed, so forehand stays 0; exchange from seat 0
    assert int(d.to_act[0]) == 0
    d.play_move(0, "discard:3,7")  # seat 0 draws 12, vardshus
    obs, mask = core.observe(0, 0)
    f = split(obs, 4)
    assert np.array_equal(f["hand"], ranks("blaren", "12", "vardshus", "gok", "kille"))
    assert np.array_equal(f["discards"], ranks("3", "7"))
    assert f["call1"].tolist() == [0, 1, -1, -1]
    assert f["fold_call"].tolist() == [0, -1, 0, 1]
    assert f["folded"].tolist() == [0, 0, 0, 1]
    assert f["exchanged"].tolist() == [2, -1, -1, -1]
    assert f["call2"].tolist() == [-1] * 4 and f["show_call"].tolist() == [-1] * 4
    assert f["dealer"].tolist() == [0, 0, 0, 1] and f["forehand"].tolist() == [1, 0, 0, 0]
    assert f["to_act"].tolist() == [0, 1, 0, 0]  # seat 1 exchanges next
    assert f["phase"].tolist() == [0, 0, 1, 0, 0, 0]
    assert f["money"].tolist() == [-2] * 4 and f["pot"][0] == 8
    assert f["talon"][0] == 42 - 20 - 2 and f["deal"][0] == 0 and f["deals_left"][0] == 49
    assert f["trick_cards"].tolist() == [-1] * 16 and not f["trick_lead"].any() and f["high"][0] == -1
    assert not mask.any()  # seat 0 is not to act
    # seat 1's view: relative seats rotate, seat 0's discards are hidden, only their count is public
    g = split(core.observe(0, 1)[0], 4)
    assert np.array_equal(g["hand"], ranks(*hands[1])) and not g["discards"].any()
    assert g["exchanged"].tolist() == [-1, -1, -1, 2] and g["call1"].tolist() == [1, -1, -1, 0]
    assert g["to_act"].tolist() == [1, 0, 0, 0]
    assert core.observe(0, 1)[1].sum() == 1 + 5 + 10  # stand, 5 singles, C(5,2) pairs (L8)
    # exchange done, second call: seat 0 knocks; tricks: seat 0 leads gok, seat 1 must reach it or play lowest
    for mv in ["stand", "stand", "knacka", "play:gok"]:
        d.play_move(0, mv)
    g = split(core.observe(0, 1)[0], 4)
    assert g["trick_cards"][:4].tolist() == [-1, -1, -1, 19]  # seat 0 is relative seat 3 for seat 1
    assert g["trick_lead"][:4].tolist() == [0, 0, 0, 1] and g["high"][0] == 19 and g["trick"][0] == 0
    assert g["played"][19] == 1 and g["call2"].tolist() == [-1, -1, -1, 1] and g["phase"][4] == 1
    mask = core.observe(0, 1)[1]
    assert np.flatnonzero(mask).tolist() == [258 + rank_index("krans")]  # nothing reaches gok: lowest (L10)


def random_position(seed: int, players: int, want_fold: bool = True) -> KungsholmskilleBatch:
    """A running deal in the tricks phase with a fold and an exchange by others (random play from a seed)."""
    rng = np.random.default_rng(seed)
    core = KungsholmskilleBatch(EnvConfig(players=players), 1, kinds=[0] + [EXTERNAL] * (players - 1))
    for s in range(500):
        core.seed([seed * 1000 + s])
        core.reset()
        d = core.deals
        while not d.done[0] and d.phase[0] != 4:
            d.play_action(0, int(rng.choice(d.legal_actions(0))))
        if d.phase[0] == 4 and (d.folded[0].any() or not want_fold) and d.n_played[0] == 0:
            for _ in range(int(rng.integers(0, 5))):  # a few cards into the tricks
                if d.phase[0] == 4:
                    d.play_action(0, int(rng.choice(d.legal_actions(0))))
            if d.phase[0] == 4:
                return core
    raise AssertionError("no suitable position")


@pytest.mark.parametrize("players,seed", [(3, 1), (4, 2), (6, 3)])
def test_no_hidden_information_leaks(players: int, seed: int) -> None:
    """Two positions that differ only in cards hidden from the observer (other hands, folded hands included,
    other seats' discards and the talon) give the observer identical observations."""
    core = random_position(seed, players)
    d = core.deals
    rng = np.random.default_rng(seed)
    for observer in range(players):
        pool: list[int] = []
        for s in range(players):
            if s != observer:
                pool += [x for x in range(21) for _ in range(int(d.hands[0, s, x]))]
                pool += [int(x) for x in d.discards[0, s] if x >= 0]
        pool += d.talon(0)
        for _ in range(20):  # a redistribution that really differs
            perm = rng.permutation(pool)
            twin = KungsholmskilleBatch(EnvConfig(players=players), 1)
            twin.state[:], twin.cash[:], twin.episode[:] = core.state, core.cash, core.episode
            t, k = twin.deals, 0
            for s in range(players):
                if s != observer:
                    n = int(d.hands[0, s].sum())
                    t.hands[0, s] = np.bincount(perm[k:k + n], minlength=21)
                    k += n
                    for j in range(2):
                        if d.discards[0, s, j] >= 0:
                            t.discards[0, s, j] = perm[k]
                            k += 1
            t.deck[0, int(d.talon_pos[0]):] = perm[k:]
            if not np.array_equal(t.hands[0], d.hands[0]):
                break
        assert all((t.card_census(0) == 2).tolist())
        assert not np.array_equal(t.hands[0], d.hands[0])  # the hidden cards really differ
        o1, m1 = core.observe(0, observer)
        o2, m2 = twin.observe(0, observer)
        assert np.array_equal(o1, o2) and np.array_equal(m1, m2)
        other = (observer + 1) % players  # ... and the test can see a difference where there is one
        if not np.array_equal(t.hands[0, other], d.hands[0, other]):
            assert not np.array_equal(core.observe(0, other)[0], twin.observe(0, other)[0])


@pytest.mark.parametrize("players", [2, 5])
def test_observations_stay_in_bounds_and_masks_follow_the_turn(players: int) -> None:
    from gymnasium import spaces

    core = KungsholmskilleBatch(EnvConfig(players=players, max_deals=5), 1)
    box = spaces.Box(core.low, core.high, dtype=np.int16)
    rng = np.random.default_rng(players)
    from krypenv.kungsholmskille.env_kernels import k_act_external

    status = np.zeros(1, np.int64)
    for ep in range(5):
        core.seed([ep])
        core.reset()
        while core.over[0] == RUNNING:
            actor = int(core.deals.to_act[0])
            for s in range(players):
                obs, mask = core.observe(0, s)
                assert obs in box
                assert mask.any() == (s == actor) and split(obs, players)["to_act"][0] == (s == actor)
            mask = core.observe(0, actor)[1]
            k_act_external(*core._arrays(), np.array([0]), np.array([int(rng.choice(np.flatnonzero(mask)))]), status)
        for s in range(players):
            obs, mask = core.observe(0, s)
            assert obs in box and not mask.any() and not split(obs, players)["phase"].any()
