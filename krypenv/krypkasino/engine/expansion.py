"""Card-level captures (K10–K13): a value-level capture (a value key, :mod:`krypenv.krypkasino.engine.captures`)
expanded to the concrete cards it takes.

A value-level capture expands to concrete cards by choosing, per value, which suits' copies to
take (each code has 0–2 copies, K1): :func:`n_card_captures` counts the ways and
:func:`card_capture` writes the ``index``-th one, so nothing is materialised unless asked.  The
*candidates* of a card (every card-level maximal capture, K11) are enumerated in a fixed order,
key by key (:func:`n_candidates`, :func:`candidate_into`), never stored: the capture-choice
protocol (:mod:`krypenv.krypkasino.actions`) and random play read them one at a time, so they run
on CPU and CUDA threads alike.  :func:`expand_captures`, :func:`card_captures` and
:func:`legal_captures` return them all as new (M, 52) arrays, for Python callers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from krypenv.gpu_lean import divmod_small, rolled
from krypenv.jit import borrowing, counted
from krypenv.krypkasino.cards import HAND_VALUE
from krypenv.krypkasino.engine.captures import (
    hand_sweep_values,
    maximal_captures_k,
    new_scratch,
    subset_sums,
    table_value_key,
)


@borrowing
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


@borrowing
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


@borrowing
def n_card_captures(table: np.ndarray, ckey: int) -> int:
    """How many distinct card sets realise the value-level capture ``ckey``."""
    total = 1
    k = 0
    ckey >>= 4
    while ckey:  # stops after the highest value taken
        k += 1
        need = ckey & 15
        if need:
            total *= _n_value_options(table, k, need)
        ckey >>= 4
    return total


@borrowing
def card_capture(table: np.ndarray, ckey: int, index: int, out: np.ndarray) -> None:
    """Write into ``out`` (52,) the ``index``-th card set realising ``ckey`` (mixed radix over values)."""
    for c in range(rolled(52)):
        out[c] = 0
    k = 0
    ckey >>= 4
    while ckey:  # stops after the highest value taken
        k += 1
        need = ckey & 15
        if need:
            index, row = divmod_small(index, _n_value_options(table, k, need))
            _write_value_option(table, k, need, row, out)
        ckey >>= 4


@borrowing
def n_candidates(table: np.ndarray, ckeys: np.ndarray) -> int:
    """How many card-level captures realise the value-level captures ``ckeys`` together."""
    total = 0
    for k in range(ckeys.shape[0]):
        total += n_card_captures(table, ckeys[k])
    return total


@borrowing
def candidate_into(table: np.ndarray, ckeys: np.ndarray, m: int, out: np.ndarray) -> None:
    """Write the ``m``-th card-level capture realising ``ckeys`` into ``out`` (52,): key by key, each key's card
    sets in :func:`card_capture` order.  The candidates are enumerated, never stored (no allocation)."""
    k = 0
    while True:
        size = n_card_captures(table, ckeys[k])
        if m < size:
            card_capture(table, ckeys[k], m, out)
            return
        m -= size
        k += 1


@njit(cache=True, inline="always")  # returns a view: inlined, as CUDA device functions cannot
def card_capture_keys(table: np.ndarray, card: int, scr: np.ndarray) -> np.ndarray:
    """Value keys of every distinct maximal capture of ``card`` on ``table`` (K11, ignoring K13): in ``scr``."""
    tkey = table_value_key(table)
    return maximal_captures_k(tkey, subset_sums(tkey), HAND_VALUE[card], scr)


@counted
def expand_captures(table: np.ndarray, ckeys: np.ndarray) -> np.ndarray:
    """All card-level captures (M, 52) int8 realising the value-level captures ``ckeys`` (:func:`candidate_into`)."""
    out = np.zeros((n_candidates(table, ckeys), 52), dtype=np.int8)
    for m in range(out.shape[0]):
        candidate_into(table, ckeys, m, out[m])
    return out


@counted
def card_captures_s(table: np.ndarray, card: int, scr: np.ndarray) -> np.ndarray:
    """Every distinct maximal capture (M, 52) of ``card`` on ``table`` (K11), ignoring K13; M = 0: it creeps."""
    return expand_captures(table, card_capture_keys(table, card, scr))


@counted
def card_captures(table: np.ndarray, card: int) -> np.ndarray:
    """:func:`card_captures_s` with a fresh scratch vector."""
    return card_captures_s(table, card, new_scratch())


@counted
def legal_captures(hand: np.ndarray, table: np.ndarray, card: int) -> np.ndarray:
    """The captures (M, 52) a legal ``card`` may make: just the whole table when K13 forces a sweep.

    M = 0 means the card creeps (K12).  The caller checks that the card itself is legal.
    """
    if hand_sweep_values(hand, table):
        out = np.zeros((1, 52), dtype=np.int8)
        out[0, :] = table
        return out
    return card_captures(table, card)
