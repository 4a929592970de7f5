"""The shared core of the three environments: N games of one configuration on one batched engine.

:class:`Core` holds N environments on one :class:`krypenv.krypkasino.engine.Deals` batch whose
records carry a few more columns for the env (capture-choice state, last move, learner seat,
episode over), plus per-env random streams, match totals and penalties.  The AEC env is
``Core(cfg, 1)`` with every seat external; the Gymnasium env and the VecEnv are
``Core(cfg, N)`` with a learner seat and opponents that are either built in (compiled) or
external (Python agents, asked in batches through :class:`krypenv.agent_api.DecisionBatch`).
The compiled work is in :mod:`krypenv.krypkasino.env_kernels`, the configuration in
:mod:`krypenv.krypkasino.config`.

Randomness: each env owns a splitmix64 stream (``Core.rng[i]``, :mod:`krypenv.rng`) seeded
from ``numpy.random.SeedSequence(seed)``.  Decks (the engine's Fisher–Yates over 103
uniforms), a random learner seat, built-in random opponents and the uniforms handed to
external agents all come from it, so the same seed gives the same deals in every interface
and batch size.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from krypenv.agent_api import Agent, DecisionBatch, check_actions
from krypenv.krypkasino.actions import CHOICE_SIZE, N_ACTIONS, action_name
from krypenv.krypkasino.config import (
    C_E0,
    C_INIT_KINDS,
    C_INIT_SIZES,
    C_LATER_KINDS,
    C_LATER_SIZES,
    C_SEAT_KINDS,
    C_SIDE_OF,
    CFG_SIZE,
    EXTERNAL,
    I_DEAL_NO,
    I_TOTALS,
    K_PARALLEL_FROM,
    LAST_MOVE,
    LEARNER,
    EnvConfig,
)
from krypenv.krypkasino.engine import Deals, kernels
from krypenv.krypkasino.engine.captures import new_scratch
from krypenv.krypkasino.env_kernels import (
    _col_over,
    _col_seat,
    k_act,
    k_act_external,
    k_advance,
    k_observe,
    k_observe_seats,
    k_reset_par,
    k_reset_ser,
    k_values,
    k_waiting,
)
from krypenv.krypkasino.observation import bounds, obs_size
from krypenv.krypkasino.view import SeatView, seat_view
from krypenv.rng import k_uniforms, seed_state

__all__ = ["Core"]


class Core:
    """N environments of one configuration on one batched engine, with the extras the env shells need.

    ``seat`` is the learner's seat (an int, or ``"random"`` for a fresh one each episode);
    ``kinds[r]`` says who acts for the seat ``r`` places after the learner (LEARNER for r = 0,
    then EXTERNAL or RANDOM).  The engine's Python view (``self.deals``) works on the live
    state, so ``deals.scores()``, ``deals.legal_moves(i)`` etc. keep working.
    """

    def __init__(self, cfg: EnvConfig, n: int = 1, seat: int | str = 0, kinds: list[int] | None = None) -> None:
        rules = cfg.rules
        P = rules.players
        if seat == "random":
            random_seat, seat0 = True, 0
        elif isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and 0 <= seat < P:
            random_seat, seat0 = False, int(seat)
        else:
            raise ValueError(f"seat must be a seat 0..{P - 1} or 'random', got {seat!r}")
        self.config, self.rules, self.n, self.players = cfg, rules, int(n), P
        self.kinds = [LEARNER] + [EXTERNAL] * (P - 1) if kinds is None else [int(k) for k in kinds]
        if len(self.kinds) != P:
            raise ValueError(f"kinds must name who acts for each of the {P} seats")
        self.side_of = np.array([rules.team_of(s) for s in range(P)], np.int64)
        e0 = kernels.HANDS + 105 * P  # first column after the engine's
        width = (e0 + CHOICE_SIZE + LAST_MOVE + 2 + 63) // 64 * 64
        state = np.zeros((self.n, width), np.int8)
        state[:, kernels.DONE] = 1
        self.deals = Deals(rules, self.n, state=state)
        self.st = state
        self.cfg = self._pack(random_seat, e0)
        self.st[:, e0] = -1  # no pending card
        self.st[:, _col_over(self.cfg)] = 1
        self.st[:, _col_seat(self.cfg)] = seat0
        self.rng = np.zeros(self.n, np.uint64)
        self.ints = np.zeros((self.n, 1 + 2 * P), np.int64)
        self.base = np.zeros(self.n, np.float64)
        self.par = self.n >= K_PARALLEL_FROM
        chunks = min(self.n, 4 * numba.config.NUMBA_NUM_THREADS) if self.par else 1
        self.scr = np.stack([new_scratch() for _ in range(chunks)])
        self.dim = obs_size(P)
        dealt = P * rules.hand_size + rules.table_size
        self.low, self.high = bounds(P, max(rules.hand_size, 4), rules.rounds, dealt, cfg.deals)

    def _pack(self, random_seat: bool, e0: int) -> np.ndarray:
        rules, cfg, P = self.rules, self.config, self.players
        (ik, isz), (lk, lsz) = self.deals._initial, self.deals._later
        c = np.zeros(CFG_SIZE, np.int64)
        c[:12] = [self.n, P, self.deals._spades, cfg.deals, rules.last_capture_point, rules.n_teams,
                  cfg.reward == "relative", P - 1, random_seat, e0, len(ik), len(lk)]
        c[C_INIT_KINDS:C_INIT_KINDS + len(ik)], c[C_INIT_SIZES:C_INIT_SIZES + len(ik)] = ik, isz
        c[C_LATER_KINDS:C_LATER_KINDS + len(lk)], c[C_LATER_SIZES:C_LATER_SIZES + len(lk)] = lk, lsz
        c[C_SIDE_OF:C_SIDE_OF + P] = self.side_of
        c[C_SEAT_KINDS:C_SEAT_KINDS + P] = self.kinds
        return c

    # ------------------------------------------------------------------ views of the state
    @property
    def choice(self) -> np.ndarray:
        """(N, 53) capture-choice state per env: pending card (−1: none), then fixed counts."""
        e0 = self.cfg[C_E0]
        return self.st[:, e0:e0 + CHOICE_SIZE]

    @property
    def last(self) -> np.ndarray:
        """(N, 56) last move per env: seat, card, tabbes gained, K15 taker (−1), capture counts."""
        c = self.cfg[C_E0] + CHOICE_SIZE
        return self.st[:, c:c + LAST_MOVE]

    @property
    def seat(self) -> np.ndarray:
        """(N,) the learner's seat per env."""
        return self.st[:, self.cfg[C_E0] + CHOICE_SIZE + LAST_MOVE]

    @property
    def over(self) -> np.ndarray:
        """(N,) bool: the episode has ended."""
        return self.st[:, self.cfg[C_E0] + CHOICE_SIZE + LAST_MOVE + 1].view(np.bool_)

    @property
    def deal_no(self) -> np.ndarray:
        """(N,) index of the current deal within the match."""
        return self.ints[:, I_DEAL_NO]

    @property
    def totals(self) -> np.ndarray:
        """(N, P) scores of the match's finished deals per seat."""
        return self.ints[:, I_TOTALS:I_TOTALS + self.players]

    @property
    def penalty(self) -> np.ndarray:
        """(N, P) illegal-move penalties per seat (``illegal="lose"``)."""
        return self.ints[:, I_TOTALS + self.players:]

    # ------------------------------------------------------------------ operations
    def seed(self, seeds: list[int | None]) -> None:
        """Seed each env's random stream (None: fresh entropy)."""
        if len(seeds) != self.n:
            raise ValueError(f"need {self.n} seeds, got {len(seeds)}")
        self.rng[:] = [seed_state(s) for s in seeds]

    def reset(self, active: np.ndarray | None = None) -> None:
        """New episodes in the active envs (all by default), advanced to the first learner or external decision."""
        active = np.ones(self.n, np.bool_) if active is None else np.asarray(active, np.bool_)
        (k_reset_par if self.par else k_reset_ser)(self.st, self.rng, self.ints, self.base, self.cfg, active, self.scr)

    def load(self, deals: Deals, i: int = 0) -> None:
        """Put deal 0 of another Deals (e.g. ``Deals.position(...)``) into env ``i`` as a fresh episode state."""
        e0 = self.cfg[C_E0]
        self.st[i, :e0] = deals.state[0, :e0]
        self.choice[i, 0], self.choice[i, 1:] = -1, 0
        self.last[i], self.over[i], self.ints[i], self.base[i] = -1, False, 0, 0.0

    def act(self, i: int, action: int, lose: bool = False) -> int:
        """One action of the seat to act in env ``i`` (MOVED, CHOOSING or ILLEGAL), then the next deal of a match."""
        return int(k_act(self.st, self.rng, self.ints, self.cfg, i, int(action), lose, self.scr))

    def advance(self, i: int) -> None:
        """Play env ``i``'s built-in opponents until the learner or an external seat must act."""
        k_advance(self.st, self.rng, self.ints, self.cfg, i, self.scr)

    def observe(self, i: int, observer: int) -> tuple[np.ndarray, np.ndarray]:
        """(obs, mask) int8 of env ``i`` for an absolute seat."""
        obs = np.empty(self.dim, np.int8)
        mask = np.empty(N_ACTIONS, np.int8)
        k_observe(self.st, self.ints, self.cfg, i, observer, obs, mask, self.scr)
        return obs, mask

    def values(self, i: int = 0) -> np.ndarray:
        """(n_sides,) float64 values of env ``i``."""
        out = np.zeros(self.rules.n_teams, np.float64)
        k_values(self.st, self.ints, self.cfg, i, out)
        return out

    def uniforms(self, idx: np.ndarray, k: int = 1) -> np.ndarray:
        """(len(idx), k) uniforms drawn from the streams of envs ``idx`` (for external agents)."""
        idx = np.asarray(idx, np.int64)
        out = np.empty((idx.shape[0], k), np.float64)
        k_uniforms(self.rng, idx, out)
        return out

    def waiting(self) -> np.ndarray:
        """(N,) per env the relative seat (to the learner) whose external agent must act now, or −1."""
        out = np.empty(self.n, np.int64)
        k_waiting(self.st, self.cfg, out)
        return out

    def seat_view(self, i: int, seat: int) -> SeatView:
        """The :class:`~krypenv.krypkasino.view.SeatView` of an absolute seat in env ``i`` (for ``batch.views()``)."""
        return seat_view(self, i, seat)

    def action_name(self, i: int, action: int) -> str:
        """``action`` in words at env ``i``'s current decision, e.g. ``take 4H with 9S``."""
        return action_name(action, int(self.choice[i, 0]))

    def decisions(self, envs: np.ndarray, seats: np.ndarray) -> DecisionBatch:
        """A :class:`~krypenv.agent_api.DecisionBatch` for the given envs and absolute seats."""
        envs = np.asarray(envs, np.int64)
        seats = np.asarray(seats, np.int64)
        obs = np.empty((envs.shape[0], self.dim), np.int8)
        masks = np.empty((envs.shape[0], N_ACTIONS), np.int8)
        k_observe_seats(self.st, self.ints, self.cfg, envs, seats, obs, masks, self.scr)
        return DecisionBatch(obs, masks, seats, self, envs)

    def play_external(self, agents: dict[int, Agent]) -> None:
        """Let the external agents act (``agents[r]`` for the seat r places after the learner) until none must.

        Built-in opponents play in between.  An illegal action raises ValueError naming the
        agent, the game and the legal actions, and changes nothing.
        """
        if not agents:
            return
        order = sorted(agents)
        index = {r: k for k, r in enumerate(order)}
        rel = (np.arange(self.players)[None, :] - self.seat.astype(np.int64)[:, None]) % self.players
        seating = np.vectorize(lambda r: index.get(int(r), -1))(rel)
        self.play_seated(seating, [agents[r] for r in order])

    def play_seated(self, seating: np.ndarray, agents: list[Agent]) -> None:
        """Let external agents act until none must: ``seating[i, s]`` indexes ``agents`` for seat s of env i.

        Every round trip asks each agent once, for all the games where it is to act.  An
        illegal action raises ValueError naming the agent, the game and the legal actions.
        """
        status = np.empty(self.n, np.int64)
        while True:
            waiting = self.waiting()
            envs = np.flatnonzero(waiting >= 0)
            if envs.size == 0:
                return
            seats = (self.seat[envs].astype(np.int64) + waiting[envs]) % self.players
            who = seating[envs, seats]
            for a in np.unique(who):
                sel, sel_seats = envs[who == a], seats[who == a]
                agent = agents[int(a)]
                batch = self.decisions(sel, sel_seats)
                actions = check_actions(agent.name, batch, agent.act(batch))
                k_act_external(self.st, self.rng, self.ints, self.cfg, sel, actions, status[:sel.size], self.scr)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "deals"}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self.deals = Deals(self.rules, self.n, state=self.st)
