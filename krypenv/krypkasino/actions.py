"""The Discrete(105) action space of Krypkasino and its capture-choice state machine.

Every agent has the same ``Discrete(105)`` action space; each action has one fixed meaning:

| action      | meaning                                                                    |
|-------------|----------------------------------------------------------------------------|
| 0 – 51      | play the card with that code (RULES.md K2: ``suit * 13 + rank``)           |
| 52 – 103    | take one more copy of table card ``a - 52`` into the capture being chosen  |
| 104         | take exactly the cards fixed so far                                        |

A turn starts with a card action.  If the card creeps (K12) or has exactly one legal capture
(always so for a forced sweep, K13), the move is applied at once.  If it has several legal
captures (K11), the *same* agent acts again (the PettingZoo way of taking several decisions
in one turn) and narrows the candidates down with table-card actions until one capture is
determined, which is then applied without a further question.

The choice state is the played ("pending") card and a vector of *fixed* table cards: the
cards chosen so far together with every card that all remaining candidates share, so that
no question ever has a single answer:

* remaining candidates: the legal captures holding at least the fixed counts;
* offered table cards: those of which some remaining candidate takes more copies than fixed;
* ``104`` is legal when the fixed cards are themselves one of the candidates (a maximal
  capture can be a strict subset of another one);
* after each choice the fixed vector becomes the minimum over the remaining candidates, and
  the capture is applied as soon as one candidate remains.

Every legal (card, capture) move is reachable this way and nothing else is.  The choice
state lives in a (53,) int8 vector ``choice``: ``choice[0]`` the pending card (−1: none),
``choice[1:]`` the fixed counts.  The rules themselves (which captures are legal) come only
from :mod:`krypenv.krypkasino.engine`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from krypenv.gpu_lean import rolled
from krypenv.jit import borrowing, counted
from krypenv.krypkasino.cards import HAND_VALUE, card_name
from krypenv.krypkasino.engine.captures import (
    O_CARD_A,
    O_CARD_B,
    card_mask_into,
    hand_sweep_values_k,
    hand_value_bits,
    maximal_captures_k,
    new_scratch,
    subset_sums,
    table_value_key,
)
from krypenv.krypkasino.engine.expansion import (
    candidate_into,
    card_capture,
    card_capture_keys,
    expand_captures,
    n_candidates,
)
from krypenv.krypkasino.engine.kernels import DONE, TURN, apply_move, hand_of, table_of

N_ACTIONS = 105
TAKE = 52  # actions TAKE + c take table card c
CONFIRM = 104  # take exactly the fixed cards
CHOICE_SIZE = 53  # pending card + 52 fixed counts

# Results of apply_action.
MOVED, CHOOSING, ILLEGAL = 0, 1, -1


def action_name(action: int, pending: int = -1) -> str:
    """Readable meaning of an action, e.g. ``"play 9S"``, ``"take 4H"``, ``"take the chosen cards"``."""
    a = int(action)
    if 0 <= a < TAKE:
        return f"play {card_name(a)}"
    if TAKE <= a < CONFIRM:
        return f"take {card_name(a - TAKE)}" + (f" with {card_name(pending)}" if pending >= 0 else "")
    if a == CONFIRM:
        return "take the chosen cards"
    return f"out-of-range action {a}"


# --------------------------------------------------------------------------- compiled pieces
# The candidates of a capture choice are the card-level maximal captures of the pending card
# (value keys from card_capture_keys, expanded one at a time by candidate_into into a card
# vector of the scratch): enumerated, never stored, so nothing here allocates and the same
# functions run on CPU and CUDA threads.  Scratch regions used: O_CARD_A (the candidate),
# O_CARD_B (a running min or max), besides the capture search's own.
@borrowing
def holds(cand: np.ndarray, fixed: np.ndarray) -> bool:
    """Whether a candidate capture (52,) counts contains every fixed card."""
    for c in range(rolled(52)):
        if cand[c] < fixed[c]:
            return False
    return True


@borrowing
def _same(cand: np.ndarray, fixed: np.ndarray) -> bool:
    """Whether a candidate capture is exactly the fixed cards."""
    for c in range(rolled(52)):
        if cand[c] != fixed[c]:
            return False
    return True


@borrowing
def fix_common(table: np.ndarray, keys: np.ndarray, fixed: np.ndarray, scr: np.ndarray) -> tuple[int, int]:
    """Raise ``fixed`` to the minimum over the candidates (of value keys ``keys`` on ``table``) holding it; return
    (remaining count, index of the last remaining candidate)."""
    cand, lo = scr[O_CARD_A:O_CARD_A + 52], scr[O_CARD_B:O_CARD_B + 52]
    for c in range(rolled(52)):
        lo[c] = 127
    n_rem = 0
    last = -1
    for m in range(n_candidates(table, keys)):
        candidate_into(table, keys, m, cand)
        if holds(cand, fixed):
            n_rem += 1
            last = m
            for c in range(rolled(52)):
                lo[c] = min(lo[c], cand[c])
    if n_rem:
        for c in range(rolled(52)):
            fixed[c] = lo[c]
    return n_rem, last


@borrowing
def choice_mask_into(table: np.ndarray, keys: np.ndarray, fixed: np.ndarray, out: np.ndarray,
                     scr: np.ndarray) -> None:
    """Write the capture-choice actions 52–104 into ``out`` for the candidates of ``keys`` and fixed cards ``fixed``."""
    cand, hi = scr[O_CARD_A:O_CARD_A + 52], scr[O_CARD_B:O_CARD_B + 52]
    for c in range(rolled(52)):
        hi[c] = 0
    confirm = 0
    for m in range(n_candidates(table, keys)):
        candidate_into(table, keys, m, cand)
        if holds(cand, fixed):
            if _same(cand, fixed):
                confirm = 1
            for c in range(rolled(52)):
                hi[c] = max(hi[c], cand[c])
    for c in range(rolled(52)):
        out[TAKE + c] = 1 if hi[c] > fixed[c] else 0
    out[CONFIRM] = confirm


@counted
def mask_into(hand: np.ndarray, table: np.ndarray, choice: np.ndarray, sweep_bits: int, out: np.ndarray,
              scr: np.ndarray) -> None:
    """Write the full (105,) action mask of the seat to act: card actions, or capture-choice actions.

    ``sweep_bits`` are the table's sweeping values (:func:`~krypenv.krypkasino.engine.captures.sweep_values_s`).
    """
    out[:] = 0
    if choice[0] < 0:
        card_mask_into(hand, sweep_bits & hand_value_bits(hand), out)
    else:
        choice_mask_into(table, card_capture_keys(table, choice[0], scr), choice[1:], out, scr)


@njit(cache=True, inline="always")  # one call less per card action: numba passes an array as seven words
def _play_card(st: np.ndarray, i: int, players: int, card: int, choice: np.ndarray, buf: np.ndarray,
               later_kinds: np.ndarray, later_sizes: np.ndarray, spades: bool, scr: np.ndarray, forced: int) -> int:
    """A card action: MOVED if the card creeps, sweeps or has one capture; CHOOSING if it has several.

    ``forced`` are the hand's sweep values (K13) if the caller knows them, else −1.
    """
    hand = hand_of(st, i, st[i, TURN])
    if card < 0 or card >= TAKE or hand[card] == 0:
        return ILLEGAL
    table = table_of(st, i)
    tkey = table_value_key(table)
    sums = subset_sums(tkey)  # once, for the sweep check and the captures
    if forced < 0:
        forced = hand_sweep_values_k(hand_value_bits(hand), tkey, sums, scr)
    if forced:  # K13: only sweepers, and they take the whole table
        if not (forced >> HAND_VALUE[card]) & 1:
            return ILLEGAL
        for c in range(rolled(52)):
            buf[c] = table[c]
        apply_move(st, i, players, card, buf, later_kinds, later_sizes, spades)
        return MOVED
    keys = maximal_captures_k(tkey, sums, HAND_VALUE[card], scr)
    total = n_candidates(table, keys)
    if total <= 1:  # creeps (K12) or a single capture
        if total == 0:
            buf[:] = 0
        else:
            card_capture(table, keys[0], 0, buf)
        apply_move(st, i, players, card, buf, later_kinds, later_sizes, spades)
        return MOVED
    choice[0] = card
    choice[1:] = 0
    fix_common(table, keys, choice[1:], scr)
    return CHOOSING


@counted
def apply_action(st: np.ndarray, i: int, players: int, action: int, choice: np.ndarray, buf: np.ndarray,
                 later_kinds: np.ndarray, later_sizes: np.ndarray, spades: bool, scr: np.ndarray,
                 forced: int) -> int:
    """Apply one action of the seat to act in deal ``i``: MOVED (a move was played), CHOOSING, or ILLEGAL.

    ``choice`` is that deal's (53,) choice state (see the module docstring); a played move's
    capture is written into ``buf`` (52,).  ``forced`` passes the hand's sweep values (K13)
    when the caller has them, else −1.  An ILLEGAL action changes nothing.
    """
    if st[i, DONE]:
        return ILLEGAL
    if choice[0] < 0:
        return _play_card(st, i, players, action, choice, buf, later_kinds, later_sizes, spades, scr, forced)
    card = choice[0]
    fixed = choice[1:]
    table = table_of(st, i)
    keys = card_capture_keys(table, card, scr)
    cand = scr[O_CARD_A:O_CARD_A + 52]
    if action == CONFIRM:
        found = False
        for m in range(n_candidates(table, keys)):
            candidate_into(table, keys, m, cand)
            if _same(cand, fixed):
                found = True
                break
        if not found:
            return ILLEGAL
        for c in range(rolled(52)):
            buf[c] = fixed[c]
    elif TAKE <= action < CONFIRM:
        c = action - TAKE
        more = False
        for m in range(n_candidates(table, keys)):
            candidate_into(table, keys, m, cand)
            if cand[c] > fixed[c] and holds(cand, fixed):
                more = True
                break
        if not more:
            return ILLEGAL
        fixed[c] += 1
        n_rem, last = fix_common(table, keys, fixed, scr)
        if n_rem > 1:
            return CHOOSING
        candidate_into(table, keys, last, buf)
    else:
        return ILLEGAL
    choice[0] = -1
    choice[1:] = 0
    apply_move(st, i, players, card, buf, later_kinds, later_sizes, spades)
    return MOVED


# --------------------------------------------------------------------------- Python helpers
def actions_for_move(table: np.ndarray, card: int, capture: np.ndarray, forced: bool = False) -> list[int]:
    """The action sequence that plays ``card`` taking ``capture`` (counts) from ``table``; ValueError if unreachable.

    ``forced`` says a sweep is forced (K13), so the card takes the whole table in one action.
    """
    choice = np.full(CHOICE_SIZE, 0, np.int8)
    choice[0] = -1
    return actions_to_move(np.asarray(table, np.int8), choice, card, capture, forced)


def actions_to_move(table: np.ndarray, choice: np.ndarray, card: int, capture: np.ndarray,
                    forced: bool = False) -> list[int]:
    """The remaining actions that play ``card`` taking ``capture`` from the choice state ``choice``.

    ValueError if that move is not reachable from there.
    """
    capture = np.asarray(capture, np.int8)
    pending, fixed = int(choice[0]), np.array(choice[1:], np.int8)
    if pending >= 0 and pending != card:
        raise ValueError(f"{card_name(pending)} is being played, not {card_name(card)}")
    actions = [] if pending >= 0 else [int(card)]
    if forced:
        if not np.array_equal(capture, table):
            raise ValueError("a forced sweep takes the whole table (K13)")
        return actions
    scr = new_scratch()
    keys = card_capture_keys(table, int(card), scr)
    cands = expand_captures(table, keys)
    if not (cands == capture).all(axis=1).any() and not (cands.shape[0] == 0 and not capture.any()):
        raise ValueError(f"{card_name(card)} cannot take {' '.join(card_name(c) for c in np.flatnonzero(capture))}")
    if cands.shape[0] <= 1:
        return actions
    if (capture < fixed).any():
        raise ValueError("that capture leaves out cards already chosen")
    n_rem, _ = fix_common(table, keys, fixed, scr)
    while n_rem > 1:
        more = np.flatnonzero(capture > fixed)
        if more.size == 0:
            actions.append(CONFIRM)
            return actions
        c = int(more[0])
        actions.append(TAKE + c)
        fixed[c] += 1
        n_rem, _ = fix_common(table, keys, fixed, scr)
    return actions

