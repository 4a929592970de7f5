"""Krypkasino's structured seat view: one seat's public information in plain form, with its legal moves.

Rule-based agents read a :class:`SeatView` instead of decoding observation vectors:
``batch.views()`` (:class:`krypenv.agent_api.DecisionBatch`) builds one per decision through
:meth:`krypenv.krypkasino.batch.KrypkasinoBatch.seat_view`, which calls :func:`seat_view` here with the
engine's deals and the env's arrays.  A view
holds the hand, table, set-aside pile and capture piles as (52,) card counts, per-seat hand
sizes, tabbes and scores, the dealer, turn and round, the capture choice in progress, and
``legal_moves``: every legal (card, capture) :data:`Move` still open (K10–K13).
``view.action_for(move)`` turns a chosen move into the next action of the ``Discrete(105)``
protocol (:mod:`krypenv.krypkasino.actions`), which is what :class:`krypenv.agents.base.MoveAgent`
does for its subclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from krypenv.krypkasino.actions import CHOICE_SIZE, actions_to_move
from krypenv.krypkasino.cards import HAND_VALUE, N_CODES, POINTS
from krypenv.krypkasino.engine.captures import (
    hand_sweep_values,
    new_scratch,
    sweep_values_s,
    table_value_key,
)
from krypenv.krypkasino.engine.expansion import (
    legal_captures,
)
from krypenv.krypkasino.rules import Rules

if TYPE_CHECKING:
    from krypenv.krypkasino.engine import DealBatch


__all__ = ["Move", "SeatView", "seat_view"]

Move = tuple[int, np.ndarray]  # (played card code, (52,) int8 counts of the table cards taken; zeros = creep)


@dataclass
class SeatView:
    """One seat's public information at a decision, in plain form (absolute seats 0..P−1, cards as (52,) counts).

    ``hand`` still holds the card being played during a capture choice (``pending``).
    ``legal_moves`` lists every legal (card, capture) move still open: all of them at the
    start of a turn, or those of the pending card that contain the ``fixed`` cards during a
    capture choice.  ``seen`` counts every copy the seat has seen (own hand, table, set-aside
    pile, all capture piles, the card being played), so ``unseen = 2 − seen`` is what lies in
    the other hands and the deck.
    """

    rules: Rules
    seat: int
    hand: np.ndarray
    table: np.ndarray
    aside: np.ndarray
    piles: np.ndarray  # (P, 52) the capture piles, public with perfect recall
    hand_sizes: np.ndarray  # (P,)
    tabbes: np.ndarray  # (P,)
    scores: np.ndarray  # (P,) deal scores so far (K16)
    totals: np.ndarray  # (P,) match scores of earlier deals
    dealer: int
    turn: int
    round: int
    deck_left: int
    last_capturer: int
    pending: int
    fixed: np.ndarray
    legal_moves: list[Move] = field(default_factory=list)

    @property
    def players(self) -> int:
        """Number of seats."""
        return self.rules.players

    @property
    def seen(self) -> np.ndarray:
        """(52,) copies of each card this seat has seen."""
        return (self.hand + self.table + self.aside + self.piles.sum(axis=0)).astype(np.int8)

    @property
    def unseen(self) -> np.ndarray:
        """(52,) copies of each card in other hands or the deck, as far as this seat knows (the rules' deck, K20)."""
        return (self.rules.deck_counts - self.seen).astype(np.int8)

    @property
    def card_points(self) -> np.ndarray:
        """(P,) card points (K4) in each capture pile."""
        return self.piles.astype(np.int64) @ POINTS

    @property
    def last_round(self) -> bool:
        """True in the last round ("sistan", K7): the deck is empty."""
        return self.deck_left == 0

    @property
    def sweep_values(self) -> int:
        """Bitmask (bit v, v = 2..14) of played values that would sweep the table (K13)."""
        return int(sweep_values_s(table_value_key(self.table), new_scratch()))

    @property
    def forced(self) -> bool:
        """True if a sweep is forced on this seat (K13)."""
        return bool(hand_sweep_values(self.hand, self.table))

    def next_seat(self, seat: int | None = None) -> int:
        """The seat that plays after ``seat`` (default: this seat), its left neighbour (K5)."""
        return ((self.seat if seat is None else seat) + 1) % self.players

    def action_for(self, move: Move) -> int:
        """The next action that plays ``move`` from the current choice state; ValueError if not legal."""
        choice = np.empty(CHOICE_SIZE, np.int8)
        choice[0], choice[1:] = self.pending, self.fixed
        card, capture = move
        actions = actions_to_move(self.table, choice, int(card), capture, forced=self.pending < 0 and self.forced)
        if not actions:
            raise ValueError("that move needs no further action")
        return actions[0]


def seat_view(deals: DealBatch, i: int, seat: int, choice: np.ndarray, totals: np.ndarray, over: bool) -> SeatView:
    """The :class:`SeatView` of ``seat`` in deal ``i``, with its legal moves if it is to act.

    ``choice`` is the env's (53,) capture-choice row, ``totals`` its (P,) match totals with
    penalties, ``over`` whether its episode has ended.
    """
    d = deals
    pending = int(choice[0])
    hand = d.hands[i, seat].copy()
    table = d.table[i].copy()
    scores = d.scores_of(i)
    view = SeatView(
        rules=d.rules, seat=seat, hand=hand, table=table, aside=d.aside[i].copy(), piles=d.piles[i].copy(),
        hand_sizes=d.hands[i].sum(axis=1).astype(np.int64), tabbes=d.tabbes[i].astype(np.int64), scores=scores,
        totals=np.array(totals, copy=True), dealer=int(d.dealer[i]), turn=int(d.turn[i]),
        round=int(d.round[i]), deck_left=int(d.deck_len[i]) - int(d.pos[i]), last_capturer=int(d.last_capturer[i]),
        pending=pending, fixed=choice[1:].copy(),
    )
    if not d.done[i] and not over and int(d.turn[i]) == seat:
        view.legal_moves = _legal_moves(hand, table, pending, choice[1:])
    return view


def _legal_moves(hand: np.ndarray, table: np.ndarray, pending: int, fixed: np.ndarray) -> list[Move]:
    """Legal moves of a hand on a table (K11–K13), or of the pending card containing ``fixed``."""
    forced = hand_sweep_values(hand, table)
    cards = [pending] if pending >= 0 else [c for c in range(N_CODES)
                                             if hand[c] and (not forced or (forced >> HAND_VALUE[c]) & 1)]
    moves: list[Move] = []
    for card in cards:
        caps = legal_captures(hand, table, int(card))
        if caps.shape[0] == 0:
            moves.append((int(card), np.zeros(N_CODES, np.int8)))
        for cap in caps:
            if pending < 0 or (cap >= fixed).all():
                moves.append((int(card), cap))
    return moves
