"""Cards of Kungsholmskille: the 21 ranks of a kille deck and deck orders (KILLE.md L1).

A kille deck holds 42 cards: 21 ranks, each exactly twice, the two copies
indistinguishable.  A card is therefore just its *rank index*, 0 (lowest) … 20 (highest),
and a collection of cards is a (21,) count vector (entries 0–2).  The record names, in
index order:

| index | 0        | 1         | 2     | 3 … 14   | 15       | 16     | 17   | 18    | 19  | 20    |
|-------|----------|-----------|-------|----------|----------|--------|------|-------|-----|-------|
| name  | blaren   | blompotta | krans | 1 … 12   | vardshus | kavall | svin | husar | gok | kille |

(``3`` is index 5, ``12`` is index 14.)  No card has any power beyond its rank.

A *deck order* is a (42,) int8 array of rank indices, dealt from index 0 (L4).  A smaller deck
(L20: the lowest ``ranks`` ranks, each twice) is a (2·ranks,) array of indices 0 … ranks−1;
every function below takes ``ranks`` (default 21, the kille deck).
:func:`shuffled_decks` draws them from a numpy Generator so that row i never depends on how
many rows are drawn: the same seed gives the same decks at any batch size.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from krypenv.rng import shuffled_deck_rows

RANKS: tuple[str, ...] = ("blaren", "blompotta", "krans", *(str(k) for k in range(1, 13)),
                          "vardshus", "kavall", "svin", "husar", "gok", "kille")
N_RANKS = 21  # distinct ranks (L1)
N_COPIES = 2  # each rank twice (L1)
DECK_SIZE = N_RANKS * N_COPIES  # 42
HAND_SIZE = 5  # cards dealt to each player (L4)
assert len(RANKS) == N_RANKS and RANKS[5] == "3" and RANKS[14] == "12"

_INDEX: dict[str, int] = {name: i for i, name in enumerate(RANKS)}


def rank_index(name: str) -> int:
    """Index 0–20 of a rank name such as ``"gok"`` or ``"7"`` (L1); ValueError naming the bad name."""
    if isinstance(name, str) and name in _INDEX:
        return _INDEX[name]
    raise ValueError(f"unknown rank name {name!r}: the ranks are {', '.join(RANKS)}")


def rank_name(index: int) -> str:
    """Name of a rank index 0–20 (L1)."""
    if isinstance(index, bool) or not 0 <= int(index) < N_RANKS:
        raise ValueError(f"rank index {index!r} is outside 0..{N_RANKS - 1}")
    return RANKS[int(index)]


def counts_from_names(names: Iterable[str]) -> np.ndarray:
    """Count vector (21,) int8 of a list of rank names."""
    counts = np.zeros(N_RANKS, np.int8)
    for name in names:
        counts[rank_index(name)] += 1
    return counts


def names_from_counts(counts: Sequence[int] | np.ndarray) -> list[str]:
    """Rank names of a count vector, lowest first, each repeated by its count."""
    return [RANKS[r] for r in range(N_RANKS) for _ in range(int(counts[r]))]


def ordered_deck(ranks: int = N_RANKS) -> np.ndarray:
    """The 2·ranks rank indices of an unshuffled deck: 0..ranks−1 twice (L1, L20)."""
    return np.concatenate([np.arange(ranks), np.arange(ranks)]).astype(np.int8)


def deck_names(deck: Sequence[int] | np.ndarray) -> list[str]:
    """Rank names of a deck order (the record's ``deck``)."""
    return [RANKS[int(r)] for r in deck]


def check_deck(deck: np.ndarray, ranks: int = N_RANKS) -> str | None:
    """Why an array of rank indices is not a deck of the lowest ``ranks`` ranks twice (L1, L20), or None."""
    deck = np.asarray(deck)
    size = N_COPIES * ranks
    if deck.shape != (size,):
        return f"a deck must hold {size} cards, got shape {deck.shape}"
    if not np.issubdtype(deck.dtype, np.integer) or (deck < 0).any() or (deck >= ranks).any():
        return f"deck entries must be rank indices 0..{ranks - 1}"
    counts = np.bincount(deck.astype(np.int64), minlength=ranks)
    wrong = [f"{RANKS[r]} x{int(counts[r])}" for r in range(ranks) if counts[r] != N_COPIES]
    if wrong:
        where = "(L1)" if ranks == N_RANKS else f"of the lowest {ranks} (L20)"
        return f"the deck is not {ranks} ranks twice {where}: {', '.join(wrong[:6])}"
    return None


def parse_deck(names: Sequence[str], ranks: int = N_RANKS) -> np.ndarray:
    """Deck order (2·ranks,) int8 from rank names; ValueError unless it is the lowest ``ranks`` ranks twice (L20)."""
    size = N_COPIES * ranks
    if not isinstance(names, (list, tuple)) or len(names) != size:
        got = f"{len(names)} cards" if isinstance(names, (list, tuple)) else type(names).__name__
        raise ValueError(f"a deck must list {size} rank names, got {got}")
    deck = np.array([rank_index(n) for n in names], np.int8)
    why = check_deck(deck, ranks)
    if why:
        raise ValueError(why)
    return deck


def shuffled_decks(rng: np.random.Generator, n: int, ranks: int = N_RANKS) -> np.ndarray:
    """``n`` deck orders (n, 2·ranks) int8; row i is driven by row i of ``rng.random((n, 2·ranks − 1))`` only."""
    return shuffled_deck_rows(rng, n, N_COPIES * ranks, ranks)


def shuffled_deck(rng: np.random.Generator, ranks: int = N_RANKS) -> np.ndarray:
    """One deck order (2·ranks,) int8: :func:`shuffled_decks` with n = 1."""
    return shuffled_decks(rng, 1, ranks)[0]
