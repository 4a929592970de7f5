"""Explicit chance nodes for a deal: each hand or table packet drawn as a sorted multiset, one card per node.

A deal gives every receiver (a seat, or the table) a *group* of deck slots per round.  The
order of the cards inside a group never matters to the game (a hand and the table are count
vectors), so the OpenSpiel games draw each group as a multiset in ascending card-code order:
one chance node per card whose outcome is the next code (≥ the previous one of the same
group), with the exact probability that a uniformly shuffled deck gives that group those
cards.  The probability of a whole group is the multivariate hypergeometric probability of
its multiset, so every deal has its true probability while the tree holds each deal once
instead of once per order (the tiny preset: C(8,3)·C(5,3) = 560 deals instead of 8! orders).

The probabilities count the deck's copies as distinct items: of the k-subsets of the ``N``
remaining items, :func:`prefix_count` counts those whose sorted codes start with a given
prefix, and the chance of the next code ``c`` is ``count(prefix + c) / count(prefix)``.
"""

from __future__ import annotations

from math import comb

import numpy as np

__all__ = ["next_card_outcomes", "prefix_count"]


def prefix_count(counts: np.ndarray, k: int, prefix: list[int]) -> int:
    """How many k-subsets of the items ``counts`` (copies per code) have sorted codes starting with ``prefix``."""
    if not prefix:
        return comb(int(counts.sum()), k)
    last = prefix[-1]
    multiplicity: dict[int, int] = {}
    for c in prefix:
        multiplicity[c] = multiplicity.get(c, 0) + 1
    ways = 1
    for code, m in multiplicity.items():
        if code != last:
            ways *= comb(int(counts[code]), m)
    below = len(prefix) - multiplicity[last]
    above = int(counts[last + 1:].sum())
    tail = sum(comb(int(counts[last]), t) * comb(above, k - below - t)
               for t in range(multiplicity[last], min(int(counts[last]), k - below) + 1))
    return ways * tail


def next_card_outcomes(counts: np.ndarray, k: int, prefix: list[int]) -> list[tuple[int, float]]:
    """(code, probability) of the next card of a group of ``k`` drawn from ``counts``, given its sorted ``prefix``."""
    total = prefix_count(counts, k, prefix)
    start = prefix[-1] if prefix else 0
    out = []
    for code in range(start, counts.shape[0]):
        if counts[code] > prefix.count(code):
            n = prefix_count(counts, k, [*prefix, code])
            if n:
                out.append((code, n / total))
    return out
