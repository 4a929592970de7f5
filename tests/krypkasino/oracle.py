"""Slow, obvious reference implementations of the Krypkasino rules for the tests (RULES.md).

Nothing here imports the engine: card codes, values, captures, legal moves and a whole
reference deal are written again from RULES.md, as plainly as possible.

* :func:`maximal_captures` enumerates every sub-multiset of the table (itertools, 2^n)
  and keeps those that split into combinations of the played value (K10) and leave no
  combination behind (K11).  Keep tables at most ~12 cards for it.
* :func:`legal_moves` adds K12 (creep) and K13 (forced sweep).
* :func:`value_captures` / :func:`count_captures` do the same at the level of value counts
  with memoisation, for large tables (20+ cards).
* :class:`RefDeal` plays a whole deal (K6–K9, K14–K17) on plain Python lists and dicts.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from functools import cache

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("C", "D", "H", "S")

Counts = tuple[int, ...]  # 52 entries, copies of each card code
Move = tuple[int, Counts]  # (played card code, captured counts; all zero = creep)

# K6 initial deal patterns, copied from the table in RULES.md.
PATTERNS: dict[str, list[tuple[str, int]]] = {
    "2": [("P", 3), ("T", 2), ("P", 3), ("T", 2)],
    "2/5+6": [("P", 3), ("T", 3), ("P", 2), ("T", 3)],
    "3": [("P", 3), ("T", 3), ("P", 2), ("T", 2)],
    "4": [("P", 3), ("T", 2), ("P", 2), ("T", 2)],
    "5": [("P", 2), ("T", 2), ("P", 2), ("T", 2)],
    "6": [("P", 3), ("T", 2), ("P", 2)],
}


# ----------------------------------------------------------------------------- cards
def code(name: str) -> int:
    """Card code of a name such as '10D' (K2: suit * 13 + rank)."""
    return SUITS.index(name[-1]) * 13 + RANKS.index(name[:-1])


def name(c: int) -> str:
    """Card name of a code 0..51 (K2)."""
    return RANKS[c % 13] + SUITS[c // 13]


def table_value(c: int) -> int:
    """K3 value of a card lying on the table (ace 1)."""
    return c % 13 + 1


def hand_value(c: int) -> int:
    """K3 value of a card played from the hand (ace 14)."""
    return 14 if c % 13 == 0 else c % 13 + 1


def points(c: int) -> int:
    """K4 card points of one card."""
    n = name(c)
    if n == "10D":
        return 3
    if n in ("2S", "AS"):
        return 2
    if n.endswith("S") or n.startswith("A"):
        return 1
    return 0


def counts(cards: Iterable[str | int] | Sequence[int]) -> Counts:
    """A 52-tuple of copies from card names, card codes, or an existing count vector of length 52."""
    cards = list(cards)
    if len(cards) == 52 and all(not isinstance(x, str) and 0 <= int(x) <= 2 for x in cards):
        return tuple(int(x) for x in cards)
    out = [0] * 52
    for x in cards:
        out[code(x) if isinstance(x, str) else int(x)] += 1
    return tuple(out)


def card_list(cnt: Sequence[int]) -> list[int]:
    """Card codes of a count vector, each repeated by its count."""
    return [c for c in range(52) for _ in range(int(cnt[c]))]


def names_of(cnt: Sequence[int]) -> list[str]:
    """Sorted card names of a count vector (with repeats)."""
    return [name(c) for c in card_list(cnt)]


def sub(a: Sequence[int], b: Sequence[int]) -> Counts:
    """Element-wise a - b of two count vectors."""
    return tuple(int(x) - int(y) for x, y in zip(a, b))


# ----------------------------------------------------------------------------- captures
def has_combination(values: Sequence[int], v: int) -> bool:
    """K10: is there a non-empty subset of the values summing to v?"""
    sums = {0}
    for x in values:
        sums |= {s + x for s in sums if s + x <= v}
    return v in sums


@cache
def splits_into(values: tuple[int, ...], v: int) -> bool:
    """Can the sorted values be split into disjoint groups each summing to v? (K11)"""
    if not values:
        return True
    first, rest = values[0], values[1:]
    for r in range(len(rest) + 1):
        for idx in itertools.combinations(range(len(rest)), r):
            if first + sum(rest[i] for i in idx) == v:
                left = tuple(x for i, x in enumerate(rest) if i not in idx)
                if splits_into(left, v):
                    return True
    return False


def maximal_captures(table: Iterable[str | int] | Sequence[int], card: int | str) -> set[Counts]:
    """Every distinct maximal capture (K10, K11) of a played card on a table, ignoring K13; empty set = creep."""
    t = counts(table)
    card = code(card) if isinstance(card, str) else int(card)
    v = hand_value(card)
    present = [c for c in range(52) if t[c]]
    out: set[Counts] = set()
    for choice in itertools.product(*(range(t[c] + 1) for c in present)):
        if not any(choice):
            continue
        cap = [0] * 52
        for c, k in zip(present, choice):
            cap[c] = k
        taken = sorted(table_value(c) for c in card_list(cap))
        left = [table_value(c) for c in card_list(sub(t, cap))]
        if splits_into(tuple(taken), v) and not has_combination(left, v):
            out.add(tuple(cap))
    return out


def legal_moves(hand: Iterable[str | int] | Sequence[int], table: Iterable[str | int] | Sequence[int]) -> set[Move]:
    """Every legal move of the seat holding ``hand`` (K11–K13): (card, capture counts), creep = all zeros."""
    h, t = counts(hand), counts(table)
    caps = {c: maximal_captures(t, c) for c in range(52) if h[c]}
    sweepers = [c for c, cs in caps.items() if any(t) and t in cs]
    if sweepers:  # K13: only sweeping cards, and they take the whole table
        return {(c, t) for c in sweepers}
    zero = (0,) * 52
    return {(c, cap) for c, cs in caps.items() for cap in (cs or {zero})}


# ----------------------------------------------------------------------------- value level (big tables)
def value_counts(table: Iterable[str | int] | Sequence[int]) -> tuple[int, ...]:
    """14-tuple: entry k = number of table cards of table value k (entry 0 unused)."""
    t = counts(table)
    out = [0] * 14
    for c in range(52):
        out[table_value(c)] += t[c]
    return tuple(out)


@cache
def _value_split(vc: tuple[int, ...], v: int) -> bool:
    """Can the value multiset vc (14-tuple) be split into groups each summing to v?"""
    if not any(vc):
        return True
    top = max(k for k in range(14) if vc[k])
    rest = list(vc)
    rest[top] -= 1
    return any(_value_split(tuple(a - b for a, b in zip(rest, g)), v) for g in _value_groups(tuple(rest), v - top))


@cache
def _value_groups(vc: tuple[int, ...], target: int) -> list[tuple[int, ...]]:
    """All sub-multisets (14-tuples) of vc summing to target (target 0 gives the empty one)."""
    out: list[tuple[int, ...]] = []
    ranges = [range(min(vc[k], target // k) + 1) if k else range(1) for k in range(14)]
    for choice in itertools.product(*ranges):
        if sum(k * n for k, n in enumerate(choice)) == target:
            out.append(tuple(choice))
    return out


def can_sweep(table: Iterable[str | int] | Sequence[int], v: int) -> bool:
    """K13 at value level: does the whole (non-empty) table split into combinations of value v?"""
    vc = value_counts(table)
    return any(vc) and _value_split(vc, v)


def value_captures(table: Iterable[str | int] | Sequence[int], v: int) -> set[tuple[int, ...]]:
    """Maximal captures of played value v as value-count 14-tuples (K11), by brute force over sub-multisets."""
    vc = value_counts(table)
    out: set[tuple[int, ...]] = set()
    for choice in itertools.product(*(range(n + 1) for n in vc)):
        if not any(choice) or sum(k * n for k, n in enumerate(choice)) % v:
            continue  # a union of combinations of v sums to a multiple of v
        left = [k for k in range(14) for _ in range(vc[k] - choice[k])]
        if not has_combination(left, v) and _value_split(tuple(choice), v):
            out.add(tuple(choice))
    return out


def _suit_choices(avail: Sequence[int], need: int) -> list[tuple[int, ...]]:
    """Ways to take ``need`` cards from per-suit availabilities (each 0..2), as per-suit counts."""
    return [x for x in itertools.product(*(range(a + 1) for a in avail)) if sum(x) == need]


def expand(table: Iterable[str | int] | Sequence[int], vcap: Sequence[int]) -> set[Counts]:
    """Every card-level capture (52-tuples) realising a value-level capture on this table."""
    t = counts(table)
    per_value = []
    for k in range(1, 14):
        codes = [s * 13 + k - 1 for s in range(4)]
        opts = _suit_choices([t[c] for c in codes], vcap[k]) if vcap[k] else [(0, 0, 0, 0)]
        per_value.append([(codes, o) for o in opts])
    out: set[Counts] = set()
    for combo in itertools.product(*per_value):
        cap = [0] * 52
        for codes, o in combo:
            for c, n in zip(codes, o):
                cap[c] = n
        out.add(tuple(cap))
    return out


def count_captures(table: Iterable[str | int] | Sequence[int], v: int) -> int:
    """Number of distinct card-level maximal captures of value v (product of suit choices per value)."""
    t = counts(table)
    total = 0
    for vcap in value_captures(t, v):
        n = 1
        for k in range(1, 14):
            if vcap[k]:
                n *= len(_suit_choices([t[s * 13 + k - 1] for s in range(4)], vcap[k]))
        total += n
    return total


# ----------------------------------------------------------------------------- a whole deal
class RefDeal:
    """One deal played by the book (K6–K9, K14–K17), on Python lists; slow and plain."""

    def __init__(
        self,
        players: int,
        deck: Sequence[int],
        dealer: int,
        five_plus_six: bool = False,
        spades: bool = False,
        last_capture_point: bool = False,
        hand: int | None = None,
        table: int | None = None,
    ) -> None:
        """Deal the initial packets (K6) from ``deck`` (104 codes, or a variant deck: K20) and set aside (K8).

        ``hand`` and ``table`` (K21): the initial deal is ``hand`` cards to each player, then
        ``table`` cards on the table, and every later round ``hand`` cards to each player.
        """
        self.p = players
        self.deck = list(deck)
        self.pos = 0
        self.dealer = dealer
        self.spades = spades
        self.lcp = last_capture_point
        self.hands: list[list[int]] = [[0] * 52 for _ in range(players)]
        self.table = [0] * 52
        self.aside = [0] * 52
        self.piles: list[list[int]] = [[0] * 52 for _ in range(players)]
        self.tabbes = [0] * players
        self.last_capturer = -1
        self.taker = -1
        self.done = False
        self.turn = (dealer + 1) % players  # K9
        pattern = PATTERNS["2/5+6" if five_plus_six else str(players)]
        self.later: list[tuple[str, int]] = [("P", 2), ("P", 2)]  # K7
        if hand is not None and table is not None:  # K21
            pattern, self.later = [("P", hand), ("T", table)], [("P", hand)]
        self._deal(pattern)
        self._set_aside()

    def _deal(self, pattern: Sequence[tuple[str, int]]) -> None:
        """K6/K7: packets from the deck front, players clockwise from the dealer's left."""
        for kind, k in pattern:
            if kind == "T":
                for _ in range(k):
                    self.table[self.deck[self.pos]] += 1
                    self.pos += 1
            else:
                for off in range(1, self.p + 1):
                    seat = (self.dealer + off) % self.p
                    for _ in range(k):
                        self.hands[seat][self.deck[self.pos]] += 1
                        self.pos += 1

    def _set_aside(self) -> None:
        """K8: court cards (or spades in the variant) go from the table to the set-aside pile."""
        for c in range(52):
            if self.table[c] and ((c // 13 == 3) if self.spades else (c % 13 >= 10)):
                self.aside[c] += self.table[c]
                self.table[c] = 0

    def legal_moves(self) -> set[Move]:
        """Legal moves of the seat to play (oracle, K11–K13)."""
        return set() if self.done else legal_moves(self.hands[self.turn], self.table)

    def play(self, card: int, cap: Sequence[int]) -> None:
        """Apply a move (assumed legal): capture or creep, tabbe (K14), new round (K7, K8), end (K15)."""
        s = self.turn
        self.hands[s][card] -= 1
        n_before = sum(self.table)
        taken = sum(cap)
        if taken == 0:
            self.table[card] += 1
        else:
            for c in range(52):
                self.table[c] -= cap[c]
                self.piles[s][c] += cap[c]
            self.piles[s][card] += 1
            self.last_capturer = s
            if taken == n_before:
                lone_twin = taken == 1 and cap[card] == 1 and card % 13 != 0
                self.tabbes[s] += 2 if lone_twin else 1
        self.turn = (s + 1) % self.p
        if not any(any(h) for h in self.hands):
            if self.pos < len(self.deck):
                self._set_aside()
                self._deal(self.later)
                self.turn = (self.dealer + 1) % self.p
            else:
                t = self.last_capturer if self.last_capturer >= 0 else self.dealer
                for c in range(52):
                    self.piles[t][c] += self.table[c] + self.aside[c]
                self.table = [0] * 52
                self.aside = [0] * 52
                self.taker = t
                self.done = True

    def card_points(self) -> list[int]:
        """K4 points in each capture pile."""
        return [sum(points(c) * n for c, n in enumerate(pile)) for pile in self.piles]

    def scores(self) -> list[int]:
        """K16 (and K17) deal scores so far."""
        cp = self.card_points()
        s = [cp[i] + 5 * self.tabbes[i] - 5 * self.tabbes[(i + 1) % self.p] for i in range(self.p)]
        if self.lcp and self.done:
            s[self.taker] += 1
        return s
