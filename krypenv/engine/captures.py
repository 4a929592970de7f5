"""Compiled capture search (RULES.md K10–K13) over value keys and 52-card count vectors.

Maximal captures (K11) are found at the value level first: starting from the table's
value key ``t``, repeatedly remove a combination of the played value ``v``; every distinct
remainder ``r`` is expanded once (a small open-addressing hash set remembers them), and a
remainder in which no combination fits is a dead end whose ``t - r`` is one maximal
capture.  Because remainders are unique, so are the captures.  The work grows with the
number of distinct remainders, not with the 2^n subsets of the table.

Each value-level capture is then expanded to concrete cards: for each value, every way of
choosing that many cards among the table's suits (each code has 0–2 copies, K1).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from krypenv.cards import HAND_VALUE
from krypenv.engine.combos import (
    COMBO_VMASK,
    COMBO_CNTS,
    COMBO_END,
    COMBO_KEY,
    COMBO_NVALS,
    COMBO_START,
    COMBO_VALS,
)

_SUM_MASK = (1 << 15) - 1  # subset sums 0..14 are all a capture ever needs


@njit(cache=True, inline="always")
def nib(key: int, k: int) -> int:
    """Count of value ``k`` in a value key."""
    return (key >> (4 * k)) & 15


@njit(cache=True)
def table_value_key(cards: np.ndarray) -> int:
    """Value key of a (52,) count vector, valued as table cards (A = 1, K3)."""
    key = np.int64(0)
    for rank in range(13):
        n = np.int64(cards[rank]) + cards[13 + rank] + cards[26 + rank] + cards[39 + rank]
        key += n << (4 * (rank + 1))
    return key


@njit(cache=True)
def subset_sums(key: int) -> int:
    """Bitmask of the sums 0..14 reachable by sub-multisets of a value key."""
    bits = 1
    for k in range(1, 14):
        for _ in range(nib(key, k)):
            bits = (bits | (bits << k)) & _SUM_MASK
    return bits


@njit(cache=True, inline="always")
def _fits(key: int, j: int) -> bool:
    for p in range(COMBO_NVALS[j]):
        if nib(key, COMBO_VALS[j, p]) < COMBO_CNTS[j, p]:
            return False
    return True


@njit(cache=True, inline="always")
def _value_mask(key: int) -> int:
    """Bitmask of the values present (count > 0) in a value key."""
    mask = 0
    for k in range(1, 14):
        if nib(key, k):
            mask |= 1 << k
    return mask


@njit(cache=True)
def _fitting(key: int, v: int) -> np.ndarray:
    """Indices of the combinations of ``v`` that fit in ``key``."""
    s, e = COMBO_START[v], COMBO_END[v]
    present = _value_mask(key)
    out = np.empty(e - s, dtype=np.int64)
    m = 0
    for j in range(s, e):
        if COMBO_VMASK[j] & ~present == 0 and _fits(key, j):
            out[m] = j
            m += 1
    return out[:m]


@njit(cache=True)
def _hs_insert(table: np.ndarray, key: int) -> bool:
    """Insert a non-negative key into an open-addressing set; True if it was new."""
    mask = table.shape[0] - 1
    h = (np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
    i = np.int64(h) & mask
    while True:
        cur = table[i]
        if cur == -1:
            table[i] = key
            return True
        if cur == key:
            return False
        i = (i + 1) & mask


@njit(cache=True)
def _hs_grow(table: np.ndarray) -> np.ndarray:
    bigger = np.full(table.shape[0] * 2, -1, dtype=np.int64)
    for k in table:
        if k != -1:
            _hs_insert(bigger, k)
    return bigger


@njit(cache=True)
def maximal_value_captures(tkey: int, v: int) -> np.ndarray:
    """Value keys of every distinct maximal capture of value ``v`` from ``tkey`` (K11).

    Empty when no combination exists (the card creeps, K12).
    """
    if not (subset_sums(tkey) >> v) & 1:
        return np.empty(0, dtype=np.int64)
    present = _value_mask(tkey)
    first, m = -1, 0
    for j in range(COMBO_START[v], COMBO_END[v]):
        if COMBO_VMASK[j] & ~present == 0 and _fits(tkey, j):
            m += 1
            if first < 0:
                first = j
    if m == 1:  # one combination fits: take it as often as it fits, the only maximal capture
        r = tkey
        while _fits(r, first):
            r -= COMBO_KEY[first]
        out = np.empty(1, dtype=np.int64)
        out[0] = tkey - r
        return out
    fit = _fitting(tkey, v)
    seen = np.full(64, -1, dtype=np.int64)
    n_seen = 1
    _hs_insert(seen, tkey)
    stack = np.empty(32, dtype=np.int64)
    stack[0] = tkey
    sp = 1
    res = np.empty(8, dtype=np.int64)
    n_res = 0
    while sp > 0:
        sp -= 1
        r = stack[sp]
        dead = True
        for i in range(m):
            j = fit[i]
            if _fits(r, j):
                dead = False
                r2 = r - COMBO_KEY[j]
                if 2 * (n_seen + 1) > seen.shape[0]:
                    seen = _hs_grow(seen)
                if _hs_insert(seen, r2):
                    n_seen += 1
                    if sp == stack.shape[0]:
                        stack = np.concatenate((stack, np.empty(sp, dtype=np.int64)))
                    stack[sp] = r2
                    sp += 1
        if dead:
            if n_res == res.shape[0]:
                res = np.concatenate((res, np.empty(n_res, dtype=np.int64)))
            res[n_res] = tkey - r
            n_res += 1
    return res[:n_res]


@njit(cache=True)
def partitions_into(key: int, v: int) -> bool:
    """True if the value multiset ``key`` splits into disjoint combinations each summing to ``v``.

    Depth-first over remainders, always covering the largest remaining value first (it must
    lie in some combination), with a visited set so each remainder is tried once.
    """
    total = 0
    for k in range(1, 14):
        total += k * nib(key, k)
    if total == 0 or total % v != 0:
        return total == 0
    fit = _fitting(key, v)
    seen = np.full(64, -1, dtype=np.int64)
    n_seen = 1
    _hs_insert(seen, key)
    stack = np.empty(32, dtype=np.int64)
    stack[0] = key
    sp = 1
    while sp > 0:
        sp -= 1
        r = stack[sp]
        if r == 0:
            return True
        top = 13
        while nib(r, top) == 0:
            top -= 1
        for i in range(fit.shape[0]):
            j = fit[i]
            if COMBO_VALS[j, 0] != top:  # values stored largest first
                continue
            if _fits(r, j):
                r2 = r - COMBO_KEY[j]
                if 2 * (n_seen + 1) > seen.shape[0]:
                    seen = _hs_grow(seen)
                if _hs_insert(seen, r2):
                    n_seen += 1
                    if sp == stack.shape[0]:
                        stack = np.concatenate((stack, np.empty(sp, dtype=np.int64)))
                    stack[sp] = r2
                    sp += 1
    return False


@njit(cache=True)
def is_maximal_capture(tkey: int, ckey: int, v: int) -> bool:
    """True if ``ckey`` (within ``tkey``) is a maximal capture of value ``v`` (K11); empty = creep (K12)."""
    if ckey == 0:
        return (subset_sums(tkey) >> v) & 1 == 0
    if (subset_sums(tkey - ckey) >> v) & 1:
        return False
    return partitions_into(ckey, v)


@njit(cache=True)
def hand_sweep_values_k(hand: np.ndarray, tkey: int) -> int:
    """:func:`hand_sweep_values` on the table's value key."""
    if tkey == 0:
        return 0
    sums = subset_sums(tkey)
    hand_values = 0
    for c in range(52):
        if hand[c]:
            hand_values |= 1 << HAND_VALUE[c]
    good = 0
    for v in range(2, 15):
        if (hand_values >> v) & 1 and (sums >> v) & 1 and partitions_into(tkey, v):
            good |= 1 << v
    return good


