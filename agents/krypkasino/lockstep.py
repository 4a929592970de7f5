"""Compiled kernels of the policy-guided search: worlds × moves as rows of one batch.

The search itself is :mod:`krypenv.agents.krypkasino.guided`.

The search of one batch of decisions lives in one int8 array ``rs`` of *rows*, each a whole
env record of the game's :class:`krypenv.krypkasino.batch.KrypkasinoBatch` (the engine's columns, then the
capture-choice state and the env's columns), with a row of match integers ``ri`` beside it, so
that the env's own per-env functions (:func:`krypenv.krypkasino.env_kernels.act_one`,
``observe_one``) step and observe every row.  Decision ``k`` owns ``samples × M_k`` rows, one
per sampled world and candidate action (its ``M_k`` legal actions), at
``samples · lo[k] + s · M_k + m``.

* :func:`setup_rows` deals every world with :func:`krypenv.agents.krypkasino.worlds.determinize` (the
  same splitmix64 stream from the decision's uniform as ``pimc``, so the same worlds), applies
  each candidate action to a copy of it, and with ``replay`` rebuilds the opponents' decisions
  of the current round in that world for the world weights (:func:`replay_round`).
* :func:`step_rows` applies one action per live row (the lockstep ply: the actions come from
  one network call over all live rows) and keeps the rows that have not reached their stop.
* :func:`row_values` scores the stopped rows for their mover (:func:`krypenv.agents.krypkasino.pimc.side_score`),
  or relative to the other sides.
* :func:`same_views` finds the rows whose seat to act sees the same thing (the worlds differ only in
  what it cannot see), so that the network scores each such view once per ply.
"""

from __future__ import annotations

import numpy as np
from krypenv.agents.krypkasino import tactics as T
from krypenv.agents.krypkasino.pimc import G_LCP, G_PLAYERS, G_SIDE, side_score
from krypenv.agents.krypkasino.worlds import determinize, uniform
from numba import njit

from krypenv.krypkasino.actions import CHOICE_SIZE, CHOOSING, ILLEGAL, MOVED
from krypenv.krypkasino.config import (
    C_E0,
    C_INIT_KINDS,
    C_INIT_SIZES,
    C_LATER_KINDS,
    C_LATER_SIZES,
    C_N_INIT,
    C_N_LATER,
    C_P,
    C_SPADES,
)
from krypenv.krypkasino.engine import kernels
from krypenv.krypkasino.env_kernels import act_one

NO_STOP = 1000  # a stop round never reached


@njit(cache=True)
def seed_stream(u: float) -> np.ndarray:
    """The splitmix64 state ``pimc`` seeds from a decision's uniform (its first draw already taken, as pimc's
    baseline tie-break takes it), so both agents sample the same worlds."""
    rng = np.empty(1, np.uint64)
    rng[0] = np.uint64(int(u * 9007199254740992.0)) ^ np.uint64(0x5DEECE66D2545F49)
    uniform(rng)
    return rng


@njit(cache=True)
def _caps_of(st: np.ndarray, i: int, m: int, log_at: int, cap: np.ndarray) -> int:
    """Write move ``m``'s captured table cards (from the capture log at ``log_at``) into ``cap``; the next log index."""
    cap[:] = 0
    taken = np.int64(st[i, kernels.HIST_TAKEN + m])
    for e in range(taken):
        cap[st[i, kernels.CAP_LOG + log_at + e]] += 1
    return log_at + taken


