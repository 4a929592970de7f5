"""Compiled per-deal kernels of Kungsholmskille: dealing, legal moves, move checks, stepping (L4–L15).

A batch of N deals is two arrays: ``st`` int16 (N, WIDTH), one contiguous *record* per deal,
and ``cash`` int32 (N, CASH_WIDTH), its money columns (a pot can grow over many budrundor,
L16, so money lives in int32).  The layout is fixed for up to MAXP = 6 seats whatever the
player count (seats ≥ P are unused), so every column is a compile-time constant.  −1 means
"none / not yet" wherever a seat, rank or call is stored.

| columns (st)          | meaning                                                            |
|-----------------------|--------------------------------------------------------------------|
| DECK … +42            | deck order, rank indices, dealt from index 0 (L4); a smaller deck  |
|                       | (L20) fills the first DECK_LEN slots, the rest hold −1             |
| TPOS                  | deck index of the talon's front card (L4, L8)                      |
| DEALER, FOREHAND      | dealer seat; current forehand (dealer+1, moved on by L7)           |
| TO_ACT, PHASE, DONE   | seat to act (−1 when done); phase code; 1 once finished            |
| N_IN                  | players still in (not folded)                                      |
| START                 | seat that opened the current round of decisions; the round ends    |
|                       | when the turn would come back to it (forehand / knocker / the      |
|                       | winner of trick 4)                                                 |
| KNOCKER1, KNOCKER2    | who knocked in the first (L5) / second (L9) call                   |
| TRICK, N_PLAYED       | current trick 0–3 (4 after the last); cards played to it           |
| HIGH, CUR_WIN         | highest rank in the current trick; the seat that played it last    |
| SHOWER                | the first to say show (L11)                                        |
| OUTCOME, WINNER       | outcome code (−1 until done); who took the pot                     |
| N_MOVES               | moves made so far                                                  |
| DECK_LEN              | cards in this deal's deck: 42, or 2·ranks (L20); the talon is      |
|                       | deck[TPOS:DECK_LEN]                                                |
| LAST                  | 1 if this is its pot's last deal: a budrunda settles the pot (L21) |
| POT_DEAL              | the deal's number within its pot, 0 first (L21)                    |
| HANDS + 21·s … +21    | seat s's hand as rank counts                                       |
| FOLDED + s            | 1 if seat s folded (L6)                                            |
| EXCHANGED + s         | cards seat s exchanged (0 = stand; public), −1 before its turn     |
| DISCARDS + 2·s … +2   | the ranks seat s discarded (private to s), −1 if none              |
| CALL1 + s, CALL2 + s  | what seat s said in the first / second call: BUD, KNACKA or −1     |
| FOLD_CALL + s         | FOLD or STAY, −1 if not asked (the knocker, or no knock)           |
| SHOW_CALL + s         | BUD or SHOW in the show calls (L11), −1 if not asked               |
| TRICK_LEAD + t        | who led trick t                                                    |
| TRICK_WON + t         | who won trick t                                                    |
| TRICK_CARDS + 6·t + s | the rank seat s played to trick t                                  |
| HIST_ACTION + m       | action index of move m                                             |
| HIST_SEAT + m         | seat that made move m                                              |

| columns (cash) | meaning                                                          |
|----------------|------------------------------------------------------------------|
| POT            | the pot at the start of the deal, antes for it already paid      |
| PENALTY        | what the shower paid the winner (L14)                            |
| POT_NEXT       | the next deal's starting pot (L18)                               |
| MONEY + s      | seat s's money change from this deal's ending (L18)              |
| ANTES + s      | what seat s pays into the next deal's pot (L12, L14, L15)        |

The cash results are written when the deal ends.  The batch drivers that loop these per-deal
functions over a batch are in :mod:`krypenv.kungsholmskille.engine.drivers`.
"""

from __future__ import annotations

import numpy as np

from krypenv.jit import borrowing
from krypenv.kungsholmskille.actions import (
    BUD,
    DISCARD1,
    DISCARD2,
    FOLD,
    KNACKA,
    N_ACTIONS,
    PAIR_X,
    PAIR_Y,
    PLAY,
    SHOW,
    STAND,
    STAY,
    pair_index,
)  # fmt: skip
from krypenv.rng import draw_deck_into, rand_float

