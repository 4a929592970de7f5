"""pimc as a teacher: every action's value (``PIMCAgent.values``) against an oracle that re-plays the worlds."""

from __future__ import annotations

import numpy as np
import pytest
from krypenv.agents.krypkasino import pimc as PM
from krypenv.agents.krypkasino import tactics as T
from krypenv.agents.krypkasino import worlds as W

from krypenv import agents
from krypenv.krypkasino.engine import kernels
from tests.agents.krypkasino.test_heuristics import decisions_of


def oracle_values(agent: PM.PIMCAgent, batch, k: int, u: float) -> np.ndarray:
    """(105,) minus the mean mover score of each action's best move, re-playing pimc's worlds move by move.

    The moves come from the seat view (not from the search's own listing), each is applied and
    rolled out in every world with the stream pimc draws them from: one uniform for the baseline's
    tie-break, then per world the determinization and per rollout one seed shared by every move.
    """
    core, rules = batch.core, batch.rules
    P, i = rules.players, int(batch.envs[k])
    st = core.deals.state
    game, _, _, _ = agent._inputs(batch)
    view = batch.views()[k]
    seat = int(batch.seats[k])
    rng = np.array([np.uint64(int(u * 9007199254740992.0)) ^ np.uint64(0x5DEECE66D2545F49)], np.uint64)
    W.uniform(rng)  # the baseline's tie-break
    voids = np.zeros(P, np.int64)
    scr = T.new_scratch()
    if agent.voids:
        T.round_voids(st, i, P, rules.hand_size, voids, scr)
    width = kernels.tabbes_at(P) + P
    work = np.zeros((2, width), np.int8)
    pool, used = np.empty(104, np.int64), np.empty(104, np.bool_)
    moves = view.legal_moves
    sums = np.zeros(len(moves))
    stop = int(st[i, kernels.ROUND]) + agent.rounds if agent.rounds > 0 else 1000
    bufs = (np.empty(T.MAX_MOVES, np.int64), np.empty((T.MAX_MOVES, 52), np.int8), np.empty(T.MAX_MOVES),
            np.empty(T.MAX_KEYS, np.int64), np.zeros(52, np.int8))
    for _ in range(agent.samples):
        W.determinize(st, i, P, seat, voids, agent.voids, work, 0, rng, pool, used)
        for _r in range(agent.rollouts):
            base = rng[0]
            W.uniform(rng)
            for m, (card, cap) in enumerate(moves):
                work[1] = work[0]
                kernels.apply_move(work, 1, P, card, cap, agent.later_kinds, agent.later_sizes,
                                   rules.set_aside == "spades")
                sub = np.array([base], np.uint64)
                PM.rollout(work, 1, game, agent.opts[PM.O_POLICY], agent.weights, agent.horizon, stop,
                           agent.later_kinds, agent.later_sizes, sub, *bufs, scr)
                sums[m] += PM.side_score(work, 1, game, seat)
    out = np.full(batch.mask.shape[1], np.nan)
    for m, (card, cap) in enumerate(moves):  # the actions that keep the move open (krypenv.krypkasino.actions)
        if view.pending < 0:
            leads = [card]
        else:
            leads = [52 + c for c in np.flatnonzero(cap > view.fixed)] or [104]
        for a in leads:
            out[a] = np.nanmax([out[a], -sums[m] / (agent.samples * agent.rollouts)])
    return out


@pytest.mark.parametrize("players, spec, steps", [(2, "pimc:samples=3", 40), (3, "pimc:samples=2,rollouts=2", 25),
                                                  (2, "pimc:samples=2,rounds=0,voids=false,policy=greedy", 30)])
def test_values_are_the_worlds_means(players: int, spec: str, steps: int) -> None:
    """Every searched decision's labels equal the oracle's; the action is the one ``act`` plays; one move: NaN."""
    agent = agents.load(spec)
    searched = choices = single = 0
    for step, (core, batch) in enumerate(decisions_of(players, 11 * players, n=6)):
        if step >= steps:
            break
        saved = core.rng.copy()
        values, chosen = agent.values(batch)
        after = core.rng.copy()
        core.rng[:] = saved
        u = batch.uniforms(1)[:, 0]
        assert np.array_equal(core.rng, after)  # one uniform per decision, as act draws
        core.rng[:] = saved
        assert np.array_equal(chosen, agent.act(batch))
        for k in range(len(batch)):
            legal = np.flatnonzero(batch.mask[k])
            assert np.isnan(values[k][batch.mask[k] == 0]).all()
            if len(batch.views()[k].legal_moves) <= 1:
                single += 1
                assert np.isnan(values[k]).all()
                continue
            searched += 1
            choices += int(batch.views()[k].pending >= 0)
            assert not np.isnan(values[k][legal]).any()
            np.testing.assert_allclose(values[k], oracle_values(agent, batch, k, float(u[k])), rtol=0, atol=1e-9)
    assert searched > 20 and single > 0
    if players == 3:
        assert choices > 0  # capture choices were labelled too


def test_values_drivers_agree() -> None:
    """The parallel and serial drivers give the same labels."""
    import numba

    agent = agents.load("pimc:samples=2")
    for step, (core, batch) in enumerate(decisions_of(3, 5, n=8)):
        if step == 6:
            break
    saved = core.rng.copy()
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        serial = agent.values(batch)
        core.rng[:] = saved
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        parallel = agent.values(batch)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(serial[0], parallel[0])
    np.testing.assert_array_equal(serial[1], parallel[1])
