"""Kungsholmskille's small preset at the UI's table (KILLE.md L20–L22): terminal options, web rules, pots, replay."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from krypenv.records import check_record
from krypenv.ui.kungsholmskille import Adapter, options_from_json, replay_frames, rules_meta

ROOT = Path(__file__).resolve().parents[2]


def _deal_all_bud(game: Adapter, k: int) -> dict:
    """Deal ``k``, everyone says bud in the first call (L5, L12), book it; the deal's record."""
    game.start_deal(k)
    while not game.done:
        game.play(next(c for c in game.legal() if c.key == "bud"))
    rec = game.record()
    game.finish_deal()
    return rec


def test_adapter_numbers_the_deals_of_a_pot_and_settles_it() -> None:
    """L21: three budrundor at a 3-player small table: the third settles the pot (net money back to 0 here, everyone
    paid alike), the fourth deal opens a new pot with deal number 0 and a pot of 6."""
    game = Adapter(3, 5, {"preset": "small"})
    assert game.rules.to_dict() == {"players": 3, "ranks": 11, "max_deals": 3}
    recs = [_deal_all_bud(game, k) for k in range(3)]
    assert [r["deal"] for r in recs] == [0, 1, 2] and [r["pot"] for r in recs] == [6, 9, 12]
    assert recs[2]["result"]["outcome"] == "settled" and recs[2]["result"]["money"] == [4, 4, 4]
    assert game.totals() == [0, 0, 0]
    rec = _deal_all_bud(game, 3)
    assert rec["deal"] == 0 and rec["pot"] == 6 and all(check_record(r).ok for r in [*recs, rec])
    frames = replay_frames(recs[2])
    assert frames["frames"][0]["rules"] == recs[2]["rules"] and frames["result"]["outcome"] == "settled"


def test_web_rules_offer_the_preset_and_check_it() -> None:
    """L22: /api/meta's Kungsholmskille rules offer the preset for 2–3 players; a request's rules are checked."""
    meta = rules_meta()["preset"]
    assert meta["choices"] == ["standard", "small"] and meta["players"] == [2, 3] and meta["rule"] == "L22"
    assert options_from_json({"preset": "small"}, 3) == {"preset": "small"}
    assert options_from_json(None, 4) == {} and options_from_json({"preset": None}, 4) == {}
    for obj, players, words in (({"preset": "small"}, 4, "ranks must be at least 14"),
                                ({"preset": "huge"}, 2, "preset must be one of"), ({"teams": 2}, 4, "unknown"),
                                ([1], 2, "rules must be an object"), ({"max_deals": 0}, 2, "max_deals")):
        with pytest.raises(ValueError, match=words):
            options_from_json(obj, players)


def test_piped_play_on_the_small_preset(tmp_path: Path) -> None:
    """``krypenv play --game kungsholmskille --preset small``: a piped match of four deals ends, its records are small
    ones and check."""
    env = dict(__import__("os").environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "krypenv.cli", "play", "--game", "kungsholmskille", "--players", "2",
                           "--preset", "small", "--deals", "4", "--seed", "7", "--record", str(tmp_path / "g.jsonl")],
                          input="1\n" * 400, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in (tmp_path / "g.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(r["rules"] == {"players": 2, "ranks": 11, "max_deals": 3} for r in records)
    assert all(check_record(r).ok for r in records) and records[0]["deal"] == 0
