"""``endgame:SPEC``: any Krypkasino agent, with the 2-player endgame played exactly.

Once the deck is empty in a 2-player deal (the last round, "sistan", K7), nothing is hidden
any more: the cards a seat has not seen are exactly the other seat's hand (K1).  The rest of
the deal is then a game of perfect information between two seats whose deal scores sum to a
constant (42, or 43 with ``last_capture_point``: K16, K17), and its minimax value can be
computed exactly: at most ``2 × hand`` plies (8 in the standard game), each a card and one of
its maximal captures (K10–K13).

``endgame:SPEC`` plays like the agent ``SPEC`` (``endgame:mlp:checkpoints/exit-2p.npz``,
``endgame:pimc:samples=128``, ``endgame:champion``) except at those decisions, where it plays
a move of least final score for its own seat (K16), found by alpha-beta search:

* **the world** is the one the acting seat's information allows
  (:func:`krypenv.agents.krypkasino.worlds.determinize`, which deals it the only way it can be
  dealt): the solver never reads the other hand from the engine, so it plays what a person who
  counts every card would play;
* **the moves** are the engine's own (:func:`krypenv.agents.krypkasino.tactics.moves_into`,
  :func:`krypenv.krypkasino.engine.kernels.apply_move`): the forced sweep (K13), maximal captures
  (K11), tabbes (K14) and the end of the deal (K15) are the rules' one implementation;
* **ties** go to the first move in the engine's listing, so a decision is a function of the
  information state; a capture choice (:mod:`krypenv.krypkasino.actions`) is solved again at each
  of its steps among the captures still open, and so continues towards a best move.

With more than 2 players, while cards remain in the deck, or with more than :data:`MAX_PLIES` cards in the hands
(a custom deal, K21), the wrapped agent decides.  ``krypenv serve`` does not offer ``endgame`` (it plays only
specs it can bound; the search is exact but its size grows with the hands).
:meth:`EndgameAgent.values` gives every legal action's exact value at a solved decision
(minus the final score of the mover after the best move the action leads to; the labels'
convention, :mod:`krypenv.training.labels`) and the wrapped agent's values elsewhere.
"""

from __future__ import annotations

import numba
import numpy as np
from krypenv.agents.base import load, register
from krypenv.agents.krypkasino import tactics as T
from krypenv.agents.krypkasino.pimc import G_PLAYERS, G_SPADES, game_vector, side_score
from krypenv.agents.krypkasino.worlds import determinize
from numba import njit, prange

from krypenv.agent_api import Agent, DecisionBatch
from krypenv.krypkasino.actions import CONFIRM, TAKE
from krypenv.krypkasino.engine import kernels
from krypenv.krypkasino.engine.state import _packets
from krypenv.krypkasino.rules import LATER_PATTERN

__all__ = ["EndgameAgent", "solvable", "solvable_rows", "solve", "solve_batch"]

MAX_PLIES = 24  # the most cards in the hands that are searched (the standard game has 8); more: the wrapped agent
INF = 1 << 30


@njit(cache=True)
def solvable(st: np.ndarray, i: int, players: int) -> bool:
    """True when deal ``i`` is a 2-player deal in play whose deck is empty: its rest is of perfect information."""
    return (players == 2 and st[i, kernels.DONE] == 0 and st[i, kernels.POS] >= kernels.deck_length(st, i)
            and st[i, kernels.IN_HANDS] <= MAX_PLIES)


@njit(cache=True)
def _minimax(work: np.ndarray, game: np.ndarray, root: int, later_kinds: np.ndarray, later_sizes: np.ndarray,
             cards: np.ndarray, caps: np.ndarray, ns: np.ndarray, nxt: np.ndarray, lo: np.ndarray, hi: np.ndarray,
             best: np.ndarray, keys: np.ndarray, nofix: np.ndarray, scr: np.ndarray, nodes: np.ndarray) -> int:
    """The final deal score of seat ``root`` (K16, K17) under best play from row 1 of ``work``.

    Alpha-beta: the root seat minimises it, the other seat maximises it (the two scores sum to a constant).  Row
    ``d`` of ``work`` is the position at depth ``d``; ``ns``/``nxt`` its moves' count and the next one to search,
    ``lo``/``hi`` its window, ``best`` its value so far.  Iterative, not recursive: numba cannot cache recursion.
    """
    players, spades = game[G_PLAYERS], game[G_SPADES] != 0
    d = 1
    lo[1], hi[1] = -INF, INF
    fresh = True
    while True:
        if fresh:  # a new position at depth d: a finished deal is a leaf, else list its moves
            nodes[0] += 1
            fresh = False
            if work[d, kernels.DONE]:
                best[d] = side_score(work, d, game, root)
                ns[d] = nxt[d] = 0
            else:
                seat = np.int64(work[d, kernels.TURN])
                ns[d] = T.moves_into(kernels.hand_of(work, d, seat), kernels.table_of(work, d), -1, nofix, cards[d],
                                     caps[d], keys, scr)
                nxt[d] = 0
                best[d] = INF if seat == root else -INF
        if nxt[d] < ns[d] and lo[d] < hi[d]:  # search the next move
            m = nxt[d]
            nxt[d] += 1
            work[d + 1] = work[d]
            kernels.apply_move(work, d + 1, players, cards[d, m], caps[d, m], later_kinds, later_sizes, spades)
            lo[d + 1], hi[d + 1] = lo[d], hi[d]
            d += 1
            fresh = True
            continue
        v = best[d]  # position d is done: its value goes up to its parent
        d -= 1
        if d == 0:
            return v
        if work[d, kernels.TURN] == root:
            best[d] = min(best[d], v)
            hi[d] = min(hi[d], v)
        else:
            best[d] = max(best[d], v)
            lo[d] = max(lo[d], v)