@njit(cache=True)
def round_start(st: np.ndarray, i: int, cfg: np.ndarray, out: np.ndarray, o: int, cap: np.ndarray) -> int:
    """Write into row ``o`` of ``out`` deal ``i`` as it stood when its current round was dealt; return that
    round's first move index.

    The deal is replayed from its deck and its logged moves (public: every played card and
    capture is seen).  The hands in ``out`` are the true ones of that moment: a caller must
    replace every hand its seat could not see (:func:`replay_round` does).
    """
    P = cfg[C_P]
    n_init, n_later = cfg[C_N_INIT], cfg[C_N_LATER]
    spades = cfg[C_SPADES] != 0
    deck = st[i, kernels.DECK:kernels.DECK + kernels.deck_length(st, i)].copy()
    kernels.reset_deal(out, o, P, deck, np.int64(st[i, kernels.DEALER]), cfg[C_INIT_KINDS:C_INIT_KINDS + n_init],
                 cfg[C_INIT_SIZES:C_INIT_SIZES + n_init], spades)
    out[o, kernels.tabbes_at(P) + P:] = st[i, kernels.tabbes_at(P) + P:]
    e0 = cfg[C_E0]
    out[o, e0] = -1
    out[o, e0 + 1:e0 + CHOICE_SIZE] = 0
    at = 0
    m = 0
    while out[o, kernels.ROUND] < st[i, kernels.ROUND] and m < st[i, kernels.N_MOVES]:
        at = _caps_of(st, i, m, at, cap)
        kernels.apply_move(out, o, P, np.int64(st[i, kernels.HIST_CARD + m]), cap,
                           cfg[C_LATER_KINDS:C_LATER_KINDS + n_later], cfg[C_LATER_SIZES:C_LATER_SIZES + n_later],
                           spades)
        m += 1
    return m


@njit(cache=True)
def replay_round(st: np.ndarray, i: int, cfg: np.ndarray, seat: int, start: np.ndarray, first: int,
                 world: np.ndarray, w: int, out: np.ndarray, acts: np.ndarray, q: int, cap: np.ndarray) -> int:
    """The other seats' decisions of the current round in world row ``w``: write each decision state into
    ``out[q], out[q+1], ...`` and the card it played into ``acts``; return the next free index.

    ``start`` (one row) is the round's start (:func:`round_start`, first move ``first``); its
    hidden hands are replaced by the world's hands plus the cards each seat played since.
    """
    P = cfg[C_P]
    n = np.int64(st[i, kernels.N_MOVES])
    if first >= n:
        return q
    row = start.copy()
    turn = np.int64(row[0, kernels.TURN])
    for t in range(P):
        if t != seat:
            row[0, kernels.HANDS + 52 * t:kernels.HANDS + 52 * t + 52] = world[
                w, kernels.HANDS + 52 * t:kernels.HANDS + 52 * t + 52]
    for m in range(first, n):
        t = (turn + m - first) % P
        if t != seat:
            row[0, kernels.HANDS + 52 * t + st[i, kernels.HIST_CARD + m]] += 1
    at = 0
    for m in range(first):
        at += np.int64(st[i, kernels.HIST_TAKEN + m])
    n_later = cfg[C_N_LATER]
    for m in range(first, n):
        if row[0, kernels.TURN] != seat:
            out[q] = row[0]
            acts[q] = st[i, kernels.HIST_CARD + m]
            q += 1
        at = _caps_of(st, i, m, at, cap)
        kernels.apply_move(row, 0, P, np.int64(st[i, kernels.HIST_CARD + m]), cap,
                           cfg[C_LATER_KINDS:C_LATER_KINDS + n_later], cfg[C_LATER_SIZES:C_LATER_SIZES + n_later],
                           cfg[C_SPADES] != 0)
    return q


