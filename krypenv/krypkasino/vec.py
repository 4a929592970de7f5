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
are a ValueError before any game moves (the shell, :class:`krypenv.envs.vec.GameVecEnv`).  Illegal
actions: with ``illegal="raise"`` (default) ``step`` raises a ValueError naming the game, the
action and the legal ones before any game moves.
"""

from __future__ import annotations

from typing import Any

from krypenv.envs.vec import GameVecEnv
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.config import EnvConfig

__all__ = ["KrypkasinoVecEnv"]


class KrypkasinoVecEnv(GameVecEnv):
    """N learner seats of N Krypkasino games, stepped together (see the module docstring)."""

    batch_class = KrypkasinoBatch
    game = "krypkasino"
    core: KrypkasinoBatch

    def __init__(self, num_envs: int, seat: int | str = 0, opponents: Any = "random", seed: int | None = None,
                 players: int = 3, teams: Any = None, two_player_deal: str = "6+4", set_aside: str = "court",
                 last_capture_point: bool = False, reward: str = "points", deals: int = 1, illegal: str = "raise",
                 render_mode: str | None = None,
                 preset: str = "standard", ranks: Any = None, suits: Any = None, copies: int | None = None,
                 hand: int | None = None, table: int | None = None) -> None:
        """``num_envs`` games; the keywords as the Gymnasium env (no rendering)."""
        self.check_arguments(num_envs, render_mode)
        super().__init__(num_envs, EnvConfig(players, teams, two_player_deal, set_aside, last_capture_point, reward,
                                             deals, illegal, None, preset, ranks, suits, copies, hand, table),
                         seat, opponents, seed)

    def _terminal_info(self, i: int) -> dict[str, Any]:
        """The learner side's final value (``score``); an episode is never truncated."""
        return {"score": float(self._final[i]), "TimeLimit.truncated": False}
