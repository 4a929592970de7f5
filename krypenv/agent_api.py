"""The agent interface, the same for every game: what an agent is given when it must act, and what it returns.

Every consumer of agents (the environments' opponents, the evaluation harness, training
leagues, human play) hands decisions to agents in batches:

    actions = agent.act(batch)          # batch: DecisionBatch of B decisions → (B,) int actions

A :class:`DecisionBatch` carries, for each of its B decisions, the acting seat's observation
vector and action mask (exactly what the game's environments emit) and its seat, plus the
games the decisions come from (``batch.core``, the game's batch of environments, and the env
indices ``batch.envs``).  Everything game-specific is asked of ``batch.core`` through the
small :class:`DecisionSource` protocol, so this module imports no game:

* ``batch.views()``: on demand, one structured *seat view* per decision, built by
  ``core.seat_view(env, seat)``: the same public information in plain form, so that
  rule-based agents never decode tensors.  Each game defines its view (Krypkasino:
  :class:`krypenv.krypkasino.view.SeatView`: hand, table, seen cards, scores, the legal
  moves as (card, capture) pairs).
* ``batch.uniforms(k)``: random numbers from the streams of the games the decisions come
  from (:mod:`krypenv.rng`), so an agent that uses them (instead of a generator of its own)
  makes every game reproducible from its seed, however the games are batched or spread over
  processes.
* :func:`check_actions` names an illegal action in words with ``core.action_name``.

An agent is any object with ``name: str`` and ``act(batch) -> np.ndarray``.  It may also
define ``native = NATIVE_RANDOM`` (the uniform policy of :func:`krypenv.rng.pick_legal`) to
be run inside a game's compiled env kernels instead of being called from Python, with
exactly the same choices.  A compiled agent may offer ``device_policy(rules) ->``
:class:`DevicePolicy`: its per-decision function, which a game's device env runs inside its
kernels on CUDA threads for the seats the agent plays, making exactly the choices ``act`` makes
(the same function, the same uniforms from the env's stream).  Agents that choose a *move*
from a view's ``legal_moves`` need views that follow :class:`MoveView`
(:class:`krypenv.agents.base.MoveAgent`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["NATIVE_RANDOM", "Agent", "DecisionBatch", "DecisionSource", "DevicePolicy", "MoveView", "check_actions"]

NATIVE_RANDOM = "random"  # ``agent.native`` of the uniform random policy that env kernels can run themselves


@dataclass(frozen=True, eq=False)
class DevicePolicy:
    """An agent's decision function, compiled into a game's device kernels for the seats the agent plays.

    ``function`` is a numba ``@njit`` function with the game's device-policy signature (the game's
    ``cuda_kernels`` module documents it); ``iparams`` (int64) and ``fparams`` (float64) are the agent's
    options packed as that function reads them; ``uniforms`` is how many uniforms the env draws from its
    stream for each decision before the call (what ``act`` asks of ``batch.uniforms``); ``scratch`` the
    int64 scratch words the function needs, ``moves`` and ``keys`` the rows of its move buffers (games
    whose signature has them).  Two policies share kernels when their ``function`` and sizes agree.
    """

    game: str
    function: Any
    iparams: np.ndarray
    fparams: np.ndarray
    uniforms: int = 0
    scratch: int = 0
    moves: int = 1
    keys: int = 1

    @property
    def build_key(self) -> tuple[Any, int, int, int, int]:
        """What decides the compiled kernels (the parameters are data, passed at run time)."""
        return (self.function, self.uniforms, self.scratch, self.moves, self.keys)


@runtime_checkable
class Agent(Protocol):
    """Anything that turns a batch of decisions into actions."""

    name: str

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """(B,) int64 actions, each legal under its row of ``batch.mask``."""
        ...


class DecisionSource(Protocol):
    """What a game's batch of environments offers the decisions taken in it (``DecisionBatch.core``)."""

    @property
    def rules(self) -> Any:
        """The rule set of these games."""
        ...

    def uniforms(self, idx: np.ndarray, k: int = 1) -> np.ndarray:
        """(len(idx), k) uniforms in [0, 1) drawn from the streams of envs ``idx``."""
        ...

    def seat_view(self, i: int, seat: int) -> Any:
        """The game's structured view of ``seat`` in env ``i``."""
        ...

    def action_name(self, i: int, action: int) -> str:
        """``action`` in words at env ``i``'s current decision (for error messages)."""
        ...


class MoveView(Protocol):
    """A seat view that lists legal moves and turns a chosen one into the next action."""

    legal_moves: list[Any]

    def action_for(self, move: Any) -> int:
        """The next action that plays ``move``; ValueError if it is not legal."""
        ...


@dataclass
class DecisionBatch:
    """B decisions of one rule set: observations, masks, seats, and on demand views and uniforms.

    ``obs`` (B, D) and ``mask`` (B, A) int8 are what the acting seats observe; ``seats`` (B,)
    are their absolute seats.  The views and uniforms come from the games themselves: ``core``
    (the game's batch of environments, a :class:`DecisionSource`) and the env indices ``envs``.
    """

    obs: np.ndarray
    mask: np.ndarray
    seats: np.ndarray
    core: DecisionSource
    envs: np.ndarray
    _views: list[Any] | None = None

    def __len__(self) -> int:
        return int(self.obs.shape[0])

    @property
    def rules(self) -> Any:
        """The rule set of these games."""
        return self.core.rules

    def views(self) -> list[Any]:
        """One seat view per decision, as the game defines it (built on first use)."""
        if self._views is None:
            self._views = [self.core.seat_view(int(i), int(s)) for i, s in zip(self.envs, self.seats)]
        return self._views

    def uniforms(self, k: int = 1) -> np.ndarray:
        """(B, k) uniforms in [0, 1) from each decision's own game stream."""
        return self.core.uniforms(self.envs, k)


def check_actions(agent_name: str, batch: DecisionBatch, actions: np.ndarray) -> np.ndarray:
    """``actions`` as (B,) int64 if every one is legal under its mask; ValueError naming the first bad one."""
    try:
        acts = np.asarray(actions, dtype=np.int64).reshape(len(batch))
    except (TypeError, ValueError):
        raise ValueError(f"agent {agent_name!r} returned {actions!r}, not {len(batch)} integer actions") from None
    ok = (acts >= 0) & (acts < batch.mask.shape[1])
    ok[ok] = batch.mask[np.flatnonzero(ok), acts[ok]] != 0
    if not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        env = int(batch.envs[k])
        legal = ", ".join(str(a) for a in np.flatnonzero(batch.mask[k]))
        raise ValueError(f"agent {agent_name!r} chose illegal action {int(acts[k])} "
                         f"({batch.core.action_name(env, int(acts[k]))}) "
                         f"for seat {int(batch.seats[k])} in game {env}; legal actions: {legal}")
    return acts
