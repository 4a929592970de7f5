"""Regenerate ``tests/kungsholmskille/golden/playthroughs.json`` ON PURPOSE:
``python -m tests.kungsholmskille.make_golden``.

The golden file pins the engine on a few fixed deals: for every decision the legal moves
(L17 strings, action-index order) and the move chosen, and the L18 result.
``test_golden.py`` replays it and fails on any difference.  Rerun this script only
after a deliberate, reviewed change of the rules or the engine, and review the JSON diff.

Each deal is an L18 record plus ``name``, ``deck_seed``, ``choice_seed`` and ``legal`` (one
list per decision).  Decks come from ``shuffled_deck(numpy.random.default_rng(deck_seed))``;
moves are chosen by ``random.Random(choice_seed)``: knacka / stay / show with probability
0.75 in the two-way decisions, otherwise uniformly among the legal moves.  For each spec the
choice seed is the first one from 0 that gives the wanted ending (so every ending is covered).
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

GOLDEN = Path(__file__).with_name("golden") / "playthroughs.json"
Want = Callable[[dict[str, Any], DealBatch, str], bool]  # (result, deal, phase of the last move)


def _showdown(n_in: int | None, penalty: bool) -> Want:
    """A showdown with (or without) a penalty and ``n_in`` players at it (None: at least three)."""
    return lambda r, d, _: (r["outcome"] == "showdown" and (r["penalty"] > 0) == penalty
                            and (int(d.n_in[0]) >= 3 if n_in is None else int(d.n_in[0]) == n_in))


# name, players, dealer, pot, deck seed, wanted ending
SPECS: list[tuple[str, int, int, int, int, Want]] = [
    ("2p two at the showdown, the shower wins", 2, 1, 4, 1, _showdown(2, False)),
    ("2p two at the showdown, the shower pays a penalty", 2, 0, 7, 2, _showdown(2, True)),
    ("4p budrunda in the first call", 4, 3, 8, 3, lambda r, d, ph: r["outcome"] == "budrunda" and ph == "first call"),
    ("4p walkover", 4, 1, 12, 4, lambda r, d, ph: r["outcome"] == "walkover"),
    ("4p showdown with a penalty, three or more in", 4, 3, 8, 5, _showdown(None, True)),
    ("4p budrunda in the show calls after a fold", 4, 2, 10, 6,
     lambda r, d, ph: r["outcome"] == "budrunda" and ph == "show" and d.n_in[0] < 4),
    ("6p showdown without a penalty, three or more in", 6, 5, 12, 7, _showdown(None, False)),
    ("6p showdown with a penalty, all six in", 6, 0, 30, 8, _showdown(6, True)),
    ("6p budrunda in the second call", 6, 3, 14, 9,
     lambda r, d, ph: r["outcome"] == "budrunda" and ph == "second call"),
]


def choose(rng: random.Random, legal: list[str]) -> str:
    """Knock, stay and show with probability 0.75; otherwise a uniform legal move."""
    for pair, yes in ((["bud", "knacka"], "knacka"), (["fold", "stay"], "stay"), (["bud", "show"], "show")):
        if legal == pair:
            return yes if rng.random() < 0.75 else next(m for m in pair if m != yes)
    return legal[rng.randrange(len(legal))]


def play_deal(players: int, dealer: int, pot: int, deck_seed: int,
              choice_seed: int) -> tuple[DealBatch, list[list[str]], str]:
    """Play one deal; return it, the legal moves of every decision and the phase of the last move."""
    d = DealBatch(Rules(players), 1)
    d.reset(decks=shuffled_deck(np.random.default_rng(deck_seed))[None, :], dealers=dealer, pots=pot)
    rng = random.Random(choice_seed)
    legal_lists = []
    phase = ""
    while not d.done[0]:
        legal = d.legal_moves(0)
        legal_lists.append(legal)
        phase = ("first call", "fold", "exchange", "second call", "tricks", "show")[int(d.phase[0])]
        d.play_move(0, choose(rng, legal))
    return d, legal_lists, phase


def make() -> dict[str, Any]:
    """Every golden deal, searching choice seeds for the wanted endings."""
    deals = []
    for name, players, dealer, pot, deck_seed, want in SPECS:
        for choice_seed in range(10_000):
            d, legal, phase = play_deal(players, dealer, pot, deck_seed, choice_seed)
            if want(d.result(0), d, phase):
                break
        else:
            raise RuntimeError(f"no choice seed gives {name!r}")
        rec = record_from_deals(d, 0)
        deals.append({"name": name, "deck_seed": deck_seed, "choice_seed": choice_seed, **rec, "legal": legal})
    return {"about": "Kungsholmskille golden playthroughs; regenerate only on purpose (make_golden.py)",
            "deals": deals}


def main() -> None:
    """Write the golden file."""
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(make(), indent=1) + "\n")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    main()
