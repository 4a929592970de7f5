"""Variant decks, deals and presets (RULES.md K20–K23): rules, engine, records and envs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from krypenv.krypkasino.cards import POINTS, kind_codes, ordered_deck, parse_deck
from krypenv.krypkasino.config import EnvConfig
from krypenv.krypkasino.engine import DealBatch, shuffled_deck, shuffled_decks
from krypenv.krypkasino.observation import bounds, layout, obs_size
from krypenv.krypkasino.records import check_record, record_from_deals
from krypenv.krypkasino.rules import PRESETS, Rules

# Copied by hand from the preset table in RULES.md (K22): players, deck size, rounds, decisions, total points.
PRESET_TABLE = [
    ("tiny", 2, 8, 1, 6, 7),
    ("small", 2, 28, 3, 24, 12),
    ("small", 3, 28, 2, 24, 12),
]


# ----------------------------------------------------------------------------- K20: the deck
def test_k20_default_deck_is_the_standard_one() -> None:
    """K20: no variant keys = two full decks of 52 kinds, 104 cards, 42 points (K1, K4)."""
    r = Rules()
    assert r.deck_counts.tolist() == [2] * 52 and r.deck_size == 104 and r.total_points == 42
    assert r.is_standard and r.preset_name == "standard"


def test_k20_kinds_keep_their_codes() -> None:
    """K20: a variant keeps the K2 card codes: hearts and spades A–4 are 26–29 and 39–42."""
    assert kind_codes(("A", "2", "3", "4"), ("H", "S")).tolist() == [26, 27, 28, 29, 39, 40, 41, 42]
    r = Rules.from_preset("tiny", players=2)
    assert np.flatnonzero(r.deck_counts).tolist() == [26, 27, 28, 29, 39, 40, 41, 42]
    assert r.deck_counts.max() == 1 and r.deck_size == 8


def test_k20_total_points_is_the_decks_card_points() -> None:
    """K20: total_points sums K4's card points over the variant deck (AH 1, AS 2, 2S 2, 3S 1, 4S 1 = 7)."""
    r = Rules.from_preset("tiny", players=2)
    assert r.total_points == int(POINTS[np.flatnonzero(r.deck_counts)].sum()) == 7


@pytest.mark.parametrize(("key", "value"), [
    ("ranks", ("A", "1")), ("ranks", ()), ("ranks", ("A", "A")), ("ranks", "A234"), ("suits", ("X",)),
    ("suits", []), ("copies", 3), ("copies", True), ("copies", 0),
])
def test_k20_bad_deck_keys_name_the_field(key: str, value: Any) -> None:
    """K20: a bad rank/suit list or number of copies is a ValueError naming the field."""
    with pytest.raises(ValueError, match=key):
        Rules(players=2, **{key: value}, hand=1, table=0)


def test_k20_full_lists_normalise_to_none() -> None:
    """K20: listing all ranks and suits (in any order) is the standard deck, written without the keys."""
    r = Rules(ranks=list(reversed(("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"))),
              suits=["S", "H", "D", "C"])
    assert r.ranks is None and r.suits is None and r == Rules() and r.to_dict() == Rules().to_dict()


# ----------------------------------------------------------------------------- K21: the deal
@pytest.mark.parametrize(("name", "players", "size", "rounds", "decisions", "points"), PRESET_TABLE)
def test_k21_k22_preset_table(name: str, players: int, size: int, rounds: int, decisions: int, points: int) -> None:
    """K21/K22: each preset's deck size, rounds, decisions per deal and total points are the RULES.md table's."""
    r = Rules.from_preset(name, players=players)
    assert (r.deck_size, r.rounds, r.decisions_per_deal, r.total_points) == (size, rounds, decisions, points)
    assert r.preset_name == name
    assert r.initial_pattern == (("P", r.hand), ("T", r.table)) and r.later_pattern == (("P", r.hand),)


