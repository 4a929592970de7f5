"""Kungsholmskille environments, version 0 (KILLE.md L1–L19).

- ``env(**config)`` / ``raw_env``: the PettingZoo AEC environment (:mod:`krypenv.kungsholmskille.aec`);
- ``GymEnv``: the Gymnasium single-agent environment (:mod:`krypenv.kungsholmskille.single`),
  to be registered as ``krypenv/Kungsholmskille-v0``;
- ``VecEnv``: the batched Stable-Baselines3 VecEnv (:mod:`krypenv.kungsholmskille.vec`).

The three share one configuration (``players``, ``first_dealer``, ``max_deals``,
``skip_forced``, ``illegal``, ``render_mode``) and one core, so the same seed gives the same
episodes in all of them.  The heavy modules load on first use.
"""

from __future__ import annotations

from typing import Any

GYM_ID = "krypenv/Kungsholmskille-v0"
GYM_ENTRY_POINT = "krypenv.kungsholmskille.single:KungsholmskilleEnv"

_WHERE = {
    "env": ("krypenv.kungsholmskille.aec", "env"),
    "raw_env": ("krypenv.kungsholmskille.aec", "raw_env"),
    "GymEnv": ("krypenv.kungsholmskille.single", "KungsholmskilleEnv"),
    "VecEnv": ("krypenv.kungsholmskille.vec", "KungsholmskilleVecEnv"),
}


def __getattr__(name: str) -> Any:
    """Load ``env``, ``raw_env``, ``GymEnv`` and ``VecEnv`` lazily."""
    if name in _WHERE:
        import importlib

        module, attr = _WHERE[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'krypenv.kungsholmskille_v0' has no attribute {name!r}")


__all__ = ["GYM_ENTRY_POINT", "GYM_ID", "GymEnv", "VecEnv", "env", "raw_env"]
