"""Krypkasino, the Swedish misère fishing card game: rules, batched engine, environments and records.

The layers, bottom to top (each imports only those below it):

| module | layer |
|---|---|
| ``cards``, ``rules`` | cards, values and points (K1–K4); the rules object with its variants |
| ``engine/`` | the batched engine: ``DealBatch`` (``state``), compiled capture search and stepping |
| ``actions``, ``observation`` | the ``Discrete(105)`` action protocol; the observation layout |
| ``config``, ``env_kernels``, ``batch`` | N games with seats, rewards, opponents, auto-reset (``KrypkasinoBatch``) |
| ``view`` | the structured ``SeatView`` agents read, with the legal moves |
| ``aec``, ``single``, ``vec``, ``render`` | PettingZoo AEC, Gymnasium, SB3 VecEnv (thin, over ``krypenv.envs``); text |
| ``records``, ``demo``, ``bench`` | game records and their replay; ``krypenv demo``; its ``krypenv bench`` keys |

The names below are the main entry points; the environments load on first access (they
import PettingZoo and Stable-Baselines3).  :mod:`krypenv.krypkasino_v0` is the
PettingZoo-style entry module.
"""

from __future__ import annotations

from typing import Any

from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.config import EnvConfig
from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.records import record_from_deals
from krypenv.krypkasino.rules import Rules
from krypenv.krypkasino.view import SeatView

__all__ = ["DealBatch", "EnvConfig", "KrypkasinoBatch", "KrypkasinoEnv", "KrypkasinoVecEnv", "Rules", "SeatView", "env",
           "raw_env", "record_from_deals"]


def __getattr__(name: str) -> Any:
    """The environments, loaded on first access: ``env``, ``raw_env``, ``KrypkasinoEnv``, ``KrypkasinoVecEnv``."""
    if name in ("env", "raw_env"):
        from krypenv.krypkasino import aec

        return getattr(aec, name)
    if name == "KrypkasinoEnv":
        from krypenv.krypkasino.single import KrypkasinoEnv

        return KrypkasinoEnv
    if name == "KrypkasinoVecEnv":
        from krypenv.krypkasino.vec import KrypkasinoVecEnv

        return KrypkasinoVecEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