MAXP = 6
MAX_MOVES = 9 * MAXP - 1  # the longest deal, see Rules.max_moves

# Phases (PHASE column)
FIRST_CALL, FOLDING, EXCHANGE, SECOND_CALL, TRICKS, SHOWING, FINISHED = range(7)
# Outcomes (OUTCOME column)
NO_OUTCOME, BUDRUNDA, WALKOVER, SHOWDOWN, SETTLED = -1, 0, 1, 2, 3
# Move check results
OK, DEAL_OVER, NO_SUCH_ACTION, WRONG_KIND, NOT_HELD, MUST_OVERTAKE, MUST_LOWEST = range(7)

# Columns of st (see the module docstring)
DECK = 0
(TPOS, DEALER, FOREHAND, TO_ACT, PHASE, DONE, N_IN, START, KNOCKER1, KNOCKER2, TRICK, N_PLAYED, HIGH, CUR_WIN,
 SHOWER, OUTCOME, WINNER, N_MOVES) = range(42, 60)  # fmt: skip
DECK_LEN, LAST, POT_DEAL = 60, 61, 62  # L20, L21 (column 63 is free)
HANDS = 64
FOLDED = HANDS + 21 * MAXP
EXCHANGED = FOLDED + MAXP  # from here to END every column starts at −1
DISCARDS = EXCHANGED + MAXP
CALL1 = DISCARDS + 2 * MAXP
FOLD_CALL = CALL1 + MAXP
CALL2 = FOLD_CALL + MAXP
SHOW_CALL = CALL2 + MAXP
TRICK_LEAD = SHOW_CALL + MAXP
TRICK_WON = TRICK_LEAD + 4
TRICK_CARDS = TRICK_WON + 4
HIST_ACTION = TRICK_CARDS + 4 * MAXP
HIST_SEAT = HIST_ACTION + MAX_MOVES
END = HIST_SEAT + MAX_MOVES
WIDTH = (END + 31) // 32 * 32  # whole 64-byte cache lines
# Columns of cash
POT, PENALTY, POT_NEXT = 0, 1, 2
MONEY = 3
ANTES = MONEY + MAXP
CASH_WIDTH = 16
assert ANTES + MAXP <= CASH_WIDTH


# --------------------------------------------------------------------------- one deal
@borrowing
def next_in(row: np.ndarray, players: int, s: int) -> int:
    """The nearest seat after ``s``, clockwise, that has not folded."""
    t = s + 1 if s + 1 < players else 0
    while row[FOLDED + t]:
        t = t + 1 if t + 1 < players else 0
    return t


@borrowing
def reset_row(row: np.ndarray, cr: np.ndarray, players: int, deck: np.ndarray, dealer: int, pot: int,
              deal: int, last: int) -> None:
    """Start a deal: L2 forehand = dealer+1, L4 deal one card at a time clockwise from forehand.

    ``deck`` holds 42 cards or a smaller deck (L20); ``deal`` is the deal's number in its pot and
    ``last`` = 1 marks the pot's last deal (L21).
    """
    n_cards = deck.shape[0]
    for k in range(n_cards):  # deck may be these very columns (an env shuffles in place)
        row[DECK + k] = deck[k]
    for k in range(n_cards, 42):
        row[DECK + k] = -1
    row[DECK + 42:] = 0
    row[EXCHANGED:END] = -1
    row[DECK_LEN] = n_cards
    row[LAST] = last
    row[POT_DEAL] = deal
    fh = (dealer + 1) % players
    for k in range(5 * players):  # L4: card k goes to seat forehand + k
        row[HANDS + 21 * ((fh + k) % players) + deck[k]] += 1
    row[TPOS] = 5 * players
    row[DEALER] = dealer
    row[FOREHAND] = fh
    row[TO_ACT] = fh
    row[START] = fh
    row[PHASE] = FIRST_CALL
    row[N_IN] = players
    for c in (KNOCKER1, KNOCKER2, HIGH, CUR_WIN, SHOWER, OUTCOME, WINNER):
        row[c] = -1
    cr[:] = 0
    cr[POT] = pot


