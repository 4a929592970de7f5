"""Krypkasino's batch of N environments of one configuration: the hooks of :class:`krypenv.envs.batch.EnvBatch`.

:class:`KrypkasinoBatch` holds N environments on one
:class:`krypenv.krypkasino.engine.DealBatch` whose records carry a few more columns for the
env (capture-choice state, last move, learner seat, episode over), plus match totals and
penalties (``ints``) and the learner's value at its previous decision (``base``).  The AEC
env is ``KrypkasinoBatch(config, 1)`` with every seat external; the Gymnasium env and the
VecEnv are ``KrypkasinoBatch(config, N)`` with a learner seat and opponents that are either
built in (compiled) or external (Python agents, asked in batches by the shared
:class:`~krypenv.envs.batch.EnvBatch`).  The compiled work is in
:mod:`krypenv.krypkasino.env_kernels`, the configuration in :mod:`krypenv.krypkasino.config`.

Randomness: each env owns a splitmix64 stream (``rng[i]``, :mod:`krypenv.rng`) seeded
from ``numpy.random.SeedSequence(seed)``.  Decks (the engine's Fisher–Yates over 103
uniforms), a random learner seat, built-in random opponents and the uniforms handed to
external agents all come from it, so the same seed gives the same deals in every interface
and batch size.
"""

from __future__ import annotations

from types import ModuleType
from typing import ClassVar

import numpy as np

from krypenv.envs.batch import EnvBatch
from krypenv.krypkasino import env_kernels
from krypenv.krypkasino.actions import CHOICE_SIZE, N_ACTIONS, action_name
from krypenv.krypkasino.config import (
    C_DECK_SIZE,
    C_E0,
    C_INIT_KINDS,
    C_INIT_SIZES,
    C_KINDS,
    C_LATER_KINDS,
    C_LATER_SIZES,
    C_N_KINDS,
    C_SEAT_KINDS,
    C_SIDE_OF,
    CFG_SIZE,
    I_DEAL_NO,
    I_TOTALS,
    LAST_MOVE,
    EnvConfig,
)
from krypenv.krypkasino.engine import DealBatch, kernels
from krypenv.krypkasino.engine.captures import new_scratch
from krypenv.krypkasino.observation import bounds, obs_size
from krypenv.krypkasino.view import SeatView, seat_view

__all__ = ["KrypkasinoBatch"]


