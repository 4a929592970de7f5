"""``pimc``: determinized search (Perfect Information Monte Carlo) on top of the expert.

For each decision, deal the cards the acting seat cannot see at random (consistently with
what it knows), play every legal move out with expert play in each such world, and switch
from the expert's own move to the one with the lowest mean score of the mover when the
worlds show it clearly better (lower is better: misère).

| option   | default | meaning                                                                    |
|----------|---------|----------------------------------------------------------------------------|
| samples  | 64      | determinizations (sampled worlds) per decision, ≥ 1                        |
| rollouts | 1       | rollouts per move and world (they differ only in the policy's tie-breaks)  |
| policy   | expert  | rollout policy of every seat, and the baseline move: ``expert``,           |
|          |         | ``creeper``, ``greedy`` or ``random`` (compiled in :mod:`krypenv.agents.krypkasino.tactics`)  |
|          |         | or ``ppo:PATH`` / ``mlp:PATH``, a learned policy: the policy-guided search of |
|          |         | :mod:`krypenv.agents.krypkasino.guided` (lockstep rollouts; its own options)       |
| rounds   | 1       | stop a rollout when this many round ends have passed (1: at the end of the |
|          |         | current round, once the next cards are dealt); 0 = play to the deal's end |
| horizon  | 0       | also stop after this many plies after the move; 0 = no ply limit           |
| z        | 2.0     | leave the baseline move only for a move whose mean paired difference to it |
|          |         | is below −z standard errors over the worlds (0: plain argmin of the means) |
| voids    | true    | sampled hands respect the values a seat is known not to hold (K13)         |
| device   | cpu     | where the search runs: ``cpu`` (numba's threads) or ``cuda`` (a GPU's      |
|          |         | threads, the same values and actions: :mod:`krypenv.agents.krypkasino.pimc_cuda`) |

**What is sampled.** The hands of the other seats (each of its known size) and the order
of the undealt deck, drawn from the cards the acting seat has not seen: two copies of each
card minus its own hand, the table, the set-aside pile and every capture pile.  With
``voids=true`` a seat that did not sweep a sweepable table this round gets none of the
values that would have swept it (:func:`krypenv.agents.krypkasino.tactics.round_voids`); hands are filled from
one random order of the unseen cards, the most constrained seat first (a world where the
constraints cannot all be met in that order is dealt without them).  In the last round of
a 2-player deal the world is therefore exact.

**Evaluation.** Each move is applied in each world and the deal is played on by the
rollout policy for every seat; the mover's deal score (K16, K17 once the deal is over; its
team's with teams, K18) at the stop is the move's value in that world.  At a ``rounds`` or
``horizon`` stop the rest of the deal is not estimated: the points not yet taken count for
nobody (their share is about the same whatever the move), which trades a little bias in the
far future for far less noise.  Every move is played in the same worlds with the same
rollout random numbers, and moves are compared by their paired differences to the baseline
(the rollout policy's own choice): the best mean replaces the baseline only when it is ``z``
standard errors below it.  A decision with one legal move is not searched.  During a capture
choice (:mod:`krypenv.krypkasino.actions`) the search runs again among the captures still open for the
pending card and returns the next action towards the chosen one.

**As a teacher.** :meth:`PIMCAgent.values` runs the same search and returns every legal action's
value, minus the mean score over the worlds of the best move the action leads to (a card with
several captures is worth its best capture), and the action ``act`` plays: the labels of
:mod:`krypenv.training.distill`.

**Randomness.** One uniform per decision from the game's own stream (``batch.uniforms``)
seeds a splitmix64 stream inside the kernel, so results are reproducible from the game seed
and independent of how decisions are batched.  The batch runs compiled, split over numba's
threads.  Cost: samples × moves × rollouts rollouts per decision; at the defaults a 2-player
duplicate evaluation against expert (``--deals 200``, 400 deals) takes about a minute on two cores.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np
from krypenv.agents.base import BOOL, Limit, register
from krypenv.agents.krypkasino import tactics as T
from krypenv.agents.krypkasino.heuristics import expert_weights
from krypenv.agents.krypkasino.worlds import DETERMINIZE_WORDS, MAX_SEATS, determinize_into, uniform
from numba import njit, prange

from krypenv.agent_api import Agent, DecisionBatch
from krypenv.krypkasino.actions import CONFIRM, TAKE
from krypenv.krypkasino.cards import POINTS
from krypenv.krypkasino.engine import kernels
from krypenv.krypkasino.engine.state import _packets
from krypenv.krypkasino.rules import LATER_PATTERN, Rules

POLICIES = {"random": T.RANDOM, "greedy": T.GREEDY, "creeper": T.CREEPER, "expert": T.EXPERT}
DEFAULTS = {"samples": 64, "rollouts": 1, "policy": "expert", "horizon": 0, "rounds": 1, "z": 2.0, "voids": True,
            "device": "cpu"}
DEVICES = ("cpu", "cuda")
MAX_SAMPLES = 100_000
# learned rollout policies, ``policy=KIND:PATH`` -> builder(PATH, **other options);
# krypenv.agents.krypkasino.guided adds "ppo"
LEARNED: dict[str, Callable[..., Agent]] = {}
# integer options vector
O_SAMPLES, O_ROLLOUTS, O_POLICY, O_HORIZON, O_ROUNDS, O_VOIDS, N_OPTS = range(7)
# game config vector
G_PLAYERS, G_HAND, G_SPADES, G_LCP, G_SIDE, N_GAME = 0, 1, 2, 3, 4, 4  # side_of follows from G_SIDE


# --------------------------------------------------------------------------- rollouts
@njit(cache=True)
def side_score(st: np.ndarray, i: int, game: np.ndarray, seat: int) -> int:
    """Deal score so far (K16; K17 once finished) of ``seat``, or of its team with teams (K18)."""
    players = game[G_PLAYERS]
    piles, tabbes = kernels.piles_at(players), kernels.tabbes_at(players)
    side = game[G_SIDE + seat]
    total = 0
    for s in range(players):
        if game[G_SIDE + s] != side:
            continue
        pts = 0
        for c in range(52):
            pts += st[i, piles + 52 * s + c] * POINTS[c]
        pts += 5 * st[i, tabbes + s] - 5 * st[i, tabbes + (s + 1) % players]
        if game[G_LCP] and st[i, kernels.DONE] and st[i, kernels.TAKER] == s:
            pts += 1
        total += pts
    return total


@njit(cache=True)
def rollout(st: np.ndarray, i: int, game: np.ndarray, kind: int, w: np.ndarray, horizon: int, stop_round: int,
            later_kinds: np.ndarray, later_sizes: np.ndarray, rng: np.ndarray, cards: np.ndarray,
            caps: np.ndarray, costs: np.ndarray, keys: np.ndarray, fixed: np.ndarray, scr: np.ndarray) -> None:
    """Play deal ``i`` on with policy ``kind`` for every seat until it ends, ``horizon`` plies are played (0: no
    limit) or round ``stop_round`` begins."""
    players, hand_size, spades = game[G_PLAYERS], game[G_HAND], game[G_SPADES] != 0
    ply = 0
    while not st[i, kernels.DONE] and (horizon == 0 or ply < horizon) and st[i, kernels.ROUND] < stop_round:
        m = T.choose(st, i, players, hand_size, spades, -1, fixed, kind, w, uniform(rng), cards, caps, costs, keys,
                     scr)
        kernels.apply_move(st, i, players, cards[m], caps[m], later_kinds, later_sizes, spades)
        ply += 1


@njit(cache=True)
def search(st: np.ndarray, i: int, pending: int, fixed: np.ndarray, game: np.ndarray, opts: np.ndarray,
           w: np.ndarray, later_kinds: np.ndarray, later_sizes: np.ndarray, u: float, work: np.ndarray,
           root_cards: np.ndarray, root_caps: np.ndarray, acc: np.ndarray, vals: np.ndarray, cards: np.ndarray,
           caps: np.ndarray, costs: np.ndarray, keys: np.ndarray, pool: np.ndarray, used: np.ndarray,
           zeros: np.ndarray, scr: np.ndarray, streams: np.ndarray, voids: np.ndarray,
           dwork: np.ndarray) -> tuple[int, int]:
    """Roll every legal move of the seat to act in deal ``i`` out in the sampled worlds; (moves n, baseline e).

    The moves are listed in ``root_cards``/``root_caps``; ``e`` is the rollout policy's own choice.
    With ``n > 1``, over the ``k = samples × rollouts`` worlds ``acc[0, m]`` sums the paired differences
    ``score(m) − score(e)``, ``acc[1, m]`` their squares and ``acc[2, m]`` the scores of move ``m`` (the
    mover's side score at the rollout's stop); with ``n ≤ 1`` nothing is rolled out.  Every buffer is the
    caller's (:func:`_buffers`; any content, but ``zeros``, the rollouts' empty capture choice, is all zero and
    ``scr`` is the tactics' scratch): nothing is allocated, so a CUDA thread runs it too
    (:mod:`krypenv.agents.krypkasino.pimc_cuda`).
    """
    players, hand_size, spades = game[G_PLAYERS], game[G_HAND], game[G_SPADES] != 0
    seat = np.int64(st[i, kernels.TURN])
    rng, sub = streams[0:1], streams[1:2]  # the search's stream; a rollout's (restarted per move, below)
    rng[0] = np.uint64(int(u * 9007199254740992.0)) ^ np.uint64(0x5DEECE66D2545F49)
    kind, horizon = opts[O_POLICY], opts[O_HORIZON]
    # the baseline: the rollout policy's choice (it lists the moves into root_* as moves_into does)
    e = T.choose(st, i, players, hand_size, spades, pending, fixed, kind, w, uniform(rng), root_cards, root_caps,
                 costs, keys, scr)
    n = T.moves_into(kernels.hand_of(st, i, seat), kernels.table_of(st, i), pending, fixed, root_cards, root_caps,
                     keys, scr)
    if n <= 1:
        return n, e
    if opts[O_VOIDS]:  # (without, determinize never reads voids)
        T.round_voids(st, i, players, hand_size, voids, scr)
    for m in range(n):  # sums and sums of squares of the paired differences to the baseline; sums of the scores
        acc[0, m], acc[1, m], acc[2, m] = 0.0, 0.0, 0.0
    W = kernels.tabbes_at(players) + players  # the engine's columns
    stop_round = np.int64(st[i, kernels.ROUND]) + opts[O_ROUNDS] if opts[O_ROUNDS] > 0 else np.int64(1000)
    for _ in range(opts[O_SAMPLES]):
        determinize_into(st, i, players, seat, voids, opts[O_VOIDS] != 0, work, 0, rng, pool, used, dwork)
        for _r in range(opts[O_ROLLOUTS]):
            base = rng[0]
            uniform(rng)
            for m in range(n):
                for c in range(W):
                    work[1, c] = work[0, c]
                kernels.apply_move(work, 1, players, root_cards[m], root_caps[m], later_kinds, later_sizes, spades)
                sub[0] = base  # common random numbers: every move's rollout draws the same uniforms
                rollout(work, 1, game, kind, w, horizon, stop_round, later_kinds, later_sizes, sub, cards, caps,
                        costs, keys, zeros, scr)
                vals[m] = side_score(work, 1, game, seat)
            for m in range(n):
                d = vals[m] - vals[e]
                acc[0, m] += d
                acc[1, m] += d * d
                acc[2, m] += vals[m]
    return n, e


@njit(cache=True)
def choose_move(acc: np.ndarray, n: int, e: int, k: int, z: float) -> int:
    """pimc's rule on :func:`search`'s sums over ``k`` worlds: the lowest mean paired difference replaces the
    baseline ``e`` only when it is below −z standard errors (z = 0: plain argmin)."""
    best, best_mean = e, 0.0
    for m in range(n):
        mean = acc[0, m] / k
        if mean < best_mean - 1e-9:
            best, best_mean = m, mean
    if best != e and z > 0:
        var = (acc[1, best] - k * best_mean * best_mean) / max(k - 1, 1)
        if best_mean > -z * math.sqrt(max(var, 0.0) / k):  # (math: numba-cuda has no np.sqrt ufunc)
            best = e
    return best


@njit(cache=True)
def decide(st: np.ndarray, i: int, pending: int, fixed: np.ndarray, game: np.ndarray, opts: np.ndarray,
           z: float, w: np.ndarray, later_kinds: np.ndarray, later_sizes: np.ndarray, u: float, work: np.ndarray,
           root_cards: np.ndarray, root_caps: np.ndarray, acc: np.ndarray, vals: np.ndarray, cards: np.ndarray,
           caps: np.ndarray, costs: np.ndarray, keys: np.ndarray, pool: np.ndarray, used: np.ndarray,
           zeros: np.ndarray, scr: np.ndarray, streams: np.ndarray, voids: np.ndarray, dwork: np.ndarray) -> int:
    """The PIMC action for the seat to act in deal ``i`` (choice state ``pending``/``fixed``, uniform ``u``).

    The rollout policy's own choice is the baseline; the move with the lowest mean score
    replaces it if its mean paired difference to the baseline is below −z standard errors.
    """
    n, e = search(st, i, pending, fixed, game, opts, w, later_kinds, later_sizes, u, work, root_cards, root_caps,
                  acc, vals, cards, caps, costs, keys, pool, used, zeros, scr, streams, voids, dwork)
    if n <= 1:
        return T.action_for(pending, fixed, root_cards[0], root_caps[0])
    best = choose_move(acc, n, e, opts[O_SAMPLES] * opts[O_ROLLOUTS], z)
    return T.action_for(pending, fixed, root_cards[best], root_caps[best])


@njit(cache=True)
def _at_least(out: np.ndarray, a: int, score: float) -> None:
    """Keep the lowest score seen for action ``a`` (NaN: none yet)."""
    if np.isnan(out[a]) or score < out[a]:
        out[a] = score


@njit(cache=True)
def action_values(st: np.ndarray, i: int, pending: int, fixed: np.ndarray, game: np.ndarray, opts: np.ndarray,
                  z: float, w: np.ndarray, later_kinds: np.ndarray, later_sizes: np.ndarray, u: float,
                  work: np.ndarray, root_cards: np.ndarray, root_caps: np.ndarray, acc: np.ndarray, vals: np.ndarray,
                  cards: np.ndarray, caps: np.ndarray, costs: np.ndarray, keys: np.ndarray, pool: np.ndarray,
                  used: np.ndarray, zeros: np.ndarray, scr: np.ndarray, streams: np.ndarray, voids: np.ndarray,
                  dwork: np.ndarray, out: np.ndarray) -> tuple[int, int]:
    """:func:`decide`'s search as labels: ``out[a]`` the mean score over the worlds of the best move action ``a``
    leads to (NaN for an action that leads to none); returns (moves, the action :func:`decide` plays).

    An action leads to the moves it keeps open (:mod:`krypenv.krypkasino.actions`): a card to its captures, a
    table card during a capture choice to the captures taking more of it than is fixed, ``104`` to the capture
    of exactly the fixed cards; so a card with several captures is worth its best one.
    With one legal move nothing is rolled out and its action's value is NaN too.
    """
    out[:] = np.nan
    n, e = search(st, i, pending, fixed, game, opts, w, later_kinds, later_sizes, u, work, root_cards, root_caps,
                  acc, vals, cards, caps, costs, keys, pool, used, zeros, scr, streams, voids, dwork)
    if n <= 1:
        return n, T.action_for(pending, fixed, root_cards[0], root_caps[0])
    k = opts[O_SAMPLES] * opts[O_ROLLOUTS]
    for m in range(n):
        mean = acc[2, m] / k
        if pending < 0:
            _at_least(out, root_cards[m], mean)
            continue
        more = False  # during a capture choice every table card the move takes more of leads to it
        for c in range(52):
            if root_caps[m, c] > fixed[c]:
                _at_least(out, TAKE + c, mean)
                more = True
        if not more:
            _at_least(out, CONFIRM, mean)
    best = choose_move(acc, n, e, k, z)
    return n, T.action_for(pending, fixed, root_cards[best], root_caps[best])


@njit(cache=True)
def _buffers(players: int) -> tuple:
    """One thread's search buffers (work rows, moves, sums, rollout lists, scratch)."""
    return (np.zeros((2, kernels.tabbes_at(players) + players), np.int8), np.empty(T.MAX_MOVES, np.int64),
            np.empty((T.MAX_MOVES, 52), np.int8), np.empty((3, T.MAX_MOVES), np.float64),
            np.empty(T.MAX_MOVES, np.float64), np.empty(T.MAX_MOVES, np.int64), np.empty((T.MAX_MOVES, 52), np.int8),
            np.empty(T.MAX_MOVES, np.float64), np.empty(T.MAX_KEYS, np.int64), np.empty(104, np.int64),
            np.empty(104, np.bool_), np.zeros(52, np.int8), T.new_scratch(), np.empty(2, np.uint64),
            np.empty(MAX_SEATS, np.int64), np.empty(DETERMINIZE_WORDS, np.int64))


