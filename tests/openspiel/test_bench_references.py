"""experiments/bench_openspiel.py's two OpenSpiel references run on this OpenSpiel and measure decisions.

Hearts has no observation tensor in OpenSpiel (``ObservationTensorShape unimplemented``): the Python reference
reads the acting player's information state tensor, so that every decision pays for an observation as the AEC
env's step does.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments"))

import bench_openspiel


@pytest.mark.parametrize("which", ["openspiel_cpp", "openspiel_python"])
def test_reference_runs_and_counts_decisions(which: str) -> None:
    """A short run of each reference prints a positive rate (the Python loop reaches a decision's tensor)."""
    assert bench_openspiel.reference(which, 0.2) > 0


def test_python_reference_reads_a_tensor_at_every_decision() -> None:
    """The Python loop asks the acting player's tensor before its legal actions (the cost the goal compares)."""
    loop = bench_openspiel.REFERENCE.split('else:', 1)[1]
    assert "state.information_state_tensor(player)" in loop
    assert loop.index("information_state_tensor") < loop.index("legal_actions")


def test_every_goal_names_a_reference() -> None:
    """Each goal's reference is one of the two the rounds measure."""
    assert {ref for ref, _ in bench_openspiel.GOALS.values()} == {"openspiel_cpp", "openspiel_python"}
