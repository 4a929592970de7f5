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
| Done        | when the pot goes out (L14, L15, L21) or after ``max_deals`` deals (L16;              |
|             | ``infos[i]["TimeLimit.truncated"]``); ``infos[i]["terminal_observation"]``,           |
|             | ``["terminal_action_mask"]`` and ``["money"]`` (the learner's net money, = its        |
|             | return) describe the finished episode; the game restarts at once (auto-reset)         |

Game ``i`` is exactly the Gymnasium env seeded with ``seed + i`` (same decks, seats, opponents'
choices and rewards).  ``seed`` (here or through SB3's ``VecEnv.seed``) applies at the next
``reset()``; without one the streams are seeded from fresh entropy; a seed is None or a
non-negative integer (ValueError naming ``seed``).  ``step`` takes one integer action per game:
an integer array of shape (N,) (or (N, 1)), as SB3 and sb3-contrib pass it; floats (even
integral ones), bools or another number of actions are a ValueError before any game moves
(the shell, :class:`krypenv.envs.vec.GameVecEnv`).  Illegal actions: with ``illegal="raise"``
(default) ``step`` raises a ValueError naming the game, the move and the legal ones before any
game moves; with ``"lose"`` the offending game's episode ends as in the other interfaces.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from krypenv.envs.vec import GameVecEnv
from krypenv.kungsholmskille.batch import KungsholmskilleBatch
from krypenv.kungsholmskille.config import RUNNING, TRUNCATED, EnvConfig

__all__ = ["KungsholmskilleVecEnv"]


class KungsholmskilleVecEnv(GameVecEnv):
    """N learner seats of N Kungsholmskille games, stepped together (see the module docstring)."""

    batch_class = KungsholmskilleBatch
    game = "kungsholmskille"
    core: KungsholmskilleBatch

    def __init__(self, num_envs: int, seat: int | str = 0, opponents: Any = "random", seed: int | None = None,
                 players: int = 4, first_dealer: int | None = None, max_deals: int = 50, skip_forced: bool = False,
                 illegal: str = "raise", render_mode: str | None = None, preset: str = "standard",
                 ranks: int | None = None, pot_deals: int | None = None) -> None:
        """``num_envs`` games; the keywords as the Gymnasium env (no rendering)."""
        self.check_arguments(num_envs, render_mode)
        super().__init__(num_envs, EnvConfig(players, first_dealer, max_deals, skip_forced, illegal, None, preset,
                                             ranks, pot_deals), seat, opponents, seed)

    def _dones(self) -> np.ndarray:
        """(N,) bool: the games whose pot went out, that were truncated or forfeited in the last step."""
        return self._ends != RUNNING

    def _terminal_info(self, i: int) -> dict[str, Any]:
        """The learner's net money (= its return) and whether the episode was truncated (L16)."""
        return {"money": int(self._final[i]), "TimeLimit.truncated": bool(self._ends[i] == TRUNCATED)}
