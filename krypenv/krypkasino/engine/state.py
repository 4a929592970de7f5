"""Batched Krypkasino deals: N deals of one rule set, stepped together by compiled kernels.

``DealBatch(rules, n)`` holds the whole state of N deals in one int8 array ``state`` (N, W), a
contiguous record per deal whose columns are listed in :mod:`krypenv.krypkasino.engine.kernels`; one
deal is simply ``n = 1``.  Named numpy views of it are attributes (P = players; card
collections are (…, 52) count vectors, each entry 0–2; every view is int8 except ``done``):

| attribute     | shape        | meaning                                                   |
|---------------|--------------|-----------------------------------------------------------|
| deck          | (N, D)       | deck order, card codes, dealt from index 0 (K6); D = the  |
|               |              | rules' deck size: 104, or fewer for a variant deck (K20)  |
| pos           | (N,)         | next deck index to deal                                   |
| hands         | (N, P, 52)   | each seat's hand                                          |
| table         | (N, 52)      | face-up table cards                                       |
| aside         | (N, 52)      | set-aside pile (K8)                                       |
| piles         | (N, P, 52)   | each seat's capture pile                                  |
| tabbes        | (N, P)       | tabbes per seat, a dubbeltabbe counting two (K14)         |
| turn          | (N,)         | seat to play                                              |
| dealer        | (N,)         | dealer seat                                               |
| round         | (N,)         | round index, 0 = the initial deal's round                 |
| last_capturer | (N,)         | seat that captured last, −1 if none yet                   |
| taker         | (N,)         | seat that took the rest at the end (K15), −1 until done   |
| done          | (N,) bool    | the deal is finished                                      |
| n_moves       | (N,)         | cards played so far                                       |
| in_hands      | (N,)         | cards held in all hands together                          |
| hist_card     | (N, 104)     | card played at each move, −1 after the last               |
| hist_taken    | (N, 104)     | how many table cards each move captured (0 = it crept)    |
| cap_log       | (N, 104)     | the captured table cards of all moves in order, each      |
|               |              | move's cards ascending by code (see ``move_capture``)     |
| n_logged      | (N,)         | entries used in cap_log                                   |

Invariant: deck[pos:] + hands + table + aside + piles = the rules' deck (``rules.deck_counts``:
two full decks in the standard game, K1; a variant deck, K20), at every step.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from krypenv.deals import active_mask, reset_decks
from krypenv.krypkasino.cards import DECK_SIZE, N_CODES, POINTS, card_name
from krypenv.krypkasino.engine import kernels
from krypenv.krypkasino.engine.captures import (
    new_scratch,
)
from krypenv.krypkasino.engine.expansion import (
    legal_captures,
)
from krypenv.krypkasino.rules import Rules
from krypenv.rng import shuffled_deck_rows

FIELDS = (
    "deck", "pos", "hands", "table", "aside", "piles", "tabbes", "turn", "dealer", "round",
    "last_capturer", "taker", "done", "n_moves", "in_hands", "hist_card", "hist_taken", "cap_log", "n_logged",
    "deck_len",
)  # fmt: skip
SCALARS = {
    "pos": kernels.POS, "turn": kernels.TURN, "dealer": kernels.DEALER, "round": kernels.ROUND,
    "last_capturer": kernels.LAST_CAPTURER, "taker": kernels.TAKER, "n_moves": kernels.N_MOVES,
    "in_hands": kernels.IN_HANDS, "n_logged": kernels.N_LOGGED, "deck_len": kernels.DECK_LEN,
}  # fmt: skip
PARALLEL_FROM = 64  # batches at least this large use the parallel drivers

MOVE_ERRORS = {
    kernels.DEAL_OVER: "the deal is already finished",
    kernels.NOT_IN_HAND: "the card is not in the hand of the seat to play",
    kernels.SWEEP_FORCED: "a sweep is forced (K13): play a card that takes the whole table",
    kernels.NOT_ON_TABLE: "the capture takes cards that are not on the table",
    kernels.NOT_MAXIMAL: "the capture is not a maximal capture of the played card (K10–K12)",
    kernels.MUST_TAKE_ALL: "a forced sweep must take the whole table (K13)",
    kernels.BAD_COUNTS: "capture counts must be non-negative",
}


def _packets(pattern: Sequence[tuple[str, int]]) -> tuple[np.ndarray, np.ndarray]:
    kinds = np.array([kernels.PACKET_TABLE if kind == "T" else kernels.PACKET_PLAYERS for kind, _ in pattern],
                     dtype=np.int64)
    return kinds, np.array([k for _, k in pattern], dtype=np.int64)


def shuffled_decks(rng: np.random.Generator, n: int, rules: Rules | None = None) -> np.ndarray:
    """``n`` deck orders (n, D) int8 from a numpy Generator; D = 104, or the variant deck's size (K20).

    Row i is the Fisher–Yates shuffle (:func:`krypenv.rng.shuffled_deck_rows`) of the ordered
    deck (K1: two decks; a variant: its kinds once per copy) driven by row i of
    ``rng.random((n, D - 1))``, so row i never depends on n: the same seed gives the same
    decks at any batch size.  The shuffle orders kind indices, which are the card codes in
    the standard game.
    """
    if rules is None or rules.is_standard:
        return shuffled_deck_rows(rng, n, DECK_SIZE, N_CODES)
    kinds = rules.kinds
    return kinds.astype(np.int8)[shuffled_deck_rows(rng, n, rules.deck_size, len(kinds))]


def shuffled_deck(rng: np.random.Generator, rules: Rules | None = None) -> np.ndarray:
    """One deck order (D,) int8 from a numpy Generator: :func:`shuffled_decks` with n = 1."""
    return shuffled_decks(rng, 1, rules)[0]


class IllegalMoveError(ValueError):
    """A move that the rules do not allow; the message names the move and why."""


def _check_decks(decks: np.ndarray, mask: np.ndarray, rules: Rules | None = None) -> None:
    """ValueError unless every active deal's deck is the rules' deck: two full decks of codes 0..51 (K1), or the
    variant deck ``rules.deck_counts`` (K20)."""
    n = decks.shape[0]
    codes = decks.astype(np.int64)
    in_range = ((codes >= 0) & (codes < N_CODES)).all(axis=1)
    rows = np.arange(n)[:, None] * N_CODES
    counts = np.bincount((rows + np.clip(codes, 0, N_CODES - 1)).ravel(), minlength=n * N_CODES)
    want = 2 if rules is None else rules.deck_counts[None, :]
    bad = mask & ~(in_range & (counts.reshape(n, N_CODES) == want).all(axis=1))
    if bad.any():
        what = "two full decks of codes 0..51" if rules is None or rules.is_standard else "this variant's deck (K20)"
        raise ValueError(f"deck of deal {int(np.flatnonzero(bad)[0])} is not {what}")


class DealBatch:
    """N deals of one rule set, stepped together by compiled kernels."""

    def __init__(self, rules: Rules, n: int = 1, state: np.ndarray | None = None) -> None:
        """N deals of ``rules``, all finished until :meth:`reset`.

        ``state`` may supply the (N, W') int8 array to live in (W' ≥ ``record_width``): an env
        keeps its own columns after the engine's, in the same rows.
        """
        if not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"batch size must be a positive integer, got {n!r}")
        self.rules = rules
        self.n = int(n)
        self.width = kernels.record_width(rules.players)
        if state is None:
            state = np.zeros((self.n, self.width), np.int8)
            state[:, kernels.DONE] = 1
        if state.dtype != np.int8 or state.ndim != 2 or state.shape[0] != self.n or state.shape[1] < self.width:
            raise ValueError(f"state must be an int8 array of shape ({self.n}, >= {self.width})")
        self.state = state
        self._views()
        self._initial = _packets(rules.initial_pattern)
        self._later = _packets(rules.later_pattern)
        self._spades = rules.set_aside == "spades"
        self._par = self.n >= PARALLEL_FROM
        # capture-search scratch, one row per parallel chunk (a few chunks per thread)
        chunks = min(self.n, 4 * numba.config.NUMBA_NUM_THREADS) if self._par else 1
        self._scr = np.stack([new_scratch() for _ in range(chunks)])

    def _views(self) -> None:
        """Bind the named views of ``state`` (see the module docstring)."""
        st, n, p = self.state, self.n, self.rules.players
        piles, tabbes = kernels.HANDS + 52 * p, kernels.HANDS + 104 * p
        self.deck = st[:, kernels.DECK:kernels.DECK + self.rules.deck_size]
        self.table = st[:, kernels.TABLE:kernels.TABLE + N_CODES]
        self.aside = st[:, kernels.ASIDE:kernels.ASIDE + N_CODES]
        self.hist_card = st[:, kernels.HIST_CARD:kernels.HIST_CARD + DECK_SIZE]
        self.hist_taken = st[:, kernels.HIST_TAKEN:kernels.HIST_TAKEN + DECK_SIZE]
        self.cap_log = st[:, kernels.CAP_LOG:kernels.CAP_LOG + DECK_SIZE]
        self.hands = st[:, kernels.HANDS:piles].reshape(n, p, N_CODES)
        self.piles = st[:, piles:tabbes].reshape(n, p, N_CODES)
        self.tabbes = st[:, tabbes:tabbes + p]
        for name, col in SCALARS.items():
            setattr(self, name, st[:, col])
        self.done = st[:, kernels.DONE].view(np.bool_)
        assert np.shares_memory(self.hands, st) and np.shares_memory(self.piles, st)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in FIELDS}

    def __setstate__(self, d: dict) -> None:
        self.__dict__.update(d)
        self._views()

    @property
    def nbytes_per_deal(self) -> int:
        """State memory per deal in bytes (one record)."""
        return self.width

    # ----------------------------------------------------------------- dealing (K9, K10)
    def reset(
        self,
        decks: np.ndarray | None = None,
        dealers: int | np.ndarray | None = None,
        rng: np.random.Generator | None = None,
        active: np.ndarray | None = None,
    ) -> None:
        """Start new deals: from explicit deck orders (N, D), or decks shuffled by ``rng`` (D = ``rules.deck_size``).

        ``dealers`` defaults to seat P−1 (K5).  ``active`` restricts the reset to some deals.
        """
        mask = active_mask(active, self.n)
        rules = self.rules
        decks = reset_decks(decks, rng, mask, rules.deck_size, lambda g, k: shuffled_decks(g, k, rules),
                            lambda given, m: _check_decks(given, m, rules))
        p = self.rules.players
        dealers = np.asarray(p - 1 if dealers is None else dealers, np.int64)
        if dealers.ndim == 0:  # one dealer seat for every deal
            dealers = np.full(self.n, int(dealers), np.int64)
        if dealers.shape != (self.n,) or (dealers < 0).any() or (dealers >= p).any():
            raise ValueError(f"dealers must be seats 0..{p - 1}, got {dealers}")
        driver = kernels.reset_many_par if self._par else kernels.reset_many_ser
        driver(self.state, self.rules.players, mask, decks, dealers, *self._initial, self._spades,
               self._scr)

    # ----------------------------------------------------------------- legality
    def legal_cards(self, out: np.ndarray | None = None) -> np.ndarray:
        """(N, 52) bool: the cards the seat to play may play (K13); all False for finished deals."""
        if out is None:
            out = np.zeros((self.n, N_CODES), np.bool_)
        (kernels.legal_cards_par if self._par else kernels.legal_cards_ser)(self.state, out, self._scr)
        return out

    def legal_captures(self, i: int, card: int) -> np.ndarray:
        """(M, 52) int8: the captures ``card`` may legally take in deal ``i`` (M = 0: it creeps)."""
        if not self.legal_cards()[i, card]:
            raise IllegalMoveError(f"{card_name(card)} is not a legal card here")
        return legal_captures(self.hands[i, self.turn[i]], self.table[i], int(card))

    def legal_moves(self, i: int = 0) -> list[tuple[int, np.ndarray]]:
        """Every legal (card, capture counts) move of deal ``i``, cards in code order."""
        if self.done[i]:
            return []
        mask = self.legal_cards()[i]
        moves = []
        for card in np.flatnonzero(mask):
            caps = legal_captures(self.hands[i, self.turn[i]], self.table[i], int(card))
            if caps.shape[0] == 0:
                moves.append((int(card), np.zeros(N_CODES, np.int8)))
            moves.extend((int(card), cap) for cap in caps)
        return moves

    # ----------------------------------------------------------------- stepping
    def step(self, cards: np.ndarray, captures: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        """Play one move in every active deal; returns the (N,) move-check codes (0 = played).

        An illegal move changes nothing in its deal; :meth:`step_checked` raises instead.
        """
        mask = active_mask(active, self.n)
        cards = np.asarray(cards, np.int64).reshape(self.n)
        captures = np.asarray(captures, np.int8).reshape(self.n, N_CODES)
        status = np.zeros(self.n, np.int64)
        driver = kernels.step_many_par if self._par else kernels.step_many_ser
        driver(self.state, self.rules.players, mask, cards, captures, status, *self._later, self._spades, self._scr)
        return status

    def step_checked(self, cards: np.ndarray, captures: np.ndarray, active: np.ndarray | None = None) -> None:
        """Like :meth:`step`, but raise IllegalMoveError naming the first illegal move."""
        status = self.step(cards, captures, active)
        bad = np.flatnonzero(status)
        if bad.size:
            i = int(bad[0])
            raise IllegalMoveError(f"deal {i}: illegal move, {MOVE_ERRORS[int(status[i])]}")

    def random_moves(self, rng: np.random.Generator, active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Uniform random legal moves (a legal card, then one of its legal captures), not applied."""
        mask = active_mask(active, self.n)
        u = rng.random((self.n, 2))
        cards = np.full(self.n, -1, np.int64)
        caps = np.zeros((self.n, N_CODES), np.int8)
        (kernels.random_moves_par if self._par else kernels.random_moves_ser)(self.state, mask, u, cards, caps,
                                                                              self._scr)
        return cards, caps

    def play_random(self, rng: np.random.Generator) -> None:
        """Play one uniform random legal move in every unfinished deal (the benchmark's fast path)."""
        u = rng.random((self.n, 2))
        driver = kernels.play_random_par if self._par else kernels.play_random_ser
        driver(self.state, self.rules.players, u, *self._later, self._spades, self._scr)

    def move_capture(self, i: int, m: int) -> np.ndarray:
        """(52,) int8 counts of the table cards that move ``m`` of deal ``i`` captured (all zero: it crept)."""
        if not 0 <= m < int(self.n_moves[i]):
            raise ValueError(f"deal {i} has no move {m}: {int(self.n_moves[i])} moves played")
        start = int(self.hist_taken[i, :m].sum())
        codes = self.cap_log[i, start:start + int(self.hist_taken[i, m])].astype(np.int64)
        return np.bincount(codes, minlength=N_CODES).astype(np.int8)

    # ----------------------------------------------------------------- scoring
    def card_points(self) -> np.ndarray:
        """(N, P) card points in each seat's capture pile (K4)."""
        return self.piles.astype(np.int64) @ POINTS

    def scores(self) -> np.ndarray:
        """(N, P) deal scores so far (K16, K17); final once ``done``."""
        t = self.tabbes.astype(np.int64)
        s = self.card_points() + 5 * t - 5 * np.roll(t, -1, axis=1)
        if self.rules.last_capture_point:
            finished = np.flatnonzero(self.done & (self.taker >= 0))
            s[finished, self.taker[finished]] += 1
        return s

    def scores_of(self, i: int) -> np.ndarray:
        """(P,) deal scores of deal ``i`` alone (K16, K17)."""
        t = self.tabbes[i].astype(np.int64)
        s = self.piles[i].astype(np.int64) @ POINTS + 5 * t - 5 * np.roll(t, -1)
        if self.rules.last_capture_point and self.done[i] and self.taker[i] >= 0:
            s[self.taker[i]] += 1
        return s

    def team_scores(self) -> np.ndarray:
        """(N, n_teams) scores per team (K18), or per seat without teams."""
        s = self.scores()
        if self.rules.teams is None:
            return s
        return np.stack([s[:, list(team)].sum(axis=1) for team in self.rules.teams], axis=1)

    def card_census(self) -> np.ndarray:
        """(N, 52) copies of each card found in deck remainder, hands, table, pile and capture piles (K1, K20)."""
        counts = (self.hands.sum(axis=1, dtype=np.int64) + self.table + self.aside
                  + self.piles.sum(axis=1, dtype=np.int64))
        for i in range(self.n):
            counts[i] += np.bincount(self.deck[i, self.pos[i]:].astype(np.int64), minlength=N_CODES)
        return counts

    # ----------------------------------------------------------------- hand-built positions
    @classmethod
    def position(
        cls,
        rules: Rules,
        hands: Sequence[Sequence[str]],
        table: Sequence[str],
        turn: int = 0,
        dealer: int | None = None,
        deck_rest: Sequence[str] = (),
        aside: Sequence[str] = (),
        last_capturer: int = -1,
    ) -> DealBatch:
        """A single deal set up by hand (worked examples, tests): hands per seat, table, undealt cards.

        Card conservation is not required of such a position; everything else behaves as in play.
        """
        from krypenv.krypkasino.cards import card_code, counts_from_names

        if len(hands) != rules.players:
            raise ValueError(f"position needs {rules.players} hands, got {len(hands)}")
        d = cls(rules, 1)
        d.hands[0] = np.stack([counts_from_names(h) for h in hands])
        d.table[0] = counts_from_names(table)
        d.aside[0] = counts_from_names(aside)
        rest = [card_code(c) for c in deck_rest]
        d.pos[0] = rules.deck_size - len(rest)
        d.deck_len[0] = rules.deck_size
        d.deck[0, d.pos[0]:] = rest
        if not rules.is_standard:  # the dealt part lists the variant's other cards, so the deck reads as its (K20)
            dealt = [c for c in range(N_CODES) for _ in range(max(0, int(rules.deck_counts[c]) - rest.count(c)))]
            d.deck[0, :min(len(dealt), int(d.pos[0]))] = dealt[:int(d.pos[0])]
        d.turn[0] = turn
        d.dealer[0] = rules.players - 1 if dealer is None else dealer
        d.last_capturer[0] = last_capturer
        d.done[0] = False
        d.in_hands[0] = int(d.hands[0].sum())
        return d
