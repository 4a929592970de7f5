"""Kungsholmskille observations: one seat's information state as a flat int16 vector (KILLE.md L1–L16).

The vector is what the observer has seen, with perfect recall within the current deal, plus
the episode's public bookkeeping (money, pot, deal number).  It never holds another seat's
hand, another seat's discards, the talon order or a folded hand (those stay face down, L6,
L8); after a showdown (L14) the cards shown are public.  Earlier deals of the episode were
played with other decks, so what matters of them is the money they moved (``money``,
``pot``).

Seats are *relative to the observer*: relative seat ``r`` is seat ``(observer + r) mod P``, so
``r = 0`` is the observer and ``r = 1`` its left neighbour, who acts after it (L2).  Rank
blocks are (21,) count vectors in rank order (L1: index 0 = blaren … 20 = kille).  Calls are
−1 (not said / not asked yet), 0 and 1.  With ``P`` players the vector has ``75 + 23 P``
entries (121 for P = 2, 167 for P = 4, 213 for P = 6):

| field        | size | values  | meaning                                                                  |
|--------------|------|---------|--------------------------------------------------------------------------|
| hand         | 21   | 0–2     | own hand, rank counts (kept after a fold: the observer knows it)         |
| discards     | 21   | 0–2     | own discards of this deal (L8; private to the observer)                  |
| played       | 21   | 0–2     | ranks played to the tricks of this deal so far, by anyone (public, L10)  |
| trick_cards  | 4P   | −1–20   | index t·P + r: the rank relative seat r played to trick t (−1: none)     |
| trick_lead   | 4P   | 0–1     | index t·P + r: 1 if relative seat r led trick t (L10)                    |
| trick_winner | 4P   | 0–1     | index t·P + r: 1 if relative seat r won trick t (L10)                    |
| money        | P    | ±32767  | each seat's net money this episode so far: −2 ante (L3), later antes     |
|              |      |         | (L12, L14, L15), pot won and penalty paid or received (L14, L15)         |
| folded       | P    | 0–1     | the seat folded in this deal (L6)                                        |
| call1        | P    | −1–1    | first call (L5): 0 bud, 1 knacka (so 1 marks the first knocker)          |
| fold_call    | P    | −1–1    | fold decision (L6): 0 stay, 1 fold; −1 for the knocker / not asked yet   |
| exchanged    | P    | −1–2    | cards the seat exchanged (L8; public count), −1 before its turn          |
| call2        | P    | −1–1    | second call (L9): 0 bud, 1 knacka (1 marks the second knocker)           |
| show_call    | P    | −1–1    | show calls (L11): 0 bud, 1 show                                          |
| shown        | P    | −1–20   | after a showdown (L14): the card each seat still in showed, else −1      |
| dealer       | P    | 0–1     | one-hot: the dealer of this deal (L2)                                    |
| forehand     | P    | 0–1     | one-hot: the current forehand (L2, moved on by L7)                       |
| to_act       | P    | 0–1     | one-hot: the seat to act; ``to_act[0] = 1`` means "your decision"        |
| phase        | 6    | 0–1     | one-hot: first call, fold, exchange, second call, tricks, show (L5–L11); |
|              |      |         | all zero once the episode is over                                        |
| pot          | 1    | 0–32767 | the pot now (antes for this deal paid; 0 once it went out)               |
| trick        | 1    | 0–4     | the current trick (4 after the fourth)                                   |
| high         | 1    | −1–20   | the highest rank played to the current trick so far (−1: none, L10)     |
| talon        | 1    | 0–32    | cards left in the talon (L4, L8); at most deck size − 5P (L20)           |
| deal         | 1    | 0–999   | deal number within the episode, 0 first (L2: the dealer rotates)         |
| deals_left   | 1    | 0–999   | deals still possible after this one before truncation (L16) or the pot's |
|              |      |         | settlement (L21)                                                         |

dtype: **int16**.  Cards, calls and flags fit int8, but money and the pot outgrow it (a pot
grows by up to P per budrunda, L12, and a penalty equals the pot, L14).  With
``max_deals ≤ 1000`` (:class:`~krypenv.kungsholmskille.config.EnvConfig`) every money value lies
within ±(2 + 1000 + 2·6012), so int16 holds it exactly; ``money`` and ``pot`` are saturated
at ±32767 all the same, as a guard.  Integers keep the vector exact and compact (SB3 casts to
float itself), as Krypkasino's int8 observation does.

:func:`split` returns named views of a vector (or a batch of vectors); :func:`layout` the
slices; :func:`bounds` the Box limits; :func:`encode_into` is the compiled encoder.
"""

