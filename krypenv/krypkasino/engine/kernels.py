"""Compiled per-deal kernels: dealing, move checking, stepping and random play (K5–K15).

A batch of N deals is one int8 array ``st`` of shape (N, W): row i is deal i's whole state,
one contiguous *record* whose columns are laid out below (P = players).  Every value fits
in int8: card counts 0–2, codes 0–51, positions ≤ 104, tabbes per seat ≤ 94.

| columns                   | field         | meaning                                          |
|---------------------------|---------------|--------------------------------------------------|
| DECK … +104               | deck          | deck order, card codes, dealt from index 0 (K6); |
|                           |               | a smaller variant deck fills the first DECK_LEN  |
| TABLE … +52               | table         | face-up table cards (counts)                     |
| ASIDE … +52               | aside         | set-aside pile (K8)                              |
| HIST_CARD … +104          | hist_card     | card played at each move, −1 after the last      |
| HIST_TAKEN … +104         | hist_taken    | table cards each move captured (0: it crept)     |
| CAP_LOG … +104            | cap_log       | captured table cards of all moves, in order      |
| POS                       | pos           | next deck index to deal                          |
| TURN, DEALER, ROUND       |               | seat to play, dealer seat, round (0 = first)     |
| LAST_CAPTURER, TAKER      |               | −1 until someone captures / takes the rest (K15) |
| DONE                      | done          | 1 once the deal is finished                      |
| N_MOVES, IN_HANDS         |               | cards played so far, cards in all hands          |
| N_LOGGED                  | n_logged      | entries used in cap_log                          |
| DECK_LEN                  | deck_len      | cards in this deal's deck (104; less, K20)       |
| HANDS … +52·P             | hands         | seat s's hand at HANDS + 52·s                    |
| piles_at(P) … +52·P       | piles         | seat s's capture pile                            |
| tabbes_at(P) … +P         | tabbes        | tabbes per seat, a dubbeltabbe counting two      |

Keeping a deal in one record means one array to pass (numba unboxes and reference-counts
one array, not twenty) and one contiguous stream of memory per deal.  Batch drivers come in
twins: ``*_par`` splits the batch into chunks over numba's threads (``prange``), ``*_ser``
loops in one thread for small batches; both run the same per-deal functions over a range
of deals (``_*_range``), so one deal and 4096 deals run the same rules code.  Chunk ``k``
uses row ``k`` of the caller's capture-search scratch ``scr``, so the hot path allocates
nothing.  (The per-deal work stays in functions called from the ``prange`` bodies: numba's
parfor passes mis-compiled it when it was written out inside them.)
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from krypenv.bits import nth_set_bit, popcount, trailing_zeros
from krypenv.gpu_lean import fresh, rolled
from krypenv.jit import borrowing, counted
from krypenv.krypkasino.cards import HAND_VALUE, POINTS
from krypenv.krypkasino.engine.captures import (
    card_mask_into,
    hand_sweep_values_k,
    hand_sweep_values_s,
    hand_value_bits,
    is_maximal_capture_s,
    maximal_captures_k,
    subset_sums,
    table_value_key,
    uniforms_of,
)
from krypenv.krypkasino.engine.expansion import (
    candidate_into,
    n_candidates,
)
from krypenv.rng import draw_deck_into, rand_float

# Move check results; krypenv.krypkasino.engine.state.MOVE_ERRORS words them.
OK, DEAL_OVER, NOT_IN_HAND, SWEEP_FORCED, NOT_ON_TABLE, NOT_MAXIMAL, MUST_TAKE_ALL, BAD_COUNTS = range(8)
PACKET_PLAYERS, PACKET_TABLE = 0, 1

# Columns of a deal record (see the module docstring).
DECK, TABLE, ASIDE, HIST_CARD, HIST_TAKEN, CAP_LOG = 0, 104, 156, 208, 312, 416
POS, TURN, DEALER, ROUND, LAST_CAPTURER, TAKER, DONE, N_MOVES, IN_HANDS, N_LOGGED, DECK_LEN = range(520, 531)
HANDS = 532


@borrowing
def piles_at(players: int) -> int:
    """First column of the capture piles."""
    return HANDS + 52 * players


@borrowing
def tabbes_at(players: int) -> int:
    """First column of the tabbe counts."""
    return HANDS + 104 * players


@borrowing
def deck_length(st: np.ndarray, i: int) -> int:
    """Cards in deal ``i``'s deck: ``DECK_LEN``, or 104 (K1) in a record that never set it."""
    n = np.int64(st[i, DECK_LEN])
    return 104 if n == 0 else n