class KrypkasinoBatch(EnvBatch):
    """N Krypkasino environments of one configuration on one batched engine (see the module docstring).

    The engine's Python view (``self.deals``) works on the live state, so ``deals.scores()``,
    ``deals.legal_moves(i)`` etc. keep working.
    """

    env_kernels: ClassVar[ModuleType] = env_kernels
    n_actions: ClassVar[int] = N_ACTIONS
    obs_dtype: ClassVar[type[np.integer]] = np.int8
    over_dtype: ClassVar[type[np.generic]] = np.bool_  # an episode ended
    value_dtype: ClassVar[type[np.generic]] = np.float64  # a side's value: points, less the others' mean if "relative"
    _derived: ClassVar[tuple[str, ...]] = ("deals",)

    def __init__(self, config: EnvConfig, n: int = 1, seat: int | str = 0, kinds: list[int] | None = None) -> None:
        """N environments of ``config``; every episode is over until :meth:`reset`."""
        rules = config.rules
        super().__init__(config, rules, n, seat, kinds)
        P = self.players
        self.side_of = np.array([rules.team_of(s) for s in range(P)], np.int64)
        e0 = kernels.HANDS + 105 * P  # first column after the engine's
        width = (e0 + CHOICE_SIZE + LAST_MOVE + 2 + 63) // 64 * 64
        state = np.zeros((self.n, width), np.int8)
        state[:, kernels.DONE] = 1
        self.deals = DealBatch(rules, self.n, state=state)
        self.state = state
        self.packed = self._pack(e0)
        self.state[:, e0] = -1  # no pending card
        self.state[:, env_kernels._col_over(self.packed)] = 1
        self.state[:, env_kernels._col_seat(self.packed)] = self.first_seat
        self.ints = np.zeros((self.n, 1 + 2 * P), np.int64)
        self.base = np.zeros(self.n, np.float64)
        self.scratch = np.stack([new_scratch() for _ in range(self.chunks)])
        self.dim = obs_size(P)
        self.low, self.high = bounds(P, rules, config.deals)

    def _pack(self, e0: int) -> np.ndarray:
        """The configuration packed into the int64 vector the kernels read (layout in :mod:`~.config`)."""
        rules, config, P = self.rules, self.config, self.players
        (ik, isz), (lk, lsz) = self.deals._initial, self.deals._later
        packed = np.zeros(CFG_SIZE, np.int64)
        packed[:12] = [self.n, P, self.deals._spades, config.deals, rules.last_capture_point, rules.n_teams,
                       config.reward == "relative", P - 1, self.random_seat, e0, len(ik), len(lk)]
        packed[C_INIT_KINDS:C_INIT_KINDS + len(ik)], packed[C_INIT_SIZES:C_INIT_SIZES + len(ik)] = ik, isz
        packed[C_LATER_KINDS:C_LATER_KINDS + len(lk)], packed[C_LATER_SIZES:C_LATER_SIZES + len(lk)] = lk, lsz
        packed[C_SIDE_OF:C_SIDE_OF + P] = self.side_of
        packed[C_SEAT_KINDS:C_SEAT_KINDS + P] = self.kinds
        packed[C_DECK_SIZE], packed[C_N_KINDS] = rules.deck_size, len(rules.kinds)  # K20
        packed[C_KINDS:C_KINDS + len(rules.kinds)] = rules.kinds
        return packed

    def _arrays(self) -> tuple[np.ndarray, ...]:
        """The state arrays the device env's drivers and CUDA kernel take first (st, rng, ints, cfg)."""
        return self.state, self.rng, self.ints, self.packed

    def _driver_tail(self) -> np.ndarray:
        """The CPU drivers' last argument: the scratch rows."""
        return self.scratch

    def _attach(self) -> None:
        """Rebuild the engine's view of the state after unpickling."""
        self.deals = DealBatch(self.rules, self.n, state=self.state)

    # ------------------------------------------------------------------ views of the state
    @property
    def choice(self) -> np.ndarray:
        """(N, 53) capture-choice state per env: pending card (−1: none), then fixed counts."""
        e0 = self.packed[C_E0]
        return self.state[:, e0:e0 + CHOICE_SIZE]

    @property
    def last(self) -> np.ndarray:
        """(N, 56) last move per env: seat, card, tabbes gained, K15 taker (−1), capture counts."""
        c = self.packed[C_E0] + CHOICE_SIZE
        return self.state[:, c:c + LAST_MOVE]

    @property
    def seat(self) -> np.ndarray:
        """(N,) the learner's seat per env."""
        return self.state[:, self.packed[C_E0] + CHOICE_SIZE + LAST_MOVE]

    @property
    def over(self) -> np.ndarray:
        """(N,) bool: the episode has ended."""
        return self.state[:, self.packed[C_E0] + CHOICE_SIZE + LAST_MOVE + 1].view(np.bool_)

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

    def running(self, i: int) -> bool:
        """Whether env ``i``'s episode is still running."""
        return not self.over[i]

    # ------------------------------------------------------------------ operations
    def load(self, deals: DealBatch, i: int = 0) -> None:
        """Put deal 0 of another DealBatch (e.g. ``DealBatch.position(...)``) into env ``i`` as a fresh episode."""
        e0 = self.packed[C_E0]
        self.state[i, :e0] = deals.state[0, :e0]
        self.choice[i, 0], self.choice[i, 1:] = -1, 0
        self.last[i], self.over[i], self.ints[i], self.base[i] = -1, False, 0, 0.0

    def act(self, i: int, action: int, lose: bool = False) -> int:
        """One action of the seat to act in env ``i`` (MOVED, CHOOSING or ILLEGAL), then the next deal of a match."""
        return int(env_kernels.k_act(self.state, self.rng, self.ints, self.packed, i, int(action), lose, self.scratch))

    def advance(self, i: int) -> None:
        """Play env ``i``'s built-in opponents until the learner or an external seat must act."""
        env_kernels.k_advance(self.state, self.rng, self.ints, self.packed, i, self.scratch)

    def values(self, i: int = 0) -> np.ndarray:
        """(n_sides,) float64 values of env ``i``."""
        out = np.zeros(self.rules.n_teams, np.float64)
        env_kernels.k_values(self.state, self.ints, self.packed, i, out)
        return out

    def seat_view(self, i: int, seat: int) -> SeatView:
        """The :class:`~krypenv.krypkasino.view.SeatView` of an absolute seat in env ``i`` (for ``batch.views()``)."""
        return seat_view(self.deals, i, seat, self.choice[i], self.totals[i] + self.penalty[i], bool(self.over[i]))

    def action_name(self, i: int, action: int) -> str:
        """``action`` in words at env ``i``'s current decision, e.g. ``take 4H with 9S``."""
        return action_name(action, int(self.choice[i, 0]))

    def illegal_message(self, i: int, action: int, who: str) -> str:
        """``illegal action A (name) for who; legal actions: …`` at env ``i``'s current decision."""
        pending = int(self.choice[i, 0])
        _, mask = self.observe(i, int(self.deals.turn[i]))
        legal = ", ".join(f"{a} ({action_name(a, pending)})" for a in np.flatnonzero(mask))
        return f"illegal action {action} ({action_name(action, pending)}) for {who}; legal actions: {legal}"

    # ------------------------------------------------------------------ hooks: the kernels
    def _reset_kernel(self, active: np.ndarray) -> None:
        """New episodes in the active envs, advanced to the first learner or external decision."""
        self._driver("reset")(self.state, self.rng, self.ints, self.base, self.packed, active, self.scratch)

    def _observe_into(self, i: int, observer: int, obs: np.ndarray, mask: np.ndarray) -> None:
        """Write env ``i``'s observation and mask for an absolute seat."""
        env_kernels.k_observe(self.state, self.ints, self.packed, i, observer, obs, mask, self.scratch)

    def _observe_seats_into(self, envs: np.ndarray, seats: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> None:
        """Write the observations and masks of the given envs and absolute seats."""
        env_kernels.k_observe_seats(self.state, self.ints, self.packed, envs, seats, obs, masks, self.scratch)

    def _waiting_into(self, out: np.ndarray) -> None:
        """Write per env the relative seat whose external agent must act now, or −1."""
        env_kernels.k_waiting(self.state, self.packed, out)

    def _act_external(self, envs: np.ndarray, actions: np.ndarray, status: np.ndarray) -> None:
        """Apply legal external actions, then play built-in seats until an external one is due."""
        env_kernels.k_act_external(self.state, self.rng, self.ints, self.packed, envs, actions, status, self.scratch)

    def step_all(self, actions: np.ndarray, lose: bool, status: np.ndarray, rewards: np.ndarray, ends: np.ndarray,
                 final: np.ndarray, obs: np.ndarray, masks: np.ndarray, term_obs: np.ndarray,
                 term_masks: np.ndarray) -> None:
        """The learners' actions, built-in opponents, rewards, auto-resets and observations, in one kernel."""
        self._driver("step_all")(
            self.state, self.rng, self.ints, self.base, self.packed, actions, lose, status, rewards, ends, final, obs,
            masks, term_obs, term_masks, self.scratch)

    def step_learners(self, actions: np.ndarray, lose: bool, status: np.ndarray) -> None:
        """The learners' actions and built-in opponents, up to the next learner or external decision."""
        self._driver("step")(self.state, self.rng, self.ints, self.packed, actions, lose, status, self.scratch)

    def finish(self, rewards: np.ndarray, ends: np.ndarray, final: np.ndarray, term_obs: np.ndarray,
               term_masks: np.ndarray) -> None:
        """Rewards, terminal observations and auto-resets after the external agents have acted."""
        self._driver("finish")(self.state, self.rng, self.ints, self.base, self.packed, rewards, ends, final, term_obs,
                               term_masks, self.scratch)

    def observe_all(self, obs: np.ndarray, masks: np.ndarray) -> None:
        """Every env's learner observation and mask."""
        self._driver("observe")(self.state, self.ints, self.packed, obs, masks, self.scratch)
