"""A whole Kungsholmskille deal between random players, printed call by call and trick by trick.

``run_demo(players=4, seed=None, out=None)`` deals from a shuffled deck (seed None:
a fresh random one), lets every seat pick a uniformly random legal move, and prints:

* the dealer, forehand, the pot and every hand after the deal (L2–L4);
* the first call (L5), the fold decisions (L6) and forehand moving on (L7);
* every exchange with what was discarded and drawn (L8), the second call (L9);
* the four tricks card by card, marking forced plays (L10: "must play its lowest card"),
  and the winner of each trick;
* the show calls (L11) and the ending: budrunda (L12), showdown with the L13 order and the
  penalty (L14), or walkover (L15), with each seat's money and antes for the next deal (L18).

The same seed always prints the same deal.
"""

from __future__ import annotations

import sys
from typing import TextIO

import numpy as np

from krypenv.kungsholmskille.actions import KNACKA, SHOW, STAND, action_name
from krypenv.kungsholmskille.cards import RANKS, names_from_counts
from krypenv.kungsholmskille.engine import (
    EXCHANGE,
    FIRST_CALL,
    FOLDING,
    SECOND_CALL,
    SHOWING,
    TRICKS,
    DealBatch,
)  # fmt: skip
from krypenv.kungsholmskille.records import describe_result
from krypenv.kungsholmskille.rules import Rules

_HEADINGS = {
    FIRST_CALL: "First call (L5)", FOLDING: "Fold decisions (L6)", EXCHANGE: "Exchange (L8)",
    SECOND_CALL: "Second call (L9)", SHOWING: "Show calls (L11)",
}  # fmt: skip


def _hand(d: DealBatch, s: int) -> str:
    return " ".join(names_from_counts(d.hands[0, s])) or "-"


def _describe(d: DealBatch, s: int, a: int, phase: int, hand_before: np.ndarray) -> str:
    """One move in words, with the rule on notable events."""
    name = action_name(a)
    if phase in (FIRST_CALL, SECOND_CALL):
        return f"seat {s} knocks (knacka)" if a == KNACKA else f"seat {s} says bud"
    if phase == FOLDING:
        return f"seat {s} folds (L6)" if name == "fold" else f"seat {s} stays"
    if phase == EXCHANGE:
        if a == STAND:
            return f"seat {s} stands [{_hand(d, s)}]"
        gone = name.split(":")[1].replace(",", " and ")
        drawn = hand_before.astype(np.int64).copy()
        for x in name.split(":")[1].split(","):
            drawn[RANKS.index(x)] -= 1
        new = d.hands[0, s].astype(np.int64) - drawn
        return f"seat {s} discards {gone}, draws {' '.join(names_from_counts(np.maximum(new, 0)))} [{_hand(d, s)}]"
    if phase == SHOWING:
        return f"seat {s} shows" if a == SHOW else f"seat {s} says bud"
    return name


def run_demo(players: int = 4, seed: int | None = None, out: TextIO | None = None) -> None:
    """Play one deal of random legal moves and print it to ``out`` (default: the current ``sys.stdout``)."""
    out = sys.stdout if out is None else out
    rules = Rules(players)
    rng = np.random.default_rng(seed)
    d = DealBatch(rules, 1)
    d.reset(rng=rng)
    dealer, fh = int(d.dealer[0]), int(d.forehand[0])
    print(f"Kungsholmskille, {players} players, seed {seed}: seat {dealer} deals, seat {fh} is forehand (L2); "
          f"pot {int(d.pot[0])}. The lowest card after four tricks wins.", file=out)
    for s in range(players):
        print(f"  seat {s}: {_hand(d, s)}", file=out)
    print(f"  talon: {' '.join(RANKS[x] for x in d.talon(0))}", file=out)
    phase = -1
    while not d.done[0]:
        ph, s = int(d.phase[0]), int(d.to_act[0])
        if ph != phase and ph in _HEADINGS:
            print(f"\n{_HEADINGS[ph]}:", file=out)
        if ph == TRICKS and d.n_played[0] == 0:
            t = int(d.trick[0])
            print(f"\nTrick {t + 1} (L10): seat {s} leads", file=out)
        phase = ph
        legal = d.legal_actions(0)
        a = legal[int(rng.integers(len(legal)))]
        hand_before = d.hands[0, s].copy()
        forced_low = ph == TRICKS and d.n_played[0] > 0 and not hand_before[max(int(d.high[0]), 0):].any()
        fh_before, trick_before = int(d.forehand[0]), int(d.trick[0])
        d.play_action(0, a)
        if ph == TRICKS:
            note = f"  seat {s} [{' '.join(names_from_counts(hand_before))}] plays {action_name(a)[5:]}"
            if forced_low:
                high = RANKS[int(d.trick_cards[0, trick_before].max())]
                note += f" (must play its lowest card: nothing reaches {high}, L10)"
            elif len(legal) == 1:
                note += " (its only legal card, L10)"
            print(note, file=out)
            if int(d.trick[0]) != trick_before:
                w = int(d.trick_winner[0, trick_before])
                print(f"  seat {w} wins the trick", file=out)
        else:
            print(f"  {_describe(d, s, a, ph, hand_before)}", file=out)
        if int(d.forehand[0]) != fh_before:
            print(f"  forehand moves to seat {int(d.forehand[0])} (L7)", file=out)
    res = d.result(0)
    print(f"\nThe deal ends: {describe_result(res, int(d.pot[0]))}", file=out)
    if res["outcome"] == "showdown":
        w4 = int(d.trick_winner[0, 3])
        order = [(w4 + k) % players for k in range(players) if not d.folded[0, (w4 + k) % players]]
        shown = ", ".join(f"seat {t} {_hand(d, t)}" for t in order)
        print(f"  shown in the L13 order from seat {w4}: {shown}", file=out)
        if len(order) == 2:
            print("  two at the showdown (L14): the loser antes 3, everybody else 1", file=out)
    elif res["outcome"] == "budrunda":
        print("  nobody shows; the pot stays for the next deal (L12)", file=out)
    print("\nseat   money  antes next", file=out)
    for s in range(players):
        print(f"{s:>4}  {res['money'][s]:>6}  {res['antes_next'][s]:>10}", file=out)
    print(f"next deal: seat {(dealer + 1) % players} deals (L2), pot {res['pot_next']} (L18)", file=out)
