"""Per-action move features: what each legal action leads to, for learned policies that score actions.

The observation (:mod:`krypenv.observation`) says what a seat knows; it does not say what a
move *does*: which points it takes, what table it leaves and how likely the next seat is to
be forced to sweep that table (K13, K14).  Those are subset-sum and card-counting questions
that an MLP does not learn from the reward in a training budget (measured: README,
"Training").  This module computes them from the acting seat's public information only —
the same quantities the ``expert`` weighs (:func:`agents.tactics.move_terms`) — and gives
them per *action* of the ``Discrete(105)`` protocol (:mod:`krypenv.actions`), so that a
policy can score every action with one shared network (:mod:`agents.move_policy`).

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
| 20         | number of moves the action leads to / 4                                       |

The probabilities are the expert's (hypergeometric over unseen cards, voids inferred from
this round's public moves, with P(a later play captures) = 0.5 for the K15 stake).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import get_num_threads, njit, prange

from agents import tactics as T
from krypenv.actions import CONFIRM, N_ACTIONS, TAKE
from krypenv.engine import kernels as K
from krypenv.engine.captures import new_scratch

if TYPE_CHECKING:
    from krypenv.core import Core

VERSION = "moves/1"  # id of this feature layout, stored in checkpoints
MOVE_FEATURES = ("pts", "high", "stake", "setup", "risk", "creep", "taken", "left", "after", "sweep")
N_MOVE = len(MOVE_FEATURES)
N_FEATS = 2 * N_MOVE + 1  # min and max of each move feature, and the count
FEATURE_LOW, FEATURE_HIGH = -1.0, 25.0  # bounds of every entry (cards taken / 5 ≤ 20.8)
ENDQ = 0.5  # assumed chance that a later play captures (the expert's default)


@njit(cache=True)
def _move_vector(terms: np.ndarray, f: np.ndarray) -> None:
    """The move features (module table) from one row of :func:`agents.tactics.move_terms`."""
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
def _merge(row: np.ndarray, f: np.ndarray) -> None:
    """Fold one move's features into an action's row (min, max, count)."""
    if row[2 * N_MOVE] == 0.0:
        row[:N_MOVE] = f
        row[N_MOVE:2 * N_MOVE] = f
    else:
        for k in range(N_MOVE):
            row[k] = min(row[k], f[k])
            row[N_MOVE + k] = max(row[N_MOVE + k], f[k])
    row[2 * N_MOVE] += 1.0


@njit(cache=True)
def _features_range(st: np.ndarray, choice: np.ndarray, envs: np.ndarray, lo: int, hi: int, players: int,
                    hand_size: int, spades: bool, out: np.ndarray) -> None:
    cards = np.empty(T.MAX_MOVES, np.int64)
    caps = np.empty((T.MAX_MOVES, 52), np.int8)
    terms = np.empty((T.MAX_MOVES, T.N_TERMS), np.float64)
    keys = np.empty(T.MAX_KEYS, np.int64)
    scr = new_scratch()
    f = np.empty(N_MOVE, np.float32)
    for k in range(lo, hi):
        out[k] = 0.0
        i = envs[k]
        if st[i, K.DONE]:
            continue
        pending = np.int64(choice[i, 0])
        fixed = choice[i, 1:]
        seat = st[i, K.TURN]
        n = T.moves_into(K.hand_of(st, i, seat), K.table_of(st, i), pending, fixed, cards, caps, keys, scr)
        T.move_terms(st, i, players, hand_size, spades, cards, caps, n, ENDQ, terms, keys, scr)
        for m in range(n):
            _move_vector(terms[m], f)
            if pending < 0:
                _merge(out[k, cards[m]], f)
                continue
            exact = True
            for c in range(52):
                if caps[m, c] > fixed[c]:
                    _merge(out[k, TAKE + c], f)
                    exact = False
            if exact:
                _merge(out[k, CONFIRM], f)
        for a in range(N_ACTIONS):
            out[k, a, 2 * N_MOVE] /= 4.0


@njit(cache=True, parallel=True)
def k_features_par(st: np.ndarray, choice: np.ndarray, envs: np.ndarray, players: int, hand_size: int,
                   spades: bool, chunks: int, out: np.ndarray) -> None:
    """Parallel :func:`k_features_ser` over ``chunks`` slices of the batch."""
    n = envs.shape[0]
    for ch in prange(chunks):
        lo, hi = K.chunk_bounds(n, chunks, ch)
        _features_range(st, choice, envs, lo, hi, players, hand_size, spades, out)


@njit(cache=True)
def k_features_ser(st: np.ndarray, choice: np.ndarray, envs: np.ndarray, players: int, hand_size: int,
                   spades: bool, out: np.ndarray) -> None:
    """``out[k]`` (105, N_FEATS): the action features of the seat to act in deal ``envs[k]``."""
    _features_range(st, choice, envs, 0, envs.shape[0], players, hand_size, spades, out)


def action_features(core: Core, envs: np.ndarray) -> np.ndarray:
    """(B, 105, N_FEATS) float32 action features of the seat to act in games ``envs`` of a core."""
    envs = np.ascontiguousarray(envs, dtype=np.int64)
    out = np.empty((envs.shape[0], N_ACTIONS, N_FEATS), np.float32)
    rules = core.rules
    args = (core.deals.state, core.choice, envs, rules.players, rules.hand_size, rules.set_aside == "spades")
    if envs.shape[0] >= 64:
        k_features_par(*args, min(envs.shape[0], 4 * get_num_threads()), out)
    else:
        k_features_ser(*args, out)
    return out
