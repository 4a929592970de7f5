"""Observation encoding: one agent's information state as a flat int8 vector.

The vector is the agent's view with perfect recall of public events: its own hand and every
card that has ever been face up (table, set-aside pile, captures), never the deck order or
another hand.  Seats are *relative to the observer*: relative seat ``r`` is seat
``(observer + r) mod P``, so ``r = 0`` is the observer and ``r = 1`` plays right after it
(its left neighbour, K5).  Card blocks are (52,) count vectors in card-code order (K2).
With ``P`` players the vector has ``325 + 7 P + 5`` entries (344 for P = 2, 351 for P = 3,
…, 372 for P = 6):

| field          | size | values   | meaning                                                                   |
|----------------|------|----------|---------------------------------------------------------------------------|
| hand           | 52   | 0–2      | own hand (without the card being played during a capture choice)          |
| table          | 52   | 0–2      | face-up table cards                                                       |
| aside          | 52   | 0–2      | set-aside pile (K8)                                                       |
| seen           | 52   | 0–2      | copies seen so far: own hand + table + aside + all capture piles + the    |
|                |      |          | card being played; ``2 - seen`` is what is still unseen (K1)              |
| playing        | 52   | 0–1      | the card being played while its capture is chosen (one-hot)               |
| chosen         | 52   | 0–2      | table cards fixed so far in that capture (chosen, or common to all        |
|                |      |          | remaining candidates)                                                     |
| sweep          | 13   | 0–1      | played values 2, 3, …, 13, 14 (= A) that would sweep the table (K13)      |
| hand_size      | P    | 0–6      | cards in each relative seat's hand                                        |
| points         | P    | 0–42     | card points (K4) in each relative seat's capture pile                     |
| tabbes         | P    | 0–127    | tabbes of each relative seat (a dubbeltabbe counts two, K14)              |
| team           | P    | 0–1      | 1 for the observer's side (itself, and its partners with teams, K18)      |
| dealer         | P    | 0–1      | one-hot: the dealer                                                       |
| last_capturer  | P    | 0–1      | one-hot: who captured last (all zero if nobody yet)                       |
| to_act         | P    | 0–1      | one-hot: the seat to act; ``to_act[0] = 1`` means "your decision"         |
| deck_left      | 1    | 0–94     | cards still in the deck (at most the deck size − the initial deal)        |
| round          | 1    | 0–11     | round index, 0 = the initial deal's round                                 |
| last_round     | 1    | 0–1      | the deck is empty: this is the last round ("sistan", K7)                  |
| choosing       | 1    | 0–1      | a capture is being chosen (``playing`` and ``chosen`` are in use)         |
| deals_left     | 1    | 0–127    | deals of the match still to play after this one                           |

The layout is the same in every preset and variant (K20–K22); only the highs of the
observation Box change with the deck (:func:`bounds`): card counts ≤ ``copies``, ``points``
≤ ``total_points``, ``deck_left`` ≤ the deck size − the initial deal, ``round`` ≤ rounds − 1
(the table in RULES.md "Variants and presets" lists them per preset).

After the deal ends every hand, ``to_act`` and the mask are zero.  The card being played
and the cards fixed so far are public (the card is face up), so every observer sees them.
:func:`split` returns named views of a vector (or a batch of vectors).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from krypenv.gpu_lean import looped, rolled
from krypenv.jit import borrowing
from krypenv.krypkasino.cards import POINTS
from krypenv.krypkasino.engine import kernels

if TYPE_CHECKING:
    from krypenv.krypkasino.rules import Rules

CARD_FIELDS = ("hand", "table", "aside", "seen", "playing", "chosen")
SEAT_FIELDS = ("hand_size", "points", "tabbes", "team", "dealer", "last_capturer", "to_act")
SCALAR_FIELDS = ("deck_left", "round", "last_round", "choosing", "deals_left")
N_SWEEP = 13  # played values 2..14
O_SWEEP = 52 * len(CARD_FIELDS)  # 312
O_SEATS = O_SWEEP + N_SWEEP  # 325
POINTS8 = POINTS.astype(np.int8)  # card points (K4) as int8, so the pile sums vectorise


def obs_size(players: int) -> int:
    """Length of the observation vector for ``players`` seats."""
    return O_SEATS + len(SEAT_FIELDS) * players + len(SCALAR_FIELDS)


def layout(players: int) -> dict[str, slice]:
    """Slice of every named field in the observation vector."""
    out: dict[str, slice] = {}
    for k, name in enumerate(CARD_FIELDS):
        out[name] = slice(52 * k, 52 * (k + 1))
    out["sweep"] = slice(O_SWEEP, O_SEATS)
    for k, name in enumerate(SEAT_FIELDS):
        out[name] = slice(O_SEATS + k * players, O_SEATS + (k + 1) * players)
    base = O_SEATS + len(SEAT_FIELDS) * players
    for k, name in enumerate(SCALAR_FIELDS):
        out[name] = slice(base + k, base + k + 1)
    return out


def split(obs: np.ndarray, players: int) -> dict[str, np.ndarray]:
    """Named views of an observation (…, D): ``split(obs, 3)["hand"]`` etc."""
    return {name: obs[..., s] for name, s in layout(players).items()}


def bounds(players: int, rules: Rules, deals: int) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) int8 vectors of the observation Box of ``rules`` (its deck and deal: K20, K21)."""
    lay = layout(players)
    high = np.zeros(obs_size(players), np.int8)
    for name in ("hand", "table", "aside", "seen", "chosen"):
        high[lay[name]] = rules.copies
    for name in ("playing", "sweep", "team", "dealer", "last_capturer", "to_act", "last_round", "choosing"):
        high[lay[name]] = 1
    high[lay["hand_size"]] = max(rules.hand_size, rules.later_hand_size)
    high[lay["points"]] = rules.total_points
    high[lay["tabbes"]] = 127
    high[lay["deck_left"]] = max(1, rules.deck_size - players * rules.hand_size - rules.table_size)
    high[lay["round"]] = max(1, rules.rounds - 1)  # ≥ 1: a one-round deal keeps a non-empty range
    high[lay["deals_left"]] = max(1, min(deals - 1, 127))  # ≥ 1: a one-deal episode keeps a non-empty range
    return np.zeros_like(high), high