@njit(cache=True)
def solve(st: np.ndarray, i: int, pending: int, fixed: np.ndarray, game: np.ndarray, later_kinds: np.ndarray,
          later_sizes: np.ndarray, out: np.ndarray, nodes: np.ndarray) -> int:
    """The exact action of the seat to act in solvable deal ``i`` (choice state ``pending``/``fixed``).

    ``out[a]`` becomes minus the seat's final score after the best move action ``a`` leads to (NaN for actions that
    lead to none); every root move is searched with a full window, so every value is exact.  ``nodes[0]`` counts
    the positions searched.  A deal that is not :func:`solvable` is not searched (its tree is not bounded): every
    value NaN, the action −1.
    """
    players = game[G_PLAYERS]
    if not solvable(st, i, players):
        out[:] = np.nan
        return -1
    seat = np.int64(st[i, kernels.TURN])
    W = kernels.tabbes_at(players) + players
    work = np.zeros((MAX_PLIES + 2, W), np.int8)
    cards = np.empty((MAX_PLIES + 2, T.MAX_MOVES), np.int64)
    caps = np.empty((MAX_PLIES + 2, T.MAX_MOVES, 52), np.int8)
    ns, nxt = np.zeros(MAX_PLIES + 2, np.int64), np.zeros(MAX_PLIES + 2, np.int64)
    lo, hi, best_at = np.zeros(MAX_PLIES + 2, np.int64), np.zeros(MAX_PLIES + 2, np.int64), np.zeros(MAX_PLIES + 2,
                                                                                                  np.int64)
    keys = np.empty(T.MAX_KEYS, np.int64)
    scr = T.new_scratch()
    rng = np.ones(1, np.uint64)
    pool, used = np.empty(104, np.int64), np.empty(104, np.bool_)
    voids = np.zeros(players, np.int64)
    determinize(st, i, players, seat, voids, False, work, 0, rng, pool, used)  # exact: the deck is empty
    nofix = np.zeros(52, np.int8)
    n = T.moves_into(kernels.hand_of(work, 0, seat), kernels.table_of(work, 0), pending, fixed, cards[0], caps[0],
                     keys, scr)
    out[:] = np.nan
    best, best_v = 0, INF
    for m in range(n):
        work[1] = work[0]
        kernels.apply_move(work, 1, players, cards[0, m], caps[0, m], later_kinds, later_sizes, game[G_SPADES] != 0)
        v = _minimax(work, game, seat, later_kinds, later_sizes, cards, caps, ns, nxt, lo, hi, best_at, keys, nofix,
                     scr, nodes)
        if v < best_v:
            best, best_v = m, v
        if pending < 0:
            a = cards[0, m]
            out[a] = -v if np.isnan(out[a]) else max(out[a], -v)
            continue
        more = False  # during a capture choice every table card the move takes more of leads to it (pimc's rule)
        for c in range(52):
            if caps[0, m, c] > fixed[c]:
                out[TAKE + c] = -v if np.isnan(out[TAKE + c]) else max(out[TAKE + c], -v)
                more = True
        if not more:
            out[CONFIRM] = -v if np.isnan(out[CONFIRM]) else max(out[CONFIRM], -v)
    return T.action_for(pending, fixed, cards[0, best], caps[0, best])


@njit(cache=True)
def _solve_range(st, choice, envs, lo, hi, game, later_kinds, later_sizes, values, out, nodes):
    """:func:`solve` for decisions ``lo..hi`` of the batch."""
    for k in range(lo, hi):
        i = envs[k]
        out[k] = solve(st, i, np.int64(choice[i, 0]), choice[i, 1:], game, later_kinds, later_sizes, values[k],
                       nodes[k])


