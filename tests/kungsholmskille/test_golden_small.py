"""Golden pots of the ``small`` preset: replay ``golden/small_pots.json`` deal by deal (KILLE.md L20–L23).

Regenerated only on purpose with ``python -m tests.kungsholmskille.make_golden_small``.  Every
deal's legal moves and result are checked against the engine, the independent oracle and
``check_record``; the pot's deals chain as L2/L3/L12 say and its net money is pinned.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from krypenv.kungsholmskille.cards import parse_deck
from krypenv.kungsholmskille.engine import DealBatch
from krypenv.kungsholmskille.records import RECORD_KEYS, check_record
from krypenv.kungsholmskille.rules import Rules
from tests.kungsholmskille.oracle import OracleDeal

GOLDEN = Path(__file__).with_name("golden") / "small_pots.json"
POTS: list[dict[str, Any]] = json.loads(GOLDEN.read_text())["pots"]
IDS = [p["name"] for p in POTS]


def test_small_golden_covers_settlements_and_pots_going_out() -> None:
    """L21: the golden pots include settlements (one with a remainder) and pots going out by showdown and walkover,
    for 2 and 3 players."""
    endings = {p["deals"][-1]["result"]["outcome"] for p in POTS}
    assert endings == {"settled", "showdown", "walkover"}
    assert {p["players"] for p in POTS} == {2, 3}
    assert any(p["deals"][-1]["result"]["outcome"] == "settled" and p["deals"][-1]["pot"] % p["players"] for p in POTS)


@pytest.mark.parametrize("pot", POTS, ids=IDS)
def test_small_golden_pot_replays(pot: dict[str, Any]) -> None:
    """Each deal replays with the same legal moves and result (engine, oracle, check_record); the deals chain
    (dealer to the left, pot_next, deal numbers) and the net money is the pinned one."""
    players = pot["players"]
    rules = Rules.from_preset("small", players=players)
    net, dealer, start = [-2] * players, players - 1, rules.initial_pot
    for k, deal in enumerate(pot["deals"]):
        assert Rules.from_dict(deal["rules"]) == rules and deal["deal"] == k
        assert deal["dealer"] == dealer and deal["pot"] == start
        d = DealBatch(rules, 1)
        d.reset(decks=parse_deck(deal["deck"], rules.ranks)[None], dealers=dealer, pots=start, deals=k)
        o = OracleDeal(players, dealer, start, deal["deck"], last=rules.is_last_deal(k))
        for move, legal in zip(deal["moves"], deal["legal"], strict=True):
            assert d.legal_moves(0) == legal == o.legal_moves()
            d.play_move(0, move)
            o.play(move)
        assert d.result(0) == deal["result"] == o.result()
        out = check_record({key: deal[key] for key in (*RECORD_KEYS, "deal")}, legal=True)
        assert out.ok and out.legal_moves == deal["legal"]
        res = deal["result"]
        if res["outcome"] != "budrunda":
            net = [n + m for n, m in zip(net, res["money"])]
            assert k == len(pot["deals"]) - 1
            break
        net = [n - a for n, a in zip(net, res["antes_next"])]
        dealer, start = (dealer + 1) % players, res["pot_next"]
    assert net == pot["net"] and sum(net) == 0