@njit(cache=True)
def _decide_range(st, choice, envs, lo, hi, game, opts, z, w, later_kinds, later_sizes, u, out):
    """:func:`decide` for decisions ``lo..hi`` of the batch, with buffers of their own."""
    (work, root_cards, root_caps, acc, vals, cards, caps, costs, keys, pool, used, zeros, scr, streams, voids,
     dwork) = _buffers(game[G_PLAYERS])
    for k in range(lo, hi):
        i = envs[k]
        pending = np.int64(choice[i, 0])
        out[k] = decide(st, i, pending, choice[i, 1:], game, opts, z, w, later_kinds, later_sizes, u[k], work,
                        root_cards, root_caps, acc, vals, cards, caps, costs, keys, pool, used, zeros, scr,
                        streams, voids, dwork)


@njit(cache=True, parallel=True)
def decide_par(st, choice, envs, game, opts, z, w, later_kinds, later_sizes, u, out, chunks):
    """:func:`decide` for every decision of the batch, split into ``chunks`` over numba's threads."""
    n = envs.shape[0]
    for ch in prange(chunks):
        lo, hi = kernels.chunk_bounds(n, chunks, ch)
        _decide_range(st, choice, envs, lo, hi, game, opts, z, w, later_kinds, later_sizes, u, out)


