"""# Kungsholmskille as a batched Stable-Baselines3 VecEnv

``KungsholmskilleVecEnv(num_envs, seat=0, opponents="random", seed=None, **config)`` runs
``num_envs`` games in one process on the batched compiled engine: the learner's actions for
all games go into one compiled call that also plays the built-in opponents (and forced moves
with ``skip_forced``), deals on after budrundor, computes the rewards, auto-resets finished
episodes and writes the next observations and masks (in parallel from 64 games on).
External opponents (agents, :mod:`krypenv.agent_api`; ``opponents`` as in
:mod:`krypenv.kungsholmskille.single`) act as one :class:`~krypenv.agent_api.DecisionBatch` per
agent and round trip.

| Observation | ``Box(int16, (75 + 23P,))`` per game, as the Gymnasium env                           |
|-------------|---------------------------------------------------------------------------------------|
| Action      | ``Discrete(279)`` per game                                                            |
| Masks       | ``action_masks()`` → (N, 279) bool in one call; ``env_method("action_masks")`` returns |
|             | its rows without touching any game                                                    |
| Reward      | float32, the change of the learner's money since its previous decision               |
| Done        | when the pot goes out (L14, L15) or after ``max_deals`` deals (L16;                   |
|             | ``infos[i]["TimeLimit.truncated"]``); ``infos[i]["terminal_observation"]``,           |
|             | ``["terminal_action_mask"]`` and ``["money"]`` (the learner's net money, = its        |
|             | return) describe the finished episode; the game restarts at once (auto-reset)         |

Game ``i`` is exactly the Gymnasium env seeded with ``seed + i`` (same decks, seats, opponents'
choices and rewards).  ``seed`` (here or through SB3's ``VecEnv.seed``) applies at the next
``reset()``; without one the streams are seeded from fresh entropy; a seed is None or a
non-negative integer (ValueError naming ``seed``).  ``step`` takes one integer action per game:
an integer array of shape (N,) (or (N, 1)), as SB3 and sb3-contrib pass it; floats (even
integral ones), bools or another number of actions are a ValueError before any game moves
(:class:`krypenv.vec_shell.BatchedVecEnv`).  Illegal actions: with ``illegal="raise"``
(default) ``step`` raises a ValueError naming the game, the move and the legal ones before any
game moves; with ``"lose"`` the offending game's episode ends as in the other interfaces.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

from krypenv.kungsholmskille.actions import N_ACTIONS, action_name
from krypenv.kungsholmskille.aec import illegal_message
from krypenv.kungsholmskille.config import RUNNING, TRUNCATED, EnvConfig
from krypenv.kungsholmskille.core import Core
from krypenv.kungsholmskille.env_kernels import (
    k_finish_par,
    k_finish_ser,
    k_observe_par,
    k_observe_ser,
    k_step_all_par,
    k_step_all_ser,
    k_step_par,
    k_step_ser,
)  # fmt: skip
from krypenv.kungsholmskille.observation import OBS_DTYPE
from krypenv.kungsholmskille.single import opponent_kinds
from krypenv.vec_shell import BatchedVecEnv

__all__ = ["KungsholmskilleVecEnv"]


class KungsholmskilleVecEnv(BatchedVecEnv):
    """N learner seats of N Kungsholmskille games, stepped together (see the module docstring)."""

    def __init__(self, num_envs: int, seat: int | str = 0, opponents: Any = "random", seed: int | None = None,
                 players: int = 4, first_dealer: int | None = None, max_deals: int = 50, skip_forced: bool = False,
                 illegal: str = "raise", render_mode: str | None = None) -> None:
        """``num_envs`` games; the keywords as the Gymnasium env (no rendering)."""
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if render_mode is not None:
            raise ValueError("render_mode: the VecEnv does not render; use the Gymnasium or AEC env to watch a game")
        self.config = EnvConfig(players, first_dealer, max_deals, skip_forced, illegal, None)
        kinds, self._agents = opponent_kinds(opponents, players)
        self.core = Core(self.config, int(num_envs), seat=seat, kinds=kinds)
        self.render_mode = None
        n, dim = self.core.n, self.core.dim
        super().__init__(n, spaces.Box(self.core.low, self.core.high, dtype=np.int16), spaces.Discrete(N_ACTIONS))
        self._lose = illegal == "lose"
        self._obs = np.zeros((n, dim), OBS_DTYPE)
        self._masks = np.zeros((n, N_ACTIONS), np.int8)
        self._term_obs = np.zeros((n, dim), OBS_DTYPE)
        self._term_masks = np.zeros((n, N_ACTIONS), np.int8)
        self._rew = np.zeros(n, np.float64)
        self._over = np.zeros(n, np.int64)
        self._final = np.zeros(n, np.int64)
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
        core.play_external(self._agents)
        self._observe()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._obs.copy()

    def step_wait(self) -> VecEnvStepReturn:
        """Apply the actions, play the opponents, reward, auto-reset and observe every game."""
        if not self._ever_reset:
            raise ValueError("call reset() before step()")
        core, acts, ch = self.core, self._actions, self.core.chunks
        if not self._lose:
            self._check_legal(acts)
        args = (core.st, core.cash, core.ep, core.rng, core.cfg, core.prev_state, core.prev_cash)
        if not self._agents:
            (k_step_all_par if core.par else k_step_all_ser)(
                *args, acts, self._lose, self._status, self._rew, self._over, self._final, self._obs, self._masks,
                self._term_obs, self._term_masks, ch)
            core.episodes[self._over != RUNNING] += 1  # auto-reset inside the kernel
        else:
            (k_step_par if core.par else k_step_ser)(*args, acts, self._lose, self._status, ch)
            core.play_external(self._agents)
            (k_finish_par if core.par else k_finish_ser)(*args, self._rew, self._over, self._final, self._term_obs,
                                                         self._term_masks, ch)
            if (self._over != RUNNING).any():
                core.episodes[self._over != RUNNING] += 1  # auto-reset in k_finish: opponents see a new episode
                core.play_external(self._agents)  # new episodes may start with an opponent's turn
            self._observe()
        dones = self._over != RUNNING
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i] = {"terminal_observation": self._term_obs[i].copy(),
                        "terminal_action_mask": self._term_masks[i].copy(),
                        "money": int(self._final[i]), "TimeLimit.truncated": bool(self._over[i] == TRUNCATED)}
        return self._obs.copy(), self._rew.astype(np.float32), dones, infos

    def _observe(self) -> None:
        core = self.core
        (k_observe_par if core.par else k_observe_ser)(core.st, core.cash, core.ep, core.cfg, self._obs, self._masks,
                                                       core.chunks)

    def _check_legal(self, acts: np.ndarray) -> None:
        """ValueError naming the first game whose action is illegal; nothing is applied then."""
        ok = (acts >= 0) & (acts < N_ACTIONS)
        ok[ok] = self._masks[np.flatnonzero(ok), acts[ok]] != 0
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            legal = [action_name(int(a)) for a in np.flatnonzero(self._masks[i])]
            raise ValueError(f"game {i}: {illegal_message(f'player_{int(self.core.seat[i])}', int(acts[i]), legal)}")
