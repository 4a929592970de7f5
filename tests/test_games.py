"""The registry of games (krypenv.games): every declaration's parts import and supply what the registry documents.

Every test here loops over :data:`krypenv.games.GAMES`, so a new game's declaration is
checked by itself.  A part's interface is the names the module must define (the registry's
table of parts, and :mod:`krypenv.training.common` for ``training``).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import gymnasium as gym
import pytest

from krypenv.cli import main
from krypenv.games import DEFAULT_GAME, GAMES, PARTS, game, names

INTERFACE = {  # part -> names its module defines
    "entry": ("env", "raw_env", "GymEnv", "VecEnv", "DeviceVecEnv"),
    "device": ("DeviceVecEnv",),
    "cuda_kernels": ("build", "engine_play", "no_policy"),
    "records": ("GAME", "check_record", "summary"),
    "demo": ("run_demo",),
    "training": ("DEFAULTS", "POLICIES", "BASELINES", "EPISODE_VALUE", "RUN_PREFIX", "CURVE", "check_options",
                 "game_config", "make_env", "agent_class", "action_features", "network", "metadata", "check_init",
                 "evaluate",
                 "final_table"),
    "ui": ("Adapter", "replay_frames", "rules_meta", "options_from_json", "terminal_state", "terminal_end",
           "red_card", "RESULT_NAME", "TOTAL_NAME"),
}
DEAL_3P = Path(__file__).parent / "krypkasino" / "data" / "deal_3p.json"


def test_names_and_lookups() -> None:
    """Names are unique and in registry order; the default is a game; unknown games and parts are one-line errors."""
    assert names() == tuple(GAMES) and len(set(names())) == len(GAMES) and DEFAULT_GAME in GAMES
    assert all(g.name == name for name, g in GAMES.items())
    assert len({g.gym_id for g in GAMES.values()}) == len({g.rule_prefix for g in GAMES.values()}) == len(GAMES)
    with pytest.raises(ValueError, match=f"unknown game 'casino'; known games: {', '.join(GAMES)}"):
        game("casino")
    with pytest.raises(ValueError, match="unknown part 'engine' of a game; parts: entry, records"):
        GAMES[DEFAULT_GAME].part("engine")


@pytest.mark.parametrize("name", names())
@pytest.mark.parametrize("part", PARTS)
def test_every_part_imports_and_supplies_its_interface(name: str, part: str) -> None:
    """Each declared module imports and defines what the registry says that part supplies."""
    if part == "cuda_kernels" and importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed (pip install 'krypenv[cuda]')")
    module = GAMES[name].part(part)
    missing = [attr for attr in INTERFACE.get(part, ()) if not hasattr(module, attr)]
    assert not missing, f"{GAMES[name].part(part).__name__} lacks {missing}"
    if part == "records":
        assert module.GAME == name


@pytest.mark.parametrize("name", names())
def test_play_defaults_fit_the_game(name: str) -> None:
    """The default table's size is a count the rules allow, and its default opponent is one of the game's agents."""
    from krypenv import agents

    declared = GAMES[name]
    assert declared.play_players in declared.players
    assert declared.play_opponent in agents.known(name)
    assert (Path(__file__).parents[1] / declared.rules_doc).is_file()


@pytest.mark.parametrize("name", names())
def test_gymnasium_id_is_registered_and_makes_a_working_env(name: str) -> None:
    """Every game's Gymnasium id is registered on ``import krypenv`` and makes an env whose observations fit."""
    import krypenv  # noqa: F401 - registers the ids

    env = gym.make(GAMES[name].gym_id, players=2)
    obs, _info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    mask = env.unwrapped.action_masks()
    obs, *_ = env.step(int(mask.nonzero()[0][0]))
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize("name", names())
def test_demo_of_every_game_is_seeded(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``krypenv demo --game G`` prints a whole deal at the game's default table; the same seed prints it again."""
    assert main(["demo", "--game", name, "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert GAMES[name].title in out and f"{GAMES[name].play_players} players" in out
    assert main(["demo", "--game", name, "--seed", "3"]) == 0
    assert capsys.readouterr().out == out


def test_replay_mixes_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One file with records of both games: each is checked by its own game (L19), a bad one reported, exit 1."""
    import numpy as np

    from krypenv.kungsholmskille.engine import DealBatch
    from krypenv.kungsholmskille.records import record_from_deals
    from krypenv.kungsholmskille.rules import Rules

    deals = DealBatch(Rules(4), 3)
    rng = np.random.default_rng(1)
    deals.reset(rng=rng)
    deals.play_random_to_end(rng)
    good = [record_from_deals(deals, i) for i in range(3)]
    bad = dict(good[1], moves=["play:kille"] + good[1]["moves"][1:])
    path = tmp_path / "both.jsonl"
    lines = [DEAL_3P.read_text().replace("\n", " ")] + [json.dumps(r) for r in (good[0], bad, good[2])]
    path.write_text("\n".join(lines) + "\n")
    assert main(["replay", str(path), "--json", "--legal"]) == 1
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["ok"] for o in out] == [True, True, False, True]
    assert set(out[0]["result"]) == {"scores", "card_points", "tabbes"}
    assert set(out[1]["result"]) == {"outcome", "winner", "shower", "penalty", "money", "antes_next", "pot_next"}
    assert out[1]["result"] == good[0]["result"]
    assert out[2]["failed_move"] == 0 and out[2]["error"].startswith(f"{path}:3:")
    assert "play:kille" in out[2]["error"] and "bud" in out[2]["error"]
    assert out[2]["legal_moves"] == [["bud", "knacka"]]
    assert len(out[3]["legal_moves"]) == len(good[2]["moves"])
    good_path = tmp_path / "good.jsonl"
    good_path.write_text("\n".join(json.dumps(r) for r in good) + "\n")
    assert main(["replay", str(good_path), str(DEAL_3P)]) == 0
    text = capsys.readouterr().out
    assert "4 record(s): 4 ok, 0 with errors" in text and "4 players, dealer seat 3" in text


@pytest.mark.parametrize("name", list(GAMES))
def test_entry_loads_its_batched_envs_on_first_access_only(name: str) -> None:
    """Importing a game's entry module imports neither Stable-Baselines3 nor torch; ``VecEnv`` and
    ``DeviceVecEnv`` are then the game's own classes, and any other name is an AttributeError naming the module."""
    import subprocess
    import sys

    entry = GAMES[name].entry
    code = (f"import sys, {entry} as m\n"
            "print(sorted({'stable_baselines3', 'torch'} & set(sys.modules)))\n"
            "print(m.VecEnv.__module__, m.DeviceVecEnv.__module__)\n"
            "try:\n    m.Nope\nexcept AttributeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == f"krypenv.{name}.vec krypenv.{name}.device"
    assert out[2] == f"module '{entry}' has no attribute 'Nope'"
