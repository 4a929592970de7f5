"""Shipped checkpoints are found in a checkout and in an installed package, and named in specs (``ppo:NAME``)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import tomllib
from krypenv.agents import checkpoint
from krypenv.agents.checkpoint import SHIPPED, read_checked, resolve_checkpoint, shipped_names

from krypenv import agents
from krypenv.games import GAMES

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_is_the_checkpoints_folder_beside_the_agents_package() -> None:
    assert SHIPPED == Path(checkpoint.__file__).resolve().parents[1] / "checkpoints"
    assert {"ppo-2p", "ppo-3p", "ppo-4p", "ppo-6p", "kille-4p"} <= set(shipped_names())


def test_the_wheel_puts_checkpoints_beside_the_agents_package() -> None:
    """pyproject maps agents/ and checkpoints/ to krypenv.agents and krypenv.checkpoints, the zips as package data."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert tool["package-dir"]["krypenv.agents"] == "agents"
    assert tool["package-dir"]["krypenv.checkpoints"] == "checkpoints"
    assert "krypenv.checkpoints" in tool["packages"] and "*.zip" in tool["package-data"]["krypenv.checkpoints"]


def test_an_installed_layout_finds_its_checkpoints(tmp_path: Path) -> None:
    """checkpoint.py at site-packages/krypenv/agents/ resolves site-packages/krypenv/checkpoints/ (a wheel's layout)."""
    site = tmp_path / "site" / "krypenv"
    (site / "agents").mkdir(parents=True)
    (site / "checkpoints").mkdir()
    shutil.copy(checkpoint.__file__, site / "agents" / "checkpoint.py")
    shutil.copy(SHIPPED / "ppo-3p.zip", site / "checkpoints" / "ppo-3p.zip")
    spec = importlib.util.spec_from_file_location("installed_checkpoint", site / "agents" / "checkpoint.py")
    assert spec is not None and spec.loader is not None
    installed = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = installed
    try:
        spec.loader.exec_module(installed)
    finally:
        del sys.modules[spec.name]
    assert installed.SHIPPED == site / "checkpoints"
    assert installed.shipped_names() == ["ppo-3p"]
    assert installed.resolve_checkpoint("ppo-3p") == site / "checkpoints" / "ppo-3p.zip"


def test_a_name_is_a_shipped_checkpoint_and_a_path_stays_a_path() -> None:
    assert resolve_checkpoint("ppo-2p") == SHIPPED / "ppo-2p.zip"
    assert resolve_checkpoint("checkpoints/ppo-2p.zip") == "checkpoints/ppo-2p.zip"
    assert resolve_checkpoint("final.zip") == "final.zip" and resolve_checkpoint("") == ""
    with pytest.raises(ValueError, match=r"no shipped checkpoint of that name \(shipped: .*ppo-2p"):
        resolve_checkpoint("ppo-9p")
    with pytest.raises(ValueError, match="no shipped checkpoint"):
        agents.load("ppo:ppo-9p")


@pytest.mark.parametrize("name", shipped_names())
def test_every_shipped_checkpoint_loads_by_name_and_plays_as_by_path(name: str) -> None:
    """``ppo:NAME`` and ``ppo:PATH`` are the same agent: the same logits for the same inputs."""
    pytest.importorskip("torch")
    trained = read_checked(SHIPPED / f"{name}.zip", None)
    game = trained.get("game", checkpoint.LEGACY_GAME)
    assert game in GAMES
    by_name = agents.load(f"ppo:{name}", game=game)
    by_path = agents.load(f"ppo:{SHIPPED / name}.zip", game=game)
    assert by_name.meta == by_path.meta and by_name.path == by_path.path
    rng = np.random.default_rng(0)
    dim = by_name.policy.observation_space.shape[0]
    x = rng.uniform(0, 1, (4, dim)).astype(np.float32)
    mask = np.ones((4, by_name.policy.action_space.n), np.int8)
    assert np.array_equal(by_name.logits(x, mask), by_path.logits(x, mask))
