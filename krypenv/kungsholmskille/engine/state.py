"""Batched Kungsholmskille deals: N deals of one player count, stepped together by compiled kernels.

``DealBatch(rules, n)`` holds N deals in two fixed-shape arrays, ``state`` int16 (N, WIDTH) and
``cash`` int32 (N, 16), one record per deal (layout in :mod:`krypenv.kungsholmskille.engine.kernels`);
one deal is simply ``n = 1`` and runs the same code as 4096.  Named numpy views of them are
attributes (P = players, M = 9·P − 1 = ``rules.max_moves``; −1 = none / not yet; writes go
to the state):

| attribute     | shape       | meaning                                                        |
|---------------|-------------|----------------------------------------------------------------|
| deck          | (N, D)      | deck order, rank indices (L1, L4); D = ``rules.deck_size``     |
|               |             | (42, or 2·ranks for a smaller deck, L20)                       |
| talon_pos     | (N,)        | deck index of the talon's front card; the talon is deck[pos:]  |
| dealer        | (N,)        | dealer seat (L2)                                               |
| forehand      | (N,)        | current forehand: dealer+1, moved on when it folds (L7)        |
| to_act        | (N,)        | seat to act, −1 once done                                      |
| phase         | (N,)        | FIRST_CALL, FOLDING, EXCHANGE, SECOND_CALL, TRICKS, SHOWING,   |
|               |             | FINISHED (``PHASE_NAMES``)                                     |
| done          | (N,) bool   | the deal is finished (a property: a fresh array)               |
| n_in          | (N,)        | players still in                                               |
| knocker1/2    | (N,)        | who knocked in the first (L5) / second (L9) call               |
| trick         | (N,)        | current trick 0–3, 4 after the fourth                          |
| n_played      | (N,)        | cards played to the current trick                              |
| high          | (N,)        | highest rank played to the current trick (L10)                 |
| hands         | (N, P, 21)  | each seat's hand, rank counts                                  |
| folded        | (N, P)      | 1 if the seat folded (L6)                                      |
| exchanged     | (N, P)      | how many cards each seat exchanged (public; 0 = stand) (L8)    |
| discards      | (N, P, 2)   | which ranks each seat discarded (private to it)                |
| call1, call2  | (N, P)      | BUD (0) or KNACKA (1) said in the first / second call          |
| fold_calls    | (N, P)      | FOLD (2) or STAY (3)                                           |
| show_calls    | (N, P)      | BUD (0) or SHOW (5) (L11)                                      |
| trick_lead    | (N, 4)      | who led each trick                                             |
| trick_winner  | (N, 4)      | who won each trick                                             |
| trick_cards   | (N, 4, P)   | the rank each seat played to each trick                        |
| hist_action   | (N, M)      | action index of every move, in order                           |
| hist_seat     | (N, M)      | the seat that made it                                          |
| n_moves       | (N,)        | moves made so far                                              |
| pot_deal      | (N,)        | the deal's number within its pot, 0 first (L21)                |
| last          | (N,)        | 1 if it is its pot's last deal: a budrunda settles it (L21)    |
| outcome       | (N,)        | BUDRUNDA 0, WALKOVER 1, SHOWDOWN 2, SETTLED 3 once done        |
| winner        | (N,)        | who took the pot (−1 after a budrunda)                         |
| shower        | (N,)        | the first to show (−1 unless showdown)                         |
| pot           | (N,) int32  | the pot at the start of the deal, antes for it paid            |
| penalty       | (N,) int32  | what the shower paid the winner (L14)                          |
| money         | (N, P) int32| money change from the deal's ending (L18), 0 until done        |
| antes_next    | (N, P) int32| antes into the next pot (L12, L14, L15), 0 until done          |
| pot_next      | (N,) int32  | the next deal's starting pot (L18), 0 until done               |

Invariant at every step: hands + talon + discards + cards played = the deck's cards (L1, L20;
:meth:`DealBatch.card_census`).  Batches of at least ``PARALLEL_FROM`` deals use the
parallel (``prange``) kernels.

The methods:

- ``reset(decks=None, dealers=None, pots=None, rng=None, active=None, deals=None)`` deals (L4);
  a deal depends only on (rules, dealer, pot, deck order, its number ``deals`` in the pot).  One
  ``DealBatch`` plays one deal per row: a session of deals passes the deal to the left itself
  (L2: ``dealers=dealer + 1``, ``pots=pot_next``, ``deals=deal + 1``) and truncates endless pots
  itself (L16).  With ``rules.max_deals`` set, deal number ``max_deals − 1`` is the pot's last:
  a budrunda there settles the pot (outcome ``settled``, L21), so ``pot_settled`` tells that
  the pot is over, and ``money`` is each seat's share of it.
- ``legal_masks(out=None) -> (N, 279) bool``; ``legal_actions(i)``, ``legal_moves(i)`` (L17
  strings in action-index order).
- ``step(actions)`` raises :class:`IllegalMoveError` (nothing changes in any deal) or applies one
  action per unfinished deal (finished deals are skipped, −1 is fine there); ``step_status``
  applies the legal ones and returns (N,) codes (``MOVE_ERRORS``); ``check`` only checks;
  ``play_action(i, a)``, ``play_move(i, "play:gok")``; ``play_random(rng)`` (compiled).
- ``why_illegal(i, a)`` / ``explain(i, a)``: the reason in words, citing the rule.
- ``result(i)``: the L18 result dict once done; ``talon(i)``, ``played(i)``, ``discarded(i)``,
  ``card_census(i)``, ``moves(i)``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numba
import numpy as np

from krypenv.deals import active_mask, reset_decks
from krypenv.kungsholmskille.actions import (
    DISCARD1,
    DISCARD2,
    N_ACTIONS,
    PAIR_X,
    PAIR_Y,
    PLAY,
    action_name,
    parse_move,
)  # fmt: skip
from krypenv.kungsholmskille.actions import FOLD as FOLD_ACTION
from krypenv.kungsholmskille.cards import N_RANKS, RANKS, check_deck, names_from_counts, shuffled_decks
from krypenv.kungsholmskille.engine import drivers as D
from krypenv.kungsholmskille.engine import kernels
from krypenv.kungsholmskille.rules import Rules

PARALLEL_FROM = 64  # batches at least this large use the parallel drivers
MAX_POT = 2**28  # a starting pot; keeps every sum of money (at most 2·pot + antes) inside int32
FIRST_CALL, FOLDING, EXCHANGE, SECOND_CALL, TRICKS, SHOWING, FINISHED = (
    kernels.FIRST_CALL, kernels.FOLDING, kernels.EXCHANGE, kernels.SECOND_CALL, kernels.TRICKS, kernels.SHOWING,
    kernels.FINISHED)
PHASE_NAMES = ("first call", "fold", "exchange", "second call", "tricks", "show", "done")
PHASE_TEXT = ("the first call (L5)", "the fold decisions (L6)", "the exchange (L8)", "the second call (L9)",
              "the tricks (L10)", "the show calls (L11)", "")
BUDRUNDA, WALKOVER, SHOWDOWN, SETTLED = kernels.BUDRUNDA, kernels.WALKOVER, kernels.SHOWDOWN, kernels.SETTLED
OUTCOME_NAMES = ("budrunda", "walkover", "showdown", "settled")
MOVE_ERRORS = {
    kernels.DEAL_OVER: "moves after the end of the deal",
    kernels.NO_SUCH_ACTION: "an action outside 0..278",
    kernels.WRONG_KIND: "a move of the wrong kind for the phase",
    kernels.NOT_HELD: "a card the seat does not hold",
    kernels.MUST_OVERTAKE: "must play a card at least as high as the highest in the trick (L10)",
    kernels.MUST_LOWEST: "must play its lowest card (L10)",
}  # step_status codes (0 = OK); why_illegal words them for one deal
_PHASE_MOVES = ("bud, knacka", "fold, stay", "stand, discard:X, discard:X,Y", "bud, knacka", "play:X", "bud, show", "")

_SCALARS = {
    "talon_pos": kernels.TPOS, "dealer": kernels.DEALER, "forehand": kernels.FOREHAND, "to_act": kernels.TO_ACT,
    "phase": kernels.PHASE, "n_in": kernels.N_IN, "knocker1": kernels.KNOCKER1, "knocker2": kernels.KNOCKER2,
    "trick": kernels.TRICK, "n_played": kernels.N_PLAYED, "high": kernels.HIGH, "outcome": kernels.OUTCOME,
    "winner": kernels.WINNER, "shower": kernels.SHOWER, "n_moves": kernels.N_MOVES, "pot_deal": kernels.POT_DEAL,
    "last": kernels.LAST,
}  # fmt: skip
_PER_SEAT = {
    "folded": kernels.FOLDED, "exchanged": kernels.EXCHANGED, "call1": kernels.CALL1, "call2": kernels.CALL2,
    "fold_calls": kernels.FOLD_CALL, "show_calls": kernels.SHOW_CALL,
}  # fmt: skip
VIEWS = (*_SCALARS, *_PER_SEAT, "deck", "hands", "discards", "trick_lead", "trick_winner", "trick_cards",
         "hist_action", "hist_seat", "pot", "penalty", "pot_next", "money", "antes_next")  # fmt: skip


class IllegalMoveError(ValueError):
    """A move the rules do not allow; the message names the deal, the move, why, and the legal moves."""


def _rank(x: int) -> str:
    return RANKS[int(x)]


def _check_decks(decks: np.ndarray, mask: np.ndarray, ranks: int) -> None:
    """ValueError unless every active deal's deck is the lowest ``ranks`` ranks twice (L1, L20)."""
    for i in np.flatnonzero(mask):
        why = check_deck(decks[i], ranks)
        if why:
            raise ValueError(f"deck of deal {i}: {why}")


