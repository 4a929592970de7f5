"""experiments/warm_numba.py: its groups, the CUDA ones (``--cuda``) included, and a clear refusal of an unknown one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from krypenv.games import GAMES

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments"))

import warm_numba


def test_the_cuda_groups_cover_every_game_and_kind_of_built_in_seats() -> None:
    """One group per game and kernel kind (random, expert or no built-in seats; the engine's benchmark)."""
    assert set(warm_numba.CUDA_GROUPS) == {f"cuda-{g}-{k}" for g in GAMES
                                          for k in ("random", "expert", "self", "engine")}
    assert not set(warm_numba.CUDA_GROUPS) & set(warm_numba.GROUPS)


def test_an_unknown_group_is_refused_by_name() -> None:
    """Exit status 2 and the group's name, before any process starts."""
    out = subprocess.run([sys.executable, str(ROOT / "experiments" / "warm_numba.py"), "vec-krypkasino", "nope"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2 and "unknown group(s) ['nope']" in out.stderr
