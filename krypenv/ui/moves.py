"""What the session and the game adapters share: a legal move as a person sees it, and bad input.

:class:`Choice` is one legal move with its readable label, its short form and the engine
move; :class:`InputError` is a typed or sent move that is not legal, its message the reason;
:func:`softmax_masked` turns a policy's masked logits into probabilities (hints);
:class:`OneDealAdapter` is what every game's adapter reads the same way off its one-deal engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Choice", "InputError", "OneDealAdapter", "softmax_masked"]


class OneDealAdapter:
    """The base of a game's UI adapter: ``deals`` is its one-deal engine, ``record_of`` its records' writer."""

    deals: Any  # the game's DealBatch of one deal, the deal being played
    record_of: Callable[[Any, int], dict[str, Any]]  # the game's record_from_deals(deals, i)

    @property
    def done(self) -> bool:
        """The deal is finished."""
        return bool(self.deals.done[0])

    def record(self) -> dict[str, Any]:
        """The deal's game record (partial while it is unfinished)."""
        return type(self).record_of(self.deals, 0)


class InputError(ValueError):
    """A move the human typed or sent that is not one of the legal moves; the message says why."""


@dataclass
class Choice:
    """One legal move as a person sees it: readable label, short form, the engine move, its cards for the page."""

    label: str
    key: str
    move: Any
    card: str | None = None  # the card played (Krypkasino) or the rank played/discarded (Kungsholmskille)
    capture: list[str] = field(default_factory=list)  # the table cards taken (Krypkasino), or discarded ranks

    def to_json(self, index: int) -> dict[str, Any]:
        """The move as the page receives it: its 1-based number, label, short form and cards."""
        return {"n": index + 1, "label": self.label, "key": self.key, "card": self.card, "capture": self.capture}


def softmax_masked(logits: np.ndarray) -> np.ndarray:
    """Probabilities of a logit vector whose illegal entries are −inf."""
    x = np.asarray(logits, np.float64)
    finite = np.isfinite(x)
    out = np.zeros_like(x)
    if finite.any():
        e = np.exp(x[finite] - x[finite].max())
        out[finite] = e / e.sum()
    return out
