"""``pimc``: determinized search for Kungsholmskille (perfect-information Monte Carlo over the hidden cards).

At a decision with more than one legal move, the agent samples ``worlds`` complete deals
consistent with what its seat knows, plays every legal move in every world and rolls the deal
out to its end with a fast policy for every seat (``rollout="expert"`` or ``"timid"``, the
compiled tactics of :mod:`krypenv.agents.kungsholmskille.tactics`), and plays the move with the best
mean money.  The same worlds serve every move (common random numbers).

**Worlds.**  The seat's unseen cards (the deck's cards, L1, L20, less its hand, its discards and
every card played, L8, L10) are shuffled and dealt, in order, to the hands of the other
players still in (each keeps its current number of cards), the hands of the players who
folded (L6), the other players' discards (as many as each exchanged, a public count, L8) and
the talon's remaining cards (L4).  Everything public (calls, folds, tricks, pot, the seat to
act) is kept; every hidden column of the engine record is replaced, so the choice cannot
depend on cards the seat has not seen (a test deals two positions that differ only in hidden
cards).  All ``A × worlds`` rollouts of one decision run as one
:class:`~krypenv.kungsholmskille.engine.DealBatch` batch in one compiled call.

**Value** (``value``).  ``episode`` (the default) counts a rollout as the environments count
an episode (one pot, L16): when the deal ends with the pot going out (showdown L14, walkover
L15) the value is the seat's money from the deal (L18 ``money``), since the next pot's antes
are never paid; after a budrunda (L12) it is that money minus the seat's ante plus a fair share
``pot_next / players`` of the pot that stays in play.  ``deal`` is the older value, money minus
``antes_next`` whatever the ending (what the deal costs in a game that goes on).  Measured
(2026-11-23, 4 players, 300 deck sets of seed 21, with expert and timid):
``pimc`` − ``pimc:value=deal`` = +2.51 [+1.98, +3.03] kronor per episode.

**Defaults** ``pimc:worlds=32,rollout=expert,value=episode``.  The sampling uses a generator seeded from the
game's own stream (``batch.uniforms``), so evaluations are reproducible.  Speed is measured by
``tests/agents/kungsholmskille/test_agents.py`` and quoted in docs/results/kungsholmskille.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from krypenv.agents.base import Limit, register
from krypenv.agents.kungsholmskille.tactics import (
    EXPERT,
    EXPERT_PARAMS,
    TIMID,
    TIMID_PARAMS,
    WORK_WORDS,
    decide,
    offsets,
)
from numba import njit

from krypenv.agent_api import DecisionBatch
from krypenv.kungsholmskille.actions import MAX_LEGAL, N_ACTIONS
from krypenv.kungsholmskille.cards import N_RANKS
from krypenv.kungsholmskille.engine import DealBatch, kernels
from krypenv.kungsholmskille.observation import encode_into, mask_into, obs_size

__all__ = ["PimcAgent", "make", "rollout_values", "row_value", "sample_world"]

GAME = "kungsholmskille"
ROLLOUTS = {"expert": (EXPERT, EXPERT_PARAMS), "timid": (TIMID, TIMID_PARAMS)}
VALUES = ("episode", "deal")
LEARNED: dict[str, Callable[..., Any]] = {}  # learned rollout policies, policy=KIND:PATH -> builder(PATH, **options)


@njit(cache=True)
def rollout_values(st: np.ndarray, cash: np.ndarray, players: int, first: np.ndarray, seat: int, kind: int,
                   par: np.ndarray, off: np.ndarray, counts: np.ndarray, obs: np.ndarray, episode: bool,
                   out: np.ndarray) -> None:
    """Per row: make action ``first[i]``, play the deal out with policy ``kind``; ``out[i]`` its value (docstring)."""
    mask = np.empty(N_ACTIONS, np.int8)
    buf = np.empty(MAX_LEGAL + 5, np.int64)
    work = np.empty(WORK_WORDS, np.int64)
    money = np.zeros(players, np.int64)
    for i in range(st.shape[0]):
        row, cr = st[i], cash[i]
        kernels.apply(row, cr, players, first[i])
        while not row[kernels.DONE]:
            s = row[kernels.TO_ACT]
            encode_into(row, cr, money, 0, 0, False, players, s, obs)
            mask_into(row, s, False, mask, buf)
            kernels.apply(row, cr, players, decide(obs, mask, players, kind, par, off, counts, work))
        out[i] = row_value(row, cr, players, seat, episode)


@njit(cache=True)
def row_value(row: np.ndarray, cr: np.ndarray, players: int, seat: int, episode: bool) -> float:
    """What a finished deal is worth to ``seat`` (the module docstring's ``value``: ``episode`` or ``deal``)."""
    if not episode:
        return cr[kernels.MONEY + seat] - cr[kernels.ANTES + seat]
    if row[kernels.OUTCOME] == kernels.BUDRUNDA:
        # the pot stays in the episode: its antes, and a fair share of it
        return cr[kernels.MONEY + seat] - cr[kernels.ANTES + seat] + cr[kernels.POT_NEXT] / players
    return cr[kernels.MONEY + seat]  # the pot went out (L14, L15) or was settled (L21): the next antes are not paid


def sample_world(row: np.ndarray, players: int, seat: int, rng: np.random.Generator,
                 counts: np.ndarray | None = None) -> np.ndarray:
    """A copy of an engine record whose hidden cards (seen from ``seat``) are dealt afresh (see the module
    docstring); ``counts`` (21,): the deck's copies of each rank (default 2 each, L1; ``rules.deck_counts``, L20)."""
    w = row.copy()
    hand_at = lambda s: slice(kernels.HANDS + N_RANKS * s, kernels.HANDS + N_RANKS * (s + 1))
    seen = w[hand_at(seat)].astype(np.int64).copy()
    for d in w[kernels.DISCARDS + 2 * seat:kernels.DISCARDS + 2 * seat + 2]:
        if d >= 0:
            seen[d] += 1
    for t in range(4):
        for s in range(players):
            c = w[kernels.TRICK_CARDS + kernels.MAXP * t + s]
            if c >= 0:
                seen[c] += 1
    pool = np.repeat(np.arange(N_RANKS), (np.full(N_RANKS, 2) if counts is None else counts) - seen)
    rng.shuffle(pool)
    k = 0
    others = [s for s in range(players) if s != seat]
    for s in sorted(others, key=lambda s: int(w[kernels.FOLDED + s])):  # players still in first, then folded ones
        n = int(w[hand_at(s)].sum())
        w[hand_at(s)] = np.bincount(pool[k:k + n], minlength=N_RANKS)
        k += n
    for s in others:
        for j in range(2):
            if w[kernels.DISCARDS + 2 * s + j] >= 0:
                w[kernels.DISCARDS + 2 * s + j] = pool[k]
                k += 1
    tpos, end = int(w[kernels.TPOS]), int(w[kernels.DECK_LEN])
    w[kernels.DECK + tpos:kernels.DECK + end] = pool[k:k + end - tpos]
    k += end - tpos
    if k != pool.size:
        raise RuntimeError(f"world sampling dealt {k} of {pool.size} unseen cards")
    return w


class PimcAgent:
    """``pimc``: samples worlds, rolls every legal move out with a fast policy, plays the best mean money."""

    name = "pimc"
    game = GAME

    def __init__(self, worlds: int = 32, rollout: str = "expert", value: str = "episode") -> None:
        """``worlds`` sampled deals per decision; ``rollout`` the policy of every seat; ``value`` episode or deal."""
        if isinstance(worlds, bool) or not isinstance(worlds, int) or worlds < 1:
            raise ValueError(f"pimc: worlds must be a positive integer, got {worlds!r}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"pimc: rollout must be one of {', '.join(ROLLOUTS)}, got {rollout!r}")
        if value not in VALUES:
            raise ValueError(f"pimc: value must be one of {', '.join(VALUES)}, got {value!r}")
        self.worlds, self.rollout, self.value = worlds, rollout, value
        self._offsets: dict[int, np.ndarray] = {}

    def world_values(self, core: object, i: int, seat: int, mask: np.ndarray,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(legal actions (A,), per-world values (A, worlds)) of seat ``seat``'s decision in env ``i`` of ``core``."""
        P = int(core.players)  # type: ignore[attr-defined]
        legal = np.flatnonzero(mask)
        row, cr = core.deals.state[i], core.deals.cash[i]  # type: ignore[attr-defined]
        counts = np.asarray(core.rules.deck_counts, np.int64)  # type: ignore[attr-defined]  # L1, L20
        worlds = np.stack([sample_world(row, P, seat, rng, counts) for _ in range(self.worlds)])
        A, W = legal.size, self.worlds
        deals = DealBatch(core.rules, A * W)  # type: ignore[attr-defined]
        deals.state[:] = np.tile(worlds, (A, 1))
        deals.cash[:] = cr
        kind, par = ROLLOUTS[self.rollout]
        off = self._offsets.setdefault(P, offsets(P))
        out = np.empty(A * W, np.float64)
        rollout_values(deals.state, deals.cash, P, np.repeat(legal, W).astype(np.int64), seat, kind, par, off,
                       counts, np.empty(obs_size(P), np.int16), self.value == "episode", out)
        return legal, out.reshape(A, W)

    def values(self, batch: DecisionBatch) -> tuple[np.ndarray, np.ndarray]:
        """The search as a teacher: ((B, A) every legal action's mean rollout money, higher is better; (B,) the
        action :meth:`act` plays).  NaN for illegal actions and at a decision with one legal action (not searched);
        the same uniform per decision as ``act``, so the same worlds and the same action."""
        values = np.full(batch.mask.shape, np.nan)
        out = np.empty(len(batch), np.int64)
        seeds = (batch.uniforms(1)[:, 0] * 2**53).astype(np.int64)
        for k in range(len(batch)):
            legal = np.flatnonzero(batch.mask[k])
            if legal.size == 1:
                out[k] = legal[0]
                continue
            rng = np.random.default_rng(int(seeds[k]))
            legal, vals = self.world_values(batch.core, int(batch.envs[k]), int(batch.seats[k]), batch.mask[k], rng)
            values[k, legal] = vals.mean(axis=1)
            out[k] = legal[int(np.argmax(values[k, legal]))]
        return values, out

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The legal action with the best mean rollout money for every decision (a forced one at once)."""
        return self.values(batch)[1]


def make(policy: str = "", **options: object) -> object:
    """``pimc:...``: :class:`PimcAgent`, or with ``policy=KIND:PATH`` the search whose rollouts a learned policy
    plays (``LEARNED[KIND]``; :mod:`krypenv.agents.kungsholmskille.guided` adds ``mlp``)."""
    if policy:
        kind, _, path = str(policy).partition(":")
        if kind not in LEARNED or not path:
            raise ValueError(f"pimc: policy must be {' or '.join(f'{k}:PATH' for k in LEARNED) or 'mlp:PATH'} "
                             f"(a learned rollout policy), got {policy!r}")
        return LEARNED[kind](path, **options)
    return PimcAgent(**options)  # type: ignore[arg-type]

register("pimc", make, "determinized search: samples the hidden cards, rolls every move out with expert play, "
         "best mean money", games=(GAME,),
         limits={"worlds": Limit(1, 256), "rollout": Limit(choices=tuple(ROLLOUTS)), "value": Limit(choices=VALUES)})
