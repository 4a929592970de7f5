"""Krypkasino's entry points: krypenv.krypkasino_v0, the package's public names, krypenv.env."""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import numpy as np

import krypenv
from krypenv import krypkasino, krypkasino_v0
from krypenv.krypkasino import aec, single, vec


def test_entry_module_names_the_three_interfaces() -> None:
    """env/raw_env are the AEC functions (also krypenv.env), GymEnv and VecEnv the classes."""
    assert krypkasino_v0.env is aec.env is krypenv.env and krypkasino_v0.raw_env is aec.raw_env is krypenv.raw_env
    assert krypkasino_v0.GymEnv is single.KrypkasinoEnv is krypkasino.KrypkasinoEnv
    assert krypkasino_v0.VecEnv is vec.KrypkasinoVecEnv is krypkasino.KrypkasinoVecEnv
    env = gymnasium.make("krypenv/Krypkasino-v0", players=2)
    assert isinstance(env.unwrapped, krypkasino_v0.GymEnv)
    obs, _info = env.reset(seed=3)
    direct = krypkasino_v0.GymEnv(players=2)
    obs2, _info2 = direct.reset(seed=3)
    np.testing.assert_array_equal(obs, obs2)
    venv = krypkasino_v0.VecEnv(2, players=2, seed=3)
    np.testing.assert_array_equal(venv.reset()[0], obs)  # game 0 of VecEnv(seed=s) is the Gymnasium env seeded s
    aec_env = krypkasino_v0.env(players=3)
    aec_env.reset(seed=1)
    assert aec_env.agents == ["player_0", "player_1", "player_2"]


def test_package_exports_its_main_names() -> None:
    """krypenv.krypkasino names the layers' main objects; the heavy environments load on first access only."""
    for name in krypkasino.__all__:
        assert getattr(krypkasino, name) is not None
    code = ("import sys, krypenv.krypkasino, krypenv.krypkasino_v0; "
            "print('stable_baselines3' in sys.modules, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
