"""The device env's per-env functions and CPU drivers (Krypkasino), what :mod:`krypenv.envs.device` adds.

Built from the env functions of :mod:`krypenv.krypkasino.env_kernels` (``act_one``, ``advance_one``,
``observe_one``, ``reset_one``, the side values of K16–K18): ``finish_seats_one`` pays every seat its
reward since the previous step and auto-resets a finished episode, ``observe_actor_one`` observes
whoever is to act, ``step_seats_one`` is a whole step when no seat is played from Python.  The
``k_*`` drivers run them over a batch (``_par`` on numba's threads, ``_ser`` in one) with the
arguments ``(st, rng, ints, cfg, ..., scr)``; the CUDA kernel (:mod:`krypenv.krypkasino.cuda_kernels`)
calls the same per-env functions, one thread per env.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from krypenv.krypkasino import env_kernels as E
from krypenv.krypkasino.config import C_P, C_SIDE_OF
from krypenv.krypkasino.engine import kernels as K


@njit(cache=True)
def finish_seats_one(st, rng, ints, base, cfg, i, actor, rew, dones, final, term_obs, term_mask, scr):
    """The device env's end of a step in env ``i``: every seat's reward since the previous step (minus its side's
    value change; ``base`` (N, P) holds the values then), the done flag, and for a finished episode each seat's
    final value, ``actor``'s terminal observation and a new episode (not yet advanced; its values start at 0).
    Returns the done flag.  With one learner seat this is :func:`finish_one`'s reward, per seat."""
    P = cfg[C_P]
    for s in range(P):
        v = E.side_value(st, ints, cfg, i, cfg[C_SIDE_OF + s])
        rew[i, s] = base[i, s] - v
        base[i, s] = v
        final[i, s] = v
    dones[i] = E.episode_over(st, cfg, i)
    if dones[i]:
        E.observe_one(st, ints, cfg, i, actor, term_obs[i], term_mask[i], scr)
        E.reset_one(st, rng, ints, base, cfg, i, scr)  # base[i] (the row) back to 0
    return dones[i]


@njit(cache=True)
def observe_actor_one(st, ints, cfg, i, obs, masks, seats, scr):
    """The observation and mask of the seat to act in env ``i`` (a running episode), and that seat."""
    seat = np.int64(st[i, K.TURN])
    seats[i] = seat
    E.observe_one(st, ints, cfg, i, seat, obs[i], masks[i], scr)


@njit(cache=True)
def step_seats_one(st, rng, ints, cfg, i, actions, lose, status, base, rew, over, final, obs, masks, seats,
                   term_obs, term_mask, scr):
    """A whole device-env step of env ``i`` when no seat is played from Python: the action of the seat to act
    (``seats[i]``), built-in seats, rewards per seat, auto-reset, the next seat to act and its observation."""
    actor = seats[i]
    status[i] = E.act_one(st, ints, cfg, i, actions[i], lose, scr, -1)
    E.advance_one(st, rng, ints, cfg, i, scr)
    if finish_seats_one(st, rng, ints, base, cfg, i, actor, rew, over, final, term_obs, term_mask, scr):
        E.advance_one(st, rng, ints, cfg, i, scr)
    observe_actor_one(st, ints, cfg, i, obs, masks, seats, scr)


# The device env's CPU drivers (krypenv.envs.device): arguments are the state (st, rng, ints, cfg), the operation's
# own, then the scratch rows; its CUDA kernel (krypenv.krypkasino.cuda_kernels) runs the same per-env functions.
@njit(cache=True)
def _seats_reset_range(st, rng, ints, cfg, lo, hi, active, base, scr):
    for i in range(lo, hi):
        if active[i]:
            E.reset_one(st, rng, ints, base, cfg, i, scr)
            E.advance_one(st, rng, ints, cfg, i, scr)


@njit(cache=True)
def _seats_step_range(st, rng, ints, cfg, lo, hi, actions, lose, status, base, rew, over, final, obs, masks, seats,
                      term_obs, term_mask, scr):
    for i in range(lo, hi):
        step_seats_one(st, rng, ints, cfg, i, actions, lose, status, base, rew, over, final, obs, masks, seats,
                       term_obs, term_mask, scr)


