"""Compiled capture search (RULES.md K10–K13) over value keys and 52-card count vectors.

Legality only depends on the table's *values*, so the search runs on a packed multiset of
table values, the *value key*: 4 bits per value, value ``k`` (1–13, K3) at bits
``4k … 4k+3``, counts 0–8 (4 suits × 2 decks).  Keys add and subtract nibble-wise without
carries while every count stays in 0..8.

* A *combination* of played value ``v`` (K10) is a sub-multiset of the table summing to
  ``v``; :func:`combos_into` lists those that fit (at most 127, for a played ace).
* Maximal captures (K11): from the table key, repeatedly remove a combination; every
  distinct remainder is expanded once (an open-addressing hash set remembers them) and a
  remainder in which no combination fits is a dead end whose complement is one maximal
  capture.  Remainders are unique, so captures are too.  The work grows with the number of
  distinct remainders, never with the 2^n subsets of the table.
* The forced sweep (K13) is the question whether the whole table splits into combinations.
* A value-level capture expands to concrete cards in :mod:`krypenv.krypkasino.engine.expansion`.

The hot kernels take a per-thread int64 *scratch* vector (:data:`SCRATCH_WORDS` long) and
allocate nothing, so the same functions compile for CPU threads and for CUDA threads (one
thread per env, :mod:`krypenv.krypkasino.cuda_kernels`).  Its regions, in order:

| offsets              | words | holds                                                             |
|----------------------|-------|-------------------------------------------------------------------|
| ``O_WORK``           | 64    | the odometer of :func:`combos_into`                               |
| ``O_COMBOS``         | 128   | the combinations of one played value                              |
| ``O_SEEN``           | 512   | the hash set of remainders (empty between calls)                  |
| ``O_USED``           | 256   | the hash slots a search used                                      |
| ``O_STACK``          | 256   | the search stack                                                  |
| ``O_RES``            | 256   | the value-level results (what ``maximal_captures_*`` return)      |
| ``O_CARD_A/B``       | 52+52 | two card vectors (a capture candidate, a running min or max)      |
| ``O_MASK``           | 128   | an action mask (:mod:`krypenv.krypkasino.actions`, 105 used)      |
| ``O_UNIF``           | 104   | a deck's uniforms, read as float64 (:func:`uniforms_of`)          |
| ``O_STATUS``         | 1     | ``STATUS_OVERFLOW`` once a search outgrew its region (GPU only)   |

A search whose remainders outgrow the hash set (huge hand-built tables only) ends on heap buffers on the CPU (its
callers are ``@counted``, :mod:`krypenv.jit`); the GPU cannot allocate: it sets ``STATUS_OVERFLOW`` and the host
raises (:func:`overflow_maximal`, :func:`overflow_splits`: one name, one implementation per target).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core.extending import overload

from krypenv.bits import leading_zeros, trailing_zeros
from krypenv.gpu_lean import divmod_small, rolled
from krypenv.jit import borrowing, counted
from krypenv.krypkasino.cards import HAND_VALUE, TABLE_VALUE

MAX_COMBOS = 128  # combinations of one played value that fit in any table (127 for a played ace)
HASH_SLOTS = 512  # hash set slots for remainders (kept at most half full)
# Scratch layout: odometer work | combinations | hash set | used slots | search stack | results.
O_WORK, O_COMBOS = 0, 64
O_SEEN = O_COMBOS + MAX_COMBOS
O_USED = O_SEEN + HASH_SLOTS
O_STACK = O_USED + HASH_SLOTS // 2
O_RES = O_STACK + HASH_SLOTS // 2
O_CARD_A = O_RES + HASH_SLOTS // 2
O_CARD_B = O_CARD_A + 52
O_MASK = O_CARD_B + 52
O_UNIF = O_MASK + 128
O_STATUS = O_UNIF + 104
SCRATCH_WORDS = O_STATUS + 8  # 1816 int64 = 14.2 KiB (the last 7 words pad to a 64-byte line)
STATUS_OVERFLOW = 1  # scr[O_STATUS]: a search outgrew the scratch on the GPU (see the module docstring)

_SUM_MASK = (1 << 15) - 1  # subset sums 0..14 are all a capture ever needs
_QUOTIENT = np.array([[r // max(k, 1) for k in range(14)] for r in range(15)], np.int64)  # r // k without a division
MAX_TOTAL = 8 * sum(range(1, 14))  # largest possible table total (every value 8 times)
# bit v (2..14) of _DIVISORS[t] is set when v divides t: the played values that may split a table of total t
_DIVISORS = np.array([sum(1 << v for v in range(2, 15) if t % v == 0) for t in range(MAX_TOTAL + 1)], np.int64)
_KEY_SHIFT = (4 * TABLE_VALUE).astype(np.int64)  # card c's nibble in a value key: its table value's (K3)
_LOW_NIBBLES = 0x0F0F0F0F0F0F0F0F
_GUARD = 0x4040404040404040  # bit 6 of every byte: counts (≤ 8) and needs (≤ 14) never reach it


@counted
def new_scratch() -> np.ndarray:
    """A scratch vector for the capture kernels (one per thread); its hash set starts empty."""
    scr = np.zeros(SCRATCH_WORDS, np.int64)
    clear_scratch(scr)
    return scr


@borrowing
def clear_scratch(scr: np.ndarray) -> None:
    """Make ``scr`` a fresh scratch vector in place: an empty hash set, status 0 (a GPU thread's local array)."""
    scr[O_SEEN:O_USED] = -1
    scr[O_STATUS] = 0


@njit(cache=True, inline="always")  # returns a view: inlined, as CUDA device functions cannot
def uniforms_of(scr: np.ndarray) -> np.ndarray:
    """The scratch's uniforms region as a (104,) float64 view (a deck's shuffle, :func:`krypenv.rng.draw_deck_into`)."""
    return scr[O_UNIF:O_UNIF + 104].view(np.float64)


# --------------------------------------------------------------------------- value keys
@borrowing
def nib(key: int, k: int) -> int:
    """Count of value ``k`` in a value key."""
    return (key >> (4 * k)) & 15


@borrowing
def fits(key: int, part: int) -> bool:
    """True if the multiset ``part`` is contained in ``key`` (every count ≤): SWAR over byte lanes."""
    even = ((key & _LOW_NIBBLES) | _GUARD) - (part & _LOW_NIBBLES)
    odd = (((key >> 4) & _LOW_NIBBLES) | _GUARD) - ((part >> 4) & _LOW_NIBBLES)
    return (even & odd & _GUARD) == _GUARD


@borrowing
def table_value_key(cards: np.ndarray) -> int:
    """Value key of a (52,) count vector, valued as table cards (A = 1, K3)."""
    key = np.int64(0)
    for c in range(rolled(52)):  # one pass with a shift per card: vector code on the CPU
        key += np.int64(cards[c]) << _KEY_SHIFT[c]
    return key


@borrowing
def subset_sums(key: int) -> int:
    """Bitmask of the sums 0..14 reachable by sub-multisets of a value key."""
    bits = np.int64(1)
    while key:  # the values present, lowest first: one step each
        k = trailing_zeros(key) >> 2
        for _ in range((key >> (4 * k)) & 15):
            bits = add_to_sums(bits, k)
        key &= ~(np.int64(15) << (4 * k))
    return bits


@borrowing
def key_total(key: int) -> int:
    """Sum of the values in a value key."""
    total = 0
    k = 0
    key >>= 4
    while key:
        k += 1
        total += k * (key & 15)
        key >>= 4
    return total


@borrowing
def hand_value_bits(hand: np.ndarray) -> int:
    """Bitmask of the played values (K3) present in a (52,) hand."""
    bits = np.int64(0)
    for c in range(rolled(52)):
        bits |= np.int64(hand[c] != 0) << HAND_VALUE[c]  # an ace is played as 14 (K3)
    return bits


# --------------------------------------------------------------------------- combinations
@borrowing
def combos_into(tkey: int, v: int, out: np.ndarray, work: np.ndarray) -> int:
    """Write the value keys of every combination of ``v`` (K10) that fits in ``tkey``; return their number.

    An odometer over the counts of the values present (``work`` holds them: values
    descending, their counts, the chosen counts, and suffix sums), the smallest value as the
    last digit: start from the greedy choice, then repeatedly lower the last non-zero digit
    by one and refill the digits after it greedily.  This is a depth-first search over values
    from high to low with counts from many to few, so combinations come out in a fixed order.
    """
    vals, have, pick, tail = work[0:13], work[13:26], work[26:39], work[39:53]
    d = 0
    for k in range(min(v, 13), 0, -1):
        n = nib(tkey, k)
        if n:
            vals[d] = k
            have[d] = n
            d += 1
    tail[d] = 0
    for j in range(d - 1, -1, -1):
        tail[j] = tail[j + 1] + vals[j] * have[j]
    if tail[0] < v:
        return 0
    m = 0
    acc, rem, j = 0, v, 0  # fill digits j.. greedily
    while True:
        if rem <= tail[j]:
            while j < d:
                k = vals[j]
                c = min(have[j], _QUOTIENT[rem, k])
                pick[j] = c
                acc += c << (4 * k)
                rem -= c * k
                j += 1
            if rem == 0:
                out[m] = acc
                m += 1
        else:
            while j < d:
                pick[j] = 0
                j += 1
        j = d - 1  # lower the last non-zero digit, refill after it
        while j >= 0 and pick[j] == 0:
            j -= 1
        if j < 0:
            return m
        pick[j] -= 1
        acc -= 1 << (4 * vals[j])
        rem += vals[j]
        j += 1


# --------------------------------------------------------------------------- hash set
# An open-addressing set of non-negative keys, empty slots −1.  Every search leaves it empty
# again by clearing just the slots it used (listed in ``used``), so a scratch vector is
# reused without an O(slots) wipe.
@borrowing
def _hs_insert(table: np.ndarray, key: int) -> int:
    """Insert ``key``; return its slot if it was new, −1 if it was already there."""
    mask = table.shape[0] - 1
    i = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & mask
    while True:
        cur = table[i]
        if cur == -1:
            table[i] = key
            return i
        if cur == key:
            return -1
        i = (i + 1) & mask


@borrowing
def _hs_clear(table: np.ndarray, used: np.ndarray, n: int) -> None:
    """Empty the ``n`` slots listed in ``used``."""
    for k in range(n):
        table[used[k]] = -1


# --------------------------------------------------------------------------- maximal captures (K11)
@borrowing
def _maximal_search(tkey: int, combos: np.ndarray, m: int, seen: np.ndarray, used: np.ndarray,
                    stack: np.ndarray, res: np.ndarray) -> int:
    """Depth-first search over remainders; the maximal captures go to ``res``.

    Returns their number, or −1 if the remainders overflow the buffers.  ``seen`` must be
    empty on entry and is empty again on return.
    """
    used[0] = _hs_insert(seen, tkey)
    n_seen, sp, n_res = 1, 1, 0
    stack[0] = tkey
    while sp > 0:
        sp -= 1
        r = stack[sp]
        dead = True
        for j in range(m):
            if fits(r, combos[j]):
                dead = False
                r2 = r - combos[j]
                slot = _hs_insert(seen, r2)
                if slot >= 0:
                    used[n_seen] = slot
                    n_seen += 1
                    if 2 * n_seen > seen.shape[0]:
                        _hs_clear(seen, used, n_seen)
                        return -1
                    stack[sp] = r2
                    sp += 1
        if dead:
            res[n_res] = tkey - r
            n_res += 1
    _hs_clear(seen, used, n_seen)
    return n_res


def overflow_maximal(tkey: int, m: int, scr: np.ndarray, none: np.ndarray) -> np.ndarray:
    """The maximal captures when the remainders outgrew the scratch (huge tables only): per target, below.
    ``none`` is an empty int64 array, the GPU's answer."""
    raise NotImplementedError("compiled code only")


@overload(overflow_maximal, target="cpu")
def _overflow_maximal_cpu(tkey, m, scr, none):
    """CPU: :func:`_maximal_search` again on heap buffers, doubled until the search fits."""
    def impl(tkey, m, scr, none):
        combos = scr[O_COMBOS:O_COMBOS + m].copy()
        slots = 2 * HASH_SLOTS
        while True:
            res = np.empty(slots // 2, np.int64)
            n = _maximal_search(tkey, combos, m, np.full(slots, -1, np.int64), np.empty(slots // 2, np.int64),
                                np.empty(slots // 2, np.int64), res)
            if n >= 0:
                return res[:n]
            slots *= 2
    return impl


@overload(overflow_maximal, target="cuda")
def _overflow_maximal_cuda(tkey, m, scr, none):
    """GPU: no heap; flag the overflow for the host and return no captures (the step's results are void)."""
    def impl(tkey, m, scr, none):
        scr[O_STATUS] |= STATUS_OVERFLOW
        return none
    return impl


@njit(cache=True, inline="always")  # returns a view: inlined, as CUDA device functions cannot
def maximal_captures_s(tkey: int, v: int, scr: np.ndarray) -> np.ndarray:
    """Value keys of every distinct maximal capture of value ``v`` from ``tkey`` (K11), using scratch ``scr``.

    Empty when no combination exists (the card creeps, K12).  The result is a view into
    ``scr`` (or a heap array for huge tables): read it before the next call.
    """
    return maximal_captures_k(tkey, subset_sums(tkey), v, scr)


@njit(cache=True, inline="always")  # returns a view: inlined, as CUDA device functions cannot
def maximal_captures_k(tkey: int, sums: int, v: int, scr: np.ndarray) -> np.ndarray:
    """:func:`maximal_captures_s` given the table's subset sums."""
    if not (sums >> v) & 1:
        return scr[O_RES:O_RES]
    combos = scr[O_COMBOS:O_SEEN]
    m = combos_into(tkey, v, combos, scr[O_WORK:O_COMBOS])
    if m == 1:  # one combination fits: take it as often as it fits, the only maximal capture
        r = tkey
        while fits(r, combos[0]):
            r -= combos[0]
        scr[O_RES] = tkey - r
        return scr[O_RES:O_RES + 1]
    n = _maximal_search(tkey, combos, m, scr[O_SEEN:O_USED], scr[O_USED:O_STACK], scr[O_STACK:O_RES],
                        scr[O_RES:SCRATCH_WORDS])
    if n >= 0:
        return scr[O_RES:O_RES + n]
    return overflow_maximal(tkey, m, scr, scr[O_RES:O_RES])


@counted
def maximal_value_captures(tkey: int, v: int) -> np.ndarray:
    """Value keys of every distinct maximal capture of ``v`` from ``tkey`` (K11), as a new array."""
    return maximal_captures_s(tkey, v, new_scratch()).copy()


# --------------------------------------------------------------------------- whole-table splits (K13)
@borrowing
def _partition_search(key: int, combos: np.ndarray, m: int, seen: np.ndarray, used: np.ndarray,
                      stack: np.ndarray) -> int:
    """1 if ``key`` splits into the combinations, 0 if not, −1 on overflow (``seen`` empty on entry and exit).

    Depth-first over remainders, always covering the largest remaining value first (it must
    lie in some combination), with a visited set so each remainder is tried once.
    """
    used[0] = _hs_insert(seen, key)
    n_seen, sp, found = 1, 1, 0
    stack[0] = key
    while sp > 0 and found == 0:
        sp -= 1
        r = stack[sp]
        if r == 0:
            found = 1
            break
        top = 13
        while nib(r, top) == 0:
            top -= 1
        for j in range(m):
            c = combos[j]
            if nib(c, top) and fits(r, c):
                r2 = r - c
                slot = _hs_insert(seen, r2)
                if slot >= 0:
                    used[n_seen] = slot
                    n_seen += 1
                    if 2 * n_seen > seen.shape[0]:
                        found = -1
                        break
                    stack[sp] = r2
                    sp += 1
    _hs_clear(seen, used, n_seen)
    return found


@counted
def _splits(key: int, total: int, sums: int, v: int, scr: np.ndarray) -> bool:
    """:func:`partitions_into_s` given the key's total and subset sums."""
    if total == 0 or divmod_small(total, v)[1] != 0:
        return total == 0
    if total == v:  # the whole multiset is one combination
        return True
    if (sums >> v) & 1 == 0:
        return False
    if total == 2 * v:  # two combinations: some part sums to v, and then so does the rest
        return True
    combos = scr[O_COMBOS:O_SEEN]
    m = combos_into(key, v, combos, scr[O_WORK:O_COMBOS])
    found = _partition_search(key, combos, m, scr[O_SEEN:O_USED], scr[O_USED:O_STACK], scr[O_STACK:O_RES])
    if found < 0:  # huge tables only
        found = overflow_splits(key, m, scr)
    return found == 1


def overflow_splits(key: int, m: int, scr: np.ndarray) -> int:
    """Whether ``key`` splits (1/0) when the search outgrew the scratch (huge tables only): per target, below."""
    raise NotImplementedError("compiled code only")


@overload(overflow_splits, target="cpu")
def _overflow_splits_cpu(key, m, scr):
    """CPU: :func:`_partition_search` again on heap buffers, doubled until the search fits."""
    def impl(key, m, scr):
        combos = scr[O_COMBOS:O_COMBOS + m]
        slots = 2 * HASH_SLOTS
        found = -1
        while found < 0:
            found = _partition_search(key, combos, m, np.full(slots, -1, np.int64), np.empty(slots // 2, np.int64),
                                      np.empty(slots // 2, np.int64))
            slots *= 2
        return found
    return impl


@overload(overflow_splits, target="cuda")
def _overflow_splits_cuda(key, m, scr):
    """GPU: no heap; flag the overflow for the host and answer "no split" (the step's results are void)."""
    def impl(key, m, scr):
        scr[O_STATUS] |= STATUS_OVERFLOW
        return 0
    return impl


@borrowing
def partitions_into_s(key: int, v: int, scr: np.ndarray) -> bool:
    """True if the value multiset ``key`` splits into disjoint combinations each summing to ``v``."""
    return _splits(key, key_total(key), subset_sums(key), v, scr)


@counted
def partitions_into(key: int, v: int) -> bool:
    """:func:`partitions_into_s` with a fresh scratch vector."""
    return partitions_into_s(key, v, new_scratch())


@borrowing
def is_maximal_capture_s(tkey: int, ckey: int, v: int, scr: np.ndarray) -> bool:
    """True if ``ckey`` (within ``tkey``) is a maximal capture of value ``v`` (K11); empty = creep (K12)."""
    if ckey == 0:
        return (subset_sums(tkey) >> v) & 1 == 0
    if (subset_sums(tkey - ckey) >> v) & 1:
        return False
    return partitions_into_s(ckey, v, scr)


@counted
def is_maximal_capture(tkey: int, ckey: int, v: int) -> bool:
    """:func:`is_maximal_capture_s` with a fresh scratch vector."""
    return is_maximal_capture_s(tkey, ckey, v, new_scratch())


@borrowing
def sweep_values_s(tkey: int, scr: np.ndarray) -> int:
    """Bitmask of played values 2–14 whose maximal capture takes the whole table (K13); 0 for an empty table."""
    return hand_sweep_values_k(0x7FFC, tkey, -1, scr)


@borrowing
def hand_sweep_values_k(values: int, tkey: int, sums: int, scr: np.ndarray) -> int:
    """Bitmask of the played ``values`` (a bitmask, bit v) that sweep the table ``tkey`` (K13), given its subset
    sums if known (−1: not)."""
    if tkey == 0:
        return 0
    return sweep_values_known(values, tkey, key_total(tkey), sums, False, scr)


@borrowing
def sweep_values_known(values: int, tkey: int, total: int, sums: int, first: bool, scr: np.ndarray) -> int:
    """Sweeping ``values`` (K13) of a non-empty table of known total and sums (−1: unknown); ``first``: the lowest."""
    values &= _DIVISORS[total] & -(np.int64(1) << ((63 - leading_zeros(tkey)) >> 2))  # parts of v: v | total, v ≥ max
    if values == 0:
        return 0
    if sums < 0:
        sums = subset_sums(tkey)
    good = 0
    for v in range(2, 2 + rolled(13)):
        if (values >> v) & 1 and _splits(tkey, total, sums, v, scr):
            good |= 1 << v
            if first:
                break
    return good


@borrowing
def add_to_sums(sums: int, k: int) -> int:
    """The subset sums (:func:`subset_sums`) of a value key with one more card of table value ``k``."""
    return (sums | (sums << k)) & _SUM_MASK


@borrowing
def hand_sweep_values_s(hand: np.ndarray, tkey: int, scr: np.ndarray) -> int:
    """Bitmask of the hand's played values that sweep the table ``tkey`` (K13); non-zero means a sweep is forced."""
    return hand_sweep_values_k(hand_value_bits(hand), tkey, -1, scr)


@counted
def hand_sweep_values(hand: np.ndarray, table: np.ndarray) -> int:
    """Bitmask of the hand's played values whose maximal capture takes the whole table (K13).

    Non-zero means the sweep is forced: only cards of these values may be played, and they
    must take the whole table.
    """
    return hand_sweep_values_s(hand, table_value_key(table), new_scratch())


@borrowing
def card_mask_into(hand: np.ndarray, forced: int, out: np.ndarray) -> None:
    """Write which hand cards may be played into ``out[:52]``: those of the ``forced`` sweep values, else all."""
    for c in range(rolled(52)):
        out[c] = hand[c] > 0 and (forced == 0 or (forced >> HAND_VALUE[c]) & 1 == 1)


@borrowing
def legal_card_mask(hand: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    """Write into ``out`` (52,) which hand cards may be played: the sweepers if K13 forces one, else all."""
    card_mask_into(hand, hand_sweep_values(hand, table), out)
