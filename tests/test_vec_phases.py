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


NOALIAS_PROBE = r"""
import re, sys, numpy as np
sys.path.insert(0, sys.argv[1])
import vec_phases
from numba import njit
if sys.argv[3] == "on":
    vec_phases.compile_without_aliasing(sys.argv[2])

@njit
def copy(a, b):
    for i in range(a.shape[0]):
        b[i] = a[i]

copy(np.zeros(4), np.zeros(4))
ir = copy.inspect_llvm(copy.signatures[0])
head = [line for line in ir.splitlines() if line.startswith("define") and "copy" in line][0]
print(head.count("noalias"))
"""


def test_noalias_marks_every_array_argument(tmp_path: Path) -> None:
    """``--noalias``'s patch puts numba's noalias attribute on the array arguments' pointers (two arrays here), in a
    process of its own; without it only numba's own two (return and exception pointers) carry it."""
    import subprocess

    experiments = str(Path(__file__).resolve().parents[1] / "experiments")
    counts = []
    for mode in ("off", "on"):
        out = subprocess.run([sys.executable, "-c", NOALIAS_PROBE, experiments, str(tmp_path / mode), mode],
                             capture_output=True, text=True, check=True, env={**os.environ, "NUMBA_CACHE_DIR": ""})
        counts.append(int(out.stdout.split()[-1]))
    assert counts[1] > counts[0], counts


@pytest.mark.parametrize("flag", [True, False])
def test_noalias_option_is_read(monkeypatch: pytest.MonkeyPatch, flag: bool) -> None:
    """``--noalias`` patches the compiler (a fresh cache folder) before any phase runs; without it, nothing does."""
    calls: list[str] = []
    monkeypatch.setattr(vec_phases, "compile_without_aliasing", calls.append)
    monkeypatch.setattr(vec_phases, "phases", lambda *a, **k: dict.fromkeys(vec_phases.PHASES, 1e-9))
    monkeypatch.setattr(sys, "argv", ["vec_phases.py", "--rounds", "1", *(["--noalias"] if flag else [])])
    vec_phases.main()
    assert len(calls) == flag and all(Path(c).name.startswith("noalias-") for c in calls)