@borrowing
def deck_counts_into(st: np.ndarray, i: int, out: np.ndarray) -> None:
    """Write the copies of each card code in deal ``i``'s deck into ``out[:52]``: 2 each for the standard
    104-card deck (K1), else counted from the variant deck in the record (K20)."""
    n = deck_length(st, i)
    if n == 104:
        out[:52] = 2
        return
    out[:52] = 0
    for k in range(n):
        out[st[i, DECK + k]] += 1


@borrowing
def deck_points(st: np.ndarray, i: int) -> int:
    """Card points (K4) of deal ``i``'s whole deck: 42 for the standard deck, the variant deck's total (K20)."""
    n = deck_length(st, i)
    if n == 104:
        return 42
    total = 0
    for k in range(n):
        total += POINTS[st[i, DECK + k]]
    return total


def record_width(players: int) -> int:
    """Columns of a deal record, rounded up to whole 64-byte cache lines."""
    return (HANDS + 105 * players + 63) // 64 * 64


# --------------------------------------------------------------------------- one deal
@borrowing
def seat_after(seat: int, k: int, players: int) -> int:
    """The seat ``k`` places to the left of ``seat`` (0 ≤ seat < players, 0 ≤ k ≤ players): ``(seat + k) % players``
    without a division (a 64-bit one is a subroutine call on a GPU thread)."""
    s = seat + k
    return s - players if s >= players else s


@borrowing
def _set_aside(st: np.ndarray, i: int, spades: bool) -> None:
    """K8: move court cards (or spades) from the table to the set-aside pile."""
    table, aside = table_of(st, i), st[i, ASIDE:ASIDE + 52]
    if spades:
        for c in range(39, 39 + rolled(13)):  # the spades: suit 3
            aside[c] += table[c]
            table[c] = 0
    else:
        for suit in range(rolled(4)):  # the court cards: ranks J, Q, K (10–12) of every suit
            for c in range(13 * suit + 10, 13 * suit + 13):
                aside[c] += table[c]
                table[c] = 0


@borrowing
def _deal_packets(st: np.ndarray, i: int, players: int, kinds: np.ndarray, sizes: np.ndarray) -> None:
    """Deal packets from the deck front: players clockwise from the dealer's left, or the table (K6, K7)."""
    p = np.int64(st[i, POS])
    for k in range(kinds.shape[0]):
        if kinds[k] == PACKET_TABLE:
            for _ in range(sizes[k]):
                st[i, TABLE + st[i, DECK + p]] += 1
                p += 1
        else:
            for off in range(1, players + 1):
                hand = HANDS + 52 * seat_after(st[i, DEALER], off, players)
                for _ in range(sizes[k]):
                    st[i, hand + st[i, DECK + p]] += 1
                    p += 1
            st[i, IN_HANDS] += sizes[k] * players
    st[i, POS] = p


@borrowing
def reset_deal(st: np.ndarray, i: int, players: int, deck_row: np.ndarray, dealer_seat: int, kinds: np.ndarray,
               sizes: np.ndarray, spades: bool) -> None:
    """Start deal ``i`` from a deck order and dealer: initial deal (K6, K21) and setting aside (K8).

    ``deck_row`` holds the deck's cards (104, or fewer for a variant deck, K20); the deck is
    empty once ``POS`` reaches its length, kept in column ``DECK_LEN``.
    """
    n = deck_row.shape[0]
    for k in range(n):  # deck_row may be these very columns (an env shuffles in place)
        st[i, DECK + k] = deck_row[k]
    st[i, DECK + n:DECK + 104] = 0
    st[i, TABLE:tabbes_at(players) + players] = 0  # the engine's columns (an env may keep more after them)
    st[i, DECK_LEN] = n
    st[i, HIST_CARD:HIST_CARD + 104] = -1
    st[i, DEALER] = dealer_seat
    st[i, TURN] = seat_after(dealer_seat, 1, players)  # K9: the dealer's left neighbour leads
    st[i, LAST_CAPTURER] = -1
    st[i, TAKER] = -1
    _deal_packets(st, i, players, kinds, sizes)
    _set_aside(st, i, spades)


@njit(cache=True, inline="always")  # returns a view: inlined, as CUDA device functions cannot
def hand_of(st: np.ndarray, i: int, seat: int) -> np.ndarray:
    """(52,) view of a seat's hand in deal ``i``."""
    return st[i, HANDS + 52 * seat:HANDS + 52 * seat + 52]


