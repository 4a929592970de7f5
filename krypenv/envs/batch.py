"""The batch of N environments of one configuration that every game's env shells run on, written once.

:class:`EnvBatch` holds what is the same in every game: the learner's seat and who acts for
the other seats (``kinds``: :data:`LEARNER`, :data:`EXTERNAL` Python agents, the built-in
:data:`RANDOM` policy), one splitmix64 stream per env (``rng``, :mod:`krypenv.rng`), the
episodes started per env, the asking of external agents in batches
(:meth:`EnvBatch.play_external`, :meth:`EnvBatch.play_seated`, through
:class:`krypenv.agent_api.DecisionBatch`, for which the batch is the
:class:`~krypenv.agent_api.DecisionSource`) and pickling.  A game subclasses it with its
state arrays and compiled kernels (its ``env_kernels`` module and the hooks below, e.g.
:class:`krypenv.krypkasino.batch.KrypkasinoBatch`,
:class:`krypenv.kungsholmskille.batch.KungsholmskilleBatch`); the AEC env is a batch of one
with every seat external, the Gymnasium env and the VecEnv have a learner seat.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from types import ModuleType
from typing import Any, ClassVar

import numba
import numpy as np

from krypenv.agent_api import Agent, DecisionBatch, check_actions
from krypenv.rng import k_uniforms, seed_states

__all__ = [
    "EXTERNAL",
    "ILLEGAL_MODES",
    "LEARNER",
    "PARALLEL_FROM",
    "RANDOM",
    "RENDER_MODES",
    "EnvBatch",
    "check_modes",
    "learner_seat",
    "render_text",
]

LEARNER, EXTERNAL, RANDOM = 0, 1, 2  # who acts for a seat: the learner, a Python agent, the built-in random policy
PARALLEL_FROM = 64  # batches at least this large run the parallel kernels
ILLEGAL_MODES = ("raise", "lose")  # the ``illegal`` keyword of every game's envs
RENDER_MODES = ("ansi", "human")  # their ``render_mode`` (or None)


def render_text(render_mode: str | None, table_text: Callable[[], str]) -> str | None:
    """What ``render()`` of every env does: the game's text table, returned for "ansi", printed for "human"."""
    if render_mode is None:
        return None
    text = table_text()
    if render_mode == "human":
        print(text + "\n")
        return None
    return text


def check_modes(illegal: Any, render_mode: Any) -> None:
    """ValueError naming ``illegal`` or ``render_mode`` unless they are one of the modes every env takes."""
    if illegal not in ILLEGAL_MODES:
        raise ValueError(f"illegal must be one of {ILLEGAL_MODES}, got {illegal!r}")
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {render_mode!r}")


def learner_seat(seat: Any, players: int) -> tuple[bool, int]:
    """(random seat each episode, the fixed seat or 0) from ``seat``: a seat 0..P−1 or ``"random"``."""
    if isinstance(seat, str) and seat == "random":
        return True, 0
    if isinstance(seat, (int, np.integer)) and not isinstance(seat, (bool, np.bool_)) and 0 <= seat < players:
        return False, int(seat)
    raise ValueError(f"seat must be a seat 0..{players - 1} or 'random', got {seat!r}")