@njit(cache=True)
def _seats_finish_range(st, rng, ints, cfg, lo, hi, actors, base, rew, over, final, term_obs, term_mask, scr):
    for i in range(lo, hi):
        if finish_seats_one(st, rng, ints, base, cfg, i, actors[i], rew, over, final, term_obs, term_mask, scr):
            E.advance_one(st, rng, ints, cfg, i, scr)


@njit(cache=True)
def _observe_actor_range(st, ints, cfg, lo, hi, obs, masks, seats, scr):
    for i in range(lo, hi):
        observe_actor_one(st, ints, cfg, i, obs, masks, seats, scr)


@njit(cache=True, parallel=True)
def k_seats_reset_par(st, rng, ints, cfg, active, base, scr):
    """New episodes in the active envs (every seat's base value 0), advanced to a caller's decision, in parallel."""
    n, chunks = active.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = K.chunk_bounds(n, chunks, ch)
        _seats_reset_range(st, rng, ints, cfg, lo, hi, active, base, scr[ch])


@njit(cache=True)
def k_seats_reset_ser(st, rng, ints, cfg, active, base, scr):
    """Serial twin of :func:`k_seats_reset_par`."""
    _seats_reset_range(st, rng, ints, cfg, 0, active.shape[0], active, base, scr[0])


@njit(cache=True, parallel=True)
def k_seats_step_par(st, rng, ints, cfg, actions, lose, status, base, rew, over, final, obs, masks, seats, term_obs,
                     term_mask, scr):
    """The device env's whole step (:func:`step_seats_one`) in every env, in parallel."""
    n, chunks = actions.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = K.chunk_bounds(n, chunks, ch)
        _seats_step_range(st, rng, ints, cfg, lo, hi, actions, lose, status, base, rew, over, final, obs, masks,
                          seats, term_obs, term_mask, scr[ch])


@njit(cache=True)
def k_seats_step_ser(st, rng, ints, cfg, actions, lose, status, base, rew, over, final, obs, masks, seats, term_obs,
                     term_mask, scr):
    """Serial twin of :func:`k_seats_step_par`."""
    _seats_step_range(st, rng, ints, cfg, 0, actions.shape[0], actions, lose, status, base, rew, over, final, obs,
                      masks, seats, term_obs, term_mask, scr[0])


@njit(cache=True, parallel=True)
def k_seats_finish_par(st, rng, ints, cfg, actors, base, rew, over, final, term_obs, term_mask, scr):
    """Rewards per seat, dones, terminal observations and auto-resets (advanced to the next decision), in parallel."""
    n, chunks = actors.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = K.chunk_bounds(n, chunks, ch)
        _seats_finish_range(st, rng, ints, cfg, lo, hi, actors, base, rew, over, final, term_obs, term_mask, scr[ch])


@njit(cache=True)
def k_seats_finish_ser(st, rng, ints, cfg, actors, base, rew, over, final, term_obs, term_mask, scr):
    """Serial twin of :func:`k_seats_finish_par`."""
    _seats_finish_range(st, rng, ints, cfg, 0, actors.shape[0], actors, base, rew, over, final, term_obs, term_mask,
                        scr[0])


@njit(cache=True, parallel=True)
def k_observe_actor_par(st, rng, ints, cfg, obs, masks, seats, scr):
    """The seat to act in every env, its observation and mask, in parallel."""
    n, chunks = obs.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = K.chunk_bounds(n, chunks, ch)
        _observe_actor_range(st, ints, cfg, lo, hi, obs, masks, seats, scr[ch])


@njit(cache=True)
def k_observe_actor_ser(st, rng, ints, cfg, obs, masks, seats, scr):
    """Serial twin of :func:`k_observe_actor_par`."""
    _observe_actor_range(st, ints, cfg, 0, obs.shape[0], obs, masks, seats, scr[0])
