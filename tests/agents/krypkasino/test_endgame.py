"""``endgame:SPEC``: the 2-player endgame solved exactly, against a plain minimax oracle on the true deal."""

from __future__ import annotations

import numpy as np
import pytest
from krypenv.agents.krypkasino import endgame as E
from krypenv.agents.krypkasino.pimc import game_vector

from krypenv import agents
from krypenv.agent_api import check_actions
from krypenv.krypkasino.cards import POINTS
from krypenv.krypkasino.engine import kernels
from krypenv.krypkasino.engine.state import _packets
from krypenv.krypkasino.rules import LATER_PATTERN
from krypenv.krypkasino.view import _legal_moves
from tests.agents.krypkasino.test_heuristics import decisions_of

LATER = _packets(LATER_PATTERN)


def final_score(row: np.ndarray, players: int, seat: int, lcp: bool) -> int:
    """K16 (K17 with ``lcp``) of ``seat`` in a finished deal record, from its piles and tabbes."""
    piles, tabbes = kernels.piles_at(players), kernels.tabbes_at(players)
    pts = int((row[piles + 52 * seat:piles + 52 * seat + 52].astype(np.int64) * POINTS).sum())
    left = (seat + 1) % players
    pts += 5 * int(row[tabbes + seat]) - 5 * int(row[tabbes + left])
    return pts + int(lcp and row[kernels.TAKER] == seat)


def oracle(row: np.ndarray, root: int, lcp: bool, spades: bool) -> int:
    """Plain minimax (no pruning) of ``root``'s final score from a whole deal record, every hand read from it."""
    if row[kernels.DONE]:
        return final_score(row, 2, root, lcp)
    seat = int(row[kernels.TURN])
    hand, table = row[kernels.HANDS + 52 * seat:kernels.HANDS + 52 * seat + 52], row[kernels.TABLE:kernels.TABLE + 52]
    vals = []
    for card, cap in _legal_moves(hand.copy(), table.copy(), -1, np.zeros(52, np.int8)):
        nxt = row.copy()[None, :]
        kernels.apply_move(nxt, 0, 2, card, cap, *LATER, spades)
        vals.append(oracle(nxt[0], root, lcp, spades))
    return min(vals) if seat == root else max(vals)


def oracle_values(core, batch, k: int) -> np.ndarray:
    """(A,) minus the root seat's final score after the best move each action leads to (NaN: none)."""
    i, view = int(batch.envs[k]), batch.views()[k]
    rules = batch.rules
    row = core.deals.state[i].copy()
    out = np.full(batch.mask.shape[1], np.nan)
    for card, cap in view.legal_moves:
        nxt = row.copy()[None, :]
        kernels.apply_move(nxt, 0, 2, card, cap, *LATER, rules.set_aside == "spades")
        v = -oracle(nxt[0], int(batch.seats[k]), rules.last_capture_point, rules.set_aside == "spades")
        leads = [card] if view.pending < 0 else ([52 + c for c in np.flatnonzero(cap > view.fixed)] or [104])
        for a in leads:
            out[a] = np.nanmax([out[a], v])
    return out


@pytest.mark.parametrize("set_aside", ["court", "spades"])
def test_values_are_the_minimax_of_the_true_deal(set_aside: str) -> None:
    """At every decision with the deck empty, every action's value is the oracle's minimax on the true deal, the action
    played is a best one, and a capture choice is included; before that nothing is solved."""
    agent = agents.load("endgame:pimc:samples=2")
    solved = choices = unsolved = 0
    for core, batch in decisions_of(2, 31, n=40, set_aside=set_aside):
        st = core.deals.state
        rows = E.solvable_rows(st, np.asarray(batch.envs, np.int64), 2)
        empty = st[batch.envs, kernels.POS] >= np.array([kernels.deck_length(st, int(i)) for i in batch.envs])
        np.testing.assert_array_equal(rows, empty)
        unsolved += int((~rows).sum())
        for k in np.flatnonzero(rows):
            sub = E._sub(batch, np.array([k]))
            values, act = agent.values(sub)
            want = oracle_values(core, batch, int(k))
            np.testing.assert_array_equal(values[0], want)
            assert values[0, act[0]] == np.nanmax(want)
            played = agent.act(sub)
            assert played.dtype == np.int64
            np.testing.assert_array_equal(played, act)
            solved += 1
            choices += int(batch.views()[k].pending >= 0)
    assert solved >= 20 and choices >= 1 and unsolved > solved


def test_the_world_is_what_the_seat_knows() -> None:
    """The solver plays from the determinized world, which is the true deal once the deck is empty: a different hidden
    hand in the engine (of the same size) does not change what it plays."""
    for core, batch in decisions_of(2, 7, n=6):
        rows = E.solvable_rows(core.deals.state, np.asarray(batch.envs, np.int64), 2)
        if rows.any():
            k = int(np.flatnonzero(rows)[0])
            break
    agent = E.EndgameAgent(agents.load("expert"))
    sub = E._sub(batch, np.array([k]))
    i = int(batch.envs[k])
    seat = int(batch.seats[k])
    other = kernels.HANDS + 52 * (1 - seat)
    before = agent.values(sub)[0]
    saved = core.deals.state[i].copy()
    size = int(core.deals.state[i, other:other + 52].sum())
    fake = np.zeros(52, np.int8)
    fake[:size] = 1  # another hidden hand of the same (public) size: the solver must not read it
    assert (fake != core.deals.state[i, other:other + 52]).any()
    core.deals.state[i, other:other + 52] = fake
    try:
        after = agent.values(sub)[0]
    finally:
        core.deals.state[i] = saved
    np.testing.assert_array_equal(before, after)