@njit(cache=True)
def decide_ser(st, choice, envs, game, opts, z, w, later_kinds, later_sizes, u, out):
    """Serial twin of :func:`decide_par`."""
    _decide_range(st, choice, envs, 0, envs.shape[0], game, opts, z, w, later_kinds, later_sizes, u, out)


@njit(cache=True)
def _values_range(st, choice, envs, lo, hi, game, opts, z, w, later_kinds, later_sizes, u, values, moves, out):
    """:func:`action_values` for decisions ``lo..hi`` of the batch, with buffers of their own."""
    (work, root_cards, root_caps, acc, vals, cards, caps, costs, keys, pool, used, zeros, scr, streams, voids,
     dwork) = _buffers(game[G_PLAYERS])
    for k in range(lo, hi):
        i = envs[k]
        moves[k], out[k] = action_values(st, i, np.int64(choice[i, 0]), choice[i, 1:], game, opts, z, w, later_kinds,
                                         later_sizes, u[k], work, root_cards, root_caps, acc, vals, cards, caps,
                                         costs, keys, pool, used, zeros, scr, streams, voids, dwork, values[k])


@njit(cache=True, parallel=True)
def values_par(st, choice, envs, game, opts, z, w, later_kinds, later_sizes, u, values, moves, out, chunks):
    """:func:`action_values` for every decision of the batch, split into ``chunks`` over numba's threads."""
    n = envs.shape[0]
    for ch in prange(chunks):
        lo, hi = kernels.chunk_bounds(n, chunks, ch)
        _values_range(st, choice, envs, lo, hi, game, opts, z, w, later_kinds, later_sizes, u, values, moves, out)


