"""Value-level tables for capture search: packed value counts and the combinations of each value.

A multiset of table *values* (1–13, K3) is packed into one int64 "value key": 4 bits per
value, value ``k`` at bits ``4k … 4k+3`` (a value occurs at most 8 times: 4 suits × 2 decks).
Keys add and subtract nibble-wise without carries as long as every count stays in 0..8.

A *combination* for a played value ``v`` (K10) is a multiset of table values summing to
``v``.  ``COMBO_*`` arrays hold every combination of every v in 2..14, the ones for ``v``
in rows ``COMBO_START[v] : COMBO_END[v]``.  A combination has at most 4 distinct values
(1+2+3+4+5 > 14), stored as (value, count) pairs.
"""

from __future__ import annotations

import numpy as np

MAX_PLAYED_VALUE = 14  # a played ace (K3)
MAX_DISTINCT = 4


def _partitions(total: int, max_part: int) -> list[list[int]]:
    """All multisets of integers in 1..max_part summing to ``total``, as nonincreasing lists."""
    if total == 0:
        return [[]]
    out: list[list[int]] = []
    for first in range(min(total, max_part), 0, -1):
        for rest in _partitions(total - first, first):
            out.append([first, *rest])
    return out


def value_key(values: list[int]) -> int:
    """Pack a multiset of table values 1..13 into a value key."""
    key = 0
    for k in values:
        key += 1 << (4 * k)
    return key


def _build() -> tuple[np.ndarray, ...]:
    keys, vals, cnts, nvals, vmask = [], [], [], [], []
    start = np.zeros(MAX_PLAYED_VALUE + 1, dtype=np.int64)
    end = np.zeros(MAX_PLAYED_VALUE + 1, dtype=np.int64)
    for v in range(MAX_PLAYED_VALUE + 1):
        start[v] = len(keys)
        if v >= 2:
            for part in _partitions(v, 13):
                distinct = sorted(set(part), reverse=True)
                keys.append(value_key(part))
                vals.append(distinct + [0] * (MAX_DISTINCT - len(distinct)))
                cnts.append([part.count(k) for k in distinct] + [0] * (MAX_DISTINCT - len(distinct)))
                nvals.append(len(distinct))
                vmask.append(sum(1 << k for k in distinct))
        end[v] = len(keys)
    return (
        np.array(keys, dtype=np.int64),
        np.array(vals, dtype=np.int64),
        np.array(cnts, dtype=np.int64),
        np.array(nvals, dtype=np.int64),
        np.array(vmask, dtype=np.int64),
        start,
        end,
    )


COMBO_KEY, COMBO_VALS, COMBO_CNTS, COMBO_NVALS, COMBO_VMASK, COMBO_START, COMBO_END = _build()
