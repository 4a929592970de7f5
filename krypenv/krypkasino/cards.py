"""Cards of Krypkasino: codes, names, capture values and card points (RULES.md K1–K4).

A card is an integer code ``suit_index * 13 + rank_index`` (K2): suits C, D, H, S and
ranks A, 2, …, 10, J, Q, K, so ``AC`` = 0 and ``KS`` = 51.  The deck holds every code
twice (K1); the two copies are indistinguishable, so card collections are stored as
count vectors of length 52 (each entry 0, 1 or 2).

A variant deck (RULES.md K20) keeps these codes: it is a subset of the 52 kinds (some ranks,
some suits) in one or two copies; :func:`kind_codes` lists its kinds and
:func:`ordered_deck` / :func:`parse_deck` take them and the number of copies.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("C", "D", "H", "S")
N_CODES = 52  # distinct cards
N_COPIES = 2  # two decks (K1)
DECK_SIZE = N_CODES * N_COPIES  # 104
TOTAL_POINTS = 42  # card points in the two decks (K4)

ACE, JACK, QUEEN, KING = 0, 10, 11, 12  # rank indices
CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3  # suit indices


def card_code(name: str) -> int:
    """Code of a card name such as ``"10D"`` (K2); ValueError naming the bad card."""
    if not isinstance(name, str) or len(name) < 2:
        raise ValueError(f"unknown card name {name!r}: expected rank then suit, e.g. '10D', 'AS'")
    rank, suit = name[:-1].upper(), name[-1].upper()
    if rank not in RANKS or suit not in SUITS:
        raise ValueError(f"unknown card name {name!r}: ranks are {' '.join(RANKS)}, suits are C D H S")
    return SUITS.index(suit) * 13 + RANKS.index(rank)


def card_name(code: int) -> str:
    """Name of a card code 0–51 (K2)."""
    if not 0 <= int(code) < N_CODES:
        raise ValueError(f"card code {code} is outside 0..51")
    return RANKS[int(code) % 13] + SUITS[int(code) // 13]


def rank_of(code: int) -> int:
    """Rank index 0 (A) … 12 (K) of a card code."""
    return int(code) % 13


def suit_of(code: int) -> int:
    """Suit index 0 (C) … 3 (S) of a card code."""
    return int(code) // 13


def _table_value(code: int) -> int:
    return code % 13 + 1  # A = 1 on the table (K3)


def _hand_value(code: int) -> int:
    return 14 if code % 13 == ACE else code % 13 + 1  # A = 14 when played (K3)


def _points(code: int) -> int:
    rank, suit = code % 13, code // 13
    if rank == 9 and suit == DIAMONDS:
        return 3  # storan, 10D
    if rank == 1 and suit == SPADES:
        return 2  # lillan, 2S
    if rank == ACE and suit == SPADES:
        return 2
    if suit == SPADES or rank == ACE:
        return 1
    return 0


# Lookup tables indexed by card code; int64 so numba kernels read them without casts.
TABLE_VALUE: np.ndarray = np.array([_table_value(c) for c in range(N_CODES)], dtype=np.int64)
HAND_VALUE: np.ndarray = np.array([_hand_value(c) for c in range(N_CODES)], dtype=np.int64)
POINTS: np.ndarray = np.array([_points(c) for c in range(N_CODES)], dtype=np.int64)
for _arr in (TABLE_VALUE, HAND_VALUE, POINTS):
    _arr.setflags(write=False)
assert int(POINTS.sum()) * N_COPIES == TOTAL_POINTS

ALL_NAMES: tuple[str, ...] = tuple(card_name(c) for c in range(N_CODES))


def counts_from_names(names: Iterable[str]) -> np.ndarray:
    """Count vector (52,) int8 of a list of card names."""
    counts = np.zeros(N_CODES, dtype=np.int8)
    for name in names:
        counts[card_code(name)] += 1
    return counts


def names_from_counts(counts: Sequence[int] | np.ndarray) -> list[str]:
    """Card names of a count vector, in code order, each repeated by its count."""
    return [card_name(c) for c in range(N_CODES) for _ in range(int(counts[c]))]


def kind_codes(ranks: Sequence[str] | None = None, suits: Sequence[str] | None = None) -> np.ndarray:
    """The card codes (int64, ascending) of the kinds with these rank and suit names (K20); None = all of them."""
    rank_idx = range(13) if ranks is None else sorted(RANKS.index(r) for r in ranks)
    suit_idx = range(4) if suits is None else sorted(SUITS.index(s) for s in suits)
    return np.array([s * 13 + r for s in suit_idx for r in rank_idx], dtype=np.int64)


def ordered_deck(kinds: np.ndarray | None = None, copies: int = N_COPIES) -> np.ndarray:
    """The unshuffled deck: ``kinds`` (default all 52 codes) once per copy, e.g. 0..51 then 0..51 (K1, K20)."""
    codes = np.arange(N_CODES) if kinds is None else np.asarray(kinds, np.int64)
    return np.tile(codes, copies).astype(np.int8)


def parse_deck(names: Sequence[str], counts: np.ndarray | None = None) -> np.ndarray:
    """Deck codes from card names; ValueError unless every code appears ``counts[code]`` times (default: K1's two).

    ``counts`` is a (52,) vector of copies per code, e.g. ``Rules.deck_counts`` of a variant (K20).
    """
    want = np.full(N_CODES, N_COPIES, np.int64) if counts is None else np.asarray(counts, np.int64)
    size = int(want.sum())
    if not isinstance(names, (list, tuple)) or len(names) != size:
        n = len(names) if isinstance(names, (list, tuple)) else type(names).__name__
        raise ValueError(f"deck must list {size} cards, got {n}")
    codes = np.array([card_code(n) for n in names], dtype=np.int8)
    got = np.bincount(codes, minlength=N_CODES)
    wrong = [f"{card_name(c)} x{int(got[c])}" for c in range(N_CODES) if got[c] != want[c]]
    if wrong:
        if counts is None:
            raise ValueError(f"deck is not two full decks: every card must appear twice, but {', '.join(wrong[:6])}")
        raise ValueError(f"deck is not this variant's deck (K20): {', '.join(wrong[:6])}")
    return codes