class EnvBatch(ABC):
    """N environments of one configuration on one batched engine (see the module docstring).

    ``seat`` is the learner's seat (an int, or ``"random"`` for a fresh one each episode);
    ``kinds[r]`` says who acts for the seat ``r`` places after the learner (LEARNER for r = 0,
    then EXTERNAL or RANDOM).  A subclass sets ``dim`` (observation length), ``low``/``high``
    (its bounds) and its state arrays, and implements the hooks.
    """

    env_kernels: ClassVar[ModuleType]  # the game's compiled env functions: ``k_*`` drivers, ``*_par``/``*_ser`` twins
    n_actions: ClassVar[int]  # the game's Discrete action count
    obs_dtype: ClassVar[type[np.integer]]  # the dtype of its observation vectors
    over_dtype: ClassVar[type[np.generic]]  # what its kernels write per game at an episode's end (bool or a code)
    value_dtype: ClassVar[type[np.generic]]  # a seat's value (score or money), final ones included
    _derived: ClassVar[tuple[str, ...]] = ()  # attributes rebuilt by _attach() after unpickling

    dim: int
    low: np.ndarray
    high: np.ndarray

    def __init__(self, config: Any, rules: Any, n: int, seat: int | str, kinds: list[int] | None) -> None:
        """The shared part of a batch of ``n`` environments of ``config``; the subclass builds its state after."""
        players = int(rules.players)
        self.random_seat, self.first_seat = learner_seat(seat, players)
        self.kinds = [LEARNER] + [EXTERNAL] * (players - 1) if kinds is None else [int(k) for k in kinds]
        if len(self.kinds) != players:
            raise ValueError(f"kinds must name who acts for each of the {players} seats")
        self.config, self.rules, self.players, self.n = config, rules, players, int(n)
        self.rng = np.zeros(self.n, np.uint64)
        self.episodes = np.zeros(self.n, np.int64)  # episodes started per env (reset and auto-reset; for leagues)
        self.parallel = self.n >= PARALLEL_FROM
        self.chunks = min(self.n, 4 * numba.config.NUMBA_NUM_THREADS) if self.parallel else 1

    # ------------------------------------------------------------------ hooks: the game's kernels and layout
    @property
    @abstractmethod
    def seat(self) -> np.ndarray:
        """(N,) the learner's seat per env (a view)."""

    @abstractmethod
    def running(self, i: int) -> bool:
        """Whether env ``i``'s episode is still running."""

    @abstractmethod
    def _reset_kernel(self, active: np.ndarray) -> None:
        """New episodes in the active envs, advanced to the first learner or external decision."""

    @abstractmethod
    def _observe_into(self, i: int, observer: int, obs: np.ndarray, mask: np.ndarray) -> None:
        """Write env ``i``'s observation and mask for an absolute seat."""

    @abstractmethod
    def _observe_seats_into(self, envs: np.ndarray, seats: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> None:
        """Write the observations and masks of the given envs and absolute seats."""

    @abstractmethod
    def _waiting_into(self, out: np.ndarray) -> None:
        """Write per env the relative seat whose external agent must act now, or −1."""

    @abstractmethod
    def _act_external(self, envs: np.ndarray, actions: np.ndarray, status: np.ndarray) -> None:
        """Apply legal external actions in the given envs, then play built-in seats until an external one is due."""

    @abstractmethod
    def seat_view(self, i: int, seat: int) -> Any:
        """The game's seat view of an absolute seat in env ``i`` (for ``DecisionBatch.views()``)."""

    @abstractmethod
    def action_name(self, i: int, action: int) -> str:
        """``action`` in words at env ``i``'s current decision (any integer)."""

    @abstractmethod
    def illegal_message(self, i: int, action: int, who: str) -> str:
        """The ValueError text of an illegal ``action`` by ``who`` in env ``i``: the action and the legal ones."""

    def _attach(self) -> None:
        """Rebuild the ``_derived`` attributes (views of the state) after unpickling."""

    def _driver(self, name: str) -> Callable[..., Any]:
        """The game's batch driver ``k_<name>``: its parallel twin for a large batch, else its serial one."""
        return getattr(self.env_kernels, f"k_{name}_par" if self.parallel else f"k_{name}_ser")

    # ------------------------------------------------------------------ operations
    def seed(self, seeds: list[int | None]) -> None:
        """Seed each env's random stream (None: fresh entropy)."""
        if len(seeds) != self.n:
            raise ValueError(f"need {self.n} seeds, got {len(seeds)}")
        self.rng[:] = seed_states(seeds)

    def reset(self, active: np.ndarray | None = None) -> None:
        """New episodes in the active envs (all by default), advanced to the first learner or external decision."""
        active = np.ones(self.n, np.bool_) if active is None else np.asarray(active, np.bool_)
        self.episodes[active] += 1
        self._reset_kernel(active)

    def observe(self, i: int, observer: int) -> tuple[np.ndarray, np.ndarray]:
        """(observation, int8 mask) of env ``i`` for an absolute seat."""
        obs = np.empty(self.dim, self.obs_dtype)
        mask = np.empty(self.n_actions, np.int8)
        self._observe_into(i, observer, obs, mask)
        return obs, mask

    def uniforms(self, idx: np.ndarray, k: int = 1) -> np.ndarray:
        """(len(idx), k) uniforms drawn from the streams of envs ``idx`` (for external agents)."""
        idx = np.asarray(idx, np.int64)
        out = np.empty((idx.shape[0], k), np.float64)
        k_uniforms(self.rng, idx, out)
        return out

    def waiting(self) -> np.ndarray:
        """(N,) per env the relative seat (to the learner) whose external agent must act now, or −1."""
        out = np.empty(self.n, np.int64)
        self._waiting_into(out)
        return out

    def pending(self) -> tuple[np.ndarray, np.ndarray]:
        """(envs, seats): the envs where an external agent must act now, and the (absolute) seat to act in each."""
        waiting = self.waiting()
        envs = np.flatnonzero(waiting >= 0)
        return envs, (self.seat[envs].astype(np.int64) + waiting[envs]) % self.players

    def decisions(self, envs: np.ndarray, seats: np.ndarray) -> DecisionBatch:
        """A :class:`~krypenv.agent_api.DecisionBatch` for the given envs and absolute seats."""
        envs = np.asarray(envs, np.int64)
        seats = np.asarray(seats, np.int64)
        obs = np.empty((envs.shape[0], self.dim), self.obs_dtype)
        masks = np.empty((envs.shape[0], self.n_actions), np.int8)
        self._observe_seats_into(envs, seats, obs, masks)
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
        relative = (np.arange(self.players)[None, :] - self.seat.astype(np.int64)[:, None]) % self.players
        seating = np.vectorize(lambda r: index.get(int(r), -1), otypes=[np.int64])(relative)
        self.play_seated(seating, [agents[r] for r in order])

    def play_seated(self, seating: np.ndarray, agents: list[Agent]) -> None:
        """Let external agents act until none must: ``seating[i, s]`` indexes ``agents`` for seat s of env i.

        Every round trip asks each agent once, for all the games where it is to act.  An
        illegal action raises ValueError naming the agent, the game and the legal actions.
        """
        status = np.empty(self.n, np.int64)
        while True:
            envs, seats = self.pending()
            if envs.size == 0:
                return
            who = seating[envs, seats]
            for a in np.unique(who):
                chosen, chosen_seats = envs[who == a], seats[who == a]
                agent = agents[int(a)]
                batch = self.decisions(chosen, chosen_seats)
                actions = check_actions(getattr(agent, "name", repr(agent)), batch, agent.act(batch))
                self._act_external(chosen, actions, status[:chosen.size])

    def __getstate__(self) -> dict[str, Any]:
        """The batch's arrays and settings, without the views rebuilt on unpickling."""
        return {k: v for k, v in self.__dict__.items() if k not in self._derived}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore the arrays and rebuild the views."""
        self.__dict__.update(state)
        self._attach()