@njit(cache=True, parallel=True)
def solve_par(st, choice, envs, game, later_kinds, later_sizes, values, out, nodes, chunks):
    """:func:`solve` for every decision of the batch, split into ``chunks`` over numba's threads."""
    n = envs.shape[0]
    for ch in prange(chunks):
        lo, hi = kernels.chunk_bounds(n, chunks, ch)
        _solve_range(st, choice, envs, lo, hi, game, later_kinds, later_sizes, values, out, nodes)


@njit(cache=True)
def solve_ser(st, choice, envs, game, later_kinds, later_sizes, values, out, nodes):
    """Serial twin of :func:`solve_par`."""
    _solve_range(st, choice, envs, 0, envs.shape[0], game, later_kinds, later_sizes, values, out, nodes)


@njit(cache=True)
def solvable_rows(st: np.ndarray, envs: np.ndarray, players: int) -> np.ndarray:
    """(B,) bool: which decisions' deals are :func:`solvable`."""
    out = np.zeros(envs.shape[0], np.bool_)
    for k in range(envs.shape[0]):
        out[k] = solvable(st, envs[k], players)
    return out


def solve_batch(st: np.ndarray, choice: np.ndarray, envs: np.ndarray, game: np.ndarray, n_actions: int
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`solve` for the deals ``envs`` of ``st`` (capture choice rows ``choice``: pending card, fixed cards) over
    numba's threads: (values (k, ``n_actions``), actions (k,), positions searched)."""
    later_kinds, later_sizes = _packets(LATER_PATTERN)
    envs = np.asarray(envs, np.int64)
    values = np.empty((len(envs), n_actions), np.float64)
    out, nodes = np.empty(len(envs), np.int64), np.zeros((len(envs), 1), np.int64)
    args = (st, choice, envs, game, later_kinds, later_sizes, values, out, nodes)
    threads = numba.get_num_threads()
    chunks = min(len(envs), 4 * threads) if threads > 1 and len(envs) > 1 else 0
    solve_par(*args, chunks) if chunks else solve_ser(*args)
    return values, out, int(nodes.sum())


def _sub(batch: DecisionBatch, rows: np.ndarray) -> DecisionBatch:
    """The decisions ``rows`` of ``batch`` as a batch of their own (same games)."""
    return DecisionBatch(batch.obs[rows], batch.mask[rows], batch.seats[rows], batch.core, batch.envs[rows])


class EndgameAgent:
    """``endgame:SPEC``: the agent ``SPEC``, with the 2-player endgame solved exactly (module docstring)."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.name = f"endgame:{getattr(inner, 'name', inner)}"
        self.nodes = 0  # positions searched so far (a measure of the solver's work)

    def _solve(self, batch: DecisionBatch, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values (k, A), actions (k,)) of the solved decisions ``rows``."""
        core = batch.core
        values, out, nodes = solve_batch(core.deals.state, core.choice, np.asarray(batch.envs, np.int64)[rows],
                                         game_vector(batch.rules), batch.mask.shape[1])
        self.nodes += nodes
        return values, out

    def _rows(self, batch: DecisionBatch) -> np.ndarray:
        """(B,) bool: the decisions solved exactly."""
        return solvable_rows(batch.core.deals.state, np.asarray(batch.envs, np.int64), int(batch.rules.players))

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The exact action where the endgame is solvable, the wrapped agent's elsewhere."""
        rows = self._rows(batch)
        out = np.empty(len(batch), np.int64)
        if (~rows).any():
            out[~rows] = self.inner.act(_sub(batch, ~rows))
        if rows.any():
            out[rows] = self._solve(batch, rows)[1]
        return out

    def values(self, batch: DecisionBatch) -> tuple[np.ndarray, np.ndarray]:
        """As a teacher: ((B, A) every action's value to the mover, (B,) the action :meth:`act` plays); exact at the
        solved decisions, the wrapped agent's ``values`` elsewhere."""
        rows = self._rows(batch)
        values = np.full((len(batch), batch.mask.shape[1]), np.nan)
        out = np.empty(len(batch), np.int64)
        if (~rows).any():
            if not hasattr(self.inner, "values"):
                raise ValueError(f"{self.name}: the wrapped agent gives no action values (it is not a teacher)")
            values[~rows], out[~rows] = self.inner.values(_sub(batch, ~rows))
        if rows.any():
            values[rows], out[rows] = self._solve(batch, rows)
        return values, out


def make(spec: str) -> EndgameAgent:
    """The agent of an ``endgame:SPEC`` spec: ``SPEC`` loaded for Krypkasino, wrapped."""
    if not spec:
        raise ValueError("endgame needs the agent to wrap: endgame:SPEC, e.g. endgame:mlp:checkpoints/exit-2p.npz")
    return EndgameAgent(load(spec, "krypkasino"))


register("endgame", make, "any agent with the 2-player endgame (deck empty: perfect information) solved exactly: "
         "endgame:SPEC", takes_path=True, games=("krypkasino",), argument="SPEC")
