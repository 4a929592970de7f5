"""The device env's per-env functions and CPU drivers (Kungsholmskille), what :mod:`krypenv.envs.device` adds.

Built from the env functions of :mod:`krypenv.kungsholmskille.env_kernels` (``act_one``, ``advance_one``,
``observe_one``, ``reset_one``, the money of L3 and L12–L21): ``finish_seats_one`` pays every seat its
money change since the previous step and auto-resets a finished episode, ``observe_actor_one``
observes whoever is to act, ``step_seats_one`` is a whole step when no seat is played from Python.
The ``k_*`` drivers run them over a batch (``_par`` on numba's threads, ``_ser`` in one) with the
arguments ``(st, cash, ep, rng, cfg, prev_st, prev_cash, ..., chunks)``; the CUDA kernel
(:mod:`krypenv.kungsholmskille.cuda_kernels`) calls the same per-env functions, one thread per env.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from krypenv.kungsholmskille import env_kernels as E
from krypenv.kungsholmskille.config import BUF, C_P, E_MONEY, E_OVER, RUNNING
from krypenv.kungsholmskille.engine import kernels as K
from krypenv.kungsholmskille.engine.drivers import chunk_bounds


@njit(cache=True)
def finish_seats_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, actor, base, rew, over, final, term_obs,
                     term_mask, buf):
    """The device env's end of a step in env ``i``: every seat's reward since the previous step (its money change;
    ``base`` (N, P) holds the money then), the over code, and for a finished episode each seat's final money,
    ``actor``'s terminal observation and a new episode (not yet advanced; its base back to 0, so the antes of L3
    reach the seats with the next step).  Returns whether the episode ended.  With one learner seat this is
    :func:`finish_one`'s reward, per seat."""
    for s in range(cfg[C_P]):
        m = ep[i, E_MONEY + s]
        rew[i, s] = m - base[i, s]
        base[i, s] = m
        final[i, s] = m
    over[i] = ep[i, E_OVER]
    if over[i] == RUNNING:
        return False
    E.observe_one(st, cash, ep, cfg, i, actor, term_obs[i], term_mask[i], buf)
    E.reset_one(st, cash, ep, rng, cfg, i, buf)
    base[i] = 0
    return True


@njit(cache=True)
def observe_actor_one(st, cash, ep, cfg, i, obs, masks, seats, buf):
    """The observation and mask of the seat to act in env ``i`` (a running episode), and that seat."""
    seat = np.int64(st[i, K.TO_ACT])
    seats[i] = seat
    E.observe_one(st, cash, ep, cfg, i, seat, obs[i], masks[i], buf)


@njit(cache=True)
def step_seats_one(st, cash, ep, rng, cfg, prev_st, prev_cash, i, actions, lose, status, base, rew, over, final, obs,
                   masks, seats, term_obs, term_mask, buf):
    """A whole device-env step of env ``i`` when no seat is played from Python: the action of the seat to act
    (``seats[i]``), built-in seats and forced moves, rewards per seat, auto-reset, the next seat and its view."""
    actor = seats[i]
    status[i] = E.act_one(st, cash, ep, cfg, i, actions[i], lose)
    E.advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)
    if finish_seats_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, actor, base, rew, over, final, term_obs,
                        term_mask, buf):
        E.advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)
    observe_actor_one(st, cash, ep, cfg, i, obs, masks, seats, buf)


# The device env's CPU drivers (krypenv.envs.device): arguments are the state (st, cash, ep, rng, cfg, prev_st,
# prev_cash), the operation's own, then the chunk count; its CUDA kernel (krypenv.kungsholmskille.cuda_kernels) runs
# the same per-env functions.
@njit(cache=True)
def _seats_reset_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, active, base):
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        if active[i]:
            E.reset_one(st, cash, ep, rng, cfg, i, buf)
            base[i] = 0
            E.advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)


@njit(cache=True)
def _seats_step_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, actions, lose, status, base, rew, over,
                      final, obs, masks, seats, term_obs, term_mask):
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        step_seats_one(st, cash, ep, rng, cfg, prev_st, prev_cash, i, actions, lose, status, base, rew, over, final,
                       obs, masks, seats, term_obs, term_mask, buf)


@njit(cache=True)
def _seats_finish_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, actors, base, rew, over, final, term_obs,
                        term_mask):
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        if finish_seats_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, actors[i], base, rew, over, final,
                            term_obs, term_mask, buf):
            E.advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)


@njit(cache=True)
def _observe_actor_range(st, cash, ep, cfg, lo, hi, obs, masks, seats):
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        observe_actor_one(st, cash, ep, cfg, i, obs, masks, seats, buf)


@njit(cache=True, parallel=True)
def k_seats_reset_par(st, cash, ep, rng, cfg, prev_st, prev_cash, active, base, chunks):
    """New episodes in the active envs (every seat's base money 0), advanced to a caller's decision, in parallel."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _seats_reset_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, active, base)


@njit(cache=True)
def k_seats_reset_ser(st, cash, ep, rng, cfg, prev_st, prev_cash, active, base, chunks):
    """Serial twin of :func:`k_seats_reset_par`."""
    _seats_reset_range(st, cash, ep, rng, cfg, prev_st, prev_cash, 0, st.shape[0], active, base)


@njit(cache=True, parallel=True)
def k_seats_step_par(st, cash, ep, rng, cfg, prev_st, prev_cash, actions, lose, status, base, rew, over, final, obs,
                     masks, seats, term_obs, term_mask, chunks):
    """The device env's whole step (:func:`step_seats_one`) in every env, in parallel."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _seats_step_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, actions, lose, status, base, rew, over,
                          final, obs, masks, seats, term_obs, term_mask)


@njit(cache=True)
def k_seats_step_ser(st, cash, ep, rng, cfg, prev_st, prev_cash, actions, lose, status, base, rew, over, final, obs,
                     masks, seats, term_obs, term_mask, chunks):
    """Serial twin of :func:`k_seats_step_par`."""
    _seats_step_range(st, cash, ep, rng, cfg, prev_st, prev_cash, 0, st.shape[0], actions, lose, status, base, rew,
                      over, final, obs, masks, seats, term_obs, term_mask)


@njit(cache=True, parallel=True)
def k_seats_finish_par(st, cash, ep, rng, cfg, prev_st, prev_cash, actors, base, rew, over, final, term_obs, term_mask,
                       chunks):
    """Rewards per seat, over codes, terminal observations and auto-resets (advanced to the next decision)."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _seats_finish_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, actors, base, rew, over, final,
                            term_obs, term_mask)


@njit(cache=True)
def k_seats_finish_ser(st, cash, ep, rng, cfg, prev_st, prev_cash, actors, base, rew, over, final, term_obs, term_mask,
                       chunks):
    """Serial twin of :func:`k_seats_finish_par`."""
    _seats_finish_range(st, cash, ep, rng, cfg, prev_st, prev_cash, 0, st.shape[0], actors, base, rew, over, final,
                        term_obs, term_mask)


@njit(cache=True, parallel=True)
def k_observe_actor_par(st, cash, ep, rng, cfg, prev_st, prev_cash, obs, masks, seats, chunks):
    """The seat to act in every env, its observation and mask, in parallel."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _observe_actor_range(st, cash, ep, cfg, lo, hi, obs, masks, seats)


@njit(cache=True)
def k_observe_actor_ser(st, cash, ep, rng, cfg, prev_st, prev_cash, obs, masks, seats, chunks):
    """Serial twin of :func:`k_observe_actor_par`."""
    _observe_actor_range(st, cash, ep, cfg, 0, st.shape[0], obs, masks, seats)
