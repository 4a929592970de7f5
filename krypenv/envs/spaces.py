"""Spaces shared by every game's environments, and the checks of one step.

An action, in the AEC and Gymnasium envs of every game, is one integer: a Python ``int``, a
numpy integer scalar, or an integer array of shape ``()`` or ``(1,)`` (what ``Discrete`` spaces
and SB3's ``predict`` hand out).  :func:`as_action` turns it into an ``int``; floats (even
integral ones), bools, strings, other dtypes and other shapes are a ValueError naming the
action (and, in an AEC env, the agent).  An integer outside the action range is not refused
here: the envs treat it as an illegal action.  :func:`check_episode_live` refuses an AEC
``step`` once every agent has left.  :func:`first_illegal` finds the first game of a batch whose action its
mask refuses (compiled: the VecEnvs check every step).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numba import njit

__all__ = ["LegalDiscrete", "as_action", "check_episode_live", "first_illegal"]


@njit(cache=True)
def first_illegal(masks: np.ndarray, actions: np.ndarray) -> int:
    """The first game ``i`` whose action is outside ``[0, A)`` or masked out in ``masks[i]`` (N, A), or −1."""
    for i in range(actions.shape[0]):
        a = actions[i]
        if a < 0 or a >= masks.shape[1] or masks[i, a] == 0:
            return i
    return -1


def check_episode_live(agents: list[str]) -> None:
    """ValueError once an AEC episode is over (``agents`` empty): step() then needs a reset() first."""
    if not agents:
        raise ValueError("the episode is over (every agent has stepped None and left): call reset() before step()")


def as_action(action: Any, n: int, agent: str | None = None) -> int:
    """One action as an ``int`` (see the module docstring); ValueError naming what was wrong (and ``agent``)."""
    if type(action) is int:  # the common case first (a bool is not of type int)
        return action
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and action.dtype.kind in "iu":
        return int(action.reshape(()))
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    got = (f"an array of shape {action.shape} and dtype {action.dtype}" if isinstance(action, np.ndarray)
           else f"{action!r} ({type(action).__name__})")
    who = f"{agent}: " if agent else ""
    raise ValueError(f"{who}action must be one integer 0..{n - 1} (an int, a numpy integer or an integer array of "
                     f"shape () or (1,)), got {got}")


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