@njit(cache=True)
def hand_sweep_values(hand: np.ndarray, table: np.ndarray) -> int:
    """Bitmask of the hand's played values whose maximal capture takes the whole table (K13).

    Non-zero means the sweep is forced: only cards of these values may be played, and they
    must take the whole table.
    """
    return hand_sweep_values_k(hand, table_value_key(table))


@njit(cache=True)
def legal_card_mask(hand: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    """Write into ``out`` (52,) which hand cards may be played: the sweepers if K13 forces one, else all."""
    good = hand_sweep_values(hand, table)
    for c in range(52):
        out[c] = hand[c] > 0 and (good == 0 or (good >> HAND_VALUE[c]) & 1 == 1)


@njit(cache=True)
def _n_value_options(table: np.ndarray, k: int, need: int) -> int:
    """How many ways to take ``need`` cards of value ``k`` from the table's suits (0–2 copies each)."""
    a0, a1, a2, a3 = table[k - 1], table[13 + k - 1], table[26 + k - 1], table[39 + k - 1]
    if a0 + a1 + a2 + a3 == need:
        return 1
    n = 0
    for x0 in range(a0 + 1):
        for x1 in range(a1 + 1):
            for x2 in range(a2 + 1):
                x3 = need - x0 - x1 - x2
                if 0 <= x3 <= a3:
                    n += 1
    return n


@njit(cache=True)
def _write_value_option(table: np.ndarray, k: int, need: int, row: int, out: np.ndarray) -> None:
    """Write the ``row``-th way (in the order of :func:`_n_value_options`) of taking value ``k``."""
    a0, a1, a2, a3 = table[k - 1], table[13 + k - 1], table[26 + k - 1], table[39 + k - 1]
    for x0 in range(a0 + 1):
        for x1 in range(a1 + 1):
            for x2 in range(a2 + 1):
                x3 = need - x0 - x1 - x2
                if 0 <= x3 <= a3:
                    if row == 0:
                        out[k - 1], out[13 + k - 1], out[26 + k - 1], out[39 + k - 1] = x0, x1, x2, x3
                        return
                    row -= 1


@njit(cache=True)
def n_card_captures(table: np.ndarray, ckey: int) -> int:
    """How many distinct card sets realise the value-level capture ``ckey``."""
    total = 1
    for k in range(1, 14):
        need = nib(ckey, k)
        if need:
            total *= _n_value_options(table, k, need)
    return total


@njit(cache=True)
def card_capture(table: np.ndarray, ckey: int, index: int, out: np.ndarray) -> None:
    """Write into ``out`` (52,) the ``index``-th card set realising ``ckey`` (mixed radix over values)."""
    out[:] = 0
    for k in range(1, 14):
        need = nib(ckey, k)
        if need:
            n = _n_value_options(table, k, need)
            _write_value_option(table, k, need, index % n, out)
            index //= n


@njit(cache=True)
def expand_captures(table: np.ndarray, ckeys: np.ndarray) -> np.ndarray:
    """All card-level captures (M, 52) int8 realising the value-level captures ``ckeys``."""
    sizes = np.empty(ckeys.shape[0], dtype=np.int64)
    for i in range(ckeys.shape[0]):
        sizes[i] = n_card_captures(table, ckeys[i])
    out = np.zeros((sizes.sum(), 52), dtype=np.int8)
    row = 0
    for i in range(ckeys.shape[0]):
        for idx in range(sizes[i]):
            card_capture(table, ckeys[i], idx, out[row])
            row += 1
    return out


@njit(cache=True)
def card_captures(table: np.ndarray, card: int) -> np.ndarray:
    """Every distinct maximal capture (M, 52) of ``card`` on ``table`` (K11), ignoring K13; M = 0 means it creeps."""
    return expand_captures(table, maximal_value_captures(table_value_key(table), HAND_VALUE[card]))


@njit(cache=True)
def legal_captures(hand: np.ndarray, table: np.ndarray, card: int) -> np.ndarray:
    """The captures (M, 52) a legal ``card`` may make: just the whole table when K13 forces a sweep.

    M = 0 means the card creeps (K12).  The caller checks that the card itself is legal.
    """
    if hand_sweep_values(hand, table):
        out = np.zeros((1, 52), dtype=np.int8)
        out[0, :] = table
        return out
    return card_captures(table, card)
