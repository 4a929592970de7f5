"""What one Kungsholmskille seat knows, in plain form: :class:`SeatView` (KILLE.md L1–L16).

``batch.seat_view(i, seat)`` of a :class:`krypenv.kungsholmskille.batch.KungsholmskilleBatch` (and
``batch.views()`` of a :class:`krypenv.agent_api.DecisionBatch`) builds one with :func:`seat_view`
from the engine's deals and the env's episode row: the same information as the seat's observation vector
(:mod:`krypenv.kungsholmskille.observation`), with absolute seats and named fields, so that
rule-based agents and interfaces never decode tensors.  It holds the seat's **public
information only**: its own hand and its own discards (L8), everything said and played at
the table (calls, folds, exchanged counts, trick cards, L5–L11), the money of the episode so
far and the pot; never another seat's hand or discards, nor the talon order.

| field            | meaning                                                                     |
|------------------|-----------------------------------------------------------------------------|
| seat, players    | the viewing seat (absolute) and the player count (L2)                       |
| phase            | ``"first call"``, ``"fold"``, ``"exchange"``, ``"second call"``, ``"tricks"``, |
|                  | ``"show"``, ``"done"`` (L5–L11)                                             |
| to_act           | the seat to act (−1 once the deal or episode is over)                       |
| hand             | (21,) own hand as rank counts (L1)                                          |
| legal_moves      | the seat's legal moves as L17 strings (empty unless it is to act)           |
| pot              | the pot of this deal, antes paid (L3, L12)                                  |
| money            | (P,) each seat's net money in the episode so far (L3, L12, L14, L15)        |
| folded           | (P,) bool, the seat folded in this deal (L6)                                |
| call1, fold_call, call2, show_call | (P,) what each seat said (L17 word) or None         |
| exchanged        | (P,) cards each seat exchanged (0 = stand), −1 before its turn (L8)         |
| discards         | (21,) own discards of this deal as rank counts (L8)                         |
| tricks           | per trick started: the (seat, rank) plays in play order (L10)               |
| trick_winners    | (4,) who won each finished trick, −1 otherwise                              |
| trick, high      | the current trick (0–3, 4 after the fourth) and its highest rank (−1: none) |
| forehand, dealer | the current forehand (L2, L7) and the dealer                                |
| deal             | the deal number within the episode (0 first)                                |
| talon            | cards left in the talon (L4, L8)                                            |
| deck_counts      | (21,) copies of each rank in this deck: 2 for the lowest ``ranks``, else 0  |
|                  | (L1, L20)                                                                   |
| last_deal        | this deal is its pot's last: a budrunda settles the pot (L21)               |

Derived: ``in_play`` (seats still in), ``n_in``, ``played`` (ranks played by anyone),
``seen`` (own hand + own discards + played), ``unseen`` (deck_counts − seen per rank: the cards
that may lie in the other hands or the talon), ``current_trick`` and ``action_for(move)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from krypenv.kungsholmskille.actions import CALL_WORDS, action_name, parse_move
from krypenv.kungsholmskille.cards import N_COPIES, N_RANKS
from krypenv.kungsholmskille.config import E_DEAL, E_MONEY, E_OVER, RUNNING
from krypenv.kungsholmskille.engine import kernels

if TYPE_CHECKING:
    from krypenv.kungsholmskille.engine import DealBatch


__all__ = ["PHASES", "SeatView", "seat_view"]

PHASES = ("first call", "fold", "exchange", "second call", "tricks", "show", "done")


@dataclass(frozen=True)
class SeatView:
    """One seat's public information in one env (see the module docstring)."""

    seat: int
    players: int
    phase: str
    to_act: int
    hand: np.ndarray
    legal_moves: list[str]
    legal_actions: list[int]
    pot: int
    money: np.ndarray
    folded: np.ndarray
    call1: list[str | None]
    fold_call: list[str | None]
    call2: list[str | None]
    show_call: list[str | None]
    exchanged: np.ndarray
    discards: np.ndarray
    tricks: list[list[tuple[int, int]]]
    trick_winners: np.ndarray
    trick: int
    high: int
    forehand: int
    dealer: int
    deal: int
    talon: int
    deck_counts: np.ndarray = field(default_factory=lambda: np.full(N_RANKS, N_COPIES, np.int64))
    last_deal: bool = False
    _played: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(N_RANKS, np.int64))

    @property
    def in_play(self) -> list[int]:
        """The seats still in this deal (not folded, L6), in seat order."""
        return [s for s in range(self.players) if not self.folded[s]]

    @property
    def n_in(self) -> int:
        """How many players are still in."""
        return len(self.in_play)

    @property
    def played(self) -> np.ndarray:
        """(21,) ranks played to the tricks of this deal so far, by anyone (public, L10)."""
        return self._played.copy()

    @property
    def seen(self) -> np.ndarray:
        """(21,) cards this seat has seen: its hand, its discards and every card played."""
        return self.hand + self.discards + self._played

    @property
    def unseen(self) -> np.ndarray:
        """(21,) cards it has not seen (of ``deck_counts``, L1, L20): in other hands, their discards or the talon."""
        return self.deck_counts - self.seen

    @property
    def current_trick(self) -> list[tuple[int, int]]:
        """The (seat, rank) plays of the trick in progress, in play order (empty between tricks)."""
        return self.tricks[self.trick] if self.phase == "tricks" and self.trick < len(self.tricks) else []

    def action_for(self, move: str) -> int:
        """The action index of a legal L17 move string; ValueError if it is not legal now."""
        a = parse_move(move)
        if a not in self.legal_actions:
            raise ValueError(f"{move!r} is not legal for seat {self.seat} now; legal: {', '.join(self.legal_moves)}")
        return a


