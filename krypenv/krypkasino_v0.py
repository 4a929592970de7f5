"""Krypkasino's entry module, in the style of PettingZoo's ``<game>_v<version>`` modules.

    from krypenv import krypkasino_v0

    env = krypkasino_v0.env(players=3)                  # PettingZoo AEC, wrapped (krypenv.krypkasino.aec)
    raw = krypkasino_v0.raw_env(players=3)              # the same, unwrapped
    single = krypkasino_v0.GymEnv(players=2)            # Gymnasium single-agent (krypenv.krypkasino.single),
                                                        # also gymnasium.make("krypenv/Krypkasino-v0")
    venv = krypkasino_v0.VecEnv(4096, players=2)        # batched SB3 VecEnv (krypenv.krypkasino.vec)

``GymEnv`` is :class:`krypenv.krypkasino.single.KrypkasinoEnv` and ``VecEnv`` is
:class:`krypenv.krypkasino.vec.KrypkasinoVecEnv` under the names every game's entry module
uses (the Gymnasium id is the registry's ``gym_id``, :data:`krypenv.games.GAMES`).  ``VecEnv``
loads on first access, since it imports Stable-Baselines3 (and torch).  The version in the
module name is the environments' version (``v0``: their version history is in
:mod:`krypenv.krypkasino.aec`); it changes when an env's spaces, rewards or dynamics change.
"""

from __future__ import annotations

from krypenv.games import lazy_exports
from krypenv.krypkasino.aec import env, raw_env
from krypenv.krypkasino.single import KrypkasinoEnv as GymEnv

__all__ = ["DeviceVecEnv", "GymEnv", "VecEnv", "env", "raw_env"]  # noqa: F822  (module __getattr__)


# ``VecEnv`` (the batched SB3 VecEnv) and ``DeviceVecEnv`` (tensors on the GPU or CPU), loaded on first access
__getattr__ = lazy_exports(__name__, {"DeviceVecEnv": "krypenv.krypkasino.device:DeviceVecEnv",
                                      "VecEnv": "krypenv.krypkasino.vec:KrypkasinoVecEnv"})
