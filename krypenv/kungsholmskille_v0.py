"""Kungsholmskille's entry module, in the style of PettingZoo's ``<game>_v<version>`` modules (KILLE.md L1–L19).

    from krypenv import kungsholmskille_v0
    env = kungsholmskille_v0.env(players=4)             # PettingZoo AEC, wrapped (krypenv.kungsholmskille.aec)
    raw = kungsholmskille_v0.raw_env(players=4)         # the same, unwrapped
    single = kungsholmskille_v0.GymEnv(players=4)       # Gymnasium single-agent (krypenv.kungsholmskille.single),
                                                        # also gymnasium.make("krypenv/Kungsholmskille-v0")
    venv = kungsholmskille_v0.VecEnv(4096, players=4)   # batched SB3 VecEnv (krypenv.kungsholmskille.vec)

The three share one configuration (``players``, ``first_dealer``, ``max_deals``,
``skip_forced``, ``illegal``, ``render_mode``, ``preset``, ``ranks``, ``pot_deals``; e.g.
``env(players=2, preset="small")``, KILLE.md L20–L22) and one compiled batch, so the same seed gives
the same episodes in all of them.  The Gymnasium id is the registry's ``gym_id``
(:data:`krypenv.games.GAMES`).  ``VecEnv`` loads on first access, since it imports
Stable-Baselines3 (and torch).  The version in the module name is the environments'
version (``v0``; history in :mod:`krypenv.kungsholmskille.aec`).
"""

from __future__ import annotations

from krypenv.games import lazy_exports
from krypenv.kungsholmskille.aec import env, raw_env
from krypenv.kungsholmskille.single import KungsholmskilleEnv as GymEnv

__all__ = ["DeviceVecEnv", "GymEnv", "VecEnv", "env", "raw_env"]  # noqa: F822  (module __getattr__)


# ``VecEnv`` (the batched SB3 VecEnv) and ``DeviceVecEnv`` (tensors on the GPU or CPU), loaded on first access
__getattr__ = lazy_exports(__name__, {"DeviceVecEnv": "krypenv.kungsholmskille.device:DeviceVecEnv",
                                      "VecEnv": "krypenv.kungsholmskille.vec:KungsholmskilleVecEnv"})