@pytest.mark.parametrize(("kw", "field"), [
    ({"hand": 3}, "hand and table"), ({"table": 2}, "hand and table"), ({"hand": 0, "table": 2}, "hand"),
    ({"hand": 3, "table": -1}, "table"), ({"hand": 3, "table": 3}, "table"), ({"hand": 5, "table": 0}, "hand"),
    ({"hand": 3, "table": 2, "two_player_deal": "5+6"}, "two_player_deal"),
])
def test_k21_bad_deals_name_the_field(kw: dict[str, Any], field: str) -> None:
    """K21: hand and table come together and must fit the deck in whole rounds; else a ValueError naming them."""
    with pytest.raises(ValueError, match=field):
        Rules(players=2, ranks=("A", "2", "3", "4"), suits=("H", "S"), copies=1, **kw)


def test_k21_standard_deal_must_fit_a_variant_deck() -> None:
    """K21: a variant deck without hand/table keeps K6/K7 only if they fit it in whole rounds."""
    with pytest.raises(ValueError, match="give hand and table"):
        Rules(players=3, copies=1)  # 52 cards: 20 dealt, 32 left, not a multiple of 12
    with pytest.raises(ValueError, match="give hand and table"):
        Rules(players=2, copies=1)  # 52 cards: 16 dealt, 36 left, not a multiple of 8
    twelve = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q")
    r = Rules(players=2, copies=1, ranks=twelve)  # 48 cards: 16 dealt, 4 later rounds of 2 × 4
    assert (r.initial_pattern, r.later_pattern, r.rounds, r.preset_name) == (
        (("P", 3), ("T", 2), ("P", 3), ("T", 2)), (("P", 2), ("P", 2)), 5, "custom")


# ----------------------------------------------------------------------------- K22: presets
def test_k22_presets_and_player_counts() -> None:
    """K22: tiny is for 2 players, small for 2–3; an unknown preset names 'preset'."""
    assert set(PRESETS) == {"standard", "tiny", "small"}
    assert Rules.from_preset("tiny").players == 2 and Rules.from_preset("small").players == 3
    with pytest.raises(ValueError, match="players"):
        Rules.from_preset("tiny", players=3)
    with pytest.raises(ValueError, match="players"):
        Rules.from_preset("small", players=6)
    with pytest.raises(ValueError, match="preset"):
        Rules.from_preset("huge")
    assert Rules.from_preset("standard", players=4) == Rules(players=4)
    assert Rules.from_preset("tiny", players=2, hand=1, table=2).preset_name == "custom"


def test_k22_to_dict_writes_variant_keys_only_when_not_standard() -> None:
    """K22: standard rules keep the five record keys; a variant adds its keys and round-trips through JSON."""
    assert list(Rules(players=2).to_dict()) == ["players", "teams", "two_player_deal", "set_aside",
                                                "last_capture_point"]
    r = Rules.from_preset("small", players=3)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["ranks"] == ["A", "2", "3", "4", "5", "6", "7"] and "suits" not in d and d["copies"] == 1
    assert Rules.from_dict(d) == r


# ----------------------------------------------------------------------------- the engine (K20, K21, K23)
def test_k20_shuffled_variant_deck_is_a_permutation_and_standard_decks_are_unchanged() -> None:
    """K20: a variant shuffle permutes its own deck; standard decks are the same as without rules."""
    r = Rules.from_preset("small", players=2)
    deck = shuffled_deck(np.random.default_rng(3), r)
    assert sorted(deck.tolist()) == sorted(ordered_deck(r.kinds, r.copies).tolist())
    a = shuffled_decks(np.random.default_rng(9), 4)
    assert np.array_equal(a, shuffled_decks(np.random.default_rng(9), 4, Rules(players=4)))
    assert parse_deck([["AC", "2C"][k] for k in (1, 0)], np.eye(52, dtype=np.int64)[[0, 1]].sum(0)).tolist() == [1, 0]


