"""Per-action move features: what each legal action leads to, for learned policies that score actions.

The observation (:mod:`krypenv.krypkasino.observation`) says what a seat knows; it does not say what a
move *does*: which points it takes, what table it leaves and how likely the next seat is to
be forced to sweep that table (K13, K14).  Those are subset-sum and card-counting questions
that an MLP does not learn from the reward in a training budget (measured:
docs/results/krypkasino-training.md).  This module computes them from the acting seat's public information only —
the same quantities the ``expert`` weighs (:func:`krypenv.agents.krypkasino.tactics.move_terms`) — and gives
them per *action* of the ``Discrete(105)`` protocol (:mod:`krypenv.krypkasino.actions`), so that a
policy can score every action with one shared network (:mod:`krypenv.agents.krypkasino.move_policy`).

Every legal move (card, capture) is reached through one next action from the current choice
state: a card action at the start of a turn; during a capture choice every table card the
capture takes more of than is fixed (``52 + c``), or ``104`` when it takes exactly the fixed
cards.  An action's features summarise the moves it still leads to: the minimum and maximum
of each move feature over them, and their number.  Illegal actions are all zero.

| index      | per move feature (min at ``k``, max at ``N_MOVE + k``)                        |
|------------|-------------------------------------------------------------------------------|
| 0 ``pts``  | points the move scores now /10: card points taken (K4) + 5 per tabbe (K14)    |
| 1 ``high`` | (played value − 8) / 6, aces 14 (K3)                                          |
| 2 ``stake``| expected K15 stake /10: pile + table points × P(we keep the last capture)     |
| 3 ``setup``| P(the next seat must sweep what we leave) + P(it is a dubbeltabbe) (K13)      |
| 4 ``risk`` | P(we are made to sweep on our next turn)                                      |
| 5 ``creep``| 1 for a creep (K12)                                                           |
| 6 ``taken``| cards taken / 5                                                               |
| 7 ``left`` | card points left on the table / 10                                            |
| 8 ``after``| cards left on the table / 10                                                  |
| 9 ``sweep``| 1 if the move sweeps the table                                                |
| 10 ``card``| card points (K4) of the played card / 3                                       |
| 11 ``opp_must`` | share of the unseen cards that must capture (K11) on the table we leave  |
| 12 ``opp_pts``  | their mean cheapest capture, in card points of the table cards / 5       |
| 13 ``own_must`` | share of our remaining hand that must capture on the table we leave      |
| 14 ``own_pts``  | their mean cheapest capture, table cards and the played card / 5         |
| 30         | number of moves the action leads to / 4                                       |

The probabilities are the expert's (hypergeometric over unseen cards, voids inferred from
this round's public moves, with P(a later play captures) = 0.5 for the K15 stake).  Features
11–14 look one play ahead on the table the move leaves: what an unseen card (the next seat's
play, on average) and what each of our remaining cards would have to take there, a
capture being compulsory when the played value has one (K11); forced sweeps are ``setup``.
Version history: ``moves/1`` had features 0–9 only; ``moves/2`` added 10–14.

:func:`action_features` gives every action's row, ``(B, 105, N_FEATS)``; :func:`legal_features` only the legal
actions' rows, ``(L, N_FEATS)`` in the order of ``np.nonzero(masks)``, which is what a scorer reads (the guided
search's rollouts use it: no zero rows to write and gather).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from krypenv.agents.krypkasino import tactics as T
from krypenv.agents.mlp import ACTION_FEATURES
from numba import get_num_threads, njit, prange

from krypenv.krypkasino.actions import CONFIRM, N_ACTIONS, TAKE
from krypenv.krypkasino.cards import HAND_VALUE, POINTS
from krypenv.krypkasino.engine import kernels
from krypenv.krypkasino.engine.captures import maximal_captures_k, subset_sums, table_value_key

if TYPE_CHECKING:
    from krypenv.krypkasino.batch import KrypkasinoBatch

VERSION = "moves/2"  # id of this feature layout, stored in checkpoints
MOVE_FEATURES = ("pts", "high", "stake", "setup", "risk", "creep", "taken", "left", "after", "sweep", "card",
                 "opp_must", "opp_pts", "own_must", "own_pts")
N_MOVE = len(MOVE_FEATURES)
N_FEATS = 2 * N_MOVE + 1  # min and max of each move feature, and the count
FEATURE_LOW, FEATURE_HIGH = -1.0, 25.0  # bounds of every entry (cards taken / 5 ≤ 20.8)
ENDQ = 0.5  # assumed chance that a later play captures (the expert's default)


# per table value k (1–13), its four cards cheapest first (K4 points, then suit): the order a cheapest capture takes
_CHEAP_FIRST = np.array([sorted(range(k - 1, 52, 13), key=lambda c: (POINTS[c], c)) if k else [0] * 4
                         for k in range(14)], np.int64)


@njit(cache=True)
def cheapest_capture(table: np.ndarray, key: int) -> int:
    """Fewest card points (K4) of table cards realising the value-level capture ``key`` (table value k = rank k − 1)."""
    total = 0
    k = 0
    key >>= 4
    while key:  # stops after the highest value present
        k += 1
        need = key & 15
        key >>= 4
        for j in range(4):
            if need == 0:
                break
            c = _CHEAP_FIRST[k, j]
            take = min(need, np.int64(table[c]))
            total += take * POINTS[c]
            need -= take
    return total


@njit(cache=True)
def forced_capture(table: np.ndarray, tkey: int, sums: int, v: int, keys: np.ndarray, scr: np.ndarray) -> int:
    """Cheapest table points a card of played value ``v`` must take on ``table`` (−1: it creeps)."""
    found = maximal_captures_k(tkey, sums, v, scr)
    if found.shape[0] == 0:
        return -1
    nk = min(found.shape[0], keys.shape[0])
    keys[:nk] = found[:nk]
    best = 1 << 30
    for k in range(nk):
        best = min(best, cheapest_capture(table, keys[k]))
    return best


@njit(cache=True)
def _lookahead(after: np.ndarray, hand: np.ndarray, card: int, uval: np.ndarray, n_unseen: int, keys: np.ndarray,
               scr: np.ndarray, cost: np.ndarray, f: np.ndarray) -> None:
    """Features 11–14: the compulsory captures of unseen cards and of our remaining hand on the table ``after``."""
    tkey = table_value_key(after)
    sums = subset_sums(tkey)
    cost[:] = -2  # per played value: -2 not computed, -1 creeps, else cheapest points
    must, pts = 0.0, 0.0
    for v in range(2, 15):
        if uval[v] > 0:
            cost[v] = forced_capture(after, tkey, sums, v, keys, scr)
            if cost[v] >= 0:
                must += uval[v]
                pts += uval[v] * cost[v]
    f[11] = must / max(n_unseen, 1)
    f[12] = pts / max(n_unseen, 1) / 5.0
    own, own_must, own_pts = 0, 0.0, 0.0
    for c in range(52):
        k = hand[c] - (1 if c == card else 0)
        if k <= 0:
            continue
        v = HAND_VALUE[c]
        if cost[v] == -2:
            cost[v] = forced_capture(after, tkey, sums, v, keys, scr)
        own += k
        if cost[v] >= 0:
            own_must += k
            own_pts += k * (cost[v] + POINTS[c])
    f[13] = own_must / max(own, 1)
    f[14] = own_pts / max(own, 1) / 5.0


@njit(cache=True)
def _move_vector(terms: np.ndarray, f: np.ndarray) -> None:
    """Features 0–9 (module table) from one row of :func:`krypenv.agents.krypkasino.tactics.move_terms`."""
    f[0] = terms[T.T_PTS] / 10.0
    f[1] = terms[T.T_HIGH] / 6.0
    f[2] = terms[T.T_STAKE] * terms[T.T_KEEP] / 10.0
    f[3] = terms[T.T_SETUP]
    f[4] = terms[T.T_RISK]
    f[5] = terms[T.T_CREEP]
    f[6] = terms[T.T_TAKEN] / 5.0
    f[7] = terms[T.T_LEFT] / 10.0
    f[8] = terms[T.T_AFTER] / 10.0
    f[9] = 1.0 if terms[T.T_CREEP] == 0.0 and terms[T.T_AFTER] == 0.0 else 0.0


@njit(cache=True)
def _merge(out: np.ndarray, j: int, f: np.ndarray) -> None:
    """Fold one move's features into row ``j`` of ``out`` (min, max, count); a row of a legal action."""
    if j < 0:
        raise ValueError("move features: a move reaches an action that the mask says is illegal")
    row = out[j]
    if row[2 * N_MOVE] == 0.0:
        row[:N_MOVE] = f
        row[N_MOVE:2 * N_MOVE] = f
    else:
        for k in range(N_MOVE):
            row[k] = min(row[k], f[k])
            row[N_MOVE + k] = max(row[N_MOVE + k], f[k])
    row[2 * N_MOVE] += 1.0