@njit(cache=True, inline="always")  # returns a view: inlined, as CUDA device functions cannot
def table_of(st: np.ndarray, i: int) -> np.ndarray:
    """(52,) view of the table of deal ``i``."""
    return st[i, TABLE:TABLE + 52]


@borrowing
def check_move(st: np.ndarray, i: int, card: int, cap: np.ndarray, scr: np.ndarray) -> int:
    """Why the move (card, capture counts) is illegal in deal ``i``, or OK (K11–K13)."""
    if st[i, DONE]:
        return DEAL_OVER
    hand = hand_of(st, i, st[i, TURN])
    if card < 0 or card >= 52 or hand[card] == 0:
        return NOT_IN_HAND
    table = table_of(st, i)
    for c in range(rolled(52)):
        if cap[c] < 0:
            return BAD_COUNTS
        if cap[c] > table[c]:
            return NOT_ON_TABLE
    tkey = table_value_key(table)
    forced = hand_sweep_values_s(hand, tkey, scr)
    v = HAND_VALUE[card]
    if forced:
        if not (forced >> v) & 1:
            return SWEEP_FORCED
        for c in range(rolled(52)):
            if cap[c] != table[c]:
                return MUST_TAKE_ALL
        return OK
    if not is_maximal_capture_s(tkey, table_value_key(cap), v, scr):
        return NOT_MAXIMAL
    return OK


@borrowing
def apply_move(st: np.ndarray, i: int, players: int, card: int, cap: np.ndarray, later_kinds: np.ndarray,
               later_sizes: np.ndarray, spades: bool) -> None:
    """Play a checked move in deal ``i`` and advance: tabbes (K14), new rounds (K7, K8), end of deal (K15)."""
    s = np.int64(st[i, TURN])
    row = st[i]  # slices of the record indexed by range variables compile to vector code
    table, pile = row[TABLE:TABLE + 52], row[piles_at(players) + 52 * s:piles_at(players) + 52 * s + 52]
    row[HANDS + 52 * s + card] -= 1
    row[IN_HANDS] -= 1
    m = np.int64(row[N_MOVES])
    row[HIST_CARD + m] = card
    row[N_MOVES] = m + 1
    taken = 0
    on_table = 0
    cards = 0  # the card set of the capture: bit c for each card c taken
    for c in range(rolled(52)):
        on_table += table[c]
        taken += cap[c]
        cards |= np.int64(cap[c] != 0) << c
    row[HIST_TAKEN + m] = taken
    if taken == 0:
        table[card] += 1  # K12 creep
    else:
        log = row[CAP_LOG:CAP_LOG + 104]
        k = np.int64(row[N_LOGGED])
        while cards:  # move the captured cards to the pile and log them, in card order
            c = trailing_zeros(cards)
            cards &= cards - 1
            x = cap[c]
            table[c] -= x
            pile[c] += x
            log[k] = c
            log[k + x - 1] = c  # a second copy, if taken
            k += x
        row[N_LOGGED] = k
        pile[card] += 1
        row[LAST_CAPTURER] = s
        if on_table == taken:  # K14 tabbe; dubbeltabbe: lone non-ace taken by its twin
            row[tabbes_at(players) + s] += 2 if (taken == 1 and cap[card] == 1 and card % 13 != 0) else 1
    row[TURN] = s + 1 if s + 1 < players else 0
    if row[IN_HANDS] == 0:
        if row[POS] < deck_length(st, i):  # cards left in the deck (K7, K20)
            _set_aside(st, i, spades)  # K8 at the end of every round
            _deal_packets(st, i, players, later_kinds, later_sizes)  # K7
            row[ROUND] += 1
            row[TURN] = seat_after(row[DEALER], 1, players)
        else:
            last = row[LAST_CAPTURER]
            taker = last if last >= 0 else row[DEALER]  # K15
            rest = row[piles_at(players) + 52 * taker:piles_at(players) + 52 * taker + 52]
            aside = row[ASIDE:ASIDE + 52]
            for c in range(rolled(52)):
                rest[c] += table[c] + aside[c]
                table[c] = 0
                aside[c] = 0
            row[TAKER] = taker
            row[DONE] = 1


@borrowing
def legal_cards_into(st: np.ndarray, i: int, out: np.ndarray, scr: np.ndarray) -> int:
    """Write the legal cards of the seat to play into ``out[:52]`` (K13); return the forced sweep values (0: none)."""
    hand = hand_of(st, i, st[i, TURN])
    forced = hand_sweep_values_s(hand, table_value_key(table_of(st, i)), scr)
    card_mask_into(hand, forced, out)
    return forced


