"""``krypenv demo [--players N] [--seed S]``: one deal between random players, printed turn by turn.

Plays one full deal of Krypkasino (default: 3 players, seed 0) in which every seat picks a
uniformly random legal move (a legal card, then one of its legal captures), and prints:

* a header per round with the table and the set-aside pile after dealing (K6–K8);
* every turn: the seat, its hand, the card played and what it took, or that it crept
  (K10–K13), and each tabbe as it happens, e.g. ``tabbe på 9 (seat 1 +5, seat 0 -5)`` (K14);
* the last capturer taking the rest of the table and the set-aside pile (K15);
* the final card points, tabbes and deal scores, which always sum to 42 (K16).

The same seed always plays the same deal.  Rules ids refer to docs/RULES.md.
"""

from __future__ import annotations

import sys
from typing import TextIO

import numpy as np

from krypenv.krypkasino.cards import card_name, names_from_counts
from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.rules import Rules


def _cards(counts: np.ndarray) -> str:
    """Card names of a count vector, or ``-`` when empty."""
    return " ".join(names_from_counts(counts)) or "-"


def _rank(card: int) -> str:
    """The rank part of a card's name: ``10`` for 10D."""
    return card_name(card)[:-1]


def run_demo(players: int = 3, seed: int = 0, out: TextIO | None = None) -> np.ndarray:
    """Play one deal of random legal moves, printing it turn by turn to ``out``; return the (P,) scores."""
    out = sys.stdout if out is None else out
    rules = Rules(players=players)
    deals = DealBatch(rules, 1)
    rng = np.random.default_rng(seed)
    deals.reset(rng=rng)
    dealer = int(deals.dealer[0])
    print(f"Krypkasino: {players} players, seed {seed}; seat {dealer} deals, seat {(dealer + 1) % players} leads."
          " Lowest score wins.", file=out)
    width = 4 * rules.hand_size - 1
    rnd = -1
    while not deals.done[0]:
        if deals.round[0] != rnd:
            rnd = int(deals.round[0])
            sistan = ", sistan (the last round)" if deals.pos[0] == deals.rules.deck_size else ""
            print(f"\n-- round {rnd + 1} of {rules.rounds}{sistan}; table: {_cards(deals.table[0])};"
                  f" set aside: {_cards(deals.aside[0])}", file=out)
        seat = int(deals.turn[0])
        hand = _cards(deals.hands[0, seat])
        table_before = deals.table[0].copy()
        aside_before = deals.aside[0].copy()
        tabbes_before = int(deals.tabbes[0, seat])
        cards, caps = deals.random_moves(rng)
        deals.step_checked(cards, caps)
        card = int(cards[0])
        taken = names_from_counts(caps[0])
        move = f"takes {' '.join(taken)}" if taken else "creeps"
        line = f"seat {seat} [{hand:<{width}}] plays {card_name(card):>3}, {move}"
        gained = int(deals.tabbes[0, seat]) - tabbes_before
        if gained:
            kind = "dubbeltabbe" if gained == 2 else "tabbe"
            right = (seat - 1) % players
            line += f"  {kind} på {_rank(card)} (seat {seat} +{5 * gained}, seat {right} -{5 * gained})"
        print(line, file=out)
    rest = table_before - caps[0]
    if not taken:
        rest[card] += 1  # the last card crept onto the table
    taker = int(deals.taker[0])
    who = "the last to capture" if deals.last_capturer[0] >= 0 else "the dealer, as nobody captured"
    print(f"\nseat {taker}, {who}, takes the rest of the table ({_cards(rest)})"
          f" and the set-aside pile ({_cards(aside_before)}) (K15)", file=out)
    scores = deals.scores()[0]
    points = deals.card_points()[0]
    print("\nseat  card points  tabbes  score", file=out)
    for s in range(players):
        print(f"{s:>4}  {points[s]:>11}  {deals.tabbes[0, s]:>6}  {scores[s]:>5}", file=out)
    best = np.flatnonzero(scores == scores.min())
    print(f"total {int(scores.sum())} (K16); lowest score: seat {', '.join(map(str, best))}", file=out)
    return scores
