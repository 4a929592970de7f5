"""Golden playthroughs: replay ``golden/playthroughs.json`` and compare every decision and the result (L4–L18).

The file is regenerated only on purpose with ``python -m tests.kungsholmskille.make_golden``.
Besides the engine, every recorded legal-move list and result is checked against the
independent oracle (``oracle.py``), and every record against ``check_record``.
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

GOLDEN = Path(__file__).with_name("golden") / "playthroughs.json"
DEALS: list[dict[str, Any]] = json.loads(GOLDEN.read_text())["deals"]
IDS = [d["name"] for d in DEALS]


def test_golden_file_covers_every_ending() -> None:
    """The golden deals cover 2, 4 and 6 players and budrunda, walkover, showdowns with and without penalty, two at
    the showdown; every move is among its decision's legal moves."""
    assert GOLDEN.stat().st_size < 200_000
    assert {d["rules"]["players"] for d in DEALS} == {2, 4, 6}
    endings = {(d["result"]["outcome"], d["result"]["penalty"] > 0) for d in DEALS}
    assert endings == {("budrunda", False), ("walkover", False), ("showdown", False), ("showdown", True)}
    assert any(d["result"]["outcome"] == "showdown" and sum(a == 3 for a in d["result"]["antes_next"]) == 1
               for d in DEALS)  # two at the showdown (L14)
    for deal in DEALS:
        assert len(deal["moves"]) == len(deal["legal"])
        assert all(mv in legal for mv, legal in zip(deal["moves"], deal["legal"]))


@pytest.mark.parametrize("deal", DEALS, ids=IDS)
def test_golden_replay(deal: dict[str, Any]) -> None:
    """The engine lists the same legal moves at every decision and reaches the same result."""
    d = DealBatch(Rules.from_dict(deal["rules"]), 1)
    d.reset(decks=parse_deck(deal["deck"])[None, :], dealers=deal["dealer"], pots=deal["pot"])
    for k, (move, legal) in enumerate(zip(deal["moves"], deal["legal"])):
        assert not d.done[0], f"deal ended early at decision {k}"
        assert d.legal_moves(0) == legal, f"legal moves differ at decision {k}"
        d.play_move(0, move)
    assert d.done[0] and d.result(0) == deal["result"]


@pytest.mark.parametrize("deal", DEALS, ids=IDS)
def test_golden_matches_the_oracle(deal: dict[str, Any]) -> None:
    """The recorded legal moves and result agree with the independent oracle."""
    o = OracleDeal(deal["rules"]["players"], deal["dealer"], deal["pot"], deal["deck"])
    for move, legal in zip(deal["moves"], deal["legal"]):
        assert o.legal_moves() == legal
        o.play(move)
    assert o.done and o.result() == deal["result"]


@pytest.mark.parametrize("deal", DEALS, ids=IDS)
def test_golden_records_check(deal: dict[str, Any]) -> None:
    """Each golden deal, as an L18 record, passes check_record with its legal lists (L19)."""
    rec = {k: deal[k] for k in RECORD_KEYS}
    out = check_record(rec, legal=True)
    assert out.ok and out.result == deal["result"] and out.legal_moves == deal["legal"]
