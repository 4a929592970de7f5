"""Compiled per-deal kernels: dealing, move checking, stepping and random play (K5–K15).

Every kernel works on deal ``i`` of a batch held as the tuple of arrays built by
:class:`krypenv.engine.state.Deals` (its docstring lists the arrays).  Batch drivers
loop over deals in parallel (``prange``) or serially for small batches; both call the same
per-deal functions, so one deal and 4096 deals run the same rules code.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from krypenv.cards import HAND_VALUE
from krypenv.engine.captures import (
    card_capture,
    hand_sweep_values,
    hand_sweep_values_k,
    is_maximal_capture,
    legal_card_mask,
    maximal_value_captures,
    n_card_captures,
    table_value_key,
)

# Move check results; krypenv.engine.state.MOVE_ERRORS words them.
OK, DEAL_OVER, NOT_IN_HAND, SWEEP_FORCED, NOT_ON_TABLE, NOT_MAXIMAL, MUST_TAKE_ALL, BAD_COUNTS = range(8)
PACKET_PLAYERS, PACKET_TABLE = 0, 1


@njit(cache=True)
def _set_aside(S, i: int, spades: bool) -> None:
    """K8: move court cards (or spades) from the table to the set-aside pile."""
    table, aside = S[3], S[4]
    for c in range(52):
        if table[i, c] and ((c // 13 == 3) if spades else (c % 13 >= 10)):
            aside[i, c] += table[i, c]
            table[i, c] = 0


@njit(cache=True)
def _deal_packets(S, i: int, kinds: np.ndarray, sizes: np.ndarray) -> None:
    """Deal packets from the deck front: players clockwise from the dealer's left, or the table (K6, K7)."""
    deck, pos, hands, table = S[0], S[1], S[2], S[3]
    dealer, in_hands = S[8], S[14]
    players = hands.shape[1]
    for p in range(kinds.shape[0]):
        k = sizes[p]
        if kinds[p] == PACKET_TABLE:
            for _ in range(k):
                table[i, deck[i, pos[i]]] += 1
                pos[i] += 1
        else:
            for off in range(1, players + 1):
                seat = (dealer[i] + off) % players
                for _ in range(k):
                    hands[i, seat, deck[i, pos[i]]] += 1
                    pos[i] += 1
                in_hands[i] += k


@njit(cache=True)
def reset_deal(S, i: int, deck_row: np.ndarray, dealer_seat: int, kinds: np.ndarray, sizes: np.ndarray, spades: bool) -> None:
    """Start deal ``i`` from a deck order and dealer: initial deal (K6) and setting aside (K8)."""
    deck, pos, hands, table, aside, piles, tabbes, turn, dealer, rnd, last_cap, taker, done, n_moves, in_hands = S[:15]
    players = hands.shape[1]
    deck[i, :] = deck_row
    pos[i] = 0
    hands[i] = 0
    table[i] = 0
    aside[i] = 0
    piles[i] = 0
    tabbes[i] = 0
    dealer[i] = dealer_seat
    turn[i] = (dealer_seat + 1) % players  # K9: the dealer's left neighbour leads
    rnd[i] = 0
    last_cap[i] = -1
    taker[i] = -1
    done[i] = False
    n_moves[i] = 0
    in_hands[i] = 0
    _deal_packets(S, i, kinds, sizes)
    _set_aside(S, i, spades)


@njit(cache=True)
def check_move(S, i: int, card: int, cap: np.ndarray) -> int:
    """Why the move (card, capture counts) is illegal in deal ``i``, or OK (K11–K13)."""
    hands, table, turn, done = S[2], S[3], S[7], S[12]
    if done[i]:
        return DEAL_OVER
    if card < 0 or card >= 52 or hands[i, turn[i], card] == 0:
        return NOT_IN_HAND
    for c in range(52):
        if cap[c] < 0:
            return BAD_COUNTS
        if cap[c] > table[i, c]:
            return NOT_ON_TABLE
    forced = hand_sweep_values(hands[i, turn[i]], table[i])
    v = HAND_VALUE[card]
    if forced:
        if not (forced >> v) & 1:
            return SWEEP_FORCED
        for c in range(52):
            if cap[c] != table[i, c]:
                return MUST_TAKE_ALL
        return OK
    if not is_maximal_capture(table_value_key(table[i]), table_value_key(cap), v):
        return NOT_MAXIMAL
    return OK


@njit(cache=True)
def apply_move(S, i: int, card: int, cap: np.ndarray, later_kinds: np.ndarray, later_sizes: np.ndarray, spades: bool) -> None:
    """Play a checked move in deal ``i`` and advance: tabbes (K14), new rounds (K7, K8), end of deal (K15)."""
    deck, pos, hands, table, aside, piles, tabbes, turn, dealer, rnd, last_cap, taker, done, n_moves, in_hands = S[:15]
    hist_card, hist_cap = S[15], S[16]
    players = hands.shape[1]
    s = turn[i]
    hands[i, s, card] -= 1
    in_hands[i] -= 1
    m = n_moves[i]
    hist_card[i, m] = card
    taken = 0
    on_table = 0
    for c in range(52):  # branch-free, vectorisable: move the captured cards to the pile
        taken += cap[c]
        on_table += table[i, c]
        table[i, c] -= cap[c]
        piles[i, s, c] += cap[c]
    lo = np.int64(0)
    hi = np.int64(0)
    if taken:
        for c in range(52):
            lo |= np.int64(cap[c] > 0) << c
            hi |= np.int64(cap[c] > 1) << c
    hist_cap[i, m, 0] = lo
    hist_cap[i, m, 1] = hi
    n_moves[i] = m + 1
    if taken == 0:
        table[i, card] += 1  # K12 creep
    else:
        piles[i, s, card] += 1
        last_cap[i] = s
        if on_table == taken:  # K14 tabbe; dubbeltabbe: lone non-ace taken by its twin
            double = taken == 1 and cap[card] == 1 and card % 13 != 0
            tabbes[i, s] += 2 if double else 1
    turn[i] = (s + 1) % players
    if in_hands[i] == 0:
        if pos[i] < deck.shape[1]:
            _set_aside(S, i, spades)  # K8 at the end of every round
            _deal_packets(S, i, later_kinds, later_sizes)  # K7
            rnd[i] += 1
            turn[i] = (dealer[i] + 1) % players
        else:
            t = last_cap[i] if last_cap[i] >= 0 else dealer[i]  # K15
            for c in range(52):
                piles[i, t, c] += table[i, c] + aside[i, c]
                table[i, c] = 0
                aside[i, c] = 0
            taker[i] = t
            done[i] = True


