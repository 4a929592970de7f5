"""The Gymnasium single-agent env of every game, written once: the learner's seat, the opponents played inside ``step``.

:class:`~krypenv.envs.gym.GameGymEnv` runs one env of a game's batch (:class:`krypenv.envs.batch.EnvBatch`) with a
learner seat.  ``seat`` is the learner's seat, or ``"random"`` for a fresh one each episode
(drawn from the env's seeded stream; ``info["seat"]`` says which).  ``opponents`` is
``"random"`` (the built-in uniform policy, run compiled), an agent object
(:mod:`krypenv.agent_api`), or a list of P − 1 of those for the seats after the learner in
turn order (:func:`~krypenv.envs.gym.opponent_kinds`).  ``info["action_mask"]`` and ``action_masks()`` give the
learner's legal actions (sb3-contrib's MaskablePPO), and ``action_space.sample()`` draws a
legal one.

An action is one integer: an ``int``, a numpy integer, or an integer array of shape ``(1,)`` or
``()``; a float (even ``3.0``), a bool, a string or another shape is a ValueError naming the
action (:func:`krypenv.envs.spaces.as_action`).  ``reset(seed=...)`` takes None or a non-negative
integer (Python or numpy, not a bool), else a ValueError naming ``seed``.  With
``illegal="raise"`` an illegal action is a ValueError naming it and the legal ones, and
changes nothing.

Checkers: Stable-Baselines3's ``check_env`` passes as it is, and Gymnasium's ``check_env`` with
``illegal="lose"``.  With the default ``illegal="raise"`` Gymnasium's checker fails by design: it
samples an action before its seeded ``reset(seed=123)`` and then steps it, and an action that is not
legal in the new deal is refused with a ValueError naming the legal actions
(``tests/envs/test_conformance.py`` pins both, for every game).

A game subclasses it with its keywords, its step after the learner's
action (rewards) and its render text.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from krypenv.agent_api import NATIVE_RANDOM, Agent
from krypenv.envs.batch import EXTERNAL, LEARNER, RANDOM, EnvBatch, render_text
from krypenv.envs.spaces import LegalDiscrete, as_action
from krypenv.rng import check_seed

__all__ = ["SELF", "GameGymEnv", "opponent_kinds"]

SELF = "self"  # the opponent spec of a seat the caller plays too (self-play, the device envs)


def opponent_kinds(opponents: Any, players: int, game: str,
                   self_play: bool = False) -> tuple[list[int], dict[int, Agent]]:
    """Who acts for each seat after the learner: (kinds per relative seat, external agents by relative seat).

    ``opponents`` is ``"random"``, an agent, or a list of P − 1 of those; an agent with
    ``native = NATIVE_RANDOM`` runs compiled.  With ``self_play`` (the device envs), ``"self"`` is a
    seat the caller plays too (LEARNER).  ValueError otherwise, naming the bad opponent.
    """
    names = "'random', 'self'" if self_play else "'random'"
    items = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents] * (players - 1)
    if len(items) != players - 1:
        raise ValueError(f"opponents must be {names}, one agent, or a list of {players - 1} (one per other seat), "
                         f"got a list of {len(items)}")
    kinds, agents = [LEARNER], {}
    for r, opp in enumerate(items, start=1):
        if self_play and isinstance(opp, str) and opp == SELF:
            kinds.append(LEARNER)
        elif (isinstance(opp, str) and opp == "random") or getattr(opp, "native", None) == NATIVE_RANDOM:
            kinds.append(RANDOM)
        elif isinstance(opp, str):
            built_in = "'random' and 'self' are" if self_play else "'random' is"
            raise ValueError(f"opponents: {opp!r} is a spec string; only {built_in} built in, load others with "
                             f"agents.load({opp!r}, game={game!r})")
        elif getattr(opp, "game", game) != game:
            raise ValueError(f"opponents: agent {getattr(opp, 'name', opp)!r} was built for {opp.game}, not "
                             f"{game}; load it with agents.load(spec, game={game!r})")
        elif callable(getattr(opp, "act", None)):
            kinds.append(EXTERNAL)
            agents[r] = opp
        else:
            raise ValueError(f"opponents: {opp!r} is not an agent; use {names} or an object with a name and "
                             f"act(batch) (krypenv.agent_api; agents.load(spec, game={game!r}) builds them)")
    return kinds, agents


class GameGymEnv(gym.Env):
    """The learner's seat at one table of a game (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 1}
    batch_class: ClassVar[type[EnvBatch]]  # the game's batch
    game: ClassVar[str]  # the game's registry name (for the opponents' check)

    def __init__(self, config: Any, seat: int | str, opponents: Any) -> None:
        """The learner at ``seat`` against ``opponents`` at a table of ``config``."""
        self.config = config
        kinds, self._agents = opponent_kinds(opponents, config.players, self.game)
        self.core = self.batch_class(config, 1, seat=seat, kinds=kinds)
        self.render_mode = config.render_mode
        self.observation_space = spaces.Box(self.core.low, self.core.high, dtype=self.core.obs_dtype)
        self._mask = np.zeros(self.core.n_actions, np.int8)  # the learner's mask, updated in place
        self.action_space = LegalDiscrete(self._mask)
        self._lose = config.illegal == "lose"
        self._names = [f"player_{s}" for s in range(config.players)]
        self._seeded = False
        self._log: list[str] = []

    # ------------------------------------------------------------------ hooks
    @abstractmethod
    def _play(self, action: int) -> tuple[float, bool, bool]:
        """The learner's legal (or, with ``illegal="lose"``, illegal) action and the opponents' after it.

        Returns (reward, terminated, truncated); with a render mode it adds the moves to ``_log``.
        """

    @abstractmethod
    def _start_log(self) -> list[str]:
        """The render log of a new episode."""

    @abstractmethod
    def _table_text(self) -> str:
        """The game's text table with the render log."""

    def _info(self) -> dict[str, Any]:
        """What the game adds to every ``info`` beside the mask and the seat."""
        return {}

    # ------------------------------------------------------------------ API
    def _observe(self) -> tuple[np.ndarray, dict[str, Any]]:
        """The learner's observation and info; refreshes the mask the action space samples from."""
        core = self.core
        seat = int(core.seat[0])
        obs, self._mask[:] = core.observe(0, seat)
        return obs, {"action_mask": self._mask.copy(), "seat": seat, **self._info()}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode and play the opponents up to the learner's first decision."""
        seed = check_seed(seed)
        super().reset(seed=seed)
        core = self.core
        if seed is not None or not self._seeded:
            core.seed([seed])
            self._seeded = True
        core.reset()
        core.play_external(self._agents)
        self._log = self._start_log()
        out = self._observe()
        if self.render_mode == "human":
            self.render()
        return out

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner's action, then the opponents' until its next decision or the end of the episode."""
        core = self.core
        if not core.running(0):
            raise ValueError("the episode is over: call reset() before step()")
        n_actions = core.n_actions
        action = as_action(action, n_actions)
        legal = 0 <= action < n_actions and self._mask[action] != 0
        if not legal and not self._lose:
            raise ValueError(core.illegal_message(0, action, self._names[int(core.seat[0])]))
        reward, terminated, truncated = self._play(action)
        obs, info = self._observe()
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """(n_actions,) bool: the learner's legal actions now (for sb3-contrib's MaskablePPO)."""
        return self._mask.astype(bool)

    def render(self) -> str | None:
        """The game's text table; returned for "ansi", printed for "human" (None without a render mode)."""
        return render_text(self.render_mode, self._table_text)
