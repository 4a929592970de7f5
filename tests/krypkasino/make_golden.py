"""Regenerate ``tests/krypkasino/golden/playthroughs.json`` ON PURPOSE: ``python tests/krypkasino/make_golden.py``.

The golden file pins the engine's behaviour on a few fixed deals: for every decision the
legal moves (card names, canonical order) and the move chosen, and the final result.
``tests/krypkasino/test_golden.py`` replays it and fails on any difference.  Only rerun this script
after a deliberate, reviewed change of the rules or engine, and review the diff of the
JSON before committing it (every changed line is a changed legal move or score).

Each deal is a RULES.md game record (game, rules, dealer, deck, moves, result) plus
``name``, ``choice_seed`` and ``legal`` (one list of legal moves per decision).  Decks come
from ``numpy.random.default_rng(deck_seed)``: the five standard deals' as the first version of
this script drew them (``rng.permutation`` of the 104 card codes), the variant deals' by
:func:`~krypenv.krypkasino.engine.shuffled_deck` (``test_golden`` checks that this script
rebuilds the file byte for byte); moves are chosen by
``random.Random(choice_seed).randrange`` over the canonically sorted legal moves, so the
choice does not depend on the engine's enumeration order.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np

from krypenv.krypkasino.cards import card_name, names_from_counts
from krypenv.krypkasino.engine import DealBatch, shuffled_deck
from krypenv.krypkasino.rules import PRESETS, Rules

GOLDEN = Path(__file__).with_name("golden") / "playthroughs.json"

# name, rules, dealer, deck seed, choice seed (the deck drawn by deal_deck)
SPECS: list[tuple[str, dict[str, Any], int, int, int]] = [
    ("2p", {"players": 2}, 1, 1, 101),
    ("2p 5+6 last_capture_point", {"players": 2, "two_player_deal": "5+6", "last_capture_point": True}, 0, 5, 105),
    ("3p", {"players": 3}, 2, 2, 102),
    ("4p spades", {"players": 4, "set_aside": "spades"}, 1, 3, 103),
    ("6p three teams", {"players": 6, "teams": [[0, 3], [1, 4], [2, 5]]}, 5, 4, 104),
    ("2p tiny", {"players": 2, **PRESETS["tiny"]}, 1, 6, 106),  # K20–K22
    ("3p small", {"players": 3, **PRESETS["small"]}, 2, 7, 107),
]


def move_json(card: int, cap: np.ndarray) -> dict[str, Any]:
    """A move as in a game record: {"card": "8H", "capture": ["AC", "7C"]} (capture in code order)."""
    return {"card": card_name(int(card)), "capture": names_from_counts(cap)}


def canonical(moves: list[tuple[int, np.ndarray]]) -> list[tuple[int, np.ndarray]]:
    """Legal moves sorted by card code, then by the captured codes."""
    return sorted(moves, key=lambda m: (int(m[0]), [c for c in range(52) for _ in range(int(m[1][c]))]))


def deal_deck(rules: Rules, deck_seed: int) -> np.ndarray:
    """A golden deal's deck: a standard one as first drawn here (a permutation of its codes), a variant's shuffled."""
    rng = np.random.default_rng(deck_seed)
    if rules.preset_name == "standard":
        return rng.permutation(np.tile(np.arange(52), 2)).astype(np.int8)
    return shuffled_deck(rng, rules)


def play_deal(name: str, rules_kw: dict[str, Any], dealer: int, deck_seed: int, choice_seed: int) -> dict[str, Any]:
    """Play one golden deal and return its record with the legal moves of every decision."""
    rules = Rules(**rules_kw)
    deck = deal_deck(rules, deck_seed)
    d = DealBatch(rules, 1)
    d.reset(decks=deck[None, :], dealers=np.array([dealer]))
    chooser = random.Random(choice_seed)
    moves, legal = [], []
    while not d.done[0]:
        options = canonical(d.legal_moves(0))
        legal.append([move_json(c, cap) for c, cap in options])
        card, cap = options[chooser.randrange(len(options))]
        moves.append(move_json(card, cap))
        d.step_checked(np.array([card]), cap[None, :])
    return {
        "name": name,
        "game": "krypkasino",
        "rules": rules.to_dict(),
        "dealer": dealer,
        "choice_seed": choice_seed,
        "deck": [card_name(int(c)) for c in deck],
        "moves": moves,
        "legal": legal,
        "result": {
            "scores": d.scores()[0].tolist(),
            "card_points": d.card_points()[0].tolist(),
            "tabbes": d.tabbes[0].tolist(),
        },
    }


def build() -> dict[str, Any]:
    """The whole golden document."""
    about = "golden playthroughs; regenerate on purpose with python tests/krypkasino/make_golden.py"
    return {"about": about, "deals": [play_deal(*s) for s in SPECS]}


def _items(items: list[Any]) -> list[str]:
    """JSON lines of a list's items, comma-separated, one item per line."""
    return [f"    {json.dumps(x, separators=(',', ':'))}" + ("," if i + 1 < len(items) else "")
            for i, x in enumerate(items)]


def dump(doc: dict[str, Any]) -> str:
    """Compact JSON, one decision per line, so diffs stay readable."""
    lines = ["{", f' "about": {json.dumps(doc["about"])},', ' "deals": [']
    for k, deal in enumerate(doc["deals"]):
        lines.append("  {")
        for key in ("name", "game", "rules", "dealer", "choice_seed", "deck", "result"):
            lines.append(f"   {json.dumps(key)}: {json.dumps(deal[key], separators=(',', ':'))},")
        lines.append('   "moves": [')
        lines += _items(deal["moves"])
        lines.append("   ],")
        lines.append('   "legal": [')
        lines += _items(deal["legal"])
        lines.append("   ]")
        lines.append("  }" + ("," if k + 1 < len(doc["deals"]) else ""))
    lines += [" ]", "}", ""]
    text = "\n".join(lines)
    assert json.loads(text) == doc
    return text


def main() -> None:
    """Write the golden file and report its size."""
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(dump(build()))
    print(f"wrote {GOLDEN} ({GOLDEN.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
