"""Seeded per-env random streams, and the uniform random choice among legal actions.

Every env of a batch owns one splitmix64 stream: a ``uint64`` state in an (N,) array,
seeded by :func:`seed_state` from ``numpy.random.SeedSequence(seed)`` and advanced by
:func:`rand_float` inside compiled code.  Decks, random seats, built-in random opponents and
the uniforms handed to Python agents (``DecisionBatch.uniforms``) all come from these
streams, so a game is reproducible from its seed however the games are batched.

:func:`shuffle_copies` is the one Fisher–Yates shuffle of every game's deck (ordered copies of
its card kinds); :func:`draw_deck` deals a deck from an env's stream with it, and
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

from typing import Any

import numpy as np
from numba import njit

__all__ = ["check_seed", "draw_deck", "k_pick_legal", "k_uniforms", "pick_legal", "rand_float", "seed_state",
           "shuffle_copies", "shuffled_deck_rows"]


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
    for k in range(n):
        out[k] = k % kinds
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
def draw_deck(rng: np.ndarray, i: int, size: int, kinds: int) -> np.ndarray:
    """A (size,) int8 deck, ``size // kinds`` copies of each kind, shuffled by size − 1 uniforms of stream ``i``."""
    u = np.empty(size - 1, np.float64)
    for k in range(size - 1):
        u[k] = rand_float(rng, i)
    deck = np.empty(size, np.int8)
    shuffle_copies(u, deck, kinds)
    return deck
