"""Compiled Kungsholmskille tactics: the chance to hold the lowest card, and the timid and expert policies.

Both policies read only the acting seat's observation vector and mask
(:mod:`krypenv.kungsholmskille.observation`: its own hand and discards, every card played, the
calls, folds and the pot), so they see exactly what the seat may know, and run on whole
batches in one compiled call: from a :class:`~krypenv.agent_api.DecisionBatch`
(:mod:`krypenv.agents.kungsholmskille.heuristics`) or inside PIMC's rollouts on the batched engine
(:mod:`krypenv.agents.kungsholmskille.pimc`).

**The chance estimate** (:func:`chance_lowest`).  Every card the seat has not seen (not in its
hand, not its discard, not played; each rank twice, L1) is equally likely to lie anywhere
hidden.  If the other players still in hold ``k`` of those ``U`` unseen cards between them, the
chance that none of them holds a rank below ``r`` is hypergeometric,
``C(U − L, k) / C(U, k)`` with ``L`` unseen cards below ``r``; a tie on ``r`` counts half (L14
breaks ties by seat order).  The policies choose ``k`` = players still in × a *depth*: the
cards an opponent effectively chooses its last card from (5 before the tricks; more when it
stayed after a knock, since it is likely to hold a low card; fewer at the show).

**Timid** (:data:`TIMID`): knocks only with a card of rank ≤ ``knock_max`` (default
``blompotta``), stays after a knock only with one of rank ≤ ``stay_max`` (``krans``),
exchanges its two highest cards, plays tricks like the expert, and shows only when no unseen
card is as low as its own (it cannot lose the showdown, L14).

**Expert** (:data:`EXPERT`): every betting decision by expected money with the pot ``p`` and
its chance ``w`` to hold the lowest card at the showdown, counted as the environments count an
episode (one pot, L16): the pot won, the antes of budrundor and a penalty paid.  Once the pot
goes out the episode is over and the next pot's antes are never paid, so a showdown lost by a
player who did not show costs it nothing: staying in is worth ``w·p − (1 − w)·2·a`` with ``a``
the ``next_ante`` weight, 0 by default (0.8 prices the next ante of a game that goes on, L14),
and folding about −0.5 (the ante of a budrunda or walkover, L12, L15).  So by default it
knocks whenever it can win and never folds: a fold only gives up its chance at the pot (L12
charges a budrunda's ante to the folders alone).  It exchanges the 0, 1 or 2 highest cards that
maximise its expected ``w`` after drawing (each discard costs a little protection), shows when
``w·p > (1 − w)·(p + 2)`` (the penalty equals the pot, L14) with ``w`` judged against 5 hidden
cards per opponent (players keep their lowest card for the end), and in the tricks (L10) plays
its highest legal card, never its lowest unless forced, so that it keeps a low card for the end
and gets rid of high ones while it still may.

The defaults were set by measurement (2026-11-23, 300 deck sets of seed 21 against timid,
random and pimc at 4 players): with ``next_ante = 0.8`` and ``show_depth = 2`` expert was level
with timid (−0.02 [−0.49, +0.44] kronor per episode); ``next_ante = 0`` made it +1.20
[+0.70, +1.71]; a stricter show (``show_depth`` 3, 4, 6: +1.48, +1.53, +1.65) a little more.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from krypenv.kungsholmskille.actions import BUD, DISCARD1, DISCARD2, FOLD, KNACKA, PLAY, SHOW, STAND, STAY, pair_index
from krypenv.kungsholmskille.cards import N_RANKS
from krypenv.kungsholmskille.observation import layout

__all__ = ["EXPERT", "EXPERT_PARAMS", "TIMID", "TIMID_PARAMS", "WORK_WORDS", "chance_lowest", "decide", "decide_batch",
           "device_decide", "offsets", "p_none_below"]

TIMID, EXPERT = 0, 1  # policy codes
# timid: knock_max, stay_max (rank indices: 1 = blompotta, 2 = krans)
TIMID_PARAMS = np.array([1.0, 2.0])
# expert: depth before tricks, depth of a player who stayed after a knock, depth at the show, margin to knock,
# value of folding, cost of a discard (in chance), weight of the next pot's ante after a lost showdown
EXPERT_PARAMS = np.array([5.0, 7.0, 5.0, 0.0, -0.5, 0.02, 0.0])
O_HAND, O_DISCARDS, O_PLAYED, O_FOLDED, O_FOLD_CALL, O_POT, O_PHASE, O_CALL1 = range(8)
WORK_WORDS = 3 * N_RANKS  # the int64 work vector of decide: hand, unseen ranks, a copy to draw from


def offsets(players: int) -> np.ndarray:
    """Start offsets of the observation fields the policies read, for ``players`` seats."""
    lay = layout(players)
    return np.array([lay[k].start for k in ("hand", "discards", "played", "folded", "fold_call", "pot", "phase",
                                            "call1")], np.int64)


@njit(cache=True)
def p_none_below(unseen: np.ndarray, r: int, k: int) -> float:
    """Chance that ``k`` cards drawn from the unseen pool hold no rank below ``r`` (hypergeometric)."""
    U = 0
    L = 0
    for x in range(N_RANKS):
        U += unseen[x]
        if x < r:
            L += unseen[x]
    k = min(k, U)
    p = 1.0
    for j in range(k):
        if U - L - j <= 0:
            return 0.0
        p *= (U - L - j) / (U - j)
    return p


@njit(cache=True)
def chance_lowest(unseen: np.ndarray, r: int, k: int) -> float:
    """Chance that rank ``r`` is below every rank among ``k`` unseen cards, a tie counting half."""
    if r >= N_RANKS:
        return 0.0
    return 0.5 * (p_none_below(unseen, r, k) + p_none_below(unseen, r + 1, k))


@njit(cache=True)
def _lowest(hand: np.ndarray) -> int:
    for x in range(N_RANKS):
        if hand[x] > 0:
            return x
    return N_RANKS


@njit(cache=True)
def _exchange_chance(hand: np.ndarray, unseen: np.ndarray, n: int, k: int, u2: np.ndarray) -> float:
    """Expected :func:`chance_lowest` after discarding the ``n`` highest cards and drawing ``n`` unseen ones
    (``u2``: a rank vector to work in)."""
    r = _lowest(hand)
    if n == 0:
        return chance_lowest(unseen, r, k)
    U = 0
    for x in range(N_RANKS):
        U += unseen[x]
        u2[x] = unseen[x]
    total = 0.0
    for x in range(N_RANKS):
        if unseen[x] == 0:
            continue
        px = unseen[x] / U
        u2[x] -= 1
        if n == 1:
            total += px * chance_lowest(u2, min(r, x), k)
        else:
            for y in range(N_RANKS):
                if u2[y] == 0:
                    continue
                py = u2[y] / (U - 1)
                u2[y] -= 1
                total += px * py * chance_lowest(u2, min(r, min(x, y)), k)
                u2[y] += 1
        u2[x] += 1
    return total


@njit(cache=True)
def _top(hand: np.ndarray, skip: int) -> int:
    """The highest rank in ``hand`` after removing one copy of rank ``skip`` (−1: none)."""
    for x in range(N_RANKS - 1, -1, -1):
        c = hand[x] - (1 if x == skip else 0)
        if c > 0:
            return x
    return -1


@njit(cache=True)
def _discard(hand: np.ndarray, n: int) -> int:
    """The action discarding the ``n`` (1 or 2) highest cards of ``hand``."""
    a = _top(hand, -1)
    if n == 1:
        return DISCARD1 + a
    b = _top(hand, a)
    return DISCARD2 + pair_index(min(a, b), max(a, b))


@njit(cache=True)
def _trick_play(hand: np.ndarray, mask: np.ndarray) -> int:
    """L10: the highest legal card, the lowest card of the hand only when nothing else is legal."""
    keep = _lowest(hand)
    for x in range(N_RANKS - 1, -1, -1):
        if mask[PLAY + x] and (x != keep or hand[x] > 1):
            return PLAY + x
    for x in range(N_RANKS):
        if mask[PLAY + x]:
            return PLAY + x
    return -1


@njit(cache=True)
def decide(obs: np.ndarray, mask: np.ndarray, players: int, kind: int, par: np.ndarray, off: np.ndarray,
           counts: np.ndarray, work: np.ndarray) -> int:
    """The action of policy ``kind`` (TIMID or EXPERT, parameters ``par``) for one observation and mask; ``counts``
    (21,) are the copies of each rank in the deck (``rules.deck_counts``: 2 each, L1, or the lowest ranks, L20).

    ``work`` (at least WORK_WORDS int64) holds the rank vectors it counts in, so nothing is allocated and the
    same function runs on CPU and CUDA threads (an env's kernels call it for a seat it plays inside).
    """
    hand, unseen, u2 = work[0:N_RANKS], work[N_RANKS:2 * N_RANKS], work[2 * N_RANKS:3 * N_RANKS]
    n_hand = 0
    for x in range(N_RANKS):
        hand[x] = obs[off[O_HAND] + x]
        n_hand += hand[x]
        unseen[x] = max(0, counts[x] - hand[x] - obs[off[O_DISCARDS] + x] - obs[off[O_PLAYED] + x])
    r = _lowest(hand)
    n_in = 0
    stayed = 0  # other players who said stay after a knock (L6)
    for s in range(players):
        if obs[off[O_FOLDED] + s] == 0:
            n_in += 1
            if s > 0 and (obs[off[O_FOLD_CALL] + s] == 0 or obs[off[O_CALL1] + s] == 1):
                stayed += 1
    pot = float(obs[off[O_POT]])
    for x in range(N_RANKS):
        if mask[PLAY + x]:
            return _trick_play(hand, mask)
    if kind == TIMID:
        if mask[KNACKA]:
            return KNACKA if r <= par[0] else BUD
        if mask[FOLD]:
            return STAY if r <= par[1] else FOLD
        if mask[STAND]:
            return _discard(hand, 2) if n_hand >= 2 else STAND
        if mask[SHOW]:
            low = 0
            for x in range(r + 1):
                low += unseen[x]
            return SHOW if low == 0 else BUD
        return -1
    depth, depth_stay, depth_show, margin, fold_value, cost, share = par[0], par[1], par[2], par[3], par[4], \
        par[5], par[6]
    others = n_in - 1
    k = round((others - stayed) * depth + stayed * depth_stay)
    if mask[SHOW]:
        ks = round(others * depth_show)
        w = p_none_below(unseen, r + 1, ks)  # a tie goes against the shower (L14)
        return SHOW if w * pot > (1.0 - w) * (pot + 2.0) else BUD
    if mask[STAND]:
        best, arg = -1.0, 0
        for n in range(3):
            v = _exchange_chance(hand, unseen, n, k, u2) - cost * n
            if v > best:
                best, arg = v, n
        return STAND if arg == 0 else _discard(hand, arg)
    w = _exchange_chance(hand, unseen, 2, k, u2) - 2 * cost if mask[FOLD] or obs[off[O_PHASE]] == 1 else \
        chance_lowest(unseen, r, k)
    stay_value = w * pot - (1.0 - w) * 2.0 * share
    if mask[FOLD]:
        return STAY if stay_value > fold_value else FOLD
    if mask[KNACKA]:
        return KNACKA if stay_value > margin else BUD
    return -1


@njit(cache=True)
def device_decide(obs: np.ndarray, mask: np.ndarray, players: int, iparams: np.ndarray, fparams: np.ndarray,
                  work: np.ndarray) -> int:
    """:func:`decide` with the policy packed as a device env's kernels pass it: ``iparams`` = (kind, the 8
    observation offsets of :func:`offsets`, the deck's 21 rank counts), ``fparams`` = the policy's parameters."""
    return decide(obs, mask, players, iparams[0], fparams, iparams[1:9], iparams[9:30], work)


@njit(cache=True)
def decide_batch(obs: np.ndarray, masks: np.ndarray, players: int, kind: int, par: np.ndarray, off: np.ndarray,
                 counts: np.ndarray, out: np.ndarray) -> None:
    """:func:`decide` for every row of a batch."""
    work = np.empty(WORK_WORDS, np.int64)
    for i in range(obs.shape[0]):
        out[i] = decide(obs[i], masks[i], players, kind, par, off, counts, work)