@njit(cache=True)
def values_ser(st, choice, envs, game, opts, z, w, later_kinds, later_sizes, u, values, moves, out):
    """Serial twin of :func:`values_par`."""
    _values_range(st, choice, envs, 0, envs.shape[0], game, opts, z, w, later_kinds, later_sizes, u, values, moves,
                  out)


# --------------------------------------------------------------------------- the agent
def game_vector(rules: Rules) -> np.ndarray:
    """The game vector of the kernels (``G_*``): players, hand size, the set-aside variant, K17, each seat's side."""
    P = rules.players
    game = np.zeros(N_GAME + P, np.int64)
    game[[G_PLAYERS, G_HAND, G_SPADES, G_LCP]] = [P, rules.hand_size, rules.set_aside == "spades",
                                                  rules.last_capture_point]
    game[G_SIDE:G_SIDE + P] = [rules.team_of(s) for s in range(P)]
    return game


def _int_option(name: str, value: object, least: int, most: int = MAX_SAMPLES) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        raise ValueError(f"pimc option {name} must be an integer from {least} to {most}, got {value!r}")
    return int(value)


class PIMCAgent:
    """``pimc``: determinized search with rollouts (see the module docstring for the options)."""

    name = "pimc"

    def __init__(self, **options: object) -> None:
        unknown = sorted(set(options) - set(DEFAULTS))
        if unknown:
            raise ValueError(f"unknown pimc option(s) {unknown}; options are {', '.join(DEFAULTS)}")
        o = DEFAULTS | options
        self.samples = _int_option("samples", o["samples"], 1)
        self.rollouts = _int_option("rollouts", o["rollouts"], 1)
        self.horizon = _int_option("horizon", o["horizon"], 0, 1000)
        self.rounds = _int_option("rounds", o["rounds"], 0, 12)
        z = o["z"]
        if isinstance(z, bool) or not isinstance(z, (int, float)) or not 0 <= z < float("inf"):
            raise ValueError(f"pimc option z must be a number >= 0, got {z!r}")
        self.z = float(z)
        if o["policy"] not in POLICIES:
            raise ValueError(f"pimc option policy must be one of {', '.join(POLICIES)} or a learned policy "
                             f"{'|'.join(f'{k}:PATH' for k in LEARNED) or 'ppo:PATH'}, got {o['policy']!r}")
        self.policy = str(o["policy"])
        if not isinstance(o["voids"], bool):
            raise ValueError(f"pimc option voids must be true or false, got {o['voids']!r}")
        self.voids = bool(o["voids"])
        if o["device"] not in DEVICES:
            raise ValueError(f"pimc option device must be one of {', '.join(DEVICES)}, got {o['device']!r}")
        self.device = str(o["device"])
        if self.device == "cuda":
            from krypenv.envs.cuda import require_cuda

            require_cuda("pimc option device=cuda")
        self.opts = np.zeros(N_OPTS, np.int64)
        self.opts[[O_SAMPLES, O_ROLLOUTS, O_POLICY, O_HORIZON, O_ROUNDS, O_VOIDS]] = [
            self.samples, self.rollouts, POLICIES[self.policy], self.horizon, self.rounds, self.voids]
        self.weights = expert_weights()
        self.later_kinds, self.later_sizes = _packets(LATER_PATTERN)

    def _inputs(self, batch: DecisionBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """(the game vector, each decision's uniform, env indices, chunks for the parallel driver; 0: serial)."""
        game = game_vector(batch.rules)
        u = batch.uniforms(1)[:, 0]
        envs = np.asarray(batch.envs, np.int64)
        threads = numba.get_num_threads()
        chunks = min(len(envs), 4 * threads) if threads > 1 and len(envs) > 1 else 0
        return game, u, envs, chunks

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The next action of each decision: one uniform per decision seeds its search."""
        core = batch.core
        game, u, envs, chunks = self._inputs(batch)
        if self.device == "cuda":
            return self._on_device(batch, game, u, envs)[2]
        out = np.empty(len(batch), np.int64)
        args = (core.deals.state, core.choice, envs, game, self.opts, self.z, self.weights, self.later_kinds,
                self.later_sizes, u, out)
        decide_par(*args, chunks) if chunks else decide_ser(*args)
        return out

    def values(self, batch: DecisionBatch) -> tuple[np.ndarray, np.ndarray]:
        """The search as a teacher: ((B, 105) every action's value to the mover, (B,) the action :meth:`act` plays).

        An action's value is minus the mean score over the worlds of the best move it leads to
        (:func:`action_values`; higher is better, points of the mover's side at the rollouts' stop);
        NaN for illegal actions and at a decision with one legal move (nothing is searched).  It
        draws the same uniform per decision as :meth:`act`, so the action is the one ``act`` plays.
        """
        core = batch.core
        game, u, envs, chunks = self._inputs(batch)
        if self.device == "cuda":
            values, _, out = self._on_device(batch, game, u, envs)
            return -values, out
        values = np.empty((len(batch), batch.mask.shape[1]), np.float64)
        moves, out = np.empty(len(batch), np.int64), np.empty(len(batch), np.int64)
        args = (core.deals.state, core.choice, envs, game, self.opts, self.z, self.weights, self.later_kinds,
                self.later_sizes, u, values, moves, out)
        values_par(*args, chunks) if chunks else values_ser(*args)
        return -values, out

    def _on_device(self, batch: DecisionBatch, game: np.ndarray, u: np.ndarray, envs: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`values_par`'s outputs (values, moves, actions), the search run on the GPU."""
        from krypenv.agents.krypkasino.pimc_cuda import search_values

        return search_values(action_values, batch.core.deals.state, batch.core.choice, envs, game, self.opts, self.z,
                             self.weights, self.later_kinds, self.later_sizes, u)


def make(**options: object) -> Agent:
    """``pimc:...``: :class:`PIMCAgent`, or with ``policy=KIND:PATH`` (a learned policy) the search
    ``LEARNED[KIND]`` builds."""
    policy = options.get("policy")
    if isinstance(policy, str) and policy.partition(":")[0] in LEARNED and policy.partition(":")[2]:
        kind, _, path = policy.partition(":")
        if "device" in options:
            raise ValueError(f"pimc option device: the search over a learned policy ({policy}) runs its network on "
                             "the host; device= is for the compiled rollout policies "
                             f"({', '.join(POLICIES)})")
        return LEARNED[kind](path, **{k: v for k, v in options.items() if k != "policy"})
    return PIMCAgent(**options)


# What a spec from outside (a web request) may set: each decision costs samples × rollouts rollouts per move.
SERVED_LIMITS = {"samples": Limit(1, 256), "rollouts": Limit(1, 4), "z": Limit(0, 10, integer=False), "voids": BOOL,
                 "rounds": Limit(0, 12), "horizon": Limit(0, 1000),
                 "policy": Limit(choices=tuple(POLICIES), checkpoint="ppo")}

register("pimc", make, "determinized search: samples hidden cards, rolls every move out with expert play "
         "(or a learned policy: policy=ppo:PATH)", games=("krypkasino",), limits=SERVED_LIMITS)
