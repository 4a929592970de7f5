"""krypenv: reinforcement-learning environments for Krypkasino, the Swedish misère fishing card game.

``krypenv.env(**config)`` / ``krypenv.raw_env`` are the PettingZoo AEC environment
(:mod:`krypenv.krypkasino.aec`); importing :mod:`krypenv` registers the Gymnasium id
``krypenv/Krypkasino-v0`` (:mod:`krypenv.krypkasino.single`); :class:`krypenv.krypkasino.vec.KrypkasinoVecEnv` is the
batched SB3 VecEnv.  The heavy modules (compiled kernels, PettingZoo) load on first use.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path
from typing import Any

from gymnasium.envs.registration import register, registry

ENV_ID = "krypenv/Krypkasino-v0"


def _numba_cache_dir() -> None:
    """Point numba's on-disk cache at a folder named after a hash of this package's compiled modules.

    Numba checks a cached kernel only against its own file, not against the functions it
    inlined from other files, so editing ``captures.py`` could leave stale machine code in
    ``kernels.py``'s cache.  A fresh folder per source version rules that out.  A cache
    folder the user chose with ``NUMBA_CACHE_DIR`` is left alone.
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    import numba

    here = Path(__file__).parent
    digest = hashlib.sha1()
    for path in sorted(here.rglob("*.py")):
        source = path.read_bytes()
        if b"njit" in source:  # the compiled modules
            digest.update(source)
    base = here / "__pycache__" if os.access(here, os.W_OK) else Path.home() / ".cache" / "krypenv"
    current = base / f"numba-{digest.hexdigest()[:12]}"
    numba.config.CACHE_DIR = str(current)
    for old in base.glob("numba-*"):  # caches of earlier versions, once unused for a day
        if old != current and time.time() - old.stat().st_mtime > 86400:
            shutil.rmtree(old, ignore_errors=True)


_numba_cache_dir()


if ENV_ID not in registry:
    register(id=ENV_ID, entry_point="krypenv.krypkasino.single:KrypkasinoEnv")


def __getattr__(name: str) -> Any:
    """Load ``env`` and ``raw_env`` lazily from :mod:`krypenv.krypkasino.aec`."""
    if name in ("env", "raw_env"):
        from krypenv.krypkasino import aec

        return getattr(aec, name)
    raise AttributeError(f"module 'krypenv' has no attribute {name!r}")


__all__ = ["ENV_ID", "env", "raw_env"]