@pytest.mark.parametrize(("name", "players"), [("tiny", 2), ("small", 2), ("small", 3)])
def test_k23_random_variant_deals_conserve_the_deck_and_score_total_points(name: str, players: int) -> None:
    """K20–K23: random deals keep the variant deck, play every card not laid out, end with total_points."""
    r = Rules.from_preset(name, players=players)
    d = DealBatch(r, 8)
    d.reset(rng=np.random.default_rng(5))
    assert (d.deck_len == r.deck_size).all() and (d.in_hands == players * r.hand).all()
    g = np.random.default_rng(6)
    moves = 0
    while not d.done.all():
        assert (d.card_census() == r.deck_counts).all()
        d.play_random(g)
        moves += 1
    assert moves == r.decisions_per_deal and (d.n_moves == r.decisions_per_deal).all()
    assert (d.card_points().sum(axis=1) == r.total_points).all()
    assert (d.scores().sum(axis=1) == r.total_points).all()  # K16: tabbe points move between seats


def test_k20_reset_refuses_a_deck_of_another_variant() -> None:
    """K20: explicit decks must be the variant's deck, with a ValueError saying so."""
    r = Rules.from_preset("tiny", players=2)
    d = DealBatch(r, 1)
    with pytest.raises(ValueError, match="shape"):
        d.reset(decks=ordered_deck()[None, :])
    with pytest.raises(ValueError, match="variant"):
        d.reset(decks=np.arange(8, dtype=np.int8)[None, :])


def test_k22_variant_record_round_trips_and_replays() -> None:
    """K22: a variant deal's record carries its keys and deck, survives JSON and replays to the same result."""
    r = Rules.from_preset("small", players=3)
    d = DealBatch(r, 1)
    d.reset(rng=np.random.default_rng(11))
    g = np.random.default_rng(12)
    while not d.done[0]:
        d.play_random(g)
    rec = json.loads(json.dumps(record_from_deals(d, 0)))
    assert len(rec["deck"]) == 28 and rec["rules"]["hand"] == 4
    out = check_record(rec)
    assert out.ok and out.result == rec["result"]
    bad = dict(rec, deck=rec["deck"][:-1] + ["KS"])
    assert not check_record(bad).ok and "variant" in (check_record(bad).error or "")


# ----------------------------------------------------------------------------- the env configuration
def test_k22_env_config_takes_a_preset_and_rule_keys() -> None:
    """K22: EnvConfig builds the preset's rules, overrides by rule keys, names a bad preset or players."""
    assert EnvConfig(players=2, preset="tiny").rules == Rules.from_preset("tiny", players=2)
    assert EnvConfig(players=2, preset="tiny", table=0, hand=4).rules.rounds == 1
    assert "preset" not in EnvConfig().to_dict() and EnvConfig(players=2, preset="tiny").to_dict()["preset"] == "tiny"
    with pytest.raises(ValueError, match="preset"):
        EnvConfig(players=2, preset="nope")
    with pytest.raises(ValueError, match="players"):
        EnvConfig(players=3, preset="tiny")


def test_k22_spaces_table_in_rules_md_matches_the_code() -> None:
    """K22: the per-preset spaces table of RULES.md is the observation Box the code builds (highs per field)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "RULES.md").read_text()
    rows = re.findall(r"^\| (\w+) \| (\d) \| Box\(int8, \((\d+),\)\) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) "
                      r"\| Discrete\(105\) \|$", text, flags=re.MULTILINE)
    assert len(rows) == 8
    for name, p, size, *highs in rows:
        players = int(p)
        rules = Rules.from_preset(name, players=players)
        _, high = bounds(players, rules, 1)
        lay = layout(players)
        got = [int(high[lay[k]].max()) for k in ("hand", "hand_size", "points", "deck_left", "round")]
        assert (obs_size(players), got) == (int(size), [int(h) for h in highs]), (name, players)
