"""experiments/device_speed.py, the GPU speed goals' script: its verdicts, and a whole run in the CUDA simulator."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments"))
import device_speed as S


def rows(engine: float, env: float, kille: float, second: float) -> dict:
    """Rows as measure() returns them, one value each (the first process slower, as it compiles)."""
    return {"krypkasino engine": [{"batch": 8, "decisions_per_s": engine / 2}, {"batch": 16, "decisions_per_s": engine,
                                                                              "regs_per_thread": 128}],
            "krypkasino env": [{"batch": 16, "steps_per_s": env}],
            "kungsholmskille env": [{"batch": 16, "steps_per_s": kille}],
            "first step": [{"game": "krypkasino", "process": "first process", "seconds": 99.0},
                           {"game": "krypkasino", "process": "second process", "seconds": second},
                           {"game": "kungsholmskille", "process": "second process", "seconds": 1.0}]}


def verdicts(text: str) -> dict[str, str]:
    """Goal name -> MET or missed, from the table."""
    out = {}
    for line in text.splitlines()[1:]:
        name = line[:22].strip()
        out[name] = "MET" if " MET" in line else "missed"
    return out


def test_each_goal_is_met_at_its_edge_and_missed_just_past_it() -> None:
    """The best batch counts for a rate, the second process's slowest game for the first step; goals inclusive."""
    met = verdicts(S.table(rows(400e6, 50e6, 50e6, 10.0)))
    assert met == dict.fromkeys(S.GOALS, "MET")
    missed = verdicts(S.table(rows(399.9e6, 49.9e6, 49.9e6, 10.01)))
    assert missed == dict.fromkeys(S.GOALS, "missed")
    assert "(batch 16, 128 registers)" in S.table(rows(400e6, 50e6, 50e6, 10.0))


def test_a_missing_row_is_missed_not_met() -> None:
    """A benchmark that did not run is no pass."""
    assert set(verdicts(S.table({})).values()) == {"missed"}


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None, reason="numba-cuda is not installed")
def test_the_whole_script_runs_in_the_simulator(tmp_path: Path) -> None:
    """Every row (both games' engines and envs, the first step of two fresh processes per game), the JSON and the
    table, on tiny batches in numba's CUDA simulator."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    out = subprocess.run([sys.executable, "experiments/device_speed.py", "--batches", "16", "--repeats", "2",
                          "--seconds", "0.01", "--first-envs", "4", "--out", str(tmp_path)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1800, check=False)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    saved = json.loads((tmp_path / "device_speed.json").read_text())
    assert {"krypkasino engine", "krypkasino env", "kungsholmskille engine", "kungsholmskille env",
            "first step"} <= set(saved)
    assert len(saved["first step"]) == 4 and all(r["seconds"] > 0 for r in saved["first step"])
    assert out.stdout.strip().splitlines()[-len(S.GOALS) - 1].startswith("goal")
