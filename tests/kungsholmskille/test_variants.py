"""Kungsholmskille variants: a smaller deck (L20), a bounded pot settled at its last deal (L21), presets (L22)
and their records (L23), in the engine, the env and the records.

Expected values are worked out by hand from KILLE.md L20–L23.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from krypenv.kungsholmskille.cards import RANKS, ordered_deck, parse_deck, shuffled_decks
from krypenv.kungsholmskille.config import EnvConfig
from krypenv.kungsholmskille.engine import SETTLED, DealBatch
from krypenv.kungsholmskille.records import check_record, record_from_deals, summary
from krypenv.kungsholmskille.rules import PRESETS, Rules, min_ranks

SMALL = Rules.from_preset("small", players=3)


def all_bud(d: DealBatch) -> None:
    """Everyone says bud in the first call (L5): a budrunda."""
    for _ in range(d.players):
        d.play_move(0, "bud")


# --------------------------------------------------------------------------- L20 the deck
def test_L20_ranks_bounds_and_the_talon_invariant() -> None:
    """L20: ranks 1..21 and 2·ranks − 5·players ≥ 2·players (L8); a ValueError names ranks."""
    assert [min_ranks(p) for p in range(2, 7)] == [7, 11, 14, 18, 21]
    for p in range(2, 7):
        r = Rules(players=p, ranks=min_ranks(p))
        assert r.talon_size == 2 * r.ranks - 5 * p >= 2 * p
        with pytest.raises(ValueError, match="ranks must be at least"):
            Rules(players=p, ranks=min_ranks(p) - 1)
    for bad in (0, 22, 7.0, True, "11", None):
        with pytest.raises(ValueError, match="ranks"):
            Rules(players=2, ranks=bad)  # type: ignore[arg-type]


def test_L20_the_deck_is_the_lowest_ranks_twice() -> None:
    """L20: ranks=11 is blaren … 8, each twice: 22 cards; deck_counts says so."""
    r = Rules(players=2, ranks=11)
    assert r.deck_size == 22 and r.talon_size == 12
    assert r.deck_counts.tolist() == [2] * 11 + [0] * 10
    assert np.bincount(shuffled_decks(np.random.default_rng(1), 1, 11)[0], minlength=21).tolist() == [2] * 11 + [0] * 10
    with pytest.raises(ValueError, match="rank indices 0..10"):
        parse_deck(["kille"] * 22, 11)


def test_L20_a_small_deck_deals_and_draws_only_its_cards() -> None:
    """L20, L4, L8: 2 players, 11 ranks: hands from the deck's front, the talon is the other 12, exchanges draw
    from its front; the deck slots beyond 22 are empty and the census is the deck's."""
    r = Rules(players=2, ranks=11)
    d = DealBatch(r, 1)
    names = [RANKS[x] for x in ordered_deck(11)]  # blaren … 8, blaren … 8
    d.reset(decks=parse_deck(names, 11)[None], dealers=1)
    assert d.deck.shape == (1, 22)
    assert (d.state[0, 22:42] == -1).all()
    assert d.hands[0, 0].tolist()[:11] == [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0]  # seat 0: cards 0, 2, 4, 6, 8
    assert d.talon(0) == list(range(10, 11)) + list(range(11))
    d.play_move(0, "knacka")
    d.play_move(0, "stay")
    d.play_move(0, "discard:blaren,krans")  # seat 0 draws the talon's front: 8 and blaren
    assert d.hands[0, 0, 10] == 1 and d.hands[0, 0, 0] == 1
    assert d.card_census(0).tolist() == r.deck_counts.tolist()
    with pytest.raises(ValueError, match=r"decks must have shape \(1, 22\)"):
        d.reset(decks=np.tile(ordered_deck(), (1, 1)))
    with pytest.raises(ValueError, match="not 11 ranks twice of the lowest 11"):
        d.reset(decks=np.array([[0, 0, 0] + list(range(1, 11)) + list(range(1, 10))], np.int8))  # blaren x3