class DealBatch:
    """N deals of one player count, stepped together by compiled kernels."""

    def __init__(self, rules: Rules, n: int = 1) -> None:
        """N deals of ``rules``, all finished until :meth:`reset`."""
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a kungsholmskille Rules, got {type(rules).__name__}")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"batch size must be a positive integer, got {n!r}")
        self.rules = rules
        self.players = rules.players
        self.n = int(n)
        self.state = np.zeros((self.n, kernels.WIDTH), np.int16)
        self.state[:, kernels.DONE] = 1
        self.state[:, kernels.PHASE] = kernels.FINISHED
        self.state[:, kernels.TO_ACT] = -1
        self.cash = np.zeros((self.n, kernels.CASH_WIDTH), np.int32)
        self._par = self.n >= PARALLEL_FROM
        self._unfinished = self.n  # deals left unfinished by the last play_random (an upper bound)
        self._chunks = min(self.n, 4 * numba.config.NUMBA_NUM_THREADS) if self._par else 1
        self._all = np.ones(self.n, np.bool_)
        self._dealers0 = np.full(self.n, rules.default_dealer, np.int64)  # L2
        self._pots0 = np.full(self.n, rules.initial_pot, np.int64)  # L3
        self._deals0 = np.zeros(self.n, np.int64)
        self._shuffle = partial(shuffled_decks, ranks=rules.ranks)
        self._check = partial(_check_decks, ranks=rules.ranks)
        self._views()

    def _views(self) -> None:
        """Bind the named views of ``state`` and ``cash`` (see the module docstring)."""
        st, c, n, p = self.state, self.cash, self.n, self.players
        for name, col in _SCALARS.items():
            setattr(self, name, st[:, col])
        for name, col in _PER_SEAT.items():
            setattr(self, name, st[:, col:col + p])
        self.deck = st[:, kernels.DECK:kernels.DECK + self.rules.deck_size]
        self.hands = st[:, kernels.HANDS:kernels.HANDS + N_RANKS * p].reshape(n, p, N_RANKS)
        self.discards = st[:, kernels.DISCARDS:kernels.DISCARDS + 2 * p].reshape(n, p, 2)
        self.trick_lead = st[:, kernels.TRICK_LEAD:kernels.TRICK_LEAD + 4]
        self.trick_winner = st[:, kernels.TRICK_WON:kernels.TRICK_WON + 4]
        self.trick_cards = st[:, kernels.TRICK_CARDS:kernels.TRICK_CARDS + 4 * kernels.MAXP].reshape(
            n, 4, kernels.MAXP)[:, :, :p]
        self.hist_action = st[:, kernels.HIST_ACTION:kernels.HIST_ACTION + self.rules.max_moves]
        self.hist_seat = st[:, kernels.HIST_SEAT:kernels.HIST_SEAT + self.rules.max_moves]
        self.pot, self.penalty, self.pot_next = c[:, kernels.POT], c[:, kernels.PENALTY], c[:, kernels.POT_NEXT]
        self.money = c[:, kernels.MONEY:kernels.MONEY + p]
        self.antes_next = c[:, kernels.ANTES:kernels.ANTES + p]
        assert np.shares_memory(self.hands, st) and np.shares_memory(self.trick_cards, st)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in VIEWS}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self._views()

    @property
    def done(self) -> np.ndarray:
        """(N,) bool: the deal is finished (a fresh array, not a view)."""
        return self.state[:, kernels.DONE] != 0

    @property
    def nbytes_per_deal(self) -> int:
        """State memory per deal in bytes (one record of each array)."""
        return self.state.itemsize * kernels.WIDTH + self.cash.itemsize * kernels.CASH_WIDTH

    def _mask(self, active: np.ndarray | None) -> np.ndarray:
        """The deals an operation touches: every deal (a cached mask) when ``active`` is None."""
        return self._all if active is None else active_mask(active, self.n)

    def _per_deal(self, name: str, value: Any, default: np.ndarray, hi: int) -> np.ndarray:
        """An int or (N,) array of ints in [0, hi) as an (N,) int64 array (``default`` if None); ValueError
        otherwise."""
        if value is None:
            return default
        arr = np.asarray(value)
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{name} must be integers, got {arr.dtype}")
        arr = arr.astype(np.int64)
        if arr.ndim == 0:
            arr = np.full(self.n, int(arr), np.int64)
        if arr.shape != (self.n,):
            raise ValueError(f"{name} must be an int or shape ({self.n},), got shape {arr.shape}")
        bad = (arr < 0) | (arr >= hi)
        if bad.any():
            raise ValueError(f"{name} must be in 0..{hi - 1}, got {int(arr[bad][0])}")
        return arr

    # ----------------------------------------------------------------- dealing (L4)
    def reset(
        self,
        decks: np.ndarray | None = None,
        dealers: int | np.ndarray | None = None,
        pots: int | np.ndarray | None = None,
        rng: np.random.Generator | None = None,
        active: np.ndarray | None = None,
        deals: int | np.ndarray | None = None,
    ) -> None:
        """Deal every (active) deal (L4) from deck orders (N, deck_size) or decks shuffled by ``rng``.

        ``dealers`` defaults to seat P−1 (L2), ``pots`` to 2·P (L3: the first deal's pot) and
        ``deals`` (the deal's number within its pot, L21) to 0; each is an int or an (N,) array.
        A deal depends only on (rules, dealer, pot, deck, deal number).
        """
        mask = self._mask(active)
        decks = reset_decks(decks, rng, mask, self.rules.deck_size, self._shuffle, self._check)
        dealers = self._per_deal("dealers", dealers, self._dealers0, self.players)
        pots = self._per_deal("pots", pots, self._pots0, MAX_POT + 1)
        bound = self.rules.max_deals
        deals = self._per_deal("deals", deals, self._deals0, bound if bound is not None else MAX_POT + 1)
        last = (deals == bound - 1).astype(np.int64) if bound is not None else self._deals0
        self._unfinished = self.n
        driver = D.reset_par if self._par else D.reset_ser
        driver(self.state, self.cash, self.players, mask, decks, dealers, pots, deals, last,
               self._chunks)

    # ----------------------------------------------------------------- legality
    def legal_masks(self, out: np.ndarray | None = None) -> np.ndarray:
        """(N, 279) bool: the legal actions of the seat to act in every deal; all False when done."""
        if out is None:
            out = np.empty((self.n, N_ACTIONS), np.bool_)
        elif out.shape != (self.n, N_ACTIONS) or out.dtype != np.bool_:
            raise ValueError(f"out must be a bool array of shape ({self.n}, {N_ACTIONS})")
        (D.legal_par if self._par else D.legal_ser)(self.state, out, self._chunks)
        return out

    def legal_actions(self, i: int = 0) -> list[int]:
        """The legal action indices of deal ``i``, ascending (empty when done)."""
        buf = np.empty(32, np.int64)
        return [int(a) for a in buf[:kernels.legal_list(self.state[i], buf)]]

    def legal_moves(self, i: int = 0) -> list[str]:
        """The legal L17 move strings of deal ``i``, in action-index order (empty when done)."""
        return [action_name(a) for a in self.legal_actions(i)]

    # ----------------------------------------------------------------- stepping
    def _actions(self, actions: Any) -> np.ndarray:
        arr = np.asarray(actions)
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer) or arr.shape != (self.n,):
            raise ValueError(f"actions must be {self.n} integers (one per deal), got {arr.dtype} {arr.shape}")
        return arr.astype(np.int64)

    def _run_step(self, actions: np.ndarray, active: np.ndarray, do_apply: bool) -> np.ndarray:
        status = np.zeros(self.n, np.int64)
        driver = D.step_par if self._par else D.step_ser
        driver(self.state, self.cash, self.players, actions, active, status, do_apply, self._chunks)
        return status

    def check(self, actions: Any, active: np.ndarray | None = None) -> np.ndarray:
        """(N,) move-check codes of one action per deal without applying any (0 = legal; done deals 0)."""
        return self._run_step(self._actions(actions), self._mask(active), False)

    def step_status(self, actions: Any, active: np.ndarray | None = None) -> np.ndarray:
        """Apply the legal ones of one action per unfinished (active) deal; return the (N,) check codes.

        A deal whose action is illegal (code ≠ 0) is left unchanged; finished deals are skipped.
        """
        return self._run_step(self._actions(actions), self._mask(active), True)

    def step(self, actions: Any, active: np.ndarray | None = None) -> None:
        """Apply one action per unfinished (active) deal; entries of finished deals are ignored (e.g. −1).

        IllegalMoveError if any action is illegal, naming the first such deal; then no deal changes.
        """
        acts, mask = self._actions(actions), self._mask(active)
        status = self._run_step(acts, mask, False)
        bad = np.flatnonzero(status)
        if bad.size:
            i = int(bad[0])
            raise IllegalMoveError(f"deal {i}: {self.explain(i, int(acts[i]))}")
        self._run_step(acts, mask, True)

    def play_action(self, i: int, a: int) -> None:
        """Make action ``a`` in deal ``i`` alone; IllegalMoveError (nothing changes) if illegal."""
        if not 0 <= i < self.n:
            raise ValueError(f"deal index {i} is outside 0..{self.n - 1}")
        acts = np.full(self.n, -1, np.int64)
        acts[i] = a
        mask = np.zeros(self.n, np.bool_)
        mask[i] = True
        if self.done[i]:
            raise IllegalMoveError(f"deal {i}: {self.explain(i, int(a))}")
        self.step(acts, mask)

    def play_move(self, i: int, move: str) -> None:
        """Make the L17 move string ``move`` in deal ``i``; ValueError / IllegalMoveError if bad or illegal."""
        self.play_action(i, parse_move(move))

    def play_random(self, rng: np.random.Generator) -> int:
        """One uniformly random legal move in every unfinished deal (compiled); return how many are still unfinished.

        Deal i's move is legal action ⌊u·n⌋ of its n legal actions (index order), u = ``rng.random(N)[i]``.
        """
        # the tail of a batch, once fewer than PARALLEL_FROM deals are unfinished, runs serially: same code, same
        # moves, no thread launch for a handful of deals
        par = self._par and self._unfinished >= PARALLEL_FROM
        driver = D.play_random_par if par else D.play_random_ser
        self._unfinished = int(driver(self.state, self.cash, self.players, rng.random(self.n), self._chunks))
        return self._unfinished

    def play_random_to_end(self, rng: np.random.Generator) -> None:
        """Uniformly random legal moves until every deal is finished."""
        while self.play_random(rng):
            pass

    # ----------------------------------------------------------------- explaining
    def why_illegal(self, i: int, a: int) -> str | None:
        """Why action ``a`` is illegal in deal ``i``, citing the rule, or None if it is legal."""
        code = int(kernels.check(self.state[i], a))
        if code == kernels.OK:
            return None
        if code == kernels.DEAL_OVER:
            return "moves after the end of the deal: the deal is over"
        if code == kernels.NO_SUCH_ACTION:
            return f"action {a!r} is outside 0..{N_ACTIONS - 1}"
        s, ph = int(self.to_act[i]), int(self.phase[i])
        hand = " ".join(names_from_counts(self.hands[i, s])) or "-"
        if code == kernels.WRONG_KIND and a == FOLD_ACTION and ph in (kernels.EXCHANGE, kernels.SECOND_CALL,
                                                                        kernels.TRICKS, kernels.SHOWING):
            return (f"a move of the wrong kind: seat {s} is in {PHASE_TEXT[ph]}, and nobody may fold after the fold "
                    f"decisions (L6, L9); the moves are {_PHASE_MOVES[ph]}")
        if code == kernels.WRONG_KIND:
            return (f"a move of the wrong kind: seat {s} is in {PHASE_TEXT[ph]}, "
                    f"where the moves are {_PHASE_MOVES[ph]}")
        if code == kernels.NOT_HELD:
            if DISCARD1 <= a < DISCARD2:
                ranks = _rank(a - DISCARD1)
            elif DISCARD2 <= a < PLAY:
                x, y = PAIR_X[a - DISCARD2], PAIR_Y[a - DISCARD2]
                ranks = f"{_rank(x)} twice" if x == y else f"{_rank(x)} and {_rank(y)}"
            else:
                ranks = _rank(a - PLAY)
            verb = "plays" if a >= PLAY else "discards"
            return f"{verb} {ranks} which seat {s} does not hold (it holds {hand})"
        if code == kernels.MUST_OVERTAKE:
            return (f"seat {s} holds a card at least as high as {_rank(self.high[i])}, the highest in the trick "
                    f"so far, so it must play one of those (L10)")
        low = next(x for x in range(N_RANKS) if self.hands[i, s, x])  # MUST_LOWEST
        return f"seat {s} must play its lowest card {_rank(low)}: no card can overtake {_rank(self.high[i])} (L10)"

    def explain(self, i: int, a: int) -> str:
        """One line: the move, the seat, why it is illegal in deal ``i`` (or that it is legal), the legal moves."""
        why = self.why_illegal(i, a)
        name = action_name(a) if 0 <= a < N_ACTIONS else f"action {a}"
        who = "after the end of the deal" if self.done[i] else f"seat {int(self.to_act[i])}"
        legal = ", ".join(self.legal_moves(i)) or "none"
        return f"{name} ({who}): {why or 'legal'}; legal moves: {legal}"

    # ----------------------------------------------------------------- results
    @property
    def pot_settled(self) -> np.ndarray:
        """(N,) bool: the deal is finished and its pot went out (walkover, showdown or L21 settlement), so the pot
        is over; ``money`` is then each seat's gain from the pot and ``antes_next`` open the next one."""
        out = self.state[:, kernels.OUTCOME]
        return (self.state[:, kernels.DONE] != 0) & (out != kernels.BUDRUNDA) & (out >= 0)

    def result(self, i: int = 0) -> dict[str, Any]:
        """The L18 ``result`` object of finished deal ``i``; ValueError while it is unfinished."""
        if not self.done[i]:
            raise ValueError(f"deal {i} is not finished: it has no result yet")
        oc = int(self.outcome[i])
        return {
            "outcome": OUTCOME_NAMES[oc],
            "winner": None if self.winner[i] < 0 else int(self.winner[i]),
            "shower": None if self.shower[i] < 0 else int(self.shower[i]),
            "penalty": int(self.penalty[i]),
            "money": [int(x) for x in self.money[i]],
            "antes_next": [int(x) for x in self.antes_next[i]],
            "pot_next": int(self.pot_next[i]),
        }

    def talon(self, i: int = 0) -> list[int]:
        """The ranks left in deal ``i``'s talon, front first (L4, L8)."""
        return [int(x) for x in self.deck[i, self.talon_pos[i]:]]

    def played(self, i: int = 0) -> np.ndarray:
        """(21,) counts of the ranks played to tricks so far in deal ``i``."""
        cards = self.trick_cards[i].ravel()
        return np.bincount(cards[cards >= 0].astype(np.int64), minlength=N_RANKS)

    def discarded(self, i: int = 0) -> np.ndarray:
        """(21,) counts of the ranks discarded so far in deal ``i`` (L8)."""
        d = self.discards[i].ravel()
        return np.bincount(d[d >= 0].astype(np.int64), minlength=N_RANKS)

    def card_census(self, i: int = 0) -> np.ndarray:
        """(21,) copies of each rank in hands, talon, discards and tricks of deal ``i``: always ``rules.deck_counts``
        (L1, L20)."""
        talon = np.bincount(np.asarray(self.talon(i), np.int64), minlength=N_RANKS)
        return self.hands[i].sum(axis=0) + talon + self.discarded(i) + self.played(i)

    def moves(self, i: int = 0) -> list[str]:
        """The L17 move strings of deal ``i`` so far, in order."""
        return [action_name(int(a)) for a in self.hist_action[i, :self.n_moves[i]]]
