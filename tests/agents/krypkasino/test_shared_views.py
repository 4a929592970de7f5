"""Shared views of the guided search's rollout rows (krypenv.agents.krypkasino.lockstep.same_views).

Rows whose seat to act sees the same thing (the worlds differ only in the deck's order and the other
seats' hands) are scored once per ply; a brute-force oracle here says which rows those are.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from krypenv.agents.krypkasino import lockstep as L
from krypenv.agents.krypkasino.guided import GuidedPIMC

from krypenv import agents
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.config import C_E0, EXTERNAL, EnvConfig
from krypenv.krypkasino.engine import kernels as K
from tests.agents.krypkasino.test_heuristics import decisions_of

CKPT = Path(__file__).resolve().parents[3] / "checkpoints"


def oracle(rs: np.ndarray, ri: np.ndarray, rows: np.ndarray, players: int) -> list[int]:
    """first[k] by brute force: the first row equal to row k in everything but the deck's order and the contents of
    the other seats' hands, with the same hand sizes, deck make-up (a variant's, K20) and match integers."""
    def key(r: int) -> tuple[bytes, ...]:
        row = rs[r].astype(np.int64)
        n = int(row[K.DECK_LEN]) or 104
        make_up = np.bincount(row[K.DECK:K.DECK + n], minlength=52) if n != 104 else np.zeros(52, np.int64)
        sizes = [int(row[K.HANDS + 52 * s:K.HANDS + 52 * s + 52].sum()) for s in range(players)]
        seen = row.copy()
        seen[K.DECK:K.DECK + 104] = 0
        for s in range(players):
            if s != row[K.TURN]:
                seen[K.HANDS + 52 * s:K.HANDS + 52 * s + 52] = 0
        return seen.tobytes(), bytes(sizes), make_up.tobytes(), ri[r].tobytes()

    keys = [key(int(r)) for r in rows]
    return [keys.index(k) for k in keys]


def firsts(rs: np.ndarray, ri: np.ndarray, rows: np.ndarray, players: int) -> list[int]:
    """lockstep.same_views' first[k] (the work space as guided.GuidedPIMC._shared_views allocates it)."""
    width = -(-rs.shape[1] // 8) * 8
    view = np.empty((rows.shape[0], width), np.int8)
    first = np.empty(rows.shape[0], np.int64)
    L.same_views(rs, ri, np.asarray(rows, np.int64), players, view, view.view(np.uint64), first)
    return first.tolist()


@pytest.mark.parametrize("players, ckpt", [(2, "exit-2p.npz"), (3, "exit-3p.npz")])
def test_the_searchs_rows_share_exactly_the_oracles_views(players: int, ckpt: str) -> None:
    """Over the rollout rows of real searches, same_views groups rows exactly as the oracle does (and some do)."""
    agent = agents.load(f"pimc:policy=mlp:{CKPT / ckpt},samples=6")
    assert isinstance(agent, GuidedPIMC)
    seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    shared = agent._shared_views

    def spy(rs, ri, rows, p):  # type: ignore[no-untyped-def]
        if len(seen) < 12 and rows.shape[0] > 1:
            seen.append((rs.copy(), ri.copy(), rows.copy()))
        return shared(rs, ri, rows, p)

    agent._shared_views = spy  # type: ignore[method-assign]
    for k, (_core, batch) in enumerate(decisions_of(players, 60, n=4)):
        if k % 4 == 1:
            agent.act(batch)
        if len(seen) >= 12:
            break
    merged = 0
    for rs, ri, rows in seen:
        want = oracle(rs, ri, rows, players)
        assert firsts(rs, ri, rows, players) == want
        merged += sum(w != k for k, w in enumerate(want))
    assert merged > 0


def _variants(preset: str) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """A mid-deal row of 2 players and altered copies of it: rows, match integers, and which row is which."""
    core = KrypkasinoBatch(EnvConfig(players=2, preset=preset), 1, seat=0, kinds=[EXTERNAL] * 2)
    core.seed([5])
    core.reset()
    base = core.state[0].copy()
    actor = int(base[K.TURN])
    other = K.HANDS + 52 * (1 - actor)
    own = K.HANDS + 52 * actor
    held = np.flatnonzero(base[other:other + 52])
    absent = np.flatnonzero(base[other:other + 52] == 0)
    rows = {"base": base}
    r = base.copy()
    r[K.DECK], r[K.DECK + 1] = base[K.DECK + 1], base[K.DECK]  # the deck in another order
    rows["deck order"] = r
    r = base.copy()
    r[other + held[0]] -= 1  # the other seat holds another card instead: same size, unseen
    r[other + absent[0]] += 1
    rows["other hand"] = r
    r = base.copy()
    r[other + held[0]] -= 1
    rows["other size"] = r
    r = base.copy()
    mine = np.flatnonzero(base[own:own + 52])
    r[own + mine[0]] -= 1
    r[own + np.flatnonzero(base[own:own + 52] == 0)[0]] += 1
    rows["own hand"] = r
    r = base.copy()
    r[K.TABLE + np.flatnonzero(base[K.TABLE:K.TABLE + 52])[0]] -= 1
    rows["table"] = r
    r = base.copy()
    r[int(core.packed[C_E0]) + 1] += 1  # the capture choice's fixed cards
    rows["choice"] = r
    n = int(base[K.DECK_LEN]) or 104
    r = base.copy()
    r[K.DECK + n - 1] = (int(base[K.DECK + n - 1]) + 1) % 52  # another make-up (a variant deck's is public)
    rows["make-up"] = r
    rows["ints"] = base.copy()
    rs = np.stack(list(rows.values()))
    ri = np.repeat(core.ints[:1], rs.shape[0], axis=0)
    ri[-1, 1] += 1  # the match totals differ
    return rs, ri, {name: k for k, name in enumerate(rows)}


@pytest.mark.parametrize("preset", ["standard", "small"])
def test_hidden_columns_are_shared_and_visible_ones_are_not(preset: str) -> None:
    """The deck's order and the other hand's contents are shared; its size, our hand, the table, the capture
    choice, the match integers and a variant deck's make-up (not the standard deck's: always two of each) are not."""
    rs, ri, at = _variants(preset)
    rows = np.arange(rs.shape[0])
    got = firsts(rs, ri, rows, 2)
    assert got == oracle(rs, ri, rows, 2)
    same = {name for name, k in at.items() if got[k] == 0}
    expect = {"base", "deck order", "other hand"} | ({"make-up"} if preset == "standard" else set())
    assert same == expect
    reversed_rows = rows[::-1].copy()  # the first of a view is the first in the order given
    assert firsts(rs, ri, reversed_rows, 2) == oracle(rs, ri, reversed_rows, 2)


def test_many_copies_fill_the_hash_table() -> None:
    """Hundreds of rows of few views (probing past full runs of the table) group as the oracle says."""
    rs, ri, _ = _variants("standard")
    rows = np.tile(np.arange(rs.shape[0]), 60)
    assert firsts(rs, ri, rows, 2) == oracle(rs, ri, rows, 2)
