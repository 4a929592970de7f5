"""The part of a batched SB3 ``VecEnv`` that is the same for every game: N games as one object.

A game's batched VecEnv (:class:`krypenv.krypkasino.vec.KrypkasinoVecEnv`,
:class:`krypenv.kungsholmskille.vec.KungsholmskilleVecEnv`) subclasses :class:`BatchedVecEnv`
and keeps its learner's masks in ``self._masks`` ((N, n_actions) int8, refreshed by its own
``step``/``reset``).  This class answers SB3's per-env questions for the whole batch at once:
``action_masks()`` is one (N, n_actions) bool array (never one env at a time through
``env_method``, sb3-contrib#49); the games are not separate objects, so attributes are the
VecEnv's own and cannot be set per game.

It also checks what SB3 hands every game's VecEnv: ``step_async`` takes exactly one integer
action per game, an integer array of shape (N,) or (N, 1) (SB3's and sb3-contrib's policies
pass int64) — floats, even integral ones, bools and any other shape or count are a ValueError
naming the actions, before any game moves; ``seed`` takes None or a non-negative integer
(:func:`krypenv.rng.check_seed`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from krypenv.rng import check_seed

__all__ = ["BatchedVecEnv"]


class BatchedVecEnv(VecEnv):
    """SB3 ``VecEnv`` plumbing for N games held in one compiled batch (subclasses set ``_masks`` and ``_actions``)."""

    _masks: np.ndarray  # (N, n_actions) int8: the learner's legal actions in every game now
    _actions: np.ndarray  # (N,) int64: the learner's actions given to step_async, applied by step_wait

    def step_async(self, actions: np.ndarray) -> None:
        """Remember the learner's actions, one integer per game (ValueError otherwise); ``step_wait`` applies them."""
        acts = np.asarray(actions)
        n = self.num_envs
        if acts.dtype.kind not in "iu" or acts.shape not in ((n,), (n, 1)):
            raise ValueError(f"actions must be {n} integers (an integer array of shape ({n},)), one per game, got "
                             f"{_describe(actions, acts)}")
        self._actions[:] = acts.reshape(n)

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """SB3's ``seed``: game ``i`` gets ``seed + i`` at the next ``reset()`` (ValueError naming a bad ``seed``)."""
        return super().seed(check_seed(seed))

    def action_masks(self) -> np.ndarray:
        """(N, n_actions) bool: every game's legal actions for the learner now."""
        return self._masks.astype(bool)

    def close(self) -> None:
        """Nothing to release."""

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute of this VecEnv, once per selected game (the games share one object)."""
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Not supported: the games are not separate objects."""
        raise AttributeError(f"cannot set {attr_name!r} per game on the batched VecEnv")

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """``action_masks`` (one bool row per selected game); other methods are not per game."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            return list(self.action_masks()[list(idx)])
        raise AttributeError(f"the batched VecEnv has no per-game method {method_name!r}")

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """No game is wrapped."""
        return [False] * len(self._indices(indices))

    def has_attr(self, attr_name: str) -> bool:
        """True for attributes of the VecEnv (``action_masks`` included)."""
        return hasattr(self, attr_name)

    def _indices(self, indices: VecEnvIndices) -> Sequence[int]:
        """The selected game indices: all, one, or the given ones."""
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return list(indices) if isinstance(indices, Iterable) else [indices]


def _describe(actions: Any, acts: np.ndarray) -> str:
    """How the actions given to ``step_async`` look, for its error message."""
    if acts.dtype.kind in "OUS":
        return repr(actions)
    return f"shape {acts.shape} and dtype {acts.dtype}" + (f": {acts.tolist()}" if acts.size <= 8 else "")