@pytest.mark.parametrize("players", [2, 3])
def test_the_wrapped_agent_plays_the_rest(players: int) -> None:
    """Where the deck is not empty (and everywhere with 3 players) the actions are the wrapped agent's, drawn from the
    same streams; every action is legal."""
    wrapped, plain = agents.load("endgame:random"), agents.load("random")
    seen = 0
    for core, batch in decisions_of(players, 5, n=4):
        rows = E.solvable_rows(core.deals.state, np.asarray(batch.envs, np.int64), players)
        assert players == 2 or not rows.any()
        saved = core.rng.copy()
        acts = wrapped.act(batch)
        assert acts.dtype == np.int64
        got = check_actions(wrapped.name, batch, acts)
        core.rng[:] = saved
        if not rows.any():
            np.testing.assert_array_equal(got, plain.act(batch))
            seen += 1
        core.rng[:] = saved
    assert seen > 10


def test_alpha_beta_prunes() -> None:
    """Over every solved decision of 8 games the solver visits under 70% of the positions below the root that the whole
    tree holds (its pruning works; 47% when written), at the oracle's values (the test above)."""
    agent = E.EndgameAgent(agents.load("expert"))
    visited = whole = 0
    for core, batch in decisions_of(2, 3, n=8):
        for k in np.flatnonzero(E.solvable_rows(core.deals.state, np.asarray(batch.envs, np.int64), 2)):
            before = agent.nodes
            agent.act(E._sub(batch, np.array([k])))
            visited += agent.nodes - before
            whole += count_nodes(core.deals.state[int(batch.envs[k])].copy(), batch.rules.set_aside == "spades") - 1
    assert whole > 1000 and 0 < visited < 0.7 * whole


def test_a_card_is_worth_its_best_capture_and_ties_go_first() -> None:
    """Where a card has several captures its value is the best of them; of equally good moves the first in the engine's
    order (rank, then suit) is played, so a decision depends on the information state alone."""
    agent = E.EndgameAgent(agents.load("expert"))
    several = ties = 0
    for core, batch in decisions_of(2, 500, n=120):
        for k in np.flatnonzero(E.solvable_rows(core.deals.state, np.asarray(batch.envs, np.int64), 2)):
            view = batch.views()[k]
            cards = [c for c, _ in view.legal_moves]
            if view.pending >= 0:
                continue
            values, act = agent.values(E._sub(batch, np.array([k])))
            best = [c for c in sorted(set(cards), key=lambda c: (c % 13, c // 13)) if values[0, c] == np.nanmax(values)]
            assert act[0] == best[0]
            ties += len(best) > 1
            if len(cards) > len(set(cards)):
                np.testing.assert_array_equal(values[0], oracle_values(core, batch, int(k)))
                several += 1
    assert several >= 3 and ties >= 10


def count_nodes(row: np.ndarray, spades: bool) -> int:
    """Positions below a record in the whole game tree (its root included)."""
    if row[kernels.DONE]:
        return 1
    seat = int(row[kernels.TURN])
    hand, table = row[kernels.HANDS + 52 * seat:kernels.HANDS + 52 * seat + 52], row[kernels.TABLE:kernels.TABLE + 52]
    total = 1
    for card, cap in _legal_moves(hand.copy(), table.copy(), -1, np.zeros(52, np.int8)):
        nxt = row.copy()[None, :]
        kernels.apply_move(nxt, 0, 2, card, cap, *LATER, spades)
        total += count_nodes(nxt[0], spades)
    return total


def test_bad_specs_are_named() -> None:
    """An empty or unknown wrapped spec, another game, or values from an agent that has none: clear errors."""
    with pytest.raises(ValueError, match=r"^endgame needs the agent to wrap: endgame:SPEC, e\.g\. "
                                         r"endgame:mlp:checkpoints/exit-2p\.npz$"):
        agents.load("endgame")
    with pytest.raises(ValueError, match="unknown agent 'nosuch'"):
        agents.load("endgame:nosuch")
    with pytest.raises(ValueError, match="plays krypkasino"):
        agents.load("endgame:expert", "kungsholmskille")
    agent = agents.load("endgame:random")
    for core, batch in decisions_of(2, 1, n=2):
        with pytest.raises(ValueError, match="gives no action values"):
            agent.values(batch)
        break


def test_game_vector_is_pimcs() -> None:
    """The solver scores with pimc's game vector: players, hand, variants and sides from the rules."""
    for core, batch in decisions_of(2, 1, n=1):
        g = game_vector(batch.rules)
        assert list(g[:2]) == [2, 6] and len(g) == 4 + 2
        break


def test_an_unsolvable_deal_is_not_searched() -> None:
    """Called on a deal whose deck is not empty, the solver searches nothing: action −1, every value NaN."""
    core, batch = next(iter(decisions_of(2, 9, n=2)))
    i = int(batch.envs[0])
    assert not E.solvable(core.deals.state, i, 2)
    out, nodes = np.zeros(batch.mask.shape[1]), np.zeros(1, np.int64)
    a = E.solve(core.deals.state, i, np.int64(core.choice[i, 0]), core.choice[i, 1:], game_vector(batch.rules), *LATER,
                out, nodes)
    assert a == -1 and np.isnan(out).all() and nodes[0] == 0
