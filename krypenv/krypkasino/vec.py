"""# Krypkasino as a batched Stable-Baselines3 VecEnv

``KrypkasinoVecEnv(num_envs, seat=0, opponents="random", seed=None, **config)`` runs
``num_envs`` games in one process on the batched engine: the learner's actions for all games
go into one compiled call that also plays the built-in opponents, computes the rewards,
auto-resets finished games and writes the next observations and masks.  External opponents
(agent objects, :mod:`krypenv.agent_api`) act as a batch, once per seat and round trip, never
one game at a time.

| Observation | ``Box(int8, (325 + 7P + 5,))`` per game, as the Gymnasium env                        |
|-------------|---------------------------------------------------------------------------------------|
| Action      | ``Discrete(105)`` per game                                                            |
| Masks       | ``action_masks()`` → (N, 105) bool in one call; ``env_method("action_masks")`` (what  |
|             | sb3-contrib's MaskablePPO calls) returns its rows without touching any game           |
| Reward      | float32, minus the change of the learner's side value since its previous decision     |
| Done        | at the end of an episode; ``infos[i]["terminal_observation"]`` holds its last         |
|             | observation, ``infos[i]["terminal_action_mask"]`` its mask and ``infos[i]["score"]``  |
|             | the learner side's final value; the game restarts at once (auto-reset)                |

Game ``i`` is exactly the Gymnasium env (:mod:`krypenv.krypkasino.single`) seeded with ``seed + i``:
same decks, same opponents' choices, same rewards.  ``seed`` (here or through SB3's
``VecEnv.seed``) applies at the next ``reset()``; without one the streams are seeded from
fresh entropy; a seed is None or a non-negative integer (ValueError naming ``seed``).
``step`` takes one integer action per game: an integer array of shape (N,) (or (N, 1)), as
SB3 and sb3-contrib pass it; floats (even integral ones), bools or another number of actions
are a ValueError before any game moves (:class:`krypenv.vec_shell.BatchedVecEnv`).  Illegal
actions: with ``illegal="raise"`` (default) ``step`` raises a ValueError naming the game, the
action and the legal ones before any game moves.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

from krypenv.krypkasino.actions import N_ACTIONS, action_name
from krypenv.krypkasino.config import EnvConfig
from krypenv.krypkasino.core import Core
from krypenv.krypkasino.env_kernels import (
    k_finish_par,
    k_finish_ser,
    k_observe_par,
    k_observe_ser,
    k_step_all_par,
    k_step_all_ser,
    k_step_par,
    k_step_ser,
)
from krypenv.krypkasino.single import opponent_kinds
from krypenv.vec_shell import BatchedVecEnv

__all__ = ["KrypkasinoVecEnv"]


class KrypkasinoVecEnv(BatchedVecEnv):
    """N learner seats of N Krypkasino games, stepped together (see the module docstring)."""

    def __init__(self, num_envs: int, seat: int | str = 0, opponents: Any = "random", seed: int | None = None,
                 players: int = 3, teams: Any = None, two_player_deal: str = "6+4", set_aside: str = "court",
                 last_capture_point: bool = False, reward: str = "points", deals: int = 1, illegal: str = "raise",
                 render_mode: str | None = None) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if render_mode is not None:
            raise ValueError("the VecEnv does not render; use the Gymnasium or AEC env to watch a game")
        self.config = EnvConfig(players, teams, two_player_deal, set_aside, last_capture_point, reward, deals,
                                illegal, None)
        kinds, self._agents = opponent_kinds(opponents, players)
        self.core = Core(self.config, int(num_envs), seat=seat, kinds=kinds)
        self.render_mode = None
        n, dim = self.core.n, self.core.dim
        super().__init__(n, spaces.Box(self.core.low, self.core.high, dtype=np.int8), spaces.Discrete(N_ACTIONS))
        self._lose = illegal == "lose"
        self._external = bool(self._agents)
        self._obs = np.zeros((n, dim), np.int8)
        self._masks = np.zeros((n, N_ACTIONS), np.int8)
        self._term_obs = np.zeros((n, dim), np.int8)
        self._term_masks = np.zeros((n, N_ACTIONS), np.int8)
        self._rew = np.zeros(n, np.float64)
        self._dones = np.zeros(n, np.bool_)
        self._final = np.zeros(n, np.float64)
        self._status = np.zeros(n, np.int64)
        self._actions = np.zeros(n, np.int64)
        self._ever_reset = False
        if seed is not None:
            self.seed(seed)

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        """Start every game afresh (with the seeds given to ``seed()``, if any) and return the observations."""
        core = self.core
        if any(s is not None for s in self._seeds) or not self._ever_reset:
            core.seed(list(self._seeds))
        self._reset_seeds()
        self._ever_reset = True
        core.reset()
        if self._external:
            core.play_external(self._agents)
        self._observe()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._obs.copy()

    def step_wait(self) -> VecEnvStepReturn:
        """Apply the actions, play the opponents, reward, auto-reset and observe every game."""
        if not self._ever_reset:
            raise ValueError("call reset() before step()")
        core, acts = self.core, self._actions
        if not self._lose:
            self._check_legal(acts)
        par = core.par
        if not self._external:
            (k_step_all_par if par else k_step_all_ser)(
                core.st, core.rng, core.ints, core.base, core.cfg, acts, self._lose, self._status, self._rew,
                self._dones, self._final, self._obs, self._masks, self._term_obs, self._term_masks, core.scr)
        else:
            (k_step_par if par else k_step_ser)(core.st, core.rng, core.ints, core.cfg, acts, self._lose,
                                                self._status, core.scr)
            core.play_external(self._agents)
            (k_finish_par if par else k_finish_ser)(core.st, core.rng, core.ints, core.base, core.cfg, self._rew,
                                                    self._dones, self._final, self._term_obs, self._term_masks,
                                                    core.scr)
            if self._dones.any():
                core.play_external(self._agents)  # new games may start with an opponent's turn
            self._observe()
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(self._dones):
            infos[i] = {"terminal_observation": self._term_obs[i].copy(),
                        "terminal_action_mask": self._term_masks[i].copy(),
                        "score": float(self._final[i]), "TimeLimit.truncated": False}
        return self._obs.copy(), self._rew.astype(np.float32), self._dones.copy(), infos

    def _observe(self) -> None:
        core = self.core
        (k_observe_par if core.par else k_observe_ser)(core.st, core.ints, core.cfg, self._obs, self._masks, core.scr)

    def _check_legal(self, acts: np.ndarray) -> None:
        """ValueError naming the first game whose action is illegal; nothing is applied then."""
        ok = (acts >= 0) & (acts < N_ACTIONS)
        ok[ok] = self._masks[np.flatnonzero(ok), acts[ok]] != 0
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            pending = int(self.core.choice[i, 0])
            legal = ", ".join(f"{a} ({action_name(a, pending)})" for a in np.flatnonzero(self._masks[i]))
            raise ValueError(f"game {i}: illegal action {int(acts[i])} ({action_name(int(acts[i]), pending)}); "
                             f"legal actions: {legal}")