@njit(cache=True)
def setup_rows(st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, envs: np.ndarray, u: np.ndarray,
               samples: int, acts: np.ndarray, lo: np.ndarray, voids_on: bool, hand_size: int, rounds: int,
               replay: bool, rs: np.ndarray, ri: np.ndarray, rng: np.ndarray, plies: np.ndarray,
               stop_round: np.ndarray, mover: np.ndarray, wrows: np.ndarray, wacts: np.ndarray,
               wlo: np.ndarray, scr: np.ndarray) -> None:
    """Deal ``samples`` worlds per decision ``envs[k]`` and apply each candidate action ``acts[lo[k]:lo[k+1]]``.

    Row state: ``rng`` each row's rollout stream (every action of a world starts from the
    same state: common random numbers), ``plies`` moves played since the root move, the
    ``stop_round`` it stops at and its ``mover``.  With ``replay``, world ``s`` of decision
    ``k`` gets its replayed decisions at ``wrows[wlo[k·S+s]:wlo[k·S+s+1]]`` (``wlo`` is filled here).
    """
    P = cfg[C_P]
    W = kernels.tabbes_at(P) + P
    work = np.zeros((1, rs.shape[1]), np.int8)
    start = np.zeros((1, rs.shape[1]), np.int8)
    pool = np.empty(104, np.int64)
    used = np.empty(104, np.bool_)
    voids = np.zeros(P, np.int64)
    cap = np.empty(52, np.int8)
    q = 0
    wlo[0] = 0
    for k in range(envs.shape[0]):
        i = envs[k]
        seat = np.int64(st[i, kernels.TURN])
        stream = seed_stream(u[k])
        voids[:] = 0
        if voids_on:
            T.round_voids(st, i, P, hand_size, voids, scr)
        first = round_start(st, i, cfg, start, 0, cap) if replay else 0
        n_act = lo[k + 1] - lo[k]
        stop = np.int64(st[i, kernels.ROUND]) + rounds if rounds > 0 else NO_STOP
        for s in range(samples):
            determinize(st, i, P, seat, voids, voids_on, work, 0, stream, pool, used)
            work[0, W:] = st[i, W:]
            base = stream[0]
            uniform(stream)
            if replay:
                q = replay_round(st, i, cfg, seat, start, first, work, 0, wrows, wacts, q, cap)
                wlo[k * samples + s + 1] = q
            for m in range(n_act):
                r = samples * lo[k] + s * n_act + m
                rs[r] = work[0]
                ri[r] = ints[i]
                status = act_one(rs, ri, cfg, r, acts[lo[k] + m], False, scr, -1)
                if status == ILLEGAL:
                    raise ValueError("a candidate action is illegal in a sampled world")
                rng[r] = base
                plies[r] = -1 if status == CHOOSING else 0
                stop_round[r] = stop
                mover[r] = seat


@njit(cache=True)
def stopped(rs: np.ndarray, cfg: np.ndarray, r: int, plies: int, stop_round: int, horizon: int, mover: int,
            critic: bool) -> bool:
    """True once row ``r`` has reached its stop: the deal's end, or its stop round or ``horizon`` plies (with
    ``critic``: only at a decision of its mover, where the critic is asked; never during a capture choice)."""
    if rs[r, kernels.DONE]:
        return True
    if rs[r, cfg[C_E0]] >= 0:
        return False
    reached = rs[r, kernels.ROUND] >= stop_round or (horizon > 0 and plies >= horizon)
    return reached and (not critic or rs[r, kernels.TURN] == mover)


@njit(cache=True)
def live_rows(rs: np.ndarray, cfg: np.ndarray, plies: np.ndarray, stop_round: np.ndarray, horizon: int,
              mover: np.ndarray, critic: bool, out: np.ndarray) -> int:
    """Write the rows that have not stopped into ``out``; return their number."""
    n = 0
    for r in range(rs.shape[0]):
        if not stopped(rs, cfg, r, plies[r], stop_round[r], horizon, mover[r], critic):
            out[n] = r
            n += 1
    return n


@njit(cache=True)
def step_rows(rs: np.ndarray, ri: np.ndarray, cfg: np.ndarray, live: np.ndarray, actions: np.ndarray,
              plies: np.ndarray, stop_round: np.ndarray, horizon: int, mover: np.ndarray, critic: bool,
              scr: np.ndarray, out: np.ndarray) -> int:
    """Apply ``actions[k]`` in row ``live[k]``; write the rows still running into ``out`` and return their number."""
    n = 0
    for k in range(live.shape[0]):
        r = live[k]
        status = act_one(rs, ri, cfg, r, actions[k], False, scr, -1)
        if status == ILLEGAL:
            raise ValueError("the rollout policy chose an illegal action")
        if status == MOVED:
            plies[r] += 1
        if not stopped(rs, cfg, r, plies[r], stop_round[r], horizon, mover[r], critic):
            out[n] = r
            n += 1
    return n