@borrowing
def encode_into(st: np.ndarray, i: int, players: int, observer: int, choice: np.ndarray, sweep_bits: int,
                side_of: np.ndarray, deals_left: int, ended: bool, out: np.ndarray) -> None:
    """Write ``observer``'s observation of deal ``i`` into ``out`` (D,) int8 (layout in the module docstring).

    ``choice`` is the deal's capture-choice state (:mod:`krypenv.krypkasino.actions`), ``sweep_bits``
    the table's sweeping values, ``side_of`` each seat's team (or itself), ``ended`` says the
    episode is over (nobody is to act any more).  Written as plain loops over 52 cards so
    that they compile to vector instructions.
    """
    P = players
    piles = kernels.piles_at(P)
    tabbes = kernels.tabbes_at(P)
    actor = np.int64(st[i, kernels.TURN])
    pending = np.int64(choice[0])
    choosing = pending >= 0 and not ended
    row = st[i]  # slices indexed by range variables compile to vector code
    hand = row[kernels.HANDS + 52 * observer:kernels.HANDS + 52 * observer + 52]
    table, aside = row[kernels.TABLE:kernels.TABLE + 52], row[kernels.ASIDE:kernels.ASIDE + 52]
    out[:] = 0
    o_hand, o_table, o_aside, o_seen = out[0:52], out[52:104], out[104:156], out[156:208]
    n = looped(52)  # one loop per block, of a count the compiler cannot see: vector copies (gpu_lean.looped)
    for c in range(n):
        o_hand[c] = hand[c]
    for c in range(n):
        o_table[c] = table[c]
    for c in range(n):
        o_aside[c] = aside[c]
    for c in range(n):
        o_seen[c] = hand[c] + table[c] + aside[c]
    for s in range(P):
        pile = row[piles + 52 * s:piles + 52 * s + 52]
        for c in range(n):
            o_seen[c] += pile[c]
    if choosing:
        if observer == actor:
            out[pending] -= 1  # the card being played has left the hand ...
        else:
            out[156 + pending] += 1  # ... and is face up for everyone else
        out[208 + pending] = 1
        for c in range(n):
            out[260 + c] = choice[1 + c]
    for v in range(2, 2 + rolled(13)):
        if (sweep_bits >> v) & 1:
            out[O_SWEEP + v - 2] = 1
    o = O_SEATS
    for r in range(P):
        s = kernels.seat_after(observer, r, P)
        seat_hand = row[kernels.HANDS + 52 * s:kernels.HANDS + 52 * s + 52]
        pile = row[piles + 52 * s:piles + 52 * s + 52]
        n = 0
        pts = 0
        for c in range(rolled(52)):
            n += seat_hand[c]
            pts += pile[c] * POINTS8[c]
        if choosing and s == actor:
            n -= 1
        out[o + r] = n
        out[o + P + r] = pts
        out[o + 2 * P + r] = row[tabbes + s]
        out[o + 3 * P + r] = 1 if side_of[s] == side_of[observer] else 0
        out[o + 4 * P + r] = 1 if row[kernels.DEALER] == s else 0
        out[o + 5 * P + r] = 1 if row[kernels.LAST_CAPTURER] == s else 0
        out[o + 6 * P + r] = 1 if (actor == s and not ended) else 0
    o += 7 * P
    deck_len = kernels.deck_length(st, i)  # 104, or a variant deck's length (K20)
    out[o] = deck_len - row[kernels.POS]
    out[o + 1] = row[kernels.ROUND]
    out[o + 2] = 1 if row[kernels.POS] >= deck_len else 0
    out[o + 3] = 1 if choosing else 0
    out[o + 4] = min(deals_left, 127)