@njit(cache=True)
def _row_into(st: np.ndarray, choice: np.ndarray, i: int, players: int, hand_size: int, spades: bool,
              slot: np.ndarray, out: np.ndarray, cards: np.ndarray, caps: np.ndarray, terms: np.ndarray,
              keys: np.ndarray, scr: np.ndarray, f: np.ndarray, after: np.ndarray, uval: np.ndarray,
              cost: np.ndarray) -> None:
    """Deal ``i``'s action features into ``out[slot[a]]`` (rows zero on entry) for every action ``a`` its moves reach.

    Invariant: ``slot[a] >= 0`` for every legal action (the actions the moves reach are exactly the legal ones).
    """
    pending = np.int64(choice[i, 0])
    fixed = choice[i, 1:]
    seat = st[i, kernels.TURN]
    n = T.moves_into(kernels.hand_of(st, i, seat), kernels.table_of(st, i), pending, fixed, cards, caps, keys, scr)
    T.move_terms(st, i, players, hand_size, spades, cards, caps, n, ENDQ, terms, keys, scr)
    n_unseen = T.unseen_values(st, i, players, np.int64(seat), uval, scr)
    hand = kernels.hand_of(st, i, seat)
    table = kernels.table_of(st, i)
    for m in range(n):
        _move_vector(terms[m], f)
        f[10] = POINTS[cards[m]] / 3.0
        T.table_after(table, cards[m], caps[m], after)
        _lookahead(after, hand, cards[m], uval, n_unseen, keys, scr, cost, f)
        if pending < 0:
            _merge(out, slot[cards[m]], f)
            continue
        exact = True
        for c in range(52):
            if caps[m, c] > fixed[c]:
                _merge(out, slot[TAKE + c], f)
                exact = False
        if exact:
            _merge(out, slot[CONFIRM], f)
    for a in range(N_ACTIONS):
        if slot[a] >= 0:
            out[slot[a], 2 * N_MOVE] /= 4.0


