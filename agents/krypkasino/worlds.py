"""The sampled worlds of Krypkasino's determinized searches: a seeded uniform stream and the deal of hidden cards.

:func:`determinize` deals the cards the acting seat cannot see at random, consistently with what
it knows (hand sizes, the undealt deck's length, the values a seat is known not to hold, K13);
``pimc`` (:mod:`krypenv.agents.krypkasino.pimc`) and the policy-guided search
(:mod:`krypenv.agents.krypkasino.lockstep`) sample their worlds with it.  :func:`uniform` and
:func:`below` draw from a splitmix64 stream held in a one-word array, so that a search seeded by
one uniform of the game's stream is reproducible however decisions are batched.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from krypenv.krypkasino.cards import HAND_VALUE
from krypenv.krypkasino.engine import kernels
from krypenv.rng import rand_float

__all__ = ["DETERMINIZE_WORDS", "MAX_SEATS", "below", "determinize", "determinize_into", "uniform"]

MAX_SEATS = 6  # the most seats a deal has (K5)
W_SIZES, W_DONE = 52, 52 + MAX_SEATS  # determinize_into's work: card copies, then hand sizes, then done flags
DETERMINIZE_WORDS = W_DONE + MAX_SEATS


# --------------------------------------------------------------------------- random numbers
@njit(cache=True)
def uniform(state: np.ndarray) -> float:
    """Next uniform in [0, 1) of the splitmix64 stream ``state[0]`` (:func:`krypenv.rng.rand_float`'s stream 0)."""
    return rand_float(state, 0)


@njit(cache=True)
def below(state: np.ndarray, n: int) -> int:
    """A uniform integer in [0, n)."""
    return min(int(uniform(state) * n), n - 1)


# --------------------------------------------------------------------------- determinization
@njit(cache=True)
def determinize(st: np.ndarray, i: int, players: int, seat: int, voids: np.ndarray, use_voids: bool,
                out: np.ndarray, o: int, rng: np.ndarray, pool: np.ndarray, used: np.ndarray) -> None:
    """Write into row ``o`` of ``out`` deal ``i`` with the cards ``seat`` cannot see dealt at random.

    The other seats' hands keep their sizes and the undealt deck its length; the cards are
    the unseen ones (the deal's deck, two copies of each card or a variant's (K20), minus everything
    ``seat`` has seen).  With
    ``use_voids``, seat t receives no card whose played value is in ``voids[t]``.
    """
    determinize_into(st, i, players, seat, voids, use_voids, out, o, rng, pool, used,
                     np.empty(DETERMINIZE_WORDS, np.int64))


@njit(cache=True)
def determinize_into(st: np.ndarray, i: int, players: int, seat: int, voids: np.ndarray, use_voids: bool,
                     out: np.ndarray, o: int, rng: np.ndarray, pool: np.ndarray, used: np.ndarray,
                     work: np.ndarray) -> None:
    """:func:`determinize` with its counts in the caller's ``work`` (``DETERMINIZE_WORDS`` int64, any content):
    nothing allocated, so that a CUDA thread runs it (:mod:`krypenv.agents.krypkasino.pimc_cuda`)."""
    # work: [0, 52) copies of each card code in the deal's deck; [W_SIZES + t] seat t's hand size;
    # [W_DONE + t] 1 once seat t's constrained hand is dealt
    W = kernels.tabbes_at(players) + players  # the engine's columns
    for c in range(W):
        out[o, c] = st[i, c]
    piles = kernels.piles_at(players)
    copies = work
    kernels.deck_counts_into(st, i, copies)
    n = 0
    for c in range(52):
        seen = st[i, kernels.HANDS + 52 * seat + c] + st[i, kernels.TABLE + c] + st[i, kernels.ASIDE + c]
        for t in range(players):
            seen += st[i, piles + 52 * t + c]
        for _ in range(copies[c] - seen):
            pool[n] = c
            n += 1
    for j in range(n - 1, 0, -1):  # Fisher–Yates
        k = below(rng, j + 1)
        pool[j], pool[k] = pool[k], pool[j]
    for j in range(n):
        used[j] = False
    for t in range(players):
        work[W_SIZES + t] = 0
        work[W_DONE + t] = 0
        if t != seat:
            for c in range(52):
                work[W_SIZES + t] += st[i, kernels.HANDS + 52 * t + c]
                out[o, kernels.HANDS + 52 * t + c] = 0
    ok = True
    if use_voids:
        for _ in range(players):  # constrained seats, the most constrained (fewest allowed cards) first
            best, best_allowed = -1, 1 << 30
            for t in range(players):
                if t == seat or work[W_DONE + t] or voids[t] == 0 or work[W_SIZES + t] == 0:
                    continue
                allowed = 0
                for j in range(n):
                    if not used[j] and not (voids[t] >> HAND_VALUE[pool[j]]) & 1:
                        allowed += 1
                if allowed < best_allowed:
                    best, best_allowed = t, allowed
            if best < 0:
                break
            work[W_DONE + best] = 1
            got = 0
            for j in range(n):
                if got == work[W_SIZES + best]:
                    break
                if not used[j] and not (voids[best] >> HAND_VALUE[pool[j]]) & 1:
                    used[j] = True
                    out[o, kernels.HANDS + 52 * best + pool[j]] += 1
                    got += 1
            if got < work[W_SIZES + best]:
                ok = False
                break
        if ok:
            for t in range(players):  # the unconstrained seats take theirs in order
                if t == seat or work[W_DONE + t]:
                    continue
                got = 0
                for j in range(n):
                    if got == work[W_SIZES + t]:
                        break
                    if not used[j]:
                        used[j] = True
                        out[o, kernels.HANDS + 52 * t + pool[j]] += 1
                        got += 1
        else:  # the constraints cannot all be met in this order: deal without them
            for j in range(n):
                used[j] = False
            for t in range(players):
                if t != seat:
                    for c in range(52):
                        out[o, kernels.HANDS + 52 * t + c] = 0
    if not use_voids or not ok:
        j = 0
        for t in range(players):
            if t == seat:
                continue
            for _ in range(work[W_SIZES + t]):
                used[j] = True
                out[o, kernels.HANDS + 52 * t + pool[j]] += 1
                j += 1
    p = np.int64(st[i, kernels.POS])
    end = kernels.deck_length(st, i)
    for j in range(n):
        if not used[j] and p < end:  # (a hand-built position may leave more unseen cards than places)
            out[o, kernels.DECK + p] = pool[j]
            p += 1
