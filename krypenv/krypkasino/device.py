"""# Krypkasino as a device env: N games as tensors, on the GPU or the CPU

``KrypkasinoDeviceEnv(num_envs, device="cuda", seat=0, opponents="random", seed=None, **config)``
(``krypkasino_v0.DeviceVecEnv``) runs ``num_envs`` games whose state, observations, masks,
rewards and terminal observations live on ``device`` and are handed to PyTorch as tensors without
a copy.  The API, the rewards, self-play (``opponents="self"``) and the seeding are the shell's
(:mod:`krypenv.envs.device`); the game supplies its arrays, its CUDA kernels
(:mod:`krypenv.krypkasino.cuda_kernels`) and its CPU drivers (:mod:`krypenv.krypkasino.env_kernels`).

| Observation | ``(N, 325 + 7P + 5)`` int8, the seat to act's (the Gymnasium env's vector, K1–K23)     |
|-------------|-----------------------------------------------------------------------------------------|
| Action      | ``(N,)`` integers in ``Discrete(105)``: a card, a table card for the capture, confirm  |
| Masks       | ``info["action_mask"]`` / ``action_masks()``: ``(N, 105)`` bool                          |
| Reward      | minus the change of the side's score (K16–K18): ``(N,)`` for one caller seat, ``(N, P)`` |
|             | in self-play                                                                              |
| Done        | ``terminated`` at the end of the episode's ``deals``; never ``truncated``               |

With the same seed, game ``i`` plays exactly as ``krypkasino_v0.VecEnv`` game ``i`` and the
Gymnasium env seeded ``seed + i``: the same decks, opponents' choices, observations, masks and
rewards, on the CPU and on the GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from krypenv.envs.device import DeviceVecEnv
from krypenv.krypkasino import device_drivers
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.config import EnvConfig

__all__ = ["DeviceVecEnv", "KrypkasinoDeviceEnv"]


class KrypkasinoDeviceEnv(DeviceVecEnv):
    """N Krypkasino games on one device, tensors in and out (see the module docstring)."""

    drivers = device_drivers
    batch_class = KrypkasinoBatch
    game = "krypkasino"
    core: KrypkasinoBatch

    def __init__(self, num_envs: int, device: Any = "cuda", seat: int | str = 0, opponents: Any = "random",
                 seed: int | None = None, players: int = 3, teams: Any = None, two_player_deal: str = "6+4",
                 set_aside: str = "court", last_capture_point: bool = False, reward: str = "points", deals: int = 1,
                 illegal: str = "raise", render_mode: str | None = None, preset: str = "standard", ranks: Any = None,
                 suits: Any = None, copies: int | None = None, hand: int | None = None,
                 table: int | None = None) -> None:
        """``num_envs`` games on ``device``; the keywords as the Gymnasium env's (no rendering)."""
        config = EnvConfig(players, teams, two_player_deal, set_aside, last_capture_point, reward, deals, illegal,
                           render_mode, preset, ranks, suits, copies, hand, table)
        super().__init__(num_envs, config, device, seat, opponents, seed)

    def _gx(self) -> np.ndarray:
        """The hand size (K6, K21) and whether spades are set aside (K8), which the compiled baselines read."""
        rules = self.core.rules
        return np.array([rules.hand_size, rules.set_aside == "spades"], np.int64)

    def _split_over(self, over: Any) -> tuple[Any, Any]:
        """Terminated at the end of the match; never truncated."""
        return over, over & False


DeviceVecEnv = KrypkasinoDeviceEnv  # the name every game's device part exports (krypenv.games)
