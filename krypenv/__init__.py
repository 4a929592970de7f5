"""krypenv: reinforcement-learning environments for Krypkasino, the Swedish misère fishing card game."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path


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
