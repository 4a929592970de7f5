"""The two-game house: entry modules, Gymnasium ids, demo --game, and replay of files mixing both games."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import krypenv
from krypenv import krypkasino_v0, kungsholmskille_v0
from krypenv.cli import main
from krypenv.kungsholmskille.engine import DealBatch
from krypenv.kungsholmskille.records import record_from_deals
from krypenv.kungsholmskille.rules import Rules

MIXED = Path(__file__).parent / "krypkasino" / "data" / "mixed.jsonl"
DEAL_3P = Path(__file__).parent / "krypkasino" / "data" / "deal_3p.json"


def kille_records(n: int = 3, seed: int = 1) -> list[dict]:
    """``n`` finished 4-player Kungsholmskille deals of random legal play."""
    deals = DealBatch(Rules(4), n)
    rng = np.random.default_rng(seed)
    deals.reset(rng=rng)
    deals.play_random_to_end(rng)
    return [record_from_deals(deals, i) for i in range(n)]


def test_entry_modules_name_both_games() -> None:
    """PettingZoo-style entry modules: ``env``/``raw_env`` of each game; ``krypenv.env`` stays Krypkasino."""
    assert krypenv.env is krypkasino_v0.env and krypenv.raw_env is krypkasino_v0.raw_env
    k, s = krypkasino_v0.env(players=2), kungsholmskille_v0.env(players=3)
    assert k.metadata["name"] != s.metadata["name"]
    assert s.action_space("player_0").n == 279 and k.action_space("player_0").n == 105


@pytest.mark.parametrize(("env_id", "n_actions"), [("krypenv/Krypkasino-v0", 105), ("krypenv/Kungsholmskille-v0", 279)])
def test_gymnasium_ids(env_id: str, n_actions: int) -> None:
    """Both Gymnasium ids are registered on ``import krypenv`` and make a working env."""
    env = gym.make(env_id, players=2)
    obs, _info = env.reset(seed=0)
    assert env.action_space.n == n_actions and env.observation_space.contains(obs)


def test_demo_game_kungsholmskille(capsys: pytest.CaptureFixture[str]) -> None:
    """``krypenv demo --game kungsholmskille`` prints a whole deal: calls, tricks or a budrunda, pot and money."""
    assert main(["demo", "--game", "kungsholmskille", "--players", "3", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "First call (L5)" in out and "pot" in out
    assert "Kungsholmskille, 3 players" in out
    assert main(["demo", "--game", "kungsholmskille", "--players", "3", "--seed", "3"]) == 0
    assert capsys.readouterr().out == out  # same seed, same deal


def test_replay_mixes_both_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One file with records of both games: each is checked by its own game (L19), bad ones reported, exit 1."""
    good = kille_records()
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
