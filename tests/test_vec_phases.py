"""experiments/vec_phases.py: every phase of a VecEnv step timed, for every game (no figure is checked: timing is
the script's output, not a test's)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))

import vec_phases

from krypenv.games import GAMES


@pytest.mark.parametrize("game", list(GAMES))
def test_every_phase_is_timed(game: str) -> None:
    """A few steps of a few games: each phase (the split drivers, the pick, the fused call) took some time."""
    spent = vec_phases.phases(game, 8, 3, 2 if game == "krypkasino" else 4)
    assert list(spent) == list(vec_phases.PHASES)
    assert all(v > 0 for v in spent.values()), spent


def test_sizes_below_one_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """--games, --steps or --rounds of 0 is an error naming them, before any env is built."""
    for flag in ("--games", "--steps", "--rounds"):
        monkeypatch.setattr(sys, "argv", ["vec_phases.py", flag, "0"])
        with pytest.raises(SystemExit, match="at least 1"):
            vec_phases.main()


def test_importing_it_leaves_numbas_thread_count_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the script sets NUMBA_NUM_THREADS: an import that set it broke every later test of the process that
    reloads numba's configuration (Cannot set NUMBA_NUM_THREADS once the threads have been launched)."""
    import importlib

    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    importlib.reload(vec_phases)
    assert "NUMBA_NUM_THREADS" not in os.environ
