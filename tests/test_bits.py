"""krypenv.bits: the population count and the n-th set bit against Python's integers, over the whole range."""

from __future__ import annotations

import random

import numpy as np
from numba import njit

from krypenv.bits import leading_zeros, nth_set_bit, popcount, trailing_zeros


@njit(cache=False)
def _popcount(x: int) -> int:
    return popcount(np.int64(x))


@njit(cache=False)
def _zeros(x: int) -> tuple[int, int]:
    return leading_zeros(np.int64(x)), trailing_zeros(np.int64(x))


def _words() -> list[int]:
    """Every single bit, their neighbours, the edges and random words of every density (non-negative int64)."""
    rng = random.Random(7)
    words = [0, 1, 2**62, 2**63 - 1, 2**52 - 1] + [1 << b for b in range(63)] + [(1 << b) - 1 for b in range(63)]
    for density in (0.05, 0.3, 0.5, 0.9):
        words += [sum(1 << b for b in range(63) if rng.random() < density) for _ in range(200)]
    return words


def test_popcount_counts_every_bit() -> None:
    """``popcount`` is Python's ``bit_count`` on every word (a miscount of any bit position fails)."""
    for w in _words():
        assert _popcount(w) == w.bit_count(), w


def test_nth_set_bit_is_the_sorted_bit_list() -> None:
    """The n-th set bit is the n-th entry of the word's set bits in ascending order, −1 past the last, for every n."""
    for w in _words():
        bits = [b for b in range(63) if w >> b & 1]
        for n in range(len(bits) + 2):
            assert nth_set_bit(w, n) == (bits[n] if n < len(bits) else -1), (w, n)


def test_leading_and_trailing_zeros_place_the_highest_and_lowest_bits() -> None:
    """Zeros above the highest set bit are ``64 − bit_length``, below the lowest the index of ``x & −x``."""
    for w in _words():
        if w:
            assert _zeros(w) == (64 - w.bit_length(), (w & -w).bit_length() - 1), w
