"""The shared core of the Kungsholmskille environments: N games of one configuration on one batched engine.

:class:`Core` holds N environments on one :class:`~krypenv.kungsholmskille.engine.Deals` batch
(N = 1 runs the same code as 4096) plus, per environment, an episode record (``ep``, int64), a
splitmix64 random stream (``rng``, :mod:`krypenv.rng`) and a copy of the last deal that ended
in a budrunda (``prev_state``, ``prev_cash``; for rendering and inspection).  The AEC env is
``Core(cfg, 1)`` with every seat external; the Gymnasium env and the VecEnv are ``Core(cfg, N)``
with a learner seat and opponents that are built in (compiled uniform random) or external
(Python agents, asked in batches through :class:`krypenv.agent_api.DecisionBatch`; ``Core`` is
its :class:`~krypenv.agent_api.DecisionSource`: rules, uniforms, seat views, action names).
The compiled work is in :mod:`krypenv.kungsholmskille.env_kernels`, the configuration in
:mod:`krypenv.kungsholmskille.config`.

**Episodes.** An episode is one pot (L3, L16): every seat pays 2 into it before the first
deal; deal follows deal, the dealer passing left (L2: deal k is dealt by
``first_dealer + k``), each budrunda's antes (L12) going into the same pot, until the pot
goes out by a walkover (L15) or a showdown (L14) — *terminated*; the antes for the next pot
(``antes_next``) are then not paid.  An episode whose ``max_deals``-th deal ends in a
budrunda is *truncated* (L16): the pot belongs to nobody, and the antes for a deal that is
never dealt are not paid.  ``episodes[i]`` counts the episodes env i has
started (``reset`` and the env shells' auto-resets), so an opponent league can tell a new
episode from the next deal of the same pot.

**Money and rewards.** ``ep[i, E_MONEY + s]`` is seat s's net money in the episode so far:
−2 from the start (L3), minus the budrunda antes it paid, plus the pot and penalty it won,
minus a penalty it paid (L14).  Every reward is the change of the receiving seat's money since
the last time it was rewarded, and the −2 ante reaches every seat with the first step (an AEC
env's rewards after ``reset`` must be zero); so a seat's return is exactly its net money, and
the returns of an episode whose pot went out sum to 0 (L18's bookkeeping: the pot is
everybody's antes).

**Randomness.** Each env owns a splitmix64 stream (:mod:`krypenv.rng`) seeded from
``numpy.random.SeedSequence(seed)``.
Decks (the engine's Fisher–Yates over 41 uniforms, :func:`~krypenv.kungsholmskille.cards.shuffle_into`),
a random learner seat (drawn before the first deck) and the built-in random opponents' choices
(⌊u·n⌋-th of the n legal actions, one uniform per decision, :func:`krypenv.rng.pick_legal`) and
the uniforms handed to external agents (``DecisionBatch.uniforms``) all come from it, so the
same seed gives the same episode in every interface and batch size.

**skip_forced.** With ``skip_forced=True`` a decision with a single legal move (L10: a forced
play, always so in the fourth trick) is made by the core for whoever is to act, without asking
and without drawing a uniform; the move is still in the deal's record (L17).  Default False:
every decision is asked, as L17 records it, so an env step is one record move and the three
interfaces and ``krypenv replay`` see the same sequence.

**Illegal moves** (``illegal="lose"``): the episode ends at once (terminated) and the offender
pays ``ILLEGAL_FINE`` = 20 to every other seat; the pot stays in the middle and belongs to nobody
(as at truncation).  ``illegal="raise"`` is handled by the env shells before anything moves.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from krypenv.agent_api import Agent, DecisionBatch, check_actions
from krypenv.kungsholmskille import kernels
from krypenv.kungsholmskille.actions import N_ACTIONS, action_name
from krypenv.kungsholmskille.config import (
    C_FIRST_DEALER,
    C_KINDS,
    C_MAX_DEALS,
    C_P,
    C_RANDOM_SEAT,
    C_SKIP,
    CFG_SIZE,
    E_DEAL,
    E_MONEY,
    E_OFFENDER,
    E_OVER,
    E_SEAT,
    EP_WIDTH,
    EXTERNAL,
    K_PARALLEL_FROM,
    LEARNER,
    POT_OUT,
    TRUNCATED,
    EnvConfig,
)  # fmt: skip
from krypenv.kungsholmskille.engine import Deals
from krypenv.kungsholmskille.env_kernels import k_act_external, k_observe_seats, k_reset_par, k_reset_ser, k_waiting
from krypenv.kungsholmskille.observation import OBS_DTYPE, bounds, obs_size
from krypenv.kungsholmskille.view import KilleView, seat_view
from krypenv.rng import k_uniforms, seed_state

__all__ = ["Core", "EnvConfig"]


class Core:
    """N environments of one configuration on one batched engine (see the module docstring).

    ``seat`` is the learner's seat (an int, or ``"random"`` for a fresh one each episode);
    ``kinds[r]`` says who acts for the seat ``r`` places after the learner (LEARNER for r = 0,
    then EXTERNAL or RANDOM).  ``deals`` is the engine's Python view of the live state.
    """

    def __init__(self, cfg: EnvConfig, n: int = 1, seat: int | str = 0, kinds: list[int] | None = None) -> None:
        """N environments of ``cfg``; every episode is over until :meth:`reset`."""
        P = cfg.players
        if isinstance(seat, str) and seat == "random":
            random_seat, seat0 = True, 0
        elif isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and 0 <= seat < P:
            random_seat, seat0 = False, int(seat)
        else:
            raise ValueError(f"seat must be a seat 0..{P - 1} or 'random', got {seat!r}")
        self.kinds = [LEARNER] + [EXTERNAL] * (P - 1) if kinds is None else [int(k) for k in kinds]
        if len(self.kinds) != P:
            raise ValueError(f"kinds must name who acts for each of the {P} seats")
        self.config, self.rules, self.players, self.n = cfg, cfg.rules, P, int(n)
        self.deals = Deals(self.rules, self.n)
        self.st, self.cash = self.deals.state, self.deals.cash
        self.prev_state, self.prev_cash = np.zeros_like(self.st), np.zeros_like(self.cash)
        self.ep = np.zeros((self.n, EP_WIDTH), np.int64)
        self.ep[:, E_OVER] = TRUNCATED  # nothing runs before reset
        self.ep[:, E_SEAT] = seat0
        self.ep[:, E_OFFENDER] = -1
        self.rng = np.zeros(self.n, np.uint64)
        self.episodes = np.zeros(self.n, np.int64)  # episodes started per env (reset and auto-reset; for leagues)
        c = np.zeros(CFG_SIZE, np.int64)
        c[C_P], c[C_MAX_DEALS], c[C_FIRST_DEALER] = P, cfg.max_deals, cfg.dealer0
        c[C_SKIP], c[C_RANDOM_SEAT] = bool(cfg.skip_forced), random_seat
        c[C_KINDS:C_KINDS + P] = self.kinds
        self.cfg = c
        self.par = self.n >= K_PARALLEL_FROM
        self.chunks = min(self.n, 4 * numba.config.NUMBA_NUM_THREADS) if self.par else 1
        self.dim = obs_size(P)
        self.low, self.high = bounds(P, cfg.max_deals)

    # ------------------------------------------------------------------ views
    @property
    def money(self) -> np.ndarray:
        """(N, P) each seat's net money in the current episode (a view)."""
        return self.ep[:, E_MONEY:E_MONEY + self.players]

    @property
    def seat(self) -> np.ndarray:
        """(N,) the learner's seat per env (a view)."""
        return self.ep[:, E_SEAT]

    @property
    def deal_no(self) -> np.ndarray:
        """(N,) the current deal's number within the episode (a view)."""
        return self.ep[:, E_DEAL]

    @property
    def over(self) -> np.ndarray:
        """(N,) episode state: RUNNING, POT_OUT, TRUNCATED or FORFEIT (a view)."""
        return self.ep[:, E_OVER]

    @property
    def pot(self) -> np.ndarray:
        """(N,) the pot now: the current deal's pot, 0 once it went out."""
        out = self.cash[:, kernels.POT].astype(np.int64)
        out[(self.over == POT_OUT)] = 0
        return out

    # ------------------------------------------------------------------ operations
    def seed(self, seeds: list[int | None]) -> None:
        """Seed each env's random stream (None: fresh entropy)."""
        if len(seeds) != self.n:
            raise ValueError(f"need {self.n} seeds, got {len(seeds)}")
        self.rng[:] = [seed_state(s) for s in seeds]

    def _args(self) -> tuple[np.ndarray, ...]:
        return self.st, self.cash, self.ep, self.rng, self.cfg, self.prev_state, self.prev_cash

    def reset(self, active: np.ndarray | None = None) -> None:
        """New episodes in the active envs (all by default), advanced to the first learner or external decision."""
        active = np.ones(self.n, np.bool_) if active is None else np.asarray(active, np.bool_)
        self.episodes[active] += 1
        (k_reset_par if self.par else k_reset_ser)(*self._args(), active, self.chunks)

    def observe(self, i: int, observer: int) -> tuple[np.ndarray, np.ndarray]:
        """(obs int16, mask int8) of env ``i`` for an absolute seat."""
        obs = np.empty((1, self.dim), OBS_DTYPE)
        mask = np.empty((1, N_ACTIONS), np.int8)
        k_observe_seats(self.st, self.cash, self.ep, self.cfg, np.array([i], np.int64),
                        np.array([observer], np.int64), obs, mask)
        return obs[0], mask[0]

    def waiting(self) -> np.ndarray:
        """(N,) per env the relative seat (to the learner) whose external agent must act now, or −1."""
        out = np.empty(self.n, np.int64)
        k_waiting(self.st, self.ep, self.cfg, out)
        return out

    # ------------------------------------------------------------------ DecisionSource (krypenv.agent_api)
    def uniforms(self, idx: np.ndarray, k: int = 1) -> np.ndarray:
        """(len(idx), k) uniforms drawn from the streams of envs ``idx`` (for external agents)."""
        idx = np.asarray(idx, np.int64)
        out = np.empty((idx.shape[0], k), np.float64)
        k_uniforms(self.rng, idx, out)
        return out

    def seat_view(self, i: int, seat: int) -> KilleView:
        """The :class:`~krypenv.kungsholmskille.view.KilleView` of an absolute seat in env ``i`` (``batch.views()``)."""
        return seat_view(self, i, seat)

    def action_name(self, i: int, action: int) -> str:
        """``action`` as its L17 move string, e.g. ``play:gok`` (the same at every decision)."""
        return action_name(action) if 0 <= action < N_ACTIONS else f"action {action} (not in 0..{N_ACTIONS - 1})"

    def decisions(self, envs: np.ndarray, seats: np.ndarray) -> DecisionBatch:
        """A :class:`~krypenv.agent_api.DecisionBatch` for the given envs and absolute seats."""
        envs = np.asarray(envs, np.int64)
        seats = np.asarray(seats, np.int64)
        obs = np.empty((envs.shape[0], self.dim), OBS_DTYPE)
        masks = np.empty((envs.shape[0], N_ACTIONS), np.int8)
        k_observe_seats(self.st, self.cash, self.ep, self.cfg, envs, seats, obs, masks)
        return DecisionBatch(obs, masks, seats, self, envs)

    def play_external(self, agents: dict[int, Agent]) -> None:
        """Let the external agents act (``agents[r]`` for the seat r places after the learner) until none must.

        Built-in opponents and forced moves are made in between.  An illegal action raises
        ValueError naming the agent, the game, the move and the legal ones, and changes nothing.
        """
        if not agents:
            return
        order = sorted(agents)
        index = {r: k for k, r in enumerate(order)}
        rel = (np.arange(self.players)[None, :] - self.seat.astype(np.int64)[:, None]) % self.players
        seating = np.vectorize(lambda r: index.get(int(r), -1), otypes=[np.int64])(rel)
        self.play_seated(seating, [agents[r] for r in order])

    def play_seated(self, seating: np.ndarray, agents: list[Agent]) -> None:
        """Let external agents act until none must: ``seating[i, s]`` indexes ``agents`` for seat s of env i.

        Every round trip asks each agent once, for all the games where it is to act.
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
                actions = check_actions(getattr(agent, "name", repr(agent)), batch, agent.act(batch))
                k_act_external(*self._args(), sel, actions, status[:sel.size])

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("st", "cash")}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self.st, self.cash = self.deals.state, self.deals.cash
