"""The tutorials of the docs (``docs/tutorials/*.py``) run as printed, each with a tiny budget.

Each script is executed in this process (``runpy``, as ``__main__``) with ``KRYPENV_TUTORIAL_STEPS`` or
``KRYPENV_TUTORIAL_DECKS`` set small, and what it prints is checked. The RLlib tutorial runs in the
Ray environment (``tests/ray/test_tutorial_rllib.py``). Every script in the folder has a test here or
there, and a page in the docs that shows it.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "docs" / "tutorials"
RAY_ONLY = {"rllib_ppo"}  # run by tests/ray/test_tutorial_rllib.py


def run(name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **env: str) -> str:
    """Run ``docs/tutorials/<name>.py`` as a script with the given environment; returns what it printed."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.syspath_prepend(str(TUTORIALS))
    runpy.run_path(str(TUTORIALS / f"{name}.py"), run_name="__main__")
    return capsys.readouterr().out


def test_every_tutorial_is_tested_and_shown() -> None:
    """Each script has a test below (or the Ray one) and a docs page that literalincludes it."""
    tested = {"sb3_maskable_ppo", "cleanrl_ppo_vecenv", "cleanrl_ppo_device", "tianshou_dqn", "torchrl_pettingzoo",
              "own_agent", "openspiel_cfr_tiny"} | RAY_ONLY
    scripts = {p.stem for p in TUTORIALS.glob("*.py")}
    assert scripts == tested
    index = (TUTORIALS / "index.md").read_text(encoding="utf-8")
    for name in scripts:
        assert f"```{{literalinclude}} {name}.py" in (TUTORIALS / f"{name}.md").read_text(encoding="utf-8")
        assert f"\n{name}\n" in index


def test_sb3_maskable_ppo(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """MaskablePPO trains on the Gymnasium env and its policy plays 20 deals against expert."""
    pytest.importorskip("sb3_contrib")
    out = run("sb3_maskable_ppo", monkeypatch, capsys, KRYPENV_TUTORIAL_STEPS="64")
    assert "after 64 steps: the learner's mean score per deal against expert" in out


def test_cleanrl_ppo_vecenv(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The hand-written PPO loop runs two updates on the VecEnv and sees deals finish."""
    pytest.importorskip("torch")
    out = run("cleanrl_ppo_vecenv", monkeypatch, capsys, KRYPENV_TUTORIAL_STEPS=str(2 * 64 * 32))
    lines = [ln for ln in out.splitlines() if ln.startswith("update ")]
    assert len(lines) == 2 and "update 1: " in lines[1]
    assert int(lines[1].split(": ")[1].split()[0]) > 0  # deals finished, with their learner scores


def test_cleanrl_ppo_device(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The device env's PPO loop runs on the CPU backend (the same script as on a GPU): two iterations, episodes end."""
    pytest.importorskip("torch")
    monkeypatch.setattr(sys, "argv", ["cleanrl_ppo_device.py", "--device", "cpu", "--num-envs", "64", "--num-steps",
                                      "32", "--game", "kungsholmskille", "--players", "3"])
    out = run("cleanrl_ppo_device", monkeypatch, capsys, KRYPENV_TUTORIAL_STEPS=str(2 * 64 * 32))
    assert "iteration 2/2: " in out and "done: 4,096 steps in" in out and "steps/s on cpu" in out
    episodes = int(out.split("iteration 2/2: ")[1].split(" over ")[1].split()[0])
    assert episodes > 0


def test_tianshou_dqn(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Tianshou's PettingZooEnv over the AEC env: DQN against masked random, then test deals."""
    pytest.importorskip("tianshou")
    out = run("tianshou_dqn", monkeypatch, capsys, KRYPENV_TUTORIAL_STEPS="100")
    assert "the learner's mean return over 1 test deal" in out


def test_torchrl_pettingzoo(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """TorchRL's PettingZooWrapper with masks: one group per agent, Categorical(105) actions, a rollout."""
    pytest.importorskip("torchrl")
    out = run("torchrl_pettingzoo", monkeypatch, capsys, KRYPENV_TUTORIAL_STEPS="60")
    assert "groups: {'player_0': ['player_0'], 'player_1': ['player_1']}" in out
    assert "CategoricalBox(n=105)" in out and "summed rewards per group over 60 steps" in out


def test_own_agent(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The user's MoveAgent is loaded by ``module:attr`` and evaluated by ``krypenv eval``."""
    out = run("own_agent", monkeypatch, capsys, KRYPENV_TUTORIAL_DECKS="2")
    assert "own_agent:PointShy" in out and "head to head" in out
    assert "results.csv" in out and "records.jsonl" in out


def test_openspiel_cfr_tiny(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """OpenSpiel's CFR+ on a 6-card cut of tiny lowers NashConv; the policy plays in the env and krypenv eval."""
    pytest.importorskip("pyspiel")
    out = run("openspiel_cfr_tiny", monkeypatch, capsys, KRYPENV_TUTORIAL_STEPS="20", KRYPENV_TUTORIAL_DECKS="2",
              KRYPENV_TUTORIAL_GAME="python_krypkasino(players=2,preset=tiny,ranks=A-2-3,hand=2,table=2)")
    assert "NashConv of the uniform random policy: 3.3111" in out  # OpenSpiel's, as tests/training/test_exploit.py
    after = float(out.split("after 20 CFR+ iterations: NashConv ")[1].split()[0])
    assert 0 <= after < 0.1
    assert "policy file: 882 information states" in out
    assert "random against the CFR+ policy in the Gymnasium env" in out
    assert "tabular:cfr-tiny - random" in out  # krypenv eval's head to head