# played value v (2–14) -> the set of the cards played as v (K3, an ace as 14): bit c for card code c
_VALUE_CARDS = np.array([sum(1 << c for c in range(52) if HAND_VALUE[c] == v) for v in range(15)], np.int64)


@borrowing
def pick_card(hand: np.ndarray, forced: int, u: float) -> int:
    """The ⌊u·n⌋-th, in card order, of the n cards of ``hand`` that may be played: those of the ``forced`` sweep
    values (K13) if any, else all (0 ≤ u ≤ 1; u = 1 gives the last); −1 for an empty hand."""
    held = np.int64(0)  # the card set of the hand (krypenv.bits)
    for c in range(rolled(52)):
        held |= np.int64(hand[c] > 0) << c
    if forced:
        allowed = np.int64(0)
        for v in range(2, 15):
            if (forced >> v) & 1:
                allowed |= _VALUE_CARDS[v]
        held &= allowed
    n = popcount(held)
    return nth_set_bit(held, min(int(u * n), n - 1))


@counted
def random_move(st: np.ndarray, i: int, u_card: float, u_cap: float, cap_out: np.ndarray, scr: np.ndarray) -> int:
    """A uniformly random legal card, then a uniformly random legal capture of it; writes the capture, returns the
    card."""
    table = table_of(st, i)
    hand = hand_of(st, i, st[i, TURN])
    tkey = table_value_key(table)
    sums = subset_sums(tkey)  # once, for the sweep and the captures
    forced = hand_sweep_values_k(hand_value_bits(hand), tkey, sums, scr)  # non-zero: K13 forces these values
    card = pick_card(hand, forced, u_card)
    if forced:
        for c in range(rolled(52)):
            cap_out[c] = table[c]  # K13: the forced sweep takes the whole table
        return card
    keys = maximal_captures_k(tkey, sums, HAND_VALUE[card], scr)
    if keys.shape[0] == 0:
        for c in range(rolled(52)):
            cap_out[c] = 0
        return card
    total = n_candidates(table, keys)
    candidate_into(table, keys, min(int(u_cap * total), total - 1), cap_out)
    return card


@borrowing
def play_deals_one(st: np.ndarray, rng: np.ndarray, i: int, players: int, deck_size: int, kinds: np.ndarray,
                   sizes: np.ndarray, later_kinds: np.ndarray, later_sizes: np.ndarray, spades: bool, deals: int,
                   cap: np.ndarray, scr: np.ndarray) -> int:
    """Deal ``deals`` standard-deck deals in turn in row ``i`` from stream ``rng[i]`` (dealer P − 1, K5, K6) and
    play each out by uniformly random legal moves (:func:`random_move`); return the cards played.  The engine
    benchmark's unit of work, the same on CPU threads and on CUDA threads."""
    made = 0
    for _ in range(deals):
        deck = st[i, DECK:DECK + deck_size]
        draw_deck_into(rng, i, deck, 52, uniforms_of(scr))
        reset_deal(st, i, players, deck, players - 1, kinds, sizes, spades)
        while not st[i, DONE]:
            j = fresh(i)
            u_card = rand_float(rng, j)
            u_cap = rand_float(rng, j)
            card = random_move(st, j, u_card, u_cap, cap, scr)
            apply_move(st, j, players, card, cap, later_kinds, later_sizes, spades)
            made += 1
    return made


# --------------------------------------------------------------------------- batch drivers
@borrowing
def chunk_bounds(n: int, chunks: int, ch: int) -> tuple[int, int]:
    """Deals ``[lo, hi)`` of chunk ``ch`` when ``n`` deals are split into ``chunks``."""
    return ch * n // chunks, (ch + 1) * n // chunks


@borrowing
def _reset_range(st, lo, hi, players, active, decks, dealers, kinds, sizes, spades):
    for i in range(lo, hi):
        if active[i]:
            reset_deal(st, i, players, decks[i], dealers[i], kinds, sizes, spades)


@njit(cache=True, parallel=True)
def reset_many_par(st, players, active, decks, dealers, kinds, sizes, spades, scr):
    """Deal the active deals from ``decks`` and ``dealers`` (K6, K8), in parallel."""
    n, chunks = active.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _reset_range(st, lo, hi, players, active, decks, dealers, kinds, sizes, spades)


