"""Kungsholmskille's batch of N environments of one configuration: the hooks of :class:`krypenv.envs.batch.EnvBatch`.

:class:`KungsholmskilleBatch` holds N environments on one
:class:`~krypenv.kungsholmskille.engine.DealBatch` (N = 1 runs the same code as 4096) plus, per
environment, an episode record (``episode``, int64), a splitmix64 random stream (``rng``,
:mod:`krypenv.rng`) and a copy of the last deal that ended in a budrunda (``prev_state``,
``prev_cash``; for rendering and inspection).  The AEC env is ``KungsholmskilleBatch(config, 1)``
with every seat external; the Gymnasium env and the VecEnv are ``KungsholmskilleBatch(config, N)``
with a learner seat and opponents that are built in (compiled uniform random) or external
(Python agents, asked in batches by the shared :class:`~krypenv.envs.batch.EnvBatch`, the
:class:`~krypenv.agent_api.DecisionSource` of their decisions).  The compiled work is in
:mod:`krypenv.kungsholmskille.env_kernels`, the configuration in
:mod:`krypenv.kungsholmskille.config`.

**Episodes.** An episode is one pot (L3, L16): every seat pays 2 into it before the first
deal; deal follows deal, the dealer passing left (L2: deal k is dealt by
``first_dealer + k``), each budrunda's antes (L12) going into the same pot, until the pot
goes out by a walkover (L15) or a showdown (L14) — *terminated*; the antes for the next pot
(``antes_next``) are then not paid.  An episode whose ``max_deals``-th deal ends in a
budrunda is *truncated* (L16): the pot belongs to nobody, and the antes for a deal that is
never dealt are not paid.  With a pot bound (rules ``max_deals``, L21; the env keyword
``pot_deals``, e.g. the ``small`` preset) a budrunda in the pot's last deal settles the pot
(shared out equally) and the episode is *terminated*, so every episode ends within the bound.
Decks hold the rules' ranks (L20).  ``episodes[i]`` counts the episodes env i has
started (``reset`` and the env shells' auto-resets), so an opponent league can tell a new
episode from the next deal of the same pot.

**Money and rewards.** ``episode[i, E_MONEY + s]`` is seat s's net money in the episode so far:
−2 from the start (L3), minus the budrunda antes it paid, plus the pot and penalty it won,
minus a penalty it paid (L14).  Every reward is the change of the receiving seat's money since
the last time it was rewarded, and the −2 ante reaches every seat with the first step (an AEC
env's rewards after ``reset`` must be zero); so a seat's return is exactly its net money, and
the returns of an episode whose pot went out sum to 0 (L18's bookkeeping: the pot is
everybody's antes).

**Randomness.** Each env owns a splitmix64 stream (:mod:`krypenv.rng`) seeded from
``numpy.random.SeedSequence(seed)``.
Decks (the engine's Fisher–Yates over 41 uniforms, :func:`krypenv.rng.shuffle_copies`),
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

from types import ModuleType
from typing import ClassVar

import numpy as np

from krypenv.envs.batch import EnvBatch
from krypenv.kungsholmskille import env_kernels
from krypenv.kungsholmskille.actions import N_ACTIONS, action_name
from krypenv.kungsholmskille.config import (
    C_FIRST_DEALER,
    C_KINDS,
    C_MAX_DEALS,
    C_P,
    C_POT_DEALS,
    C_RANDOM_SEAT,
    C_RANKS,
    C_SKIP,
    CFG_SIZE,
    E_DEAL,
    E_MONEY,
    E_OFFENDER,
    E_OVER,
    E_SEAT,
    EP_WIDTH,
    POT_OUT,
    RUNNING,
    TRUNCATED,
    EnvConfig,
)  # fmt: skip
from krypenv.kungsholmskille.engine import DealBatch, kernels
from krypenv.kungsholmskille.observation import OBS_DTYPE, bounds, obs_size
from krypenv.kungsholmskille.view import SeatView, seat_view

__all__ = ["KungsholmskilleBatch"]


def illegal_message(who: str, action: int, legal: list[str]) -> str:
    """The ValueError text of an illegal action: the move as an L17 string and the legal moves."""
    move = action_name(action) if 0 <= action < N_ACTIONS else f"action {action} (outside 0..{N_ACTIONS - 1})"
    return f"illegal move {move!r} (action {action}) for {who}; legal moves: {', '.join(legal) or 'none'}"


class KungsholmskilleBatch(EnvBatch):
    """N Kungsholmskille environments of one configuration on one batched engine (see the module docstring).

    ``deals`` is the engine's Python view of the live state; ``state`` and ``cash`` are its arrays.
    """

    env_kernels: ClassVar[ModuleType] = env_kernels
    n_actions: ClassVar[int] = N_ACTIONS
    obs_dtype: ClassVar[type[np.integer]] = OBS_DTYPE
    over_dtype: ClassVar[type[np.generic]] = np.int64  # RUNNING, POT_OUT, TRUNCATED or FORFEIT
    value_dtype: ClassVar[type[np.generic]] = np.int64  # money
    _derived: ClassVar[tuple[str, ...]] = ("state", "cash")

    def __init__(self, config: EnvConfig, n: int = 1, seat: int | str = 0, kinds: list[int] | None = None) -> None:
        """N environments of ``config``; every episode is over until :meth:`reset`."""
        super().__init__(config, config.rules, n, seat, kinds)
        P = self.players
        self.deals = DealBatch(self.rules, self.n)
        self.state, self.cash = self.deals.state, self.deals.cash
        self.prev_state, self.prev_cash = np.zeros_like(self.state), np.zeros_like(self.cash)
        self.episode = np.zeros((self.n, EP_WIDTH), np.int64)
        self.episode[:, E_OVER] = TRUNCATED  # nothing runs before reset
        self.episode[:, E_SEAT] = self.first_seat
        self.episode[:, E_OFFENDER] = -1
        packed = np.zeros(CFG_SIZE, np.int64)
        packed[C_P], packed[C_MAX_DEALS], packed[C_FIRST_DEALER] = P, config.episode_deals, config.dealer0
        packed[C_RANKS], packed[C_POT_DEALS] = self.rules.ranks, self.rules.max_deals or 0  # L20, L21
        packed[C_SKIP], packed[C_RANDOM_SEAT] = bool(config.skip_forced), self.random_seat
        packed[C_KINDS:C_KINDS + P] = self.kinds
        self.packed = packed
        self.dim = obs_size(P)
        self.low, self.high = bounds(P, config.episode_deals, self.rules.deck_size)

    def _attach(self) -> None:
        """Point ``state`` and ``cash`` at the engine's arrays again after unpickling."""
        self.state, self.cash = self.deals.state, self.deals.cash

    # ------------------------------------------------------------------ views
    @property
    def money(self) -> np.ndarray:
        """(N, P) each seat's net money in the current episode (a view)."""
        return self.episode[:, E_MONEY:E_MONEY + self.players]

    @property
    def seat(self) -> np.ndarray:
        """(N,) the learner's seat per env (a view)."""
        return self.episode[:, E_SEAT]

    @property
    def deal_no(self) -> np.ndarray:
        """(N,) the current deal's number within the episode (a view)."""
        return self.episode[:, E_DEAL]

    @property
    def over(self) -> np.ndarray:
        """(N,) episode state: RUNNING, POT_OUT, TRUNCATED or FORFEIT (a view)."""
        return self.episode[:, E_OVER]

    @property
    def pot(self) -> np.ndarray:
        """(N,) the pot now: the current deal's pot, 0 once it went out."""
        out = self.cash[:, kernels.POT].astype(np.int64)
        out[(self.over == POT_OUT)] = 0
        return out

    def running(self, i: int) -> bool:
        """Whether env ``i``'s episode is still running."""
        return bool(self.over[i] == RUNNING)

    # ------------------------------------------------------------------ DecisionSource (krypenv.agent_api)
    def seat_view(self, i: int, seat: int) -> SeatView:
        """The :class:`~krypenv.kungsholmskille.view.SeatView` of an absolute seat in env ``i`` (``batch.views()``)."""
        return seat_view(self.deals, i, seat, self.episode[i])

    def action_name(self, i: int, action: int) -> str:
        """``action`` as its L17 move string, e.g. ``play:gok`` (the same at every decision)."""
        return action_name(action) if 0 <= action < N_ACTIONS else f"action {action} (not in 0..{N_ACTIONS - 1})"

    def illegal_message(self, i: int, action: int, who: str) -> str:
        """``illegal move 'M' (action A) for who; legal moves: …`` at env ``i``'s current decision."""
        return illegal_message(who, action, self.deals.legal_moves(i))

    # ------------------------------------------------------------------ hooks: the kernels
    def _arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays every stepping kernel takes first."""
        return self.state, self.cash, self.episode, self.rng, self.packed, self.prev_state, self.prev_cash

    def _driver_tail(self) -> int:
        """The CPU drivers' last argument: the chunk count."""
        return self.chunks

    def _reset_kernel(self, active: np.ndarray) -> None:
        """New episodes in the active envs, advanced to the first learner or external decision."""
        self._driver("reset")(*self._arrays(), active, self.chunks)

    def _observe_into(self, i: int, observer: int, obs: np.ndarray, mask: np.ndarray) -> None:
        """Write env ``i``'s observation and mask for an absolute seat."""
        env_kernels.k_observe_seats(self.state, self.cash, self.episode, self.packed, np.array([i], np.int64),
                        np.array([observer], np.int64), obs[None], mask[None])

    def _observe_seats_into(self, envs: np.ndarray, seats: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> None:
        """Write the observations and masks of the given envs and absolute seats."""
        env_kernels.k_observe_seats(self.state, self.cash, self.episode, self.packed, envs, seats, obs, masks)

    def _waiting_into(self, out: np.ndarray) -> None:
        """Write per env the relative seat whose external agent must act now, or −1."""
        env_kernels.k_waiting(self.state, self.episode, self.packed, out)

    def _act_external(self, envs: np.ndarray, actions: np.ndarray, status: np.ndarray) -> None:
        """Apply legal external actions, then play built-in seats and forced moves until an external one is due."""
        env_kernels.k_act_external(*self._arrays(), envs, actions, status)

    def step_all(self, actions: np.ndarray, lose: bool, status: np.ndarray, rewards: np.ndarray, ends: np.ndarray,
                 final: np.ndarray, obs: np.ndarray, masks: np.ndarray, term_obs: np.ndarray,
                 term_masks: np.ndarray) -> None:
        """The learners' actions, built-in opponents, rewards, auto-resets and observations, in one kernel."""
        self._driver("step_all")(
            *self._arrays(), actions, lose, status, rewards, ends, final, obs, masks, term_obs, term_masks,
            self.chunks)

    def step_learners(self, actions: np.ndarray, lose: bool, status: np.ndarray) -> None:
        """The learners' actions, built-in opponents and forced moves, up to the next learner or external decision."""
        self._driver("step")(*self._arrays(), actions, lose, status, self.chunks)

    def finish(self, rewards: np.ndarray, ends: np.ndarray, final: np.ndarray, term_obs: np.ndarray,
               term_masks: np.ndarray) -> None:
        """Rewards, terminal observations and auto-resets after the external agents have acted."""
        self._driver("finish")(*self._arrays(), rewards, ends, final, term_obs, term_masks, self.chunks)

    def observe_all(self, obs: np.ndarray, masks: np.ndarray) -> None:
        """Every env's learner observation and mask."""
        self._driver("observe")(self.state, self.cash, self.episode, self.packed, obs, masks, self.chunks)
