"""Spaces shared by every game's environments."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

__all__ = ["LegalDiscrete"]


class LegalDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` draws a legal action of the env's current decision.

    ``legal`` is the env's live (n,) mask, updated in place by the env; ``sample(mask=...)``
    or ``sample(probability=...)`` overrides it, and an all-zero mask (no decision) samples freely.
    """

    def __init__(self, legal: np.ndarray, seed: int | None = None) -> None:
        """``legal``: the env's live mask; its length is the number of actions."""
        super().__init__(int(legal.shape[0]), seed=seed)
        self._legal = legal

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        """A uniform random legal action (or as ``mask``/``probability`` say)."""
        if mask is None and probability is None and self._legal.any():
            mask = self._legal
        return super().sample(mask=mask, probability=probability)
