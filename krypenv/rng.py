"""Seeded per-env random streams, and the uniform random choice among legal actions.

Every env of a batch owns one splitmix64 stream: a ``uint64`` state in an (N,) array,
seeded by :func:`seed_state` from ``numpy.random.SeedSequence(seed)`` and advanced by
:func:`rand_float` inside compiled code.  Decks, random seats, built-in random opponents and
the uniforms handed to Python agents (``DecisionBatch.uniforms``) all come from these
streams, so a game is reproducible from its seed however the games are batched.

:func:`shuffle_copies` is the one Fisher–Yates shuffle of every game's deck (ordered copies of
its card kinds); :func:`draw_deck_into` deals a deck from an env's stream with it, and
:func:`shuffled_deck_rows` deals decks from a numpy Generator (the engines' ``reset(rng=...)``).

:func:`pick_legal` is the one uniform random policy of every game: the ⌊u·n⌋-th of the n
legal actions of a mask, for a uniform ``u``.  The compiled built-in opponents and the
Python ``random`` agent (:class:`krypenv.agents.base.RandomAgent`) both use it, so they make exactly
the same choices.  Nothing here knows a game's rules.

A seed, wherever an env takes one (``reset(seed=...)``, the VecEnv's ``seed``), is None or a
non-negative integer (Python or numpy; not a bool); :func:`check_seed` refuses anything else
with a ValueError naming ``seed``.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from numba import njit

__all__ = [
    "check_seed",
    "draw_deck_into",
    "k_pick_legal",
    "k_uniforms",
    "pick_legal",
    "rand_float",
    "seed_range",
    "seed_state",
    "seed_states",
    "shuffle_copies",
    "shuffled_deck_rows",
]


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """``seed`` as a Python int (or None); ValueError naming ``name`` unless it is None or a non-negative integer."""
    if seed is None:
        return None
    integer = isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_))
    if not (integer and seed >= 0):
        raise ValueError(f"{name} must be None or a non-negative integer, got {seed!r} ({type(seed).__name__})")
    return int(seed)


def seed_state(seed: int | None) -> np.uint64:
    """A splitmix64 state from a seed (fresh OS entropy for None; ValueError naming ``seed`` for a bad one)."""
    return np.random.SeedSequence(check_seed(seed)).generate_state(1, np.uint64)[0]


# numpy's SeedSequence (numpy/random/bit_generator.pyx: Melissa O'Neill's seed_seq mixing, pool of 4 words),
# for the entropy of one integer below 2**64 and the first 64-bit word of generate_state: uint32 arithmetic.
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _MASK32 = 0xCA01F9DD, 0x4973F715, 0xFFFFFFFF


@njit(cache=True)
def _hashmix(value: int, h: int) -> tuple[int, int]:
    """SeedSequence's hashmix: (mixed value, next hash constant), all modulo 2**32."""
    value = (value ^ h) & _MASK32
    h = (h * _MULT_A) & _MASK32
    value = (value * h) & _MASK32
    return value ^ (value >> 16), h


@njit(cache=True)
def _mix(x: int, y: int) -> int:
    """SeedSequence's mix of two pool words, modulo 2**32."""
    r = (_MIX_L * x - _MIX_R * y) & _MASK32
    return r ^ (r >> 16)


@njit(cache=True)
def _seed_states(seeds: np.ndarray, out: np.ndarray) -> None:
    """``out[k]`` = ``SeedSequence(int(seeds[k])).generate_state(1, uint64)[0]`` for uint64 seeds (entropy words:
    the seed's low and, when non-zero, high 32 bits)."""
    pool = np.zeros(4, np.int64)
    for k in range(seeds.shape[0]):
        x = np.uint64(seeds[k])
        words = np.zeros(2, np.int64)
        words[0] = np.int64(x & np.uint64(_MASK32))
        words[1] = np.int64(x >> np.uint64(32))
        n_words = 2 if words[1] != 0 else 1
        h = _INIT_A
        for i in range(4):
            pool[i], h = _hashmix(words[i] if i < n_words else 0, h)
        for i_src in range(4):
            for i_dst in range(4):
                if i_src != i_dst:
                    v, h = _hashmix(pool[i_src], h)
                    pool[i_dst] = _mix(pool[i_dst], v)
        h = _INIT_B
        lo_hi = np.zeros(2, np.int64)
        for j in range(2):
            v = (pool[j] ^ h) & _MASK32
            h = (h * _MULT_B) & _MASK32
            v = (v * h) & _MASK32
            lo_hi[j] = v ^ (v >> 16)
        out[k] = np.uint64(lo_hi[0]) | (np.uint64(lo_hi[1]) << np.uint64(32))


