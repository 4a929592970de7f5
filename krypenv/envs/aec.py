"""The PettingZoo AEC env of every game, written once: agents, rewards, infos, illegal actions and render plumbing.

:class:`GameAECEnv` runs a game's batch of one env (:class:`krypenv.envs.batch.EnvBatch`) with
every seat external.  Agents are ``player_0 … player_{P-1}`` (agent ``player_s`` sits in seat
``s``); observations are PettingZoo-classic dicts ``{"observation", "action_mask"}`` (the mask
is all zero for an agent not on turn, and ``infos[agent]["to_act"]`` says who is); after every
step each agent receives its reward (PettingZoo's ``rewards``, accumulated by ``last()``).
At the end of an episode every agent is terminated or truncated and steps ``None``; once all
have, ``step`` is a ValueError saying the episode is over.  An action is one integer
(:func:`krypenv.envs.spaces.as_action`); with ``illegal="raise"`` an illegal one is a
ValueError naming the agent, the action and the legal ones, and changes nothing; with
``"lose"`` the game's kernel ends the episode with its penalty.  ``reset(seed=...)`` takes None
or a non-negative integer (:func:`krypenv.rng.check_seed`).  A game subclasses it with its
keywords and the hooks below (one step of its kernel, its render log and text), takes its
``metadata`` from :func:`aec_metadata` and its wrapped ``env(**kwargs)`` from :func:`env_factory`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from krypenv.envs.batch import RENDER_MODES, EnvBatch, render_text
from krypenv.envs.spaces import as_action, check_episode_live
from krypenv.rng import check_seed

__all__ = ["GameAECEnv", "OrderEnforcing", "aec_metadata", "env_factory"]


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper with direct ``last()``/``step()`` delegation (same checks, less overhead)."""

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``last()`` of the wrapped env, after the reset-order check."""
        if not self._has_reset:
            wrappers.order_enforcing.EnvLogger.error_observe_before_reset()
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        """``step()`` of the wrapped env, after the order checks."""
        if not self._has_reset:
            wrappers.order_enforcing.EnvLogger.error_step_before_reset()
        elif not self.env.agents:
            self._has_updated = True
            wrappers.order_enforcing.EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)


def aec_metadata(name: str) -> dict[str, Any]:
    """PettingZoo's ``metadata`` of a game's AEC env called ``name`` (e.g. ``krypkasino_v0``)."""
    return {"render_modes": list(RENDER_MODES), "name": name, "is_parallelizable": False, "render_fps": 1}


def env_factory(raw_env: type[GameAECEnv]) -> Callable[..., AECEnv]:
    """A game's ``env(**kwargs)``: its ``raw_env`` wrapped in PettingZoo's call-order checks, named as its own."""

    def env(**kwargs: Any) -> AECEnv:
        """The wrapped AEC environment (PettingZoo's call-order checks); keywords as ``raw_env``.

        Out-of-range actions need no extra wrapper: the raw env treats them as illegal actions.
        """
        return OrderEnforcing(raw_env(**kwargs))

    env.__module__, env.__qualname__ = raw_env.__module__, "env"
    return env


class GameAECEnv(AECEnv):
    """One table of a game as a PettingZoo AEC environment (see the module docstring)."""

    batch_class: ClassVar[type[EnvBatch]]  # the game's batch

    def __init__(self, config: Any) -> None:
        """A table of ``config.players`` seats, every one played by an agent."""
        super().__init__()
        self.config = config
        self.render_mode = config.render_mode
        self.core = self.batch_class(config, 1)
        core = self.core
        self.possible_agents = [f"player_{s}" for s in range(core.players)]
        self.agents = self.possible_agents[:]
        self.agent_selection = self.possible_agents[0]
        obs_box = spaces.Box(core.low, core.high, dtype=core.obs_dtype)
        mask_box = spaces.Box(0, 1, (core.n_actions,), dtype=np.int8)
        self.observation_spaces = {a: spaces.Dict({"observation": obs_box, "action_mask": mask_box})
                                   for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(core.n_actions) for a in self.possible_agents}
        self._lose = config.illegal == "lose"
        self._seat_of = {a: s for s, a in enumerate(self.possible_agents)}
        self._delta = np.zeros(core.players, np.float64)  # each seat's reward of the last step, written by _play
        self._seeded = False
        self._cache: tuple[str, np.ndarray, np.ndarray] | None = None  # next agent, obs, mask (if _play wrote them)
        self._log: list[str] = []
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {"to_act": False} for a in self.agents}

    # ------------------------------------------------------------------ hooks
    @abstractmethod
    def _start(self) -> int:
        """Prepare the reward bookkeeping of a new episode (already dealt); return the seat to act."""

    @abstractmethod
    def _play(self, action: int) -> tuple[bool, int, bool, bool, tuple[np.ndarray, np.ndarray] | None]:
        """One action of the seat to act: (illegal, the seat selected next, terminated, truncated, its obs or None).

        Writes each seat's reward into ``_delta``.  An illegal action with ``illegal="raise"``
        must change nothing (the shell raises).  The observation, when the kernel wrote one,
        is the (obs, mask) of the seat selected next, reused buffers that ``observe`` copies.
        """

    @abstractmethod
    def _start_log(self) -> list[str]:
        """The render log of a new episode."""

    @abstractmethod
    def _step_log(self, agent: str, action: int, illegal: bool) -> list[str]:
        """The render log lines of the last step."""

    @abstractmethod
    def _table_text(self) -> str:
        """The game's text table with the render log."""

    # ------------------------------------------------------------------ API
    def observation_space(self, agent: str) -> spaces.Space:
        """The Dict observation space (the same for every agent)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The Discrete action space (the same for every agent)."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new episode; ``seed`` (None or an int >= 0) seeds the stream (without it, it continues)."""
        seed = check_seed(seed)
        core = self.core
        if seed is not None or not self._seeded:
            core.seed([seed])
            self._seeded = True
        core.reset()
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.agent_selection = self.possible_agents[self._start()]
        self.infos = {a: {"to_act": a == self.agent_selection} for a in self.agents}
        self._cache = None
        self._log = self._start_log()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation dict; its mask is all zero unless it is the agent to act."""
        cache = self._cache
        if cache is not None and cache[0] == agent:
            return {"observation": cache[1].copy(), "action_mask": cache[2].copy()}
        obs, mask = self.core.observe(0, self._seat_of[agent])
        return {"observation": obs, "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Observation (if ``observe``), cumulative reward, terminated, truncated and info of ``agent_selection``."""
        agent = self.agent_selection
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent], self.terminations[agent],
                self.truncations[agent], self.infos[agent])

    def step(self, action: int | None) -> None:
        """Apply the action of ``agent_selection`` (None once it is done; ValueError once no agent is left)."""
        check_episode_live(self.agents)
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = as_action(action, self.core.n_actions, agent)
        illegal, seat, terminated, truncated, written = self._play(action)
        if illegal and not self._lose:
            raise ValueError(self.core.illegal_message(0, action, agent))
        self.rewards = rewards = dict(zip(self.agents, self._delta.tolist()))
        cumulative = self._cumulative_rewards
        cumulative[agent] = 0.0
        for a, r in rewards.items():
            cumulative[a] += r
        nxt = self.possible_agents[seat]
        self._cache = None if written is None else (nxt, written[0], written[1])
        if terminated or truncated:
            for a in self.agents:
                self.terminations[a] = terminated
                self.truncations[a] = truncated
                self.infos[a]["to_act"] = False
        else:
            self.infos[agent]["to_act"] = False
            self.infos[nxt]["to_act"] = True
        self.agent_selection = nxt
        if self.render_mode is not None:
            self._log.extend(self._step_log(agent, action, illegal))
            if self.render_mode == "human":
                self.render()

    def render(self) -> str | None:
        """The game's text table; returned for "ansi", printed for "human" (None without a render mode)."""
        return render_text(self.render_mode, self._table_text)

    def close(self) -> None:
        """Nothing to release."""