# --------------------------------------------------------------------------- L21 the pot bound
def test_L21_a_budrunda_in_the_last_deal_settles_the_pot() -> None:
    """L21: 3 players, pot 11 in the pot's last deal (deal 2 of 3), all bud: 3 each, the remainder 2 to the
    dealer's left neighbour and the next seat clockwise (dealer 0: seats 1, 2); antes 2 each for a new pot."""
    d = DealBatch(SMALL, 1)
    d.reset(rng=np.random.default_rng(3), dealers=0, pots=11, deals=2)
    all_bud(d)
    assert int(d.outcome[0]) == SETTLED and bool(d.pot_settled[0])
    assert d.result(0) == {"outcome": "settled", "winner": None, "shower": None, "penalty": 0,
                           "money": [3, 4, 4], "antes_next": [2, 2, 2], "pot_next": 6}


def test_L21_other_deals_keep_L12_and_the_last_deal_keeps_L14_L15() -> None:
    """L21: before the last deal a budrunda is L12's (the pot stays); a walkover in the last deal is L15's."""
    d = DealBatch(SMALL, 1)
    d.reset(rng=np.random.default_rng(3), dealers=0, pots=11, deals=1)
    all_bud(d)
    assert d.result(0)["outcome"] == "budrunda" and not d.pot_settled[0]
    assert d.result(0)["pot_next"] == 14
    d.reset(rng=np.random.default_rng(3), dealers=0, pots=11, deals=2)
    for mv in ("knacka", "fold", "fold"):
        d.play_move(0, mv)
    assert d.result(0)["outcome"] == "walkover" and d.result(0)["money"] == [0, 11, 0] and d.pot_settled[0]


def test_L21_max_deals_bounds_and_deal_numbers() -> None:
    """L21: max_deals is None or 1..1000; a deal number must lie inside the bound; max_deals=1 settles deal 0."""
    for bad in (0, 1001, 2.0, True, "3"):
        with pytest.raises(ValueError, match="max_deals"):
            Rules(players=2, max_deals=bad)  # type: ignore[arg-type]
    d = DealBatch(SMALL, 1)
    with pytest.raises(ValueError, match="deals must be in 0..2"):
        d.reset(rng=np.random.default_rng(0), deals=3)
    one = DealBatch(Rules(players=2, max_deals=1), 1)
    one.reset(rng=np.random.default_rng(0))
    all_bud(one)
    assert one.result(0)["outcome"] == "settled" and one.result(0)["money"] == [2, 2]


# --------------------------------------------------------------------------- L22 presets
def test_L22_presets() -> None:
    """L22: standard is today's game, small is 11 ranks and 3 deals per pot, for 2–3 players."""
    assert Rules.from_preset("standard", players=4) == Rules(4)
    assert Rules.from_preset("small", players=2) == Rules(2, 11, 3)
    assert set(PRESETS) == {"standard", "small"}
    assert Rules(4).preset_name == "standard" and Rules(3, 11, 3).preset_name == "small"
    assert Rules(3, 12, 3).preset_name == "custom" and Rules(2, 21, 5).preset_name == "custom"
    with pytest.raises(ValueError, match="ranks must be at least 14"):
        Rules.from_preset("small", players=4)
    with pytest.raises(ValueError, match="preset must be one of standard, small"):
        Rules.from_preset("tiny")
    with pytest.raises(ValueError, match="unknown rules key"):
        Rules.from_preset("small", deck=3)
    assert Rules.from_preset("small", players=2, max_deals=5) == Rules(2, 11, 5)


# --------------------------------------------------------------------------- L23 records
def test_L23_rules_keys_only_when_not_standard() -> None:
    """L23: to_dict names ranks and max_deals only when they differ from the standard game; from_dict reads them."""
    assert Rules(4).to_dict() == {"players": 4}
    assert SMALL.to_dict() == {"players": 3, "ranks": 11, "max_deals": 3}
    assert Rules.from_dict(SMALL.to_dict()) == SMALL
    assert Rules.from_dict({"players": 2, "max_deals": None}) == Rules(2)
    with pytest.raises(ValueError, match="unknown rules key"):
        Rules.from_dict({"players": 2, "deck": 22})


