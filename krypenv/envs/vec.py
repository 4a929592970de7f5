"""The batched SB3 ``VecEnv`` of every game, written once: N games of one configuration as one object.

:class:`GameVecEnv` runs ``num_envs`` games in one process on a game's batch
(:class:`krypenv.envs.batch.EnvBatch`): the learner's actions for all games go into one
compiled call that also plays the built-in opponents, computes the rewards, auto-resets
finished games and writes the next observations and masks; external opponents (agents,
:mod:`krypenv.agent_api`) act as one batch per agent and round trip, never one game at a
time.  ``infos[i]`` of a finished game holds its ``terminal_observation``,
``terminal_action_mask``, ``TimeLimit.truncated`` and what the game adds (its final
score or money); the game restarts at once.  Game ``i`` is the Gymnasium env seeded with
``seed + i``.  A game's VecEnv subclasses it with its keywords and its terminal info.

It answers SB3's per-env questions for the whole batch at once: ``action_masks()`` is one
(N, n_actions) bool array (never one env at a time through ``env_method``, sb3-contrib#49);
the games are not separate objects, so attributes are the VecEnv's own and cannot be set per
game.  It checks what SB3 hands it: ``step_async`` takes exactly one integer action per
game, an integer array of shape (N,) or (N, 1) (SB3's and sb3-contrib's policies pass
int64) — floats, even integral ones, bools and any other shape or count are a ValueError
naming the actions, before any game moves; ``seed`` takes None or a non-negative integer
(:func:`krypenv.rng.check_seed`), applied at the next ``reset()``.  Illegal actions: with
``illegal="raise"`` (default) ``step`` raises a ValueError naming the game, the action and
the legal ones before any game moves; with ``"lose"`` the offending game's episode ends as in
the other interfaces.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Sequence
from itertools import repeat, starmap
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from krypenv.envs.batch import EnvBatch
from krypenv.envs.gym import opponent_kinds
from krypenv.envs.spaces import first_illegal
from krypenv.rng import check_seed

__all__ = ["GameVecEnv"]


def _empty_dicts(n: int) -> list[dict[str, Any]]:
    """``n`` new empty dicts, one per game, made in C (a quarter faster than a comprehension at 4,096)."""
    return list(starmap(dict, repeat((), n)))


class GameVecEnv(VecEnv):
    """N learner seats of N games of one configuration, stepped together (see the module docstring)."""

    batch_class: ClassVar[type[EnvBatch]]  # the game's batch
    game: ClassVar[str]  # the game's registry name (for the opponents' check)

    @staticmethod
    def check_arguments(num_envs: Any, render_mode: Any) -> None:
        """ValueError unless ``num_envs`` is a positive integer and ``render_mode`` None (checked before the config)."""
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if render_mode is not None:
            raise ValueError("render_mode: the VecEnv does not render; use the Gymnasium or AEC env to watch a game")

    def __init__(self, num_envs: int, config: Any, seat: int | str, opponents: Any, seed: int | None) -> None:
        """``num_envs`` games of ``config`` with the learner at ``seat`` against ``opponents`` (no rendering)."""
        self.check_arguments(num_envs, config.render_mode)
        self.config = config
        kinds, self._agents = opponent_kinds(opponents, config.players, self.game)
        self.core = self.batch_class(config, int(num_envs), seat=seat, kinds=kinds)
        self.render_mode = None
        core = self.core
        n, dim, n_actions = core.n, core.dim, core.n_actions
        super().__init__(n, spaces.Box(core.low, core.high, dtype=core.obs_dtype), spaces.Discrete(n_actions))
        self._lose = config.illegal == "lose"
        self._obs = np.zeros((n, dim), core.obs_dtype)
        self._masks = np.zeros((n, n_actions), np.int8)  # the learner's legal actions in every game now
        self._term_obs = np.zeros((n, dim), core.obs_dtype)
        self._term_masks = np.zeros((n, n_actions), np.int8)
        self._rewards = np.zeros(n, np.float64)
        self._ends = np.zeros(n, core.over_dtype)
        self._final = np.zeros(n, core.value_dtype)
        self._status = np.zeros(n, np.int64)
        self._actions = np.zeros(n, np.int64)  # the learner's actions given to step_async, applied by step_wait
        self._ever_reset = False
        if seed is not None:
            self.seed(seed)

    def _dones(self) -> np.ndarray:
        """(N,) bool: the games whose episode ended in the last step (from ``_ends``)."""
        return self._ends != 0

    @abstractmethod
    def _terminal_info(self, i: int) -> dict[str, Any]:
        """What the game adds to the info of finished game ``i`` (its final score or money, truncation)."""

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        """Start every game afresh (with the seeds given to ``seed()``, if any) and return the observations."""
        core = self.core
        if any(s is not None for s in self._seeds) or not self._ever_reset:
            core.seed(list(self._seeds))
        self._reset_seeds()
        self._ever_reset = True
        core.reset()
        core.play_external(self._agents)
        core.observe_all(self._obs, self._masks)
        self.reset_infos = _empty_dicts(self.num_envs)
        return self._obs.copy()

    def step_wait(self) -> VecEnvStepReturn:
        """Apply the actions, play the opponents, reward, auto-reset and observe every game."""
        if not self._ever_reset:
            raise ValueError("call reset() before step()")
        core, actions = self.core, self._actions
        if not self._lose:
            self._check_legal(actions)
        if not self._agents:
            core.step_all(actions, self._lose, self._status, self._rewards, self._ends, self._final, self._obs,
                          self._masks, self._term_obs, self._term_masks)
            dones = self._dones()
            core.episodes[dones] += 1  # auto-reset inside the kernel
        else:
            core.step_learners(actions, self._lose, self._status)
            core.play_external(self._agents)
            core.finish(self._rewards, self._ends, self._final, self._term_obs, self._term_masks)
            dones = self._dones()
            if dones.any():
                core.episodes[dones] += 1  # auto-reset in finish: opponents see a new episode
                core.play_external(self._agents)  # new episodes may start with an opponent's turn
            core.observe_all(self._obs, self._masks)
        infos = _empty_dicts(self.num_envs)
        ended = np.flatnonzero(dones)
        if ended.size:
            term_obs, term_masks = self._term_obs[ended], self._term_masks[ended]  # one copy each: rows of their own
            for k, i in enumerate(ended.tolist()):
                infos[i] = {"terminal_observation": term_obs[k], "terminal_action_mask": term_masks[k],
                            **self._terminal_info(i)}
        return self._obs.copy(), self._rewards.astype(np.float32), dones, infos

    def _check_legal(self, actions: np.ndarray) -> None:
        """ValueError naming the first game whose action is illegal; nothing is applied then."""
        i = first_illegal(self._masks, actions)
        if i >= 0:
            who = f"player_{int(self.core.seat[i])}"
            raise ValueError(f"game {i}: {self.core.illegal_message(i, int(actions[i]), who)}")

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
        """The selected game indices: all, one, or the given ones (ValueError for anything else)."""
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        if isinstance(indices, Iterable):
            return list(indices)
        raise ValueError(f"indices must be None, a game index or a sequence of them, got {indices!r}")


def _describe(actions: Any, acts: np.ndarray) -> str:
    """How the actions given to ``step_async`` look, for its error message."""
    if acts.dtype.kind in "OUS":
        return repr(actions)
    return f"shape {acts.shape} and dtype {acts.dtype}" + (f": {acts.tolist()}" if acts.size <= 8 else "")
