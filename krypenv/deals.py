"""What every game's batched engine (its ``DealBatch``) shares: which deals a reset touches and the decks it deals.

Both engines reset the deals of an ``active`` mask (all of them by default) from explicit deck
orders or from decks shuffled by a numpy ``Generator``; the shuffled decks are drawn for the
active deals only, in index order, so a deal's deck never depends on which others are reset.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["active_mask", "reset_decks"]


def active_mask(active: np.ndarray | None, n: int) -> np.ndarray:
    """The (n,) bool mask of the deals to reset: every deal when ``active`` is None; ValueError for a bad shape."""
    if active is None:
        return np.ones(n, np.bool_)
    mask = np.asarray(active, dtype=np.bool_)
    if mask.shape != (n,):
        raise ValueError(f"active mask must have shape ({n},), got {mask.shape}")
    return mask


def reset_decks(decks: np.ndarray | None, rng: np.random.Generator | None, mask: np.ndarray, size: int,
                shuffled: Callable[[np.random.Generator, int], np.ndarray],
                check: Callable[[np.ndarray, np.ndarray], None]) -> np.ndarray:
    """The (n, size) int8 deck orders of a reset: ``decks`` checked, or ``shuffled(rng, k)`` for the k active deals.

    ``check(decks, mask)`` raises ValueError for an explicit deck that is not the game's deck (it
    checks the active deals only); the shape is checked here.
    """
    n = mask.shape[0]
    if decks is None:
        if rng is None:
            raise ValueError("reset needs either decks or an rng")
        if mask.all():
            return shuffled(rng, n)  # the same decks as below, without the copy
        out = np.zeros((n, size), np.int8)
        out[mask] = shuffled(rng, int(mask.sum()))  # in index order of the active deals
        return out
    given = np.asarray(decks)
    if given.shape != (n, size):
        raise ValueError(f"decks must have shape ({n}, {size}), got {given.shape}")
    check(given, mask)
    return np.ascontiguousarray(given, np.int8)
