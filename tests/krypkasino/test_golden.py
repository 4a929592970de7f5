"""Golden playthroughs: replay ``tests/krypkasino/golden/playthroughs.json`` and compare every decision and result.

The file is regenerated only on purpose with ``python tests/krypkasino/make_golden.py``.  Besides
comparing with the engine, every recorded legal-move list and result is checked against
the independent reference deal of ``tests/krypkasino/oracle.py`` (K6–K17).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from krypenv.krypkasino.cards import card_code, names_from_counts, parse_deck
from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.rules import Rules
from tests.krypkasino import oracle as O

GOLDEN = Path(__file__).with_name("golden") / "playthroughs.json"
DOC: dict[str, Any] = json.loads(GOLDEN.read_text())
DEALS: list[dict[str, Any]] = DOC["deals"]


def as_key(move: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """A hashable, order-free form of a JSON move."""
    return move["card"], tuple(sorted(move["capture"]))


def move_vectors(move: dict[str, Any]) -> tuple[int, np.ndarray]:
    """Card code and (52,) capture counts of a JSON move."""
    cap = np.zeros(52, np.int8)
    for n in move["capture"]:
        cap[card_code(n)] += 1
    return card_code(move["card"]), cap


def test_golden_file_is_small_and_well_formed() -> None:
    """The golden file stays under 1 MB and holds game records with one legal list per move."""
    assert GOLDEN.stat().st_size < 1_000_000
    assert len(DEALS) >= 4
    for deal in DEALS:
        assert {"game", "rules", "dealer", "deck", "moves", "result", "legal"} <= set(deal)
        assert deal["game"] == "krypkasino"
        assert len(deal["moves"]) == len(deal["legal"]) == Rules.from_dict(deal["rules"]).decisions_per_deal
        for move, legal in zip(deal["moves"], deal["legal"]):
            assert move in legal


def test_make_golden_rebuilds_the_file_byte_for_byte() -> None:
    """The generator is faithful: ``tests/krypkasino/make_golden.py`` would write exactly the committed file."""
    from tests.krypkasino.make_golden import build, dump

    assert dump(build()) == GOLDEN.read_text()


@pytest.mark.parametrize("deal", DEALS, ids=[d["name"] for d in DEALS])
def test_golden_replay(deal: dict[str, Any]) -> None:
    """Replaying the record gives the same legal moves at every decision and the same result."""
    rules = Rules.from_dict(deal["rules"])
    d = DealBatch(rules, 1)
    d.reset(decks=parse_deck(deal["deck"], rules.deck_counts)[None, :], dealers=np.array([deal["dealer"]]))
    for k, (move, legal) in enumerate(zip(deal["moves"], deal["legal"])):
        assert not d.done[0], f"deal ended early at decision {k}"
        got = sorted(as_key({"card": O.name(c), "capture": names_from_counts(cap)}) for c, cap in d.legal_moves(0))
        assert got == sorted(as_key(m) for m in legal), f"legal moves differ at decision {k}"
        card, cap = move_vectors(move)
        d.step_checked(np.array([card]), cap[None, :])
    assert bool(d.done[0])
    assert d.scores()[0].tolist() == deal["result"]["scores"]
    assert d.card_points()[0].tolist() == deal["result"]["card_points"]
    assert d.tabbes[0].tolist() == deal["result"]["tabbes"]


@pytest.mark.parametrize("deal", DEALS, ids=[d["name"] for d in DEALS])
def test_golden_matches_reference(deal: dict[str, Any]) -> None:
    """The recorded legal moves and result agree with the independent reference deal (oracle, K6–K17)."""
    r = Rules.from_dict(deal["rules"])
    deck = [O.code(n) for n in deal["deck"]]
    five_six, spades = r.two_player_deal == "5+6", r.set_aside == "spades"
    ref = O.RefDeal(r.players, deck, deal["dealer"], five_six, spades, r.last_capture_point, r.hand, r.table)
    for k, (move, legal) in enumerate(zip(deal["moves"], deal["legal"])):
        if sum(ref.table) <= 12:
            expected = sorted(as_key({"card": O.name(c), "capture": O.names_of(cap)}) for c, cap in ref.legal_moves())
            assert sorted(as_key(m) for m in legal) == expected, f"decision {k}"
        card, cap = move_vectors(move)
        ref.play(card, cap.tolist())
    assert ref.done
    assert ref.scores() == deal["result"]["scores"]
    assert ref.card_points() == deal["result"]["card_points"]
    assert ref.tabbes == deal["result"]["tabbes"]
    assert sum(ref.scores()) == sum(O.points(c) for c in deck) + (1 if r.last_capture_point else 0)  # 42 (K4, K20)