def _word(code: int) -> str | None:
    """An engine call code as its L17 word (None: not said)."""
    return None if code < 0 else CALL_WORDS[code]


def seat_view(deals: DealBatch, i: int, seat: int, episode: np.ndarray) -> SeatView:
    """The :class:`SeatView` of absolute seat ``seat`` in deal ``i``; ``episode``: the env's episode row (E_ layout)."""
    P = deals.players
    if not 0 <= seat < P:
        raise ValueError(f"seat must be 0..{P - 1}, got {seat}")
    row, cr = deals.state[i], deals.cash[i]
    running = episode[E_OVER] == RUNNING and not row[kernels.DONE]
    hand = row[kernels.HANDS + N_RANKS * seat:kernels.HANDS + N_RANKS * (seat + 1)].astype(np.int64)
    discards = np.zeros(N_RANKS, np.int64)
    for d in row[kernels.DISCARDS + 2 * seat:kernels.DISCARDS + 2 * seat + 2]:
        if d >= 0:
            discards[d] += 1
    played = np.zeros(N_RANKS, np.int64)
    tricks: list[list[tuple[int, int]]] = []
    cur = int(row[kernels.TRICK])
    for t in range(min(cur + 1, 4)):
        cards = row[kernels.TRICK_CARDS + kernels.MAXP * t:kernels.TRICK_CARDS + kernels.MAXP * t + P]
        if not (cards >= 0).any() and t == cur and row[kernels.PHASE] != kernels.TRICKS:
            break
        lead = int(row[kernels.TRICK_LEAD + t])
        order = [(lead + k) % P for k in range(P)] if lead >= 0 else list(range(P))
        plays = [(s, int(cards[s])) for s in order if cards[s] >= 0]
        for _, c in plays:
            played[c] += 1
        tricks.append(plays)
    legal: list[int] = []
    if running and row[kernels.TO_ACT] == seat:
        legal = deals.legal_actions(i)
    winners = np.array([int(row[kernels.TRICK_WON + t]) if t < cur else -1 for t in range(4)], np.int64)
    went_out = row[kernels.DONE] and row[kernels.OUTCOME] != kernels.BUDRUNDA
    return SeatView(
        seat=seat, players=P, phase=PHASES[min(int(row[kernels.PHASE]), len(PHASES) - 1)],
        to_act=int(row[kernels.TO_ACT]) if running else -1, hand=hand,
        legal_moves=[action_name(a) for a in legal], legal_actions=legal,
        pot=0 if went_out else int(cr[kernels.POT]), money=episode[E_MONEY:E_MONEY + P].copy(),
        folded=row[kernels.FOLDED:kernels.FOLDED + P].astype(bool),
        call1=[_word(int(c)) for c in row[kernels.CALL1:kernels.CALL1 + P]],
        fold_call=[_word(int(c)) for c in row[kernels.FOLD_CALL:kernels.FOLD_CALL + P]],
        call2=[_word(int(c)) for c in row[kernels.CALL2:kernels.CALL2 + P]],
        show_call=[_word(int(c)) for c in row[kernels.SHOW_CALL:kernels.SHOW_CALL + P]],
        exchanged=row[kernels.EXCHANGED:kernels.EXCHANGED + P].astype(np.int64), discards=discards, tricks=tricks,
        trick_winners=winners, trick=cur, high=int(row[kernels.HIGH]) if row[kernels.PHASE] == kernels.TRICKS else -1,
        forehand=int(row[kernels.FOREHAND]), dealer=int(row[kernels.DEALER]), deal=int(episode[E_DEAL]),
        talon=int(row[kernels.DECK_LEN] - row[kernels.TPOS]), deck_counts=deals.rules.deck_counts,
        last_deal=bool(row[kernels.LAST]), _played=played)