@borrowing
def legal_list(row: np.ndarray, buf: np.ndarray) -> int:
    """Write the legal actions of the seat to act into ``buf`` in index order; return how many (0 when done)."""
    ph = row[PHASE]
    if ph == FIRST_CALL or ph == SECOND_CALL:  # L5, L9
        buf[0] = BUD
        buf[1] = KNACKA
        return 2
    if ph == FOLDING:  # L6
        buf[0] = FOLD
        buf[1] = STAY
        return 2
    if ph == SHOWING:  # L11
        buf[0] = BUD
        buf[1] = SHOW
        return 2
    h = HANDS + 21 * row[TO_ACT]
    n = 0
    if ph == EXCHANGE:  # L8: stand, one card, or two (two copies of a rank need both held)
        buf[0] = STAND
        n = 1
        for x in range(21):
            if row[h + x]:
                buf[n] = DISCARD1 + x
                n += 1
        for x in range(21):
            c = row[h + x]
            if c:
                base = DISCARD2 + pair_index(x, x)
                if c >= 2:
                    buf[n] = base
                    n += 1
                for y in range(x + 1, 21):
                    if row[h + y]:
                        buf[n] = base + (y - x)
                        n += 1
        return n
    if ph == TRICKS:  # L10
        lo = 0 if row[N_PLAYED] == 0 else row[HIGH]  # the leader plays any card
        for x in range(lo, 21):
            if row[h + x]:
                buf[n] = PLAY + x
                n += 1
        if n == 0:  # nothing reaches the highest so far: the lowest card
            for x in range(21):
                if row[h + x]:
                    buf[0] = PLAY + x
                    return 1
        return n
    return 0


@borrowing
def check(row: np.ndarray, a: int) -> int:
    """Why action ``a`` is illegal for the seat to act, or OK (L5–L11)."""
    if row[DONE]:
        return DEAL_OVER
    if a < 0 or a >= N_ACTIONS:
        return NO_SUCH_ACTION
    ph = row[PHASE]
    if ph == FIRST_CALL or ph == SECOND_CALL:
        return OK if a == BUD or a == KNACKA else WRONG_KIND
    if ph == FOLDING:
        return OK if a == FOLD or a == STAY else WRONG_KIND
    if ph == SHOWING:
        return OK if a == BUD or a == SHOW else WRONG_KIND
    h = HANDS + 21 * row[TO_ACT]
    if ph == EXCHANGE:
        if a == STAND:
            return OK
        if DISCARD1 <= a < DISCARD2:
            return OK if row[h + a - DISCARD1] else NOT_HELD
        if DISCARD2 <= a < PLAY:
            x, y = PAIR_X[a - DISCARD2], PAIR_Y[a - DISCARD2]
            if x == y:
                return OK if row[h + x] >= 2 else NOT_HELD
            return OK if row[h + x] and row[h + y] else NOT_HELD
        return WRONG_KIND
    # TRICKS, L10
    if a < PLAY:
        return WRONG_KIND
    x = a - PLAY
    if not row[h + x]:
        return NOT_HELD
    if row[N_PLAYED] == 0 or x >= row[HIGH]:
        return OK
    for y in range(row[HIGH], 21):
        if row[h + y]:
            return MUST_OVERTAKE
    for y in range(x):
        if row[h + y]:
            return MUST_LOWEST
    return OK


@borrowing
def _finish(row: np.ndarray, outcome: int, winner: int) -> None:
    """Mark the deal done with its outcome and pot winner."""
    row[PHASE] = FINISHED
    row[DONE] = 1
    row[TO_ACT] = -1
    row[OUTCOME] = outcome
    row[WINNER] = winner


@borrowing
def settle(row: np.ndarray, cr: np.ndarray, players: int) -> None:
    """L21: a budrunda in the pot's last deal: the pot is split equally, the remainder one krona each clockwise
    from the dealer's left neighbour; a new pot follows, every player antes 2 (L3)."""
    pot = cr[POT]
    share = pot // players
    rest = pot - share * players
    first = (row[DEALER] + 1) % players
    for k in range(players):
        s = (first + k) % players
        cr[MONEY + s] = share + (1 if k < rest else 0)
        cr[ANTES + s] = 2
    cr[POT_NEXT] = 2 * players
    _finish(row, SETTLED, -1)


