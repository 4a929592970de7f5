"""The duplicate schedule every game shares (krypenv.eval.schedule): lineups, seatings, tables, seeds."""

from __future__ import annotations

import numpy as np
import pytest
from krypenv.eval.schedule import Schedule, lineups, out_folder, seatings


def test_lineups_and_seatings() -> None:
    assert lineups(2, 2) == [(0, 1)]
    assert lineups(3, 2) == [(0, 1), (0, 2), (1, 2)]
    assert lineups(4, 3) == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    assert lineups(2, 4) == [(0, 1, 0, 1)]
    assert lineups(2, 3) == [(0, 1, 0)]
    assert seatings((0, 1, 2)) == [(0, 1, 2), (2, 0, 1), (1, 2, 0)]
    assert seatings((0, 1, 0, 1)) == [(0, 1, 0, 1), (1, 0, 1, 0)]  # turning by two repeats a seating
    assert len(seatings((0, 1, 2), "permutations")) == 6
    assert len(seatings((0, 1, 0), "permutations")) == 3
    with pytest.raises(ValueError, match="seatings must be one of"):
        seatings((0, 1), "shuffle")


def test_every_deck_once_per_table_with_the_same_deck() -> None:
    s = Schedule(2, None, n_agents=3, decks=4, seed=7)
    assert s.n_tables == 6 and s.n_games == 24
    games = np.arange(s.n_games)
    pairs = list(zip(s.deck_of(games), s.table_of(games)))
    assert sorted(pairs) == [(d, t) for d in range(4) for t in range(6)]
    decks = s.deck_seeds(games)
    for d in range(4):
        assert len({decks[g] for g in games if s.deck_of(g) == d}) == 1
    assert len(set(decks)) == 4
    assert len(set(s.agent_seeds(games))) == 24
    assert len(set(s.deck_seeds(games, independent=True)) | set(decks)) == 28
    seating = s.seating
    for k, lineup in enumerate(s.lineups):  # every agent of a lineup sits in every seat once
        rows = seating[[t for t, (lk, _) in enumerate(s.tables) if lk == k]]
        for seat in range(2):
            assert sorted(rows[:, seat]) == sorted(lineup)
    assert Schedule(2, None, 3, 4, seed=8).deck_seeds(games) != decks


def test_team_seating_gives_an_agent_a_whole_team() -> None:
    s = Schedule(4, ((0, 2), (1, 3)), n_agents=2, decks=2, seed=0)
    assert s.seating.tolist() == [[0, 1, 0, 1], [1, 0, 1, 0]]
    s6 = Schedule(6, ((0, 3), (1, 4), (2, 5)), n_agents=3, decks=2, seed=0)
    assert s6.seating.tolist() == [[0, 1, 2, 0, 1, 2], [2, 0, 1, 2, 0, 1], [1, 2, 0, 1, 2, 0]]


def test_out_folder_keeps_the_tags_and_cuts_the_agents() -> None:
    assert out_folder(["a", "b:c/d"], ["2p", "s1"], prefix="x-").as_posix() == "evals/x-a_b-c-d-2p-s1"
    long = out_folder(["y" * 300], ["4p", "10d"])
    assert long.name.endswith("-4p-10d") and len(long.name) == 120
