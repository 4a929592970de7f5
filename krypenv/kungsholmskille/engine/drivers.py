"""Compiled batch drivers of the Kungsholmskille engine: deal, legal masks, step and random play over N deals.

Drivers come in twins: ``*_par`` splits the batch into ``chunks`` over numba's threads
(``prange``), ``*_ser`` loops in one thread for small batches; both call the same per-deal
functions of :mod:`krypenv.kungsholmskille.engine.kernels` over a range of deals, so one deal and
4096 deals run the same rules code.  Every driver takes the same argument types on every
call (int16 ``st``, int32 ``cash``, int64 vectors), so each compiles once (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from krypenv.jit import borrowing, counted
from krypenv.kungsholmskille.actions import MAX_LEGAL
from krypenv.kungsholmskille.engine.kernels import (
    DONE,
    OK,
    apply,
    check,
    legal_list,
    play_deals_one,
    play_random_row,
    reset_row,
)


@borrowing
def chunk_bounds(n: int, chunks: int, ch: int) -> tuple[int, int]:
    """Deals ``[lo, hi)`` of chunk ``ch`` when ``n`` deals are split into ``chunks``."""
    return ch * n // chunks, (ch + 1) * n // chunks


@borrowing
def _reset_range(st, cash, lo, hi, players, active, decks, dealers, pots, deals, last):
    for i in range(lo, hi):
        if active[i]:
            reset_row(st[i], cash[i], players, decks[i], dealers[i], pots[i], deals[i], last[i])


@njit(cache=True, parallel=True)
def reset_par(st, cash, players, active, decks, dealers, pots, deals, last, chunks):
    """Deal every active deal (L4), in parallel; ``last[i]`` = 1 marks a pot's last deal (L21)."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _reset_range(st, cash, lo, hi, players, active, decks, dealers, pots, deals, last)


@borrowing
def reset_ser(st, cash, players, active, decks, dealers, pots, deals, last, chunks):
    """Serial twin of :func:`reset_par`."""
    _reset_range(st, cash, 0, st.shape[0], players, active, decks, dealers, pots, deals, last)


@counted
def _legal_range(st, lo, hi, out):
    buf = np.empty(MAX_LEGAL + 5, np.int64)
    for i in range(lo, hi):
        out[i, :] = False
        row = st[i]
        if not row[DONE]:
            for k in range(legal_list(row, buf)):
                out[i, buf[k]] = True


@njit(cache=True, parallel=True)
def legal_par(st, out, chunks):
    """(N, 279) legal-action masks, in parallel."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _legal_range(st, lo, hi, out)


@borrowing
def legal_ser(st, out, chunks):
    """Serial twin of :func:`legal_par`."""
    _legal_range(st, 0, st.shape[0], out)


@borrowing
def _step_range(st, cash, lo, hi, players, actions, active, status, do_apply):
    for i in range(lo, hi):
        row = st[i]
        if not active[i] or row[DONE]:
            status[i] = OK  # finished or inactive deals are left alone
            continue
        status[i] = check(row, actions[i])
        if do_apply and status[i] == OK:
            apply(row, cash[i], players, actions[i])


@njit(cache=True, parallel=True)
def step_par(st, cash, players, actions, active, status, do_apply, chunks):
    """Check one action per active unfinished deal, and apply the legal ones if ``do_apply``, in parallel."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _step_range(st, cash, lo, hi, players, actions, active, status, do_apply)


@borrowing
def step_ser(st, cash, players, actions, active, status, do_apply, chunks):
    """Serial twin of :func:`step_par`."""
    _step_range(st, cash, 0, st.shape[0], players, actions, active, status, do_apply)


@counted
def _random_range(st, cash, lo, hi, players, u):
    buf = np.empty(MAX_LEGAL + 5, np.int64)
    left = 0
    for i in range(lo, hi):
        if not st[i, DONE]:
            play_random_row(st[i], cash[i], players, u[i], buf)
            left += 1 - st[i, DONE]
    return left


@njit(cache=True, parallel=True)
def play_random_par(st, cash, players, u, chunks):
    """One uniformly random legal move in every unfinished deal, in parallel; return the deals still unfinished."""
    n = st.shape[0]
    left = 0
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        left += _random_range(st, cash, lo, hi, players, u)
    return left


@borrowing
def play_random_ser(st, cash, players, u, chunks):
    """Serial twin of :func:`play_random_par`."""
    return _random_range(st, cash, 0, st.shape[0], players, u)


@counted
def _play_deals_range(st, cash, rng, lo, hi, players, deals, decisions):
    buf = np.empty(MAX_LEGAL + 5, np.int64)
    u = np.empty(42, np.float64)
    for i in range(lo, hi):
        decisions[i] = play_deals_one(st, cash, rng, i, players, deals, buf, u)


@njit(cache=True, parallel=True)
def play_deals_par(st, cash, rng, players, deals, decisions, chunks):
    """:func:`~krypenv.kungsholmskille.engine.kernels.play_deals_one` in every row, in parallel (the CPU twin of the
    GPU engine benchmark)."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _play_deals_range(st, cash, rng, lo, hi, players, deals, decisions)