def test_L23_records_of_a_small_deal_replay_and_need_their_deal_number() -> None:
    """L23: a small deal's record gives its rules, 22 cards and deal; it replays; deal is required and checked."""
    d = DealBatch(SMALL, 1)
    d.reset(rng=np.random.default_rng(5), dealers=2, pots=9, deals=2)
    all_bud(d)
    rec = json.loads(json.dumps(record_from_deals(d, 0)))
    assert rec["rules"] == {"players": 3, "ranks": 11, "max_deals": 3} and rec["deal"] == 2
    assert len(rec["deck"]) == 22 and rec["result"]["outcome"] == "settled"
    out = check_record(rec)
    assert out.ok and out.result == rec["result"]
    assert "settled (L21)" in summary("r", rec, out)[0] and "deal 2 of its pot" in summary("r", rec, out)[0]
    assert "must give deal" in check_record({k: v for k, v in rec.items() if k != "deal"}).error
    assert "deal must be" in check_record({**rec, "deal": 3}).error
    bad = check_record({**rec, "deal": 1})  # not the last deal: a budrunda, not the recorded settlement
    assert not bad.ok and "does not match" in bad.error
    std = DealBatch(Rules(3), 1)
    std.reset(rng=np.random.default_rng(5))
    rec_std = record_from_deals(std, 0)
    assert "deal" not in rec_std and "ranks" not in rec_std["rules"]
    assert "only recorded when rules give max_deals" in check_record({**rec_std, "deal": 0}).error


# --------------------------------------------------------------------------- the env
def test_L21_env_config_and_episode_bound() -> None:
    """L21, L22: EnvConfig takes preset, ranks, pot_deals (naming the field when bad); the episode bound is the
    smaller of max_deals (L16) and the pot bound."""
    assert EnvConfig(players=2, preset="small").rules == Rules(2, 11, 3)
    assert EnvConfig(players=2, preset="small").episode_deals == 3
    assert EnvConfig(players=2, preset="small", max_deals=2).episode_deals == 2
    assert EnvConfig(players=2, preset="small", pot_deals=7, ranks=8).rules == Rules(2, 8, 7)
    assert EnvConfig(players=4).episode_deals == 50
    for kw, field in (({"pot_deals": 0}, "pot_deals"), ({"preset": "big"}, "preset"), ({"ranks": 3}, "ranks"),
                      ({"players": 4, "preset": "small"}, "ranks")):
        with pytest.raises(ValueError, match=field):
            EnvConfig(**{"players": 2, **kw})


def test_L22_the_docs_preset_table_matches_the_code() -> None:
    """L22: the preset table of docs/KILLE.md states the ranks, deck, talon, pot bound and observation size the
    code has."""
    from pathlib import Path

    from krypenv.kungsholmskille.observation import obs_size

    text = (Path(__file__).resolve().parents[2] / "docs" / "KILLE.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.strip().startswith("| `small`"))
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    rules2, rules3 = Rules.from_preset("small", players=2), Rules.from_preset("small", players=3)
    assert cells[1].startswith(f"{rules2.ranks} (`{RANKS[0]}` … `{RANKS[rules2.ranks - 1]}`)")
    assert cells[2] == str(rules2.deck_size)
    assert cells[3] == "2–3"
    with pytest.raises(ValueError):
        Rules.from_preset("small", players=4)
    assert cells[4] == f"{rules2.talon_size} (P = 2), {rules3.talon_size} (P = 3)"
    assert cells[5] == str(rules2.max_deals)
    assert cells[6] == f"{obs_size(2)} (P = 2), {obs_size(3)} (P = 3)"


@pytest.mark.parametrize("players", [2, 3])
def test_L21_small_episodes_end_within_the_bound_and_conserve_money(players: int) -> None:
    """L21: on the small preset every episode (one pot) ends by termination within 3 deals, the returns summing
    to 0; the observation's talon and deals_left stay inside the Box."""
    from krypenv.kungsholmskille.batch import KungsholmskilleBatch
    from krypenv.kungsholmskille.config import POT_OUT

    batch = KungsholmskilleBatch(EnvConfig(players=players, preset="small"), 200, kinds=[2] * players)
    assert batch.high[-3] == 22 - 5 * players and batch.high[-1] == 2
    batch.seed(list(range(200)))
    batch.reset()
    assert (batch.over == POT_OUT).all() and (batch.deal_no < 3).all()
    assert (batch.money.sum(axis=1) == 0).all()
    settled = batch.deals.outcome == SETTLED
    assert settled.any() and (batch.deal_no[settled] == 2).all()