@borrowing
def budrunda(row: np.ndarray, cr: np.ndarray, players: int) -> None:
    """L12: the pot stays; antes 1 each if nobody folded, else 1 per folder.  In the pot's last deal: L21."""
    if row[LAST]:
        settle(row, cr, players)
        return
    anyone_folded = row[N_IN] < players
    total = 0
    for s in range(players):
        a = (1 if row[FOLDED + s] else 0) if anyone_folded else 1
        cr[ANTES + s] = a
        total += a
    cr[POT_NEXT] = cr[POT] + total
    _finish(row, BUDRUNDA, -1)


@borrowing
def walkover(row: np.ndarray, cr: np.ndarray, players: int, knocker: int) -> None:
    """L15: the knocker takes the pot; every player antes 1."""
    cr[MONEY + knocker] = cr[POT]
    for s in range(players):
        cr[ANTES + s] = 1
    cr[POT_NEXT] = players
    _finish(row, WALKOVER, knocker)


@borrowing
def last_card(row: np.ndarray, s: int) -> int:
    """The lowest rank seat ``s`` holds (its only card after four tricks)."""
    for x in range(21):
        if row[HANDS + 21 * s + x]:
            return x
    return -1


@borrowing
def showdown(row: np.ndarray, cr: np.ndarray, players: int, shower: int) -> None:
    """L13/L14: the shower wins below everyone, else the lowest other, last in the L13 order, wins and is paid the
    penalty."""
    row[SHOWER] = shower
    r = last_card(row, shower)
    low = 99
    for t in range(players):
        if t != shower and not row[FOLDED + t]:
            low = min(low, last_card(row, t))
    pot = cr[POT]
    if low > r:
        winner, penalty = shower, 0
    else:
        first = row[TRICK_WON + 3]  # L13: clockwise from the winner of the fourth trick
        winner = -1
        for k in range(players):
            t = (first + k) % players
            if t != shower and not row[FOLDED + t] and last_card(row, t) == low:
                winner = t  # the last one in the order wins
        penalty = pot
    cr[PENALTY] = penalty
    cr[MONEY + winner] += pot + penalty
    cr[MONEY + shower] -= penalty
    two = row[N_IN] == 2  # L14 two at the showdown
    total = 0
    for t in range(players):
        lost = not row[FOLDED + t] and t != winner
        a = (3 if lost else 1) if two else (2 if lost else 0)
        cr[ANTES + t] = a
        total += a
    cr[POT_NEXT] = total  # the pot went out
    _finish(row, SHOWDOWN, winner)


@borrowing
def _draw(row: np.ndarray, s: int) -> None:
    """L8: seat ``s`` draws the talon's front card."""
    row[HANDS + 21 * s + row[DECK + row[TPOS]]] += 1
    row[TPOS] += 1


