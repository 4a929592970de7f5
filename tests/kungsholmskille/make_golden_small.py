"""Regenerate ``tests/kungsholmskille/golden/small_pots.json`` ON PURPOSE:
``python -m tests.kungsholmskille.make_golden_small``.

The file pins whole pots of the ``small`` preset (KILLE.md L20–L22: 11 ranks, at most 3 deals
per pot): for every deal of a pot its L18/L23 record (with ``deal``) and the legal moves of
every decision, and the pot's net money per seat.  ``test_golden_small.py`` replays it and
fails on any difference.  Rerun only after a deliberate, reviewed change of the rules.

Deal k of a pot is dealt from ``shuffled_deck(numpy.random.default_rng(deck_seed + k), 11)``,
by dealer ``players − 1 + k`` (L2), into the pot left by the deal before (L3, L12); moves are
chosen as in ``make_golden.py`` by ``random.Random(choice_seed)``; for each spec the choice
seed is the first one from 0 that gives the wanted ending of the pot.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from krypenv.kungsholmskille.cards import shuffled_deck
from krypenv.kungsholmskille.engine import DealBatch
from krypenv.kungsholmskille.records import record_from_deals
from krypenv.kungsholmskille.rules import Rules
from tests.kungsholmskille.make_golden import choose

GOLDEN = Path(__file__).with_name("golden") / "small_pots.json"
Want = Callable[[list[dict[str, Any]]], bool]  # the pot's deal records

# name, players, deck seed, knock probability, wanted pot
SPECS: list[tuple[str, int, int, float, Want]] = [
    ("2p pot settled after three budrundor", 2, 1, 0.2,
     lambda r: len(r) == 3 and r[-1]["result"]["outcome"] == "settled"),
    ("3p pot settled with a remainder, after a fold", 3, 2, 0.2,
     lambda r: r[-1]["result"]["outcome"] == "settled" and r[-1]["pot"] % 3 != 0),
    ("3p pot won at a showdown in its second deal", 3, 3, 0.75,
     lambda r: len(r) == 2 and r[-1]["result"]["outcome"] == "showdown"),
    ("2p pot won by a walkover in its last deal", 2, 4, 0.5,
     lambda r: len(r) == 3 and r[-1]["result"]["outcome"] == "walkover"),
]


def _choose(rng: random.Random, legal: list[str], knock: float) -> str:
    """``make_golden.choose``, but knocking only with probability ``knock`` (so that budrundor happen)."""
    if legal == ["bud", "knacka"]:
        return "knacka" if rng.random() < knock else "bud"
    return choose(rng, legal)


def play_pot(players: int, deck_seed: int, choice_seed: int, knock: float) -> tuple[list[dict[str, Any]], list[int]]:
    """Play one small pot to its end; return its deal records (with ``legal``) and each seat's net money."""
    rules = Rules.from_preset("small", players=players)
    d = DealBatch(rules, 1)
    rng = random.Random(choice_seed)
    net = [-2] * players  # L3
    dealer, pot, records = players - 1, rules.initial_pot, []
    for k in range(rules.max_deals or 0):
        d.reset(decks=shuffled_deck(np.random.default_rng(deck_seed + k), rules.ranks)[None], dealers=dealer,
                pots=pot, deals=k)
        legal = []
        while not d.done[0]:
            legal.append(d.legal_moves(0))
            d.play_move(0, _choose(rng, legal[-1], knock))
        records.append({**record_from_deals(d, 0), "legal": legal})
        res = d.result(0)
        if d.pot_settled[0]:
            net = [n + m for n, m in zip(net, res["money"])]
            break
        net = [n - a for n, a in zip(net, res["antes_next"])]
        dealer, pot = (dealer + 1) % players, res["pot_next"]
    return records, net


def make() -> dict[str, Any]:
    """Every golden pot, searching choice seeds for the wanted endings."""
    pots = []
    for name, players, deck_seed, knock, want in SPECS:
        for choice_seed in range(10_000):
            records, net = play_pot(players, deck_seed, choice_seed, knock)
            if want(records):
                break
        else:
            raise RuntimeError(f"no choice seed gives {name!r}")
        pots.append({"name": name, "players": players, "deck_seed": deck_seed, "choice_seed": choice_seed,
                     "knock": knock, "deals": records, "net": net})
    return {"about": "Kungsholmskille small-preset golden pots; regenerate only on purpose (make_golden_small.py)",
            "pots": pots}


def main() -> None:
    """Write the golden file."""
    GOLDEN.write_text(json.dumps(make(), indent=1) + "\n")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    main()
