"""The fixed Discrete(279) action index space of Kungsholmskille and its move strings (KILLE.md L17).

Every decision of every phase is one index of the same space; environments and records rely
on this exact layout (x, y are rank indices 0–20, :mod:`krypenv.kungsholmskille.cards`):

| index            | move string         | used in                                          |
|------------------|---------------------|--------------------------------------------------|
| 0                | ``bud``             | first call (L5), second call (L9), show (L11)    |
| 1                | ``knacka``          | first and second call (L5, L9)                   |
| 2                | ``fold``            | fold decisions (L6)                              |
| 3                | ``stay``            | fold decisions (L6)                              |
| 4                | ``stand``           | exchange (L8): keep the hand                     |
| 5                | ``show``            | show calls (L11)                                 |
| 6 + x            | ``discard:X``       | exchange one card (L8); 6 … 26                   |
| 27 + pair(x, y)  | ``discard:X,Y``     | exchange two cards, x ≤ y (x = y: both copies); |
|                  |                     | 27 … 257, 231 pairs                              |
| 258 + x          | ``play:X``          | play a card to a trick (L10); 258 … 278          |

``pair(x, y)`` numbers the pairs x ≤ y in lexicographic order (0,0), (0,1), …, (0,20),
(1,1), …, (20,20): ``pair(x, y) = 21·x − x·(x−1)/2 + (y − x)``.  ``N_ACTIONS = 279``.

Move strings (L17) name ranks as in records, lower rank first: ``discard:7,gok``,
``discard:kille,kille``.  :func:`parse_move` rejects anything else with a message saying
what is wrong, including ``discard:gok,7`` (the higher rank first).
"""

from __future__ import annotations

import numpy as np

from krypenv.jit import borrowing
from krypenv.kungsholmskille.cards import N_RANKS, RANKS

BUD, KNACKA, FOLD, STAY, STAND, SHOW = range(6)
DISCARD1 = 6  # discard:X at DISCARD1 + x
DISCARD2 = DISCARD1 + N_RANKS  # 27; discard:X,Y at DISCARD2 + pair(x, y)
N_PAIRS = N_RANKS * (N_RANKS + 1) // 2  # 231
PLAY = DISCARD2 + N_PAIRS  # 258; play:X at PLAY + x
N_ACTIONS = PLAY + N_RANKS  # 279
CALL_WORDS = ("bud", "knacka", "fold", "stay", "stand", "show")
MAX_LEGAL = 1 + 5 + 10  # most legal moves of one decision: stand, 5 singles, C(5,2) pairs (L8)


@borrowing
def pair_index(x: int, y: int) -> int:
    """Position 0–230 of the pair x ≤ y in lexicographic order."""
    return 21 * x - x * (x - 1) // 2 + (y - x)


def _pair_tables() -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for x in range(N_RANKS):
        for y in range(x, N_RANKS):
            xs.append(x)
            ys.append(y)
    return np.array(xs, np.int64), np.array(ys, np.int64)


PAIR_X, PAIR_Y = _pair_tables()  # (231,) the ranks of discard pair k, PAIR_X[k] <= PAIR_Y[k]
for _arr in (PAIR_X, PAIR_Y):
    _arr.setflags(write=False)
assert all(pair_index(int(x), int(y)) == k for k, (x, y) in enumerate(zip(PAIR_X, PAIR_Y)))


def discard_action(x: int, y: int | None = None) -> int:
    """The action discarding rank x, or the ranks x and y (any order)."""
    if y is None:
        return DISCARD1 + int(x)
    lo, hi = sorted((int(x), int(y)))
    return DISCARD2 + pair_index(lo, hi)


def discard_ranks(a: int) -> list[int]:
    """The ranks an exchange move discards (L8): none for ``stand``, one for ``discard:X``, two for ``discard:X,Y``."""
    if a == STAND:
        return []
    if DISCARD1 <= a < DISCARD2:
        return [a - DISCARD1]
    if DISCARD2 <= a < PLAY:
        return [int(PAIR_X[a - DISCARD2]), int(PAIR_Y[a - DISCARD2])]
    raise ValueError(f"action {a!r} is not an exchange move (stand or discard, L8)")


def play_action(x: int) -> int:
    """The action playing rank x."""
    return PLAY + int(x)


def _name(a: int) -> str:
    if a < DISCARD1:
        return CALL_WORDS[a]
    if a < DISCARD2:
        return f"discard:{RANKS[a - DISCARD1]}"
    if a < PLAY:
        k = a - DISCARD2
        return f"discard:{RANKS[PAIR_X[k]]},{RANKS[PAIR_Y[k]]}"
    return f"play:{RANKS[a - PLAY]}"


ACTION_NAMES: tuple[str, ...] = tuple(_name(a) for a in range(N_ACTIONS))
_BY_NAME: dict[str, int] = {name: a for a, name in enumerate(ACTION_NAMES)}
_RANK: dict[str, int] = {name: i for i, name in enumerate(RANKS)}
MOVE_FORMS = "bud, knacka, fold, stay, stand, show, discard:X, discard:X,Y, play:X"


def action_name(a: int) -> str:
    """The L17 move string of an action index (lower rank first in a pair)."""
    if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not 0 <= a < N_ACTIONS:
        raise ValueError(f"action {a!r} is outside 0..{N_ACTIONS - 1}")
    return ACTION_NAMES[int(a)]


def action_kind(a: int) -> str:
    """The kind of an action: bud, knacka, fold, stay, stand, show, discard or play."""
    a = int(a)
    if not 0 <= a < N_ACTIONS:
        raise ValueError(f"action {a!r} is outside 0..{N_ACTIONS - 1}")
    if a < DISCARD1:
        return CALL_WORDS[a]
    return "discard" if a < PLAY else "play"


def parse_move(text: str) -> int:
    """The action index of an L17 move string; ValueError saying what is wrong with a bad one."""
    if not isinstance(text, str):
        raise ValueError(f"a move must be a string such as 'bud' or 'play:gok', got {type(text).__name__}")
    a = _BY_NAME.get(text)
    if a is not None:
        return a
    kind, colon, arg = text.partition(":")
    if not colon or kind not in ("discard", "play"):
        raise ValueError(f"unknown move {text!r}: moves are {MOVE_FORMS} (L17)")
    ranks = arg.split(",")
    if len(ranks) > (2 if kind == "discard" else 1):
        takes = "one or two ranks" if kind == "discard" else "one rank"
        raise ValueError(f"unknown move {text!r}: {kind} takes {takes}")
    for r in ranks:
        if r not in _RANK:
            raise ValueError(f"unknown rank name {r!r} in move {text!r}: the ranks are {', '.join(RANKS)}")
    # every single-rank form was in the table, so this is a pair with the higher rank first
    return_order = f"discard:{ranks[1]},{ranks[0]}"
    raise ValueError(f"move {text!r} lists the higher rank first; write {return_order!r} (L17: lower rank first)")
