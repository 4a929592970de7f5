"""Kungsholmskille's entry module, in the style of PettingZoo's ``<game>_v<version>`` modules (KILLE.md L1–L19).

    from krypenv import kungsholmskille_v0
    env = kungsholmskille_v0.env(players=4)             # PettingZoo AEC, wrapped (krypenv.kungsholmskille.aec)
    raw = kungsholmskille_v0.raw_env(players=4)         # the same, unwrapped
    single = kungsholmskille_v0.GymEnv(players=4)       # Gymnasium single-agent (krypenv.kungsholmskille.single),
                                                        # also gymnasium.make(kungsholmskille_v0.ENV_ID)
    venv = kungsholmskille_v0.VecEnv(4096, players=4)   # batched SB3 VecEnv (krypenv.kungsholmskille.vec)

The three share one configuration (``players``, ``first_dealer``, ``max_deals``,
``skip_forced``, ``illegal``, ``render_mode``) and one compiled core, so the same seed gives
the same episodes in all of them.  ``VecEnv`` loads on first access, since it imports
Stable-Baselines3 (and torch).  The version in the module name is the environments'
version (``v0``; history in :mod:`krypenv.kungsholmskille.aec`).
"""

from __future__ import annotations

from typing import Any

from krypenv import KILLE_ENV_ID as ENV_ID
from krypenv.kungsholmskille.aec import env, raw_env
from krypenv.kungsholmskille.single import KungsholmskilleEnv as GymEnv

GYM_ID = ENV_ID  # the Gymnasium id, registered on ``import krypenv``
GYM_ENTRY_POINT = "krypenv.kungsholmskille.single:KungsholmskilleEnv"

__all__ = ["ENV_ID", "GYM_ENTRY_POINT", "GYM_ID", "GymEnv", "VecEnv", "env", "raw_env"]  # noqa: F822


def __getattr__(name: str) -> Any:
    """``VecEnv`` (the batched SB3 VecEnv), loaded on first access."""
    if name == "VecEnv":
        from krypenv.kungsholmskille.vec import KungsholmskilleVecEnv

        return KungsholmskilleVecEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
