"""# Kungsholmskille as a device env: N games as tensors, on the GPU or the CPU

``KungsholmskilleDeviceEnv(num_envs, device="cuda", seat=0, opponents="random", seed=None, **config)``
(``kungsholmskille_v0.DeviceVecEnv``) runs ``num_envs`` games (one pot each, L16) whose state,
observations, masks, rewards and terminal observations live on ``device`` and are handed to
PyTorch as tensors without a copy.  The API, the rewards, self-play (``opponents="self"``) and the
seeding are the shell's (:mod:`krypenv.envs.device`); the game supplies its arrays, its CUDA
kernel (:mod:`krypenv.kungsholmskille.cuda_kernels`) and its CPU drivers
(:mod:`krypenv.kungsholmskille.env_kernels`).

| Observation | ``(N, D)`` int16, the seat to act's (the Gymnasium env's vector)                        |
|-------------|------------------------------------------------------------------------------------------|
| Action      | ``(N,)`` integers in ``Discrete(279)`` (calls, exchanges, cards, L5–L11)                 |
| Masks       | ``info["action_mask"]`` / ``action_masks()``: ``(N, 279)`` bool                           |
| Reward      | the change of the seat's money (L3, L12–L21): ``(N,)`` for one caller seat, ``(N, P)`` in |
|             | self-play                                                                                  |
| Done        | ``terminated`` when the pot goes out or is settled (L14, L15, L21) or on a forfeit;       |
|             | ``truncated`` after ``max_deals`` budrundor (L16)                                          |

With the same seed, game ``i`` plays exactly as ``kungsholmskille_v0.VecEnv`` game ``i``, on the CPU
and on the GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from krypenv.envs.device import DeviceVecEnv
from krypenv.kungsholmskille import device_drivers
from krypenv.kungsholmskille.batch import KungsholmskilleBatch
from krypenv.kungsholmskille.config import FORFEIT, POT_OUT, TRUNCATED, EnvConfig

__all__ = ["DeviceVecEnv", "KungsholmskilleDeviceEnv"]


class KungsholmskilleDeviceEnv(DeviceVecEnv):
    """N Kungsholmskille games on one device, tensors in and out (see the module docstring)."""

    drivers = device_drivers
    batch_class = KungsholmskilleBatch
    game = "kungsholmskille"
    core: KungsholmskilleBatch

    def __init__(self, num_envs: int, device: Any = "cuda", seat: int | str = 0, opponents: Any = "random",
                 seed: int | None = None, players: int = 4, first_dealer: int | None = None, max_deals: int = 50,
                 skip_forced: bool = False, illegal: str = "raise", render_mode: str | None = None,
                 preset: str = "standard", ranks: int | None = None, pot_deals: int | None = None) -> None:
        """``num_envs`` games on ``device``; the keywords as the Gymnasium env's (no rendering)."""
        config = EnvConfig(players, first_dealer, max_deals, skip_forced, illegal, render_mode, preset, ranks,
                           pot_deals)
        super().__init__(num_envs, config, device, seat, opponents, seed)

    def _gx(self) -> np.ndarray:
        """No extra arguments."""
        return np.zeros(1, np.int64)

    def _split_over(self, over: Any) -> tuple[Any, Any]:
        """Terminated when the pot goes out, is settled or forfeited; truncated after ``max_deals``."""
        return (over == POT_OUT) | (over == FORFEIT), over == TRUNCATED


DeviceVecEnv = KungsholmskilleDeviceEnv  # the name every game's device part exports (krypenv.games)