from __future__ import annotations

import numpy as np

from krypenv.jit import borrowing
from krypenv.kungsholmskille.cards import DECK_SIZE, HAND_SIZE, N_RANKS
from krypenv.kungsholmskille.engine import kernels

RANK_FIELDS = ("hand", "discards", "played")
TRICK_FIELDS = ("trick_cards", "trick_lead", "trick_winner")
SEAT_FIELDS = ("money", "folded", "call1", "fold_call", "exchanged", "call2", "show_call", "shown", "dealer",
               "forehand", "to_act")  # fmt: skip
N_PHASES = 6  # FIRST_CALL … SHOWING (kernels' phase codes 0–5)
SCALAR_FIELDS = ("pot", "trick", "high", "talon", "deal", "deals_left")
MONEY_CAP = 32767  # saturation of money and pot (never reached with max_deals ≤ 1000)
O_TRICKS = N_RANKS * len(RANK_FIELDS)  # 63
OBS_DTYPE = np.int16


def obs_size(players: int) -> int:
    """Length of the observation vector for ``players`` seats: 75 + 23·P."""
    return O_TRICKS + 4 * players * len(TRICK_FIELDS) + players * len(SEAT_FIELDS) + N_PHASES + len(SCALAR_FIELDS)


def layout(players: int) -> dict[str, slice]:
    """Slice of every named field in the observation vector, in vector order."""
    out: dict[str, slice] = {}
    o = 0
    for name in RANK_FIELDS:
        out[name] = slice(o, o + N_RANKS)
        o += N_RANKS
    for name in TRICK_FIELDS:
        out[name] = slice(o, o + 4 * players)
        o += 4 * players
    for name in SEAT_FIELDS:
        out[name] = slice(o, o + players)
        o += players
    out["phase"] = slice(o, o + N_PHASES)
    o += N_PHASES
    for name in SCALAR_FIELDS:
        out[name] = slice(o, o + 1)
        o += 1
    return out


def split(obs: np.ndarray, players: int) -> dict[str, np.ndarray]:
    """Named views of an observation (…, D): ``split(obs, 4)["hand"]`` etc."""
    return {name: obs[..., s] for name, s in layout(players).items()}


def bounds(players: int, max_deals: int, deck_size: int = DECK_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) int16 vectors of the observation Box; ``max_deals`` is the episode's bound (L16, L21),
    ``deck_size`` the deck's (L20)."""
    lay = layout(players)
    low = np.zeros(obs_size(players), OBS_DTYPE)
    high = np.zeros(obs_size(players), OBS_DTYPE)
    for name in ("hand", "discards", "played"):
        high[lay[name]] = 2
    for name in ("trick_cards", "shown", "high"):
        low[lay[name]], high[lay[name]] = -1, N_RANKS - 1
    for name in ("trick_lead", "trick_winner", "folded", "dealer", "forehand", "to_act", "phase"):
        high[lay[name]] = 1
    for name in ("call1", "fold_call", "call2", "show_call"):
        low[lay[name]], high[lay[name]] = -1, 1
    low[lay["exchanged"]], high[lay["exchanged"]] = -1, 2
    low[lay["money"]], high[lay["money"]] = -MONEY_CAP, MONEY_CAP
    high[lay["pot"]] = MONEY_CAP
    high[lay["trick"]] = 4
    high[lay["talon"]] = deck_size - HAND_SIZE * players
    high[lay["deal"]] = max(1, max_deals - 1)  # ≥ 1: a one-deal episode keeps a non-empty range
    high[lay["deals_left"]] = max(1, max_deals - 1)
    return low, high


@borrowing
def _sat(x: int) -> int:
    """``x`` saturated to ±MONEY_CAP (int16)."""
    return max(-MONEY_CAP, min(MONEY_CAP, x))


@borrowing
def _call(v: int, one: int) -> int:
    """An engine call code as −1 (not said), 1 (it was ``one``) or 0 (the other word)."""
    if v < 0:
        return -1
    return 1 if v == one else 0