@njit(cache=True)
def random_move(S, i: int, u_card: float, u_cap: float, cap_out: np.ndarray) -> int:
    """A uniformly random legal card, then a uniformly random legal capture of it; writes the capture, returns the card."""
    hands, table, turn = S[2], S[3], S[7]
    hand = hands[i, turn[i]]
    tkey = table_value_key(table[i])
    good = hand_sweep_values_k(hand, tkey)  # non-zero: K13 forces a sweep with these values
    n = 0
    for c in range(52):
        if hand[c] and (good == 0 or (good >> HAND_VALUE[c]) & 1):
            n += 1
    pick = min(int(u_card * n), n - 1)
    card = -1
    for c in range(52):
        if hand[c] and (good == 0 or (good >> HAND_VALUE[c]) & 1):
            if pick == 0:
                card = c
                break
            pick -= 1
    if good:
        cap_out[:] = table[i]  # K13: the forced sweep takes the whole table
        return card
    keys = maximal_value_captures(tkey, HAND_VALUE[card])
    if keys.shape[0] == 0:
        cap_out[:] = 0
        return card
    total = 0
    for k in range(keys.shape[0]):
        total += n_card_captures(table[i], keys[k])
    idx = min(int(u_cap * total), total - 1)
    k = 0
    while True:
        size = n_card_captures(table[i], keys[k])
        if idx < size:
            break
        idx -= size
        k += 1
    card_capture(table[i], keys[k], idx, cap_out)
    return card


@njit(cache=True)
def _reset_one(S, i, decks, dealers, kinds, sizes, spades):
    reset_deal(S, i, decks[i], dealers[i], kinds, sizes, spades)


@njit(cache=True, parallel=True)
def reset_many_par(S, active, decks, dealers, kinds, sizes, spades):
    for i in prange(active.shape[0]):
        if active[i]:
            _reset_one(S, i, decks, dealers, kinds, sizes, spades)


@njit(cache=True)
def reset_many_ser(S, active, decks, dealers, kinds, sizes, spades):
    for i in range(active.shape[0]):
        if active[i]:
            _reset_one(S, i, decks, dealers, kinds, sizes, spades)


@njit(cache=True)
def _legal_one(S, i, out):
    if S[12][i]:
        out[i] = False
    else:
        legal_card_mask(S[2][i, S[7][i]], S[3][i], out[i])


@njit(cache=True, parallel=True)
def legal_cards_par(S, out):
    for i in prange(out.shape[0]):
        _legal_one(S, i, out)


@njit(cache=True)
def legal_cards_ser(S, out):
    for i in range(out.shape[0]):
        _legal_one(S, i, out)


@njit(cache=True)
def _step_one(S, i, active, cards, caps, status, kinds, sizes, spades):
    if not active[i]:
        status[i] = OK
        return
    status[i] = check_move(S, i, cards[i], caps[i])
    if status[i] == OK:
        apply_move(S, i, cards[i], caps[i], kinds, sizes, spades)


@njit(cache=True, parallel=True)
def step_many_par(S, active, cards, caps, status, kinds, sizes, spades):
    for i in prange(active.shape[0]):
        _step_one(S, i, active, cards, caps, status, kinds, sizes, spades)


@njit(cache=True)
def step_many_ser(S, active, cards, caps, status, kinds, sizes, spades):
    for i in range(active.shape[0]):
        _step_one(S, i, active, cards, caps, status, kinds, sizes, spades)


@njit(cache=True)
def _random_one(S, i, active, u, cards, caps):
    if active[i] and not S[12][i]:
        cards[i] = random_move(S, i, u[i, 0], u[i, 1], caps[i])
    else:
        cards[i] = -1
        caps[i] = 0


@njit(cache=True, parallel=True)
def random_moves_par(S, active, u, cards, caps):
    for i in prange(active.shape[0]):
        _random_one(S, i, active, u, cards, caps)


@njit(cache=True)
def random_moves_ser(S, active, u, cards, caps):
    for i in range(active.shape[0]):
        _random_one(S, i, active, u, cards, caps)


@njit(cache=True)
def _play_random_one(S, i, u, kinds, sizes, spades, cap):
    if not S[12][i]:
        card = random_move(S, i, u[i, 0], u[i, 1], cap)
        apply_move(S, i, card, cap, kinds, sizes, spades)


@njit(cache=True, parallel=True)
def play_random_par(S, u, kinds, sizes, spades):
    n = u.shape[0]
    for i in prange(n):
        cap = np.empty(52, dtype=np.int8)
        _play_random_one(S, i, u, kinds, sizes, spades, cap)


@njit(cache=True)
def play_random_ser(S, u, kinds, sizes, spades):
    cap = np.empty(52, dtype=np.int8)
    for i in range(u.shape[0]):
        _play_random_one(S, i, u, kinds, sizes, spades, cap)
