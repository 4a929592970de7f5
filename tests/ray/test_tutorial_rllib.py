"""The RLlib tutorial (``docs/tutorials/rllib_ppo.py``) runs as printed, with a tiny budget, in the Ray environment."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

pytest.importorskip("ray.rllib", reason="the ray extra is not installed (see the Ray guide)")

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorials" / "rllib_ppo.py"


def test_rllib_tutorial_trains(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """PPO with action masking in self-play runs one iteration and reports its env steps."""
    import ray

    ray.shutdown()
    monkeypatch.setenv("KRYPENV_TUTORIAL_STEPS", "100")
    runpy.run_path(str(TUTORIAL), run_name="__main__")
    out = capsys.readouterr().out
    assert "env steps; mean return per seat" in out
    assert not ray.is_initialized()