def seed_states(seeds: list[int | None]) -> np.ndarray:
    """(n,) uint64 splitmix64 states, ``seed_state`` of each seed, fast for many: integer seeds below 2**64 are mixed
    in compiled code exactly as numpy's SeedSequence does (tests/test_rng.py holds it to numpy), None draws 64 bits of
    fresh OS entropy per env through the same mixing, larger seeds go through numpy."""
    seeds = [check_seed(s) for s in seeds]
    out = np.empty(len(seeds), np.uint64)
    fresh = [k for k, s in enumerate(seeds) if s is None]
    values = np.array([0 if s is None or s >= 2**64 else s for s in seeds], np.uint64)
    if fresh:
        values[fresh] = np.frombuffer(os.urandom(8 * len(fresh)), np.uint64)
    _seed_states(values, out)
    for k, s in enumerate(seeds):
        if s is not None and s >= 2**64:
            out[k] = seed_state(s)
    return out


def seed_range(seed: int | None, n: int) -> np.ndarray:
    """``seed_states([seed + k for k in range(n)])`` without a Python loop (None: fresh entropy for each)."""
    seed = check_seed(seed)
    if seed is None or seed + n > 2**64:
        return seed_states([None if seed is None else seed + k for k in range(n)])
    out = np.empty(n, np.uint64)
    _seed_states(np.arange(n, dtype=np.uint64) + np.uint64(seed), out)
    return out


@njit(cache=True)
def rand_float(rng: np.ndarray, i: int) -> float:
    """Next uniform float in [0, 1) of env ``i``'s splitmix64 stream."""
    z = rng[i] + np.uint64(0x9E3779B97F4A7C15)
    rng[i] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def pick_legal(mask: np.ndarray, u: float) -> int:
    """The ⌊u·n⌋-th of the n legal actions of a mask (the uniform random choice every random agent makes)."""
    n = 0
    for a in range(mask.shape[0]):
        n += mask[a] != 0
    k = min(int(u * n), n - 1)
    for a in range(mask.shape[0]):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(cache=True)
def k_pick_legal(masks: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    """Per row, the ⌊u·n⌋-th of the n legal actions of ``masks`` (uniform random legal actions for given uniforms)."""
    for i in range(masks.shape[0]):
        out[i] = pick_legal(masks[i], u[i])


@njit(cache=True)
def k_uniforms(rng: np.ndarray, idx: np.ndarray, out: np.ndarray) -> None:
    """The next ``out.shape[1]`` uniforms of the streams of envs ``idx``."""
    for k in range(idx.shape[0]):
        for j in range(out.shape[1]):
            out[k, j] = rand_float(rng, idx[k])


@njit(cache=True)
def shuffle_copies(u: np.ndarray, out: np.ndarray, kinds: int) -> None:
    """Fisher–Yates shuffle of the ordered deck ``out[k] = k % kinds`` into ``out`` (n,) by n − 1 uniforms ``u``.

    For j = n − 1 … 1, swap positions j and ⌊u[j−1]·(j+1)⌋.
    """
    n = out.shape[0]
    kind = 0
    for k in range(n):  # out[k] = k % kinds, counted (a 64-bit modulo is a subroutine call on a GPU thread)
        out[k] = kind
        kind = kind + 1 if kind + 1 < kinds else 0
    for j in range(n - 1, 0, -1):
        k = min(int(u[j - 1] * (j + 1)), j)
        out[j], out[k] = out[k], out[j]


@njit(cache=True)
def _shuffle_rows(u: np.ndarray, out: np.ndarray, kinds: int) -> None:
    """:func:`shuffle_copies` of every row of ``u`` (n, size − 1) into the same row of ``out`` (n, size)."""
    for i in range(u.shape[0]):
        shuffle_copies(u[i], out[i], kinds)


def shuffled_deck_rows(generator: np.random.Generator, n: int, size: int, kinds: int) -> np.ndarray:
    """``n`` deck orders (n, size) int8 from a numpy Generator, ``size // kinds`` copies of each kind.

    Row i is :func:`shuffle_copies` by row i of ``generator.random((n, size − 1))``, so it never
    depends on n: the same seed gives the same decks at any batch size.
    """
    out = np.empty((n, size), np.int8)
    _shuffle_rows(generator.random((n, size - 1)), out, kinds)
    return out


@njit(cache=True)
def draw_deck_into(rng: np.ndarray, i: int, deck: np.ndarray, kinds: int, u: np.ndarray) -> None:
    """Shuffle a deck into ``deck`` (size,), ``size // kinds`` copies of each kind, by size − 1 uniforms of stream
    ``i`` drawn into the buffer ``u`` (at least size − 1 long): nothing is allocated (CPU and CUDA threads alike)."""
    n = deck.shape[0]
    for k in range(n - 1):
        u[k] = rand_float(rng, i)
    shuffle_copies(u[:n - 1], deck, kinds)