@borrowing
def apply(row: np.ndarray, cr: np.ndarray, players: int, a: int) -> None:
    """Make the checked legal action ``a`` for the seat to act and move the deal on (L5–L15)."""
    s = np.int64(row[TO_ACT])
    m = np.int64(row[N_MOVES])
    row[HIST_ACTION + m] = a
    row[HIST_SEAT + m] = s
    row[N_MOVES] = m + 1
    ph = row[PHASE]
    if ph == FIRST_CALL:  # L5: every player is still in
        row[CALL1 + s] = a
        nxt = s + 1 if s + 1 < players else 0
        if a == KNACKA:  # L6: folds from the knocker's left neighbour round to its right
            row[KNOCKER1] = s
            row[PHASE] = FOLDING
            row[START] = s
            row[TO_ACT] = nxt
        elif nxt == row[START]:
            budrunda(row, cr, players)
        else:
            row[TO_ACT] = nxt
    elif ph == FOLDING:
        row[FOLD_CALL + s] = a
        if a == FOLD:
            row[FOLDED + s] = 1
            row[N_IN] -= 1
        nxt = s + 1 if s + 1 < players else 0
        if nxt != row[START]:
            row[TO_ACT] = nxt
        elif row[N_IN] == 1:
            walkover(row, cr, players, np.int64(row[KNOCKER1]))  # L15
        else:
            fh = np.int64(row[FOREHAND])
            if row[FOLDED + fh]:  # L7: forehand moves on
                fh = next_in(row, players, fh)
                row[FOREHAND] = fh
            row[PHASE] = EXCHANGE
            row[START] = fh
            row[TO_ACT] = fh
    elif ph == EXCHANGE:  # L8
        h = HANDS + 21 * s
        if a == STAND:
            row[EXCHANGED + s] = 0
        elif a < DISCARD2:
            x = a - DISCARD1
            row[h + x] -= 1
            row[DISCARDS + 2 * s] = x
            row[EXCHANGED + s] = 1
            _draw(row, s)
        else:
            x, y = PAIR_X[a - DISCARD2], PAIR_Y[a - DISCARD2]
            row[h + x] -= 1
            row[h + y] -= 1
            row[DISCARDS + 2 * s] = x
            row[DISCARDS + 2 * s + 1] = y
            row[EXCHANGED + s] = 2
            _draw(row, s)
            _draw(row, s)
        nxt = next_in(row, players, s)
        if nxt == row[START]:
            row[PHASE] = SECOND_CALL  # L9 from forehand
        row[TO_ACT] = nxt
    elif ph == SECOND_CALL:  # L9
        row[CALL2 + s] = a
        if a == KNACKA:  # L10: forehand leads the first trick
            row[KNOCKER2] = s
            row[PHASE] = TRICKS
            row[TRICK] = 0
            row[N_PLAYED] = 0
            fh = row[FOREHAND]
            row[TRICK_LEAD] = fh
            row[START] = fh
            row[TO_ACT] = fh
        else:
            nxt = next_in(row, players, s)
            if nxt == row[START]:
                budrunda(row, cr, players)
            else:
                row[TO_ACT] = nxt
    elif ph == TRICKS:  # L10
        x = a - PLAY
        t = np.int64(row[TRICK])
        row[HANDS + 21 * s + x] -= 1
        row[TRICK_CARDS + MAXP * t + s] = x
        if row[N_PLAYED] == 0 or x >= row[HIGH]:  # ties go to the one who played it last
            row[HIGH] = x
            row[CUR_WIN] = s
        row[N_PLAYED] += 1
        if row[N_PLAYED] < row[N_IN]:
            row[TO_ACT] = next_in(row, players, s)
        else:
            w = row[CUR_WIN]
            row[TRICK_WON + t] = w
            row[TRICK] = t + 1
            row[N_PLAYED] = 0
            row[HIGH] = -1
            row[START] = w
            row[TO_ACT] = w
            if t + 1 < 4:
                row[TRICK_LEAD + t + 1] = w  # the winner leads the next trick
            else:
                row[PHASE] = SHOWING  # L11 from the winner of the fourth trick
    else:  # SHOWING, L11
        row[SHOW_CALL + s] = a
        if a == SHOW:
            showdown(row, cr, players, s)
        else:
            nxt = next_in(row, players, s)
            if nxt == row[START]:
                budrunda(row, cr, players)
            else:
                row[TO_ACT] = nxt


@borrowing
def play_random_row(row: np.ndarray, cr: np.ndarray, players: int, u: float, buf: np.ndarray) -> None:
    """Make a uniformly random legal move (chosen by one uniform ``u``)."""
    n = legal_list(row, buf)
    apply(row, cr, players, buf[min(int(u * n), n - 1)])


@borrowing
def play_deals_one(st: np.ndarray, cash: np.ndarray, rng: np.ndarray, i: int, players: int, deals: int,
                   buf: np.ndarray, u: np.ndarray) -> int:
    """Deal ``deals`` standard deals in turn in row ``i`` from stream ``rng[i]`` (dealer P − 1, pot 2P, L2–L4) and
    play each out by uniformly random legal moves (:func:`play_random_row`); return the moves made.  The engine
    benchmark's unit of work, the same on CPU and CUDA threads (``buf``: a legal list; ``u``: 41 uniforms)."""
    made = 0
    row, cr = st[i], cash[i]
    for _ in range(deals):
        deck = row[DECK:DECK + 42]
        draw_deck_into(rng, i, deck, 21, u)
        reset_row(row, cr, players, deck, players - 1, 2 * players, 0, 0)
        while not row[DONE]:
            play_random_row(row, cr, players, rand_float(rng, i), buf)
            made += 1
    return made