@njit(cache=True)
def _features_range(st: np.ndarray, choice: np.ndarray, envs: np.ndarray, masks: np.ndarray, starts: np.ndarray,
                    lo: int, hi: int, players: int, hand_size: int, spades: bool, out: np.ndarray) -> None:
    """Rows ``lo..hi`` of a batch: every action's features (``masks`` empty; ``out`` (B·105, N_FEATS)), or only the
    legal actions' (``masks`` (B, 105); ``out`` (L, N_FEATS), row ``k``'s from ``starts[k]`` in action order)."""
    cards = np.empty(T.MAX_MOVES, np.int64)
    caps = np.empty((T.MAX_MOVES, 52), np.int8)
    terms = np.empty((T.MAX_MOVES, T.N_TERMS), np.float64)
    keys = np.empty(T.MAX_KEYS, np.int64)
    scr = T.new_scratch()
    f = np.empty(N_MOVE, np.float32)
    after = np.empty(52, np.int8)
    uval = np.zeros(15, np.int64)
    cost = np.empty(15, np.int64)
    slot = np.empty(N_ACTIONS, np.int64)
    every = masks.shape[0] == 0
    for k in range(lo, hi):
        j = k * N_ACTIONS if every else starts[k]
        for a in range(N_ACTIONS):
            slot[a] = -1
            if every or masks[k, a]:
                slot[a] = j
                out[j] = 0.0
                j += 1
        i = envs[k]
        if not st[i, kernels.DONE]:
            _row_into(st, choice, i, players, hand_size, spades, slot, out, cards, caps, terms, keys, scr, f, after,
                      uval, cost)


