"""``examples/tune_sweep.py``: two tiny ``train.py`` trials on a local Ray, reporting the evaluation against expert."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.ray.helpers import NO_RAY

ray = pytest.importorskip("ray", reason=NO_RAY)
pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--total-timesteps", "1024", "--eval-every", "512", "--eval-deals", "3", "--set", "num_envs=16",
        "--set", "n_steps=32", "--set", "batch_size=128", "--set", "n_epochs=1", "--set", "snapshot_every=256"]


def load_example():
    """examples/tune_sweep.py as a module."""
    spec = importlib.util.spec_from_file_location("tune_sweep", ROOT / "examples" / "tune_sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.slow
def test_two_tiny_trials(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # a local Ray of its own
    sweep = load_example()
    ray.shutdown()
    try:
        summary = sweep.main(sweep.parse_args([*TINY, "--samples", "2", "--out-dir", str(tmp_path / "runs"),
                                               "--storage", str(tmp_path / "tune")]))
    finally:
        ray.shutdown()
    assert summary["trials"] == 2 and summary["errors"] == 0
    assert set(summary["best_config"]) == {"learning_rate", "ent_coef", "net_arch"}
    assert summary["env_steps"] == 1024 and summary["ci"][0] <= summary["diff"] <= summary["ci"][1]
    curves = sorted((tmp_path / "runs").glob("trial-*/eval.csv"))
    assert len(curves) == 2 and all(len(c.read_text().splitlines()) == 3 for c in curves)  # header + 2 evaluations
    assert "best of 2 trials" in capsys.readouterr().out


def test_bad_fixed_option_is_an_error() -> None:
    sweep = load_example()
    with pytest.raises(SystemExit):
        sweep.parse_args(["--set", "no_such_option=3"])
    args = sweep.parse_args(["--set", "num_envs=0"])
    with pytest.raises(ValueError, match="--num-envs must be at least 1"):
        sweep.trial_args({}, args, "x")