@borrowing
def reset_many_ser(st, players, active, decks, dealers, kinds, sizes, spades, scr):
    """Serial twin of :func:`reset_many_par`."""
    _reset_range(st, 0, active.shape[0], players, active, decks, dealers, kinds, sizes, spades)


@borrowing
def _legal_range(st, lo, hi, out, scr):
    for i in range(lo, hi):
        if st[i, DONE]:
            out[i] = False
        else:
            legal_cards_into(st, i, out[i], scr)


@njit(cache=True, parallel=True)
def legal_cards_par(st, out, scr):
    """(N, 52) legal cards of every deal (K13), in parallel."""
    n, chunks = out.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _legal_range(st, lo, hi, out, scr[ch])


@borrowing
def legal_cards_ser(st, out, scr):
    """Serial twin of :func:`legal_cards_par`."""
    _legal_range(st, 0, out.shape[0], out, scr[0])


@borrowing
def _step_range(st, lo, hi, players, active, cards, caps, status, kinds, sizes, spades, scr):
    for i in range(lo, hi):
        if not active[i]:
            status[i] = OK
            continue
        status[i] = check_move(st, i, cards[i], caps[i], scr)
        if status[i] == OK:
            apply_move(st, i, players, cards[i], caps[i], kinds, sizes, spades)


@njit(cache=True, parallel=True)
def step_many_par(st, players, active, cards, caps, status, kinds, sizes, spades, scr):
    """Check and apply one move in every active deal, in parallel (illegal moves change nothing)."""
    n, chunks = active.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _step_range(st, lo, hi, players, active, cards, caps, status, kinds, sizes, spades, scr[ch])


@borrowing
def step_many_ser(st, players, active, cards, caps, status, kinds, sizes, spades, scr):
    """Serial twin of :func:`step_many_par`."""
    _step_range(st, 0, active.shape[0], players, active, cards, caps, status, kinds, sizes, spades, scr[0])


@borrowing
def _random_range(st, lo, hi, active, u, cards, caps, scr):
    for i in range(lo, hi):
        if active[i] and not st[i, DONE]:
            cards[i] = random_move(st, i, u[i, 0], u[i, 1], caps[i], scr)
        else:
            cards[i] = -1
            caps[i] = 0


@njit(cache=True, parallel=True)
def random_moves_par(st, active, u, cards, caps, scr):
    """Uniform random legal moves of the active deals (not applied), in parallel."""
    n, chunks = active.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _random_range(st, lo, hi, active, u, cards, caps, scr[ch])


@borrowing
def random_moves_ser(st, active, u, cards, caps, scr):
    """Serial twin of :func:`random_moves_par`."""
    _random_range(st, 0, active.shape[0], active, u, cards, caps, scr[0])


@counted
def _play_random_range(st, lo, hi, players, u, kinds, sizes, spades, scr):
    cap = np.empty(52, np.int8)
    for i in range(lo, hi):
        if not st[i, DONE]:
            card = random_move(st, i, u[i, 0], u[i, 1], cap, scr)
            apply_move(st, i, players, card, cap, kinds, sizes, spades)


@njit(cache=True, parallel=True)
def play_random_par(st, players, u, kinds, sizes, spades, scr):
    """Play one uniform random legal move in every unfinished deal, in parallel."""
    n, chunks = u.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _play_random_range(st, lo, hi, players, u, kinds, sizes, spades, scr[ch])


@borrowing
def play_random_ser(st, players, u, kinds, sizes, spades, scr):
    """Serial twin of :func:`play_random_par`."""
    _play_random_range(st, 0, u.shape[0], players, u, kinds, sizes, spades, scr[0])


@counted
def _play_deals_range(st, rng, lo, hi, players, deck_size, kinds, sizes, later_kinds, later_sizes, spades, deals,
                      decisions, scr):
    cap = np.empty(52, np.int8)
    for i in range(lo, hi):
        decisions[i] = play_deals_one(st, rng, i, players, deck_size, kinds, sizes, later_kinds, later_sizes, spades,
                                      deals, cap, scr)


@njit(cache=True, parallel=True)
def play_deals_par(st, rng, players, deck_size, kinds, sizes, later_kinds, later_sizes, spades, deals, decisions, scr):
    """:func:`play_deals_one` in every row, in parallel (the CPU twin of the GPU engine benchmark)."""
    n, chunks = st.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _play_deals_range(st, rng, lo, hi, players, deck_size, kinds, sizes, later_kinds, later_sizes, spades, deals,
                          decisions, scr[ch])