@njit(cache=True, parallel=True)
def k_features_par(st: np.ndarray, choice: np.ndarray, envs: np.ndarray, masks: np.ndarray, starts: np.ndarray,
                   players: int, hand_size: int, spades: bool, chunks: int, out: np.ndarray) -> None:
    """Parallel :func:`k_features_ser` over ``chunks`` slices of the batch."""
    n = envs.shape[0]
    for ch in prange(chunks):
        lo, hi = kernels.chunk_bounds(n, chunks, ch)
        _features_range(st, choice, envs, masks, starts, lo, hi, players, hand_size, spades, out)


@njit(cache=True)
def k_features_ser(st: np.ndarray, choice: np.ndarray, envs: np.ndarray, masks: np.ndarray, starts: np.ndarray,
                   players: int, hand_size: int, spades: bool, out: np.ndarray) -> None:
    """The action features of the seat to act in deals ``envs``: see :func:`_features_range` for the two layouts."""
    _features_range(st, choice, envs, masks, starts, 0, envs.shape[0], players, hand_size, spades, out)


_NO_MASKS = np.zeros((0, N_ACTIONS), np.int8)  # "every action" for the kernels' masks
_NO_STARTS = np.zeros(0, np.int64)


def _features(st: np.ndarray, choice: np.ndarray, envs: np.ndarray, players: int, hand_size: int, spades: bool,
              masks: np.ndarray | None = None) -> np.ndarray:
    """(B, 105, N_FEATS) features of every action of deals ``envs``; with ``masks`` (B, 105) only the legal actions',
    (L, N_FEATS) in the order of ``np.nonzero(masks)`` (what a scorer gathers)."""
    if masks is None:
        out = np.empty((envs.shape[0], N_ACTIONS, N_FEATS), np.float32)
        flat, m, starts = out.reshape(-1, N_FEATS), _NO_MASKS, _NO_STARTS
    else:
        if np.shape(masks) != (envs.shape[0], N_ACTIONS):
            raise ValueError(f"legal_features: masks of shape {np.shape(masks)} for {envs.shape[0]} rows; expected "
                             f"({envs.shape[0]}, {N_ACTIONS})")
        m = np.ascontiguousarray(masks, np.int8)
        counts = np.count_nonzero(m, axis=1)
        starts = np.zeros(envs.shape[0], np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        out = flat = np.empty((int(counts.sum()), N_FEATS), np.float32)
    if envs.shape[0] >= 64 and get_num_threads() > 1:
        k_features_par(st, choice, envs, m, starts, players, hand_size, spades,
                       min(envs.shape[0], 4 * get_num_threads()), flat)
    else:
        k_features_ser(st, choice, envs, m, starts, players, hand_size, spades, flat)
    return out


def input_dim(obs_dim: int) -> int:
    """Length of a move-scoring network's input: the observation and the flattened action features."""
    return obs_dim + N_ACTIONS * N_FEATS


def action_features(core: KrypkasinoBatch, envs: np.ndarray) -> np.ndarray:
    """(B, 105, N_FEATS) float32 action features of the seat to act in games ``envs`` of a core."""
    rules = core.rules
    return _features(core.deals.state, core.choice, np.ascontiguousarray(envs, dtype=np.int64), rules.players,
                     rules.hand_size, rules.set_aside == "spades")


def legal_features(state: np.ndarray, choice: np.ndarray, rows: np.ndarray, masks: np.ndarray, players: int,
                   hand_size: int, spades: bool) -> np.ndarray:
    """(L, N_FEATS) float32 features of the legal actions of state ``rows`` (``masks`` (B, 105) their legal actions),
    in the order of ``np.nonzero(masks)``: ``action_features(...)[np.nonzero(masks)]`` without the zeros between."""
    return _features(state, choice, np.ascontiguousarray(rows, dtype=np.int64), players, hand_size, spades, masks)


def row_features(state: np.ndarray, choice_at: int, players: int, hand_size: int, spades: bool) -> np.ndarray:
    """(N, 105, N_FEATS) float32 action features of the seat to act in whole state rows of a core (the engine
    record first, the capture choice at column ``choice_at``: ``core.packed[C_E0]``), e.g. stored labels."""
    state = np.ascontiguousarray(state)
    return _features(state, state[:, choice_at:choice_at + 53], np.arange(state.shape[0], dtype=np.int64), players,
                     hand_size, spades)


ACTION_FEATURES[VERSION] = action_features  # what an mlp checkpoint with "action_features": "moves/2" reads