@njit(cache=True)
def draw(rng: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """The next uniform of each row's rollout stream."""
    one = np.empty(1, np.uint64)
    for k in range(rows.shape[0]):
        one[0] = rng[rows[k]]
        out[k] = uniform(one)
        rng[rows[k]] = one[0]


@njit(cache=True)
def row_values(rs: np.ndarray, game: np.ndarray, mover: np.ndarray, relative: bool, out: np.ndarray,
               left: np.ndarray) -> None:
    """Each row's score of its mover's side now (K16; K17 once the deal is over), with ``relative`` minus the
    mean of the other sides' scores; ``left`` receives the card points nobody has taken yet (K4)."""
    P = game[G_PLAYERS]
    for r in range(rs.shape[0]):
        own = side_score(rs, r, game, mover[r])
        total = 0
        for s in range(P):
            total += side_score(rs, r, game, s) if game[G_SIDE + s] == s_first(game, s) else 0
        sides = 0
        for s in range(P):
            sides += game[G_SIDE + s] == s_first(game, s)
        out[r] = own - (total - own) / (sides - 1) if relative and sides > 1 else own
        left[r] = kernels.deck_points(rs, r) + (1 if game[G_LCP] else 0) - total  # K4, K20


@njit(cache=True)
def s_first(game: np.ndarray, s: int) -> int:
    """The side of seat ``s`` if ``s`` is the first seat of its side, else −1 (to count each side once)."""
    for t in range(s):
        if game[G_SIDE + t] == game[G_SIDE + s]:
            return -1
    return game[G_SIDE + s]


# A row's *view*: the row as its seat to act sees it.  The worlds of one decision differ only in the deck's order
# and the other seats' hands, so the view is the row with those columns replaced by what they show: the other
# seats' hand sizes, and the deck's make-up when it is a variant's (K20; the standard deck is 2 of each card).
# Everything else (the public record, the capture choice, the env's columns and the match integers) is kept, which
# can only miss a sharing, never share two rows that the observation or the move features tell apart.
@njit(cache=True)
def _view_into(rs: np.ndarray, r: int, players: int, out: np.ndarray) -> None:
    """Row ``r``'s view (the comment above) into ``out`` (the row's width, rounded up to 8 bytes, zero padded)."""
    out[:] = 0
    out[:rs.shape[1]] = rs[r]
    out[kernels.DECK:kernels.DECK + 104] = 0
    actor = rs[r, kernels.TURN]
    for s in range(players):
        size = 0
        for c in range(52):
            size += rs[r, kernels.HANDS + 52 * s + c]
            if s != actor:
                out[kernels.HANDS + 52 * s + c] = 0
        out[kernels.DECK + s] = size
    n = kernels.deck_length(rs, r)
    if n != 104:
        for k in range(n):
            out[kernels.DECK + 8 + rs[r, kernels.DECK + k]] += 1


@njit(cache=True)
def same_views(rs: np.ndarray, ri: np.ndarray, rows: np.ndarray, players: int, view: np.ndarray,
               words: np.ndarray, first: np.ndarray) -> None:
    """``first[k]``: the first ``j <= k`` whose row ``rows[j]`` has the same view and match integers as ``rows[k]``.

    ``view`` (len(rows), W) int8 and ``words`` the same memory as uint64 (W / 8 columns) are work space.  Views are
    hashed into an open-addressing table and compared in full on a hash match, so equal means equal.
    """
    n = rows.shape[0]
    h = np.empty(n, np.uint64)
    for k in range(n):
        _view_into(rs, rows[k], players, view[k])
        x = np.uint64(0x9E3779B97F4A7C15)
        for w in range(words.shape[1]):
            x = (x ^ words[k, w]) * np.uint64(0x100000001B3)
            x ^= x >> np.uint64(29)
        for w in range(ri.shape[1]):
            x = (x ^ np.uint64(ri[rows[k], w])) * np.uint64(0x100000001B3)
            x ^= x >> np.uint64(29)
        h[k] = x
    slots = 1
    while slots < 2 * n:
        slots *= 2
    table = np.full(slots, -1, np.int64)
    for k in range(n):
        i = np.int64(h[k] >> np.uint64(40)) & (slots - 1)
        first[k] = k
        while table[i] >= 0:
            j = table[i]
            if h[j] == h[k] and _same(words, ri, rows, j, k):
                first[k] = j
                break
            i = (i + 1) & (slots - 1)
        if first[k] == k:
            table[i] = k


@njit(cache=True)
def _same(words: np.ndarray, ri: np.ndarray, rows: np.ndarray, j: int, k: int) -> bool:
    """Whether views ``j`` and ``k`` and their rows' match integers are equal."""
    for w in range(words.shape[1]):
        if words[j, w] != words[k, w]:
            return False
    for w in range(ri.shape[1]):
        if ri[rows[j], w] != ri[rows[k], w]:
            return False
    return True
