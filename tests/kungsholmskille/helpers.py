"""Test helpers for Kungsholmskille: decks that give chosen hands to chosen seats, scripted deals.

Expected values in the tests are worked out by hand from KILLE.md (or by the independent
oracle in ``oracle.py``), never by asking the engine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from krypenv.kungsholmskille.cards import RANKS, parse_deck
from krypenv.kungsholmskille.engine import DealBatch
from krypenv.kungsholmskille.rules import Rules


def deck_for(players: int, hands: dict[int, Sequence[str]], dealer: int | None = None,
             talon: Sequence[str] = ()) -> list[str]:
    """42 rank names dealt (L4) so that each listed seat gets its hand and the talon starts with ``talon``.

    Card k of the deck goes to seat forehand + k (mod players), forehand = dealer + 1 (L2); unlisted
    seats' hands and the rest of the talon are filled with the remaining ranks, lowest first.
    """
    dealer = players - 1 if dealer is None else dealer
    fh = (dealer + 1) % players
    left = Counter({r: 2 for r in RANKS})
    for cards in [*hands.values(), talon]:
        left.subtract(cards)
    assert all(v >= 0 for v in left.values()), f"a rank is used more than twice: {+left - left}"
    rest = [r for r in RANKS for _ in range(left[r])]
    full = {}
    for s in range(players):
        given = list(hands.get(s, []))
        assert len(given) <= 5
        full[s] = given + [rest.pop(0) for _ in range(5 - len(given))]
    deck = [full[(fh + k) % players][k // players] for k in range(5 * players)]
    deck += list(talon) + rest
    assert len(deck) == 42
    return deck


def start(players: int, deck: Sequence[str], dealer: int | None = None, pot: int | None = None) -> DealBatch:
    """A one-deal batch dealt from rank names."""
    d = DealBatch(Rules(players), 1)
    d.reset(decks=parse_deck(list(deck))[None, :], dealers=dealer, pots=pot)
    return d


def play(d: DealBatch, *moves: str) -> None:
    """Make the moves in deal 0 in order (IllegalMoveError if one is illegal)."""
    for mv in moves:
        d.play_move(0, mv)


def hand(d: DealBatch, seat: int, i: int = 0) -> list[str]:
    """A seat's hand as rank names, lowest first."""
    return [RANKS[r] for r in range(21) for _ in range(int(d.hands[i, seat, r]))]


def snapshot(d: DealBatch) -> tuple[np.ndarray, np.ndarray]:
    """Copies of both state arrays."""
    return d.state.copy(), d.cash.copy()


def longest_policy(d: DealBatch, i: int = 0) -> str:
    """The move that makes a deal as long as possible (9P − 1 moves): the last seat of each call knocks/shows."""
    p, s, ph = d.players, int(d.to_act[i]), int(d.phase[i])
    legal = d.legal_moves(i)
    if ph == 0:  # first call: the dealer speaks last
        return "knacka" if s == int(d.dealer[i]) else "bud"
    if ph == 1:
        return "stay"
    if ph == 2:
        return legal[-1]  # exchange two cards: exercises the talon
    if ph == 3:  # second call: the seat before forehand speaks last (nobody folded)
        return "knacka" if (s + 1) % p == int(d.forehand[i]) else "bud"
    if ph == 4:
        return legal[0]
    return "show" if (s + 1) % p == int(d.trick_winner[i, 3]) else "bud"
