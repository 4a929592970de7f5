"""krypenv: reinforcement-learning environments for Swedish misère card games.

Each game is a package with the same layers (cards and rules, batched engine, environments,
records): :mod:`krypenv.krypkasino` and :mod:`krypenv.kungsholmskille`.  Beside them, written once for every game:
:mod:`krypenv.agent_api` (what an agent is given), :mod:`krypenv.records` and
:mod:`krypenv.replay` (game records of any game), :mod:`krypenv.rng` (seeded per-env
streams), :mod:`krypenv.bench` and :mod:`krypenv.cli` (the ``krypenv`` command).

The env shells every game runs on are written once in :mod:`krypenv.envs`.  Each game's entry
module (:mod:`krypenv.krypkasino_v0`, :mod:`krypenv.kungsholmskille_v0`) exports ``env``,
``raw_env``, ``GymEnv`` and ``VecEnv``; importing :mod:`krypenv` registers every game's
Gymnasium id (``gym_id`` in :data:`krypenv.games.GAMES`: ``krypenv/Krypkasino-v0``,
``krypenv/Kungsholmskille-v0``) with its entry module's ``GymEnv``.  ``krypenv.env(**config)``
/ ``krypenv.raw_env`` are the default game's (Krypkasino's) AEC env.  The heavy modules
(compiled kernels, PettingZoo) load on first use.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import time
from pathlib import Path
from typing import Any

from gymnasium.envs.registration import register, registry

from krypenv.games import DEFAULT_GAME, GAMES

_COMPILED_MARKS = (b"numba", b"krypenv.jit")  # a module with compiled code imports numba or krypenv.jit's decorators


_MAPPED = ("agents", "eval")  # subpackages that a checkout keeps outside krypenv/ (pyproject's package-dir)


def package_folders() -> list[Path]:
    """This package's folder, then each mapped subpackage's folder where it lies outside it (in a checkout,
    ``krypenv.agents`` is ``agents/``; an installed wheel has it inside ``krypenv/``)."""
    here = Path(__file__).parent
    inside = here.resolve()
    folders = [here]
    for sub in _MAPPED:
        spec = importlib.util.find_spec(f"{__name__}.{sub}")  # finds the folder without importing the subpackage
        for where in (spec.submodule_search_locations or []) if spec is not None else []:
            folder = Path(where).resolve()
            if not folder.is_relative_to(inside) and folder not in folders:
                folders.append(folder)
    return folders


def _compiled_modules() -> list[tuple[Path, bytes]]:
    """(path, source) of every module that imports numba or krypenv.jit, sorted by path: each file read once."""
    found = []
    for folder in package_folders():
        for path in folder.rglob("*.py"):
            source = path.read_bytes()
            if any(mark in source for mark in _COMPILED_MARKS):
                found.append((path, source))
    return sorted(found)


def compiled_sources() -> list[Path]:
    """The modules of this package, game packages and mapped subpackages included (any depth), that hold compiled
    (numba) code, sorted: what names numba's cache folder."""
    return [path for path, _ in _compiled_modules()]


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
    for _, source in _compiled_modules():
        digest.update(source)
    base = here / "__pycache__" if os.access(here, os.W_OK) else Path.home() / ".cache" / "krypenv"
    current = base / f"numba-{digest.hexdigest()[:12]}"
    numba.config.CACHE_DIR = str(current)
    for old in base.glob("numba-*"):  # caches of earlier versions, once unused for a day
        if old != current and time.time() - old.stat().st_mtime > 86400:
            shutil.rmtree(old, ignore_errors=True)


_numba_cache_dir()


for _game in GAMES.values():
    if _game.gym_id not in registry:
        register(id=_game.gym_id, entry_point=_game.gym_entry_point)


def __getattr__(name: str) -> Any:
    """The default game's ``env`` and ``raw_env`` (Krypkasino's), loaded on first access from its entry module."""
    if name in ("env", "raw_env"):
        return getattr(GAMES[DEFAULT_GAME].part("entry"), name)
    raise AttributeError(f"module 'krypenv' has no attribute {name!r}")


__all__ = ["env", "raw_env"]