@borrowing
def encode_into(row: np.ndarray, cr: np.ndarray, money: np.ndarray, deal_no: int, deals_left: int, ended: bool,
                players: int, observer: int, out: np.ndarray) -> None:
    """Write ``observer``'s observation of a deal record into ``out`` (D,) int16 (layout in the module docstring).

    ``row``/``cr`` are one deal's engine record and cash row (:mod:`krypenv.kungsholmskille.engine.kernels`),
    ``money`` (P,) the seats' net money this episode, ``ended`` says the episode is over.
    Only the observer's own hand and discards are read from the private columns.
    """
    P = players
    out[:] = 0
    h = kernels.HANDS + N_RANKS * observer
    for x in range(N_RANKS):
        out[x] = row[h + x]
    for k in range(2):
        d = row[kernels.DISCARDS + 2 * observer + k]
        if d >= 0:
            out[N_RANKS + d] += 1
    o = O_TRICKS
    for t in range(4):
        lead, won = row[kernels.TRICK_LEAD + t], row[kernels.TRICK_WON + t]
        # TRICK_LEAD of trick t is written when the trick starts; it is meaningful once cards
        # of trick t exist or it is the current trick of the tricks phase
        started = t < row[kernels.TRICK] or (t == row[kernels.TRICK] and row[kernels.PHASE] == kernels.TRICKS)
        for r in range(P):
            s = (observer + r) % P
            c = row[kernels.TRICK_CARDS + kernels.MAXP * t + s]
            out[o + t * P + r] = c
            if c >= 0:
                out[2 * N_RANKS + c] += 1  # played
            if started and lead == s:
                out[o + 4 * P + t * P + r] = 1
            if t < row[kernels.TRICK] and won == s:
                out[o + 8 * P + t * P + r] = 1
    o += 12 * P
    showdown = row[kernels.DONE] != 0 and row[kernels.OUTCOME] == kernels.SHOWDOWN
    actor = row[kernels.TO_ACT]
    for r in range(P):
        s = (observer + r) % P
        out[o + r] = _sat(money[s])
        out[o + P + r] = row[kernels.FOLDED + s]
        out[o + 2 * P + r] = _call(row[kernels.CALL1 + s], 1)  # KNACKA = 1
        out[o + 3 * P + r] = _call(row[kernels.FOLD_CALL + s], 2)  # FOLD = 2, STAY = 3
        out[o + 4 * P + r] = row[kernels.EXCHANGED + s]
        out[o + 5 * P + r] = _call(row[kernels.CALL2 + s], 1)
        out[o + 6 * P + r] = _call(row[kernels.SHOW_CALL + s], 5)  # SHOW = 5, BUD = 0
        out[o + 7 * P + r] = kernels.last_card(row, s) if showdown and not row[kernels.FOLDED + s] else -1
        out[o + 8 * P + r] = 1 if row[kernels.DEALER] == s else 0
        out[o + 9 * P + r] = 1 if row[kernels.FOREHAND] == s else 0
        out[o + 10 * P + r] = 1 if (not ended and actor == s) else 0
    o += 11 * P
    if not ended and row[kernels.PHASE] < N_PHASES:
        out[o + row[kernels.PHASE]] = 1
    o += N_PHASES
    went_out = row[kernels.DONE] != 0 and row[kernels.OUTCOME] != kernels.BUDRUNDA
    out[o] = 0 if went_out else _sat(cr[kernels.POT])
    out[o + 1] = row[kernels.TRICK]
    out[o + 2] = row[kernels.HIGH] if row[kernels.PHASE] == kernels.TRICKS else -1
    out[o + 3] = row[kernels.DECK_LEN] - row[kernels.TPOS]
    out[o + 4] = deal_no
    out[o + 5] = deals_left


@borrowing
def mask_into(row: np.ndarray, observer: int, ended: bool, out: np.ndarray, buf: np.ndarray) -> None:
    """The observer's legal-action mask (279,) int8: the legal actions if it is to act, else all zero."""
    out[:] = 0
    if ended or row[kernels.DONE] or row[kernels.TO_ACT] != observer:
        return
    for k in range(kernels.legal_list(row, buf)):
        out[buf[k]] = 1
