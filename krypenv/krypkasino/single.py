"""# Krypkasino as a Gymnasium single-agent environment

``gymnasium.make("krypenv/Krypkasino-v0", seat=0, opponents="random", players=3, ...)``: the
learner plays one seat; the other seats are played inside ``step`` by opponent agents.

| Observation | ``Box(int8, (325 + 7P + 5,))``: the learner's information state                          |
|-------------|------------------------------------------------------------------------------------------|
| Action      | ``Discrete(105)``; ``action_space.sample()`` draws a legal action                        |
| Mask        | ``info["action_mask"]`` (105,) int8 and ``env.action_masks()`` (105,) bool (sb3-contrib) |
| Reward      | minus the change of the learner's side value since its previous decision                 |
| Episode     | one deal (``deals=k``: a match of k deals); ``terminated`` at its end, never truncated   |

The observation's layout is :mod:`krypenv.krypkasino.observation`, the actions
:mod:`krypenv.krypkasino.actions`.

``seat`` is the learner's seat, or ``"random"`` for a fresh one each episode (drawn from the
env's seeded stream; ``info["seat"]`` says which).  ``opponents`` is ``"random"`` (the
built-in uniform policy, run compiled), an agent object (:mod:`krypenv.agent_api`), or a list
of P − 1 of those for the seats after the learner in turn order.  The other keywords are
those of the AEC env (:mod:`krypenv.krypkasino.aec`): ``players``, ``teams``, ``two_player_deal``,
``set_aside``, ``last_capture_point``, ``reward``, ``deals``, ``illegal``, ``render_mode``.

Rewards cannot be credited to the wrong agent (the trap of PettingZoo's SB3 tutorial,
PettingZoo#1147): the reward of a step is everything the learner's side value changed since
its previous decision — its own move, the opponents' moves after it (a sweep the learner set
up is +5 for it), and the end of the deal (K15) — and changes before its first decision
arrive with its first step.  So the return of an episode is exactly minus the learner's
final score (plus any penalty).

An action is one integer: an ``int``, a numpy integer, or an integer array of shape ``(1,)`` or
``()``; a float (even ``3.0``), a bool, a string or another shape is a ValueError naming the
action (:func:`krypenv.spaces.as_action`).  ``reset(seed=...)`` takes None or a non-negative
integer (Python or numpy, not a bool), else a ValueError naming ``seed``.

Illegal actions: ``illegal="raise"`` (default) raises a ValueError naming the action and the
legal ones, and changes nothing; ``illegal="lose"`` ends the episode with the offender's side
scored ``ILLEGAL_PENALTY`` = 50 more points.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from krypenv.agent_api import NATIVE_RANDOM, Agent
from krypenv.krypkasino.actions import CHOOSING, ILLEGAL, MOVED, N_ACTIONS, action_name
from krypenv.krypkasino.config import EXTERNAL, ILLEGAL_PENALTY, LEARNER, RANDOM, EnvConfig
from krypenv.krypkasino.core import Core
from krypenv.krypkasino.env_kernels import learner_value
from krypenv.krypkasino.render import history_lines, move_lines, table_text
from krypenv.rng import check_seed
from krypenv.spaces import LegalDiscrete, as_action

__all__ = ["ILLEGAL_PENALTY", "KrypkasinoEnv", "opponent_kinds"]


def opponent_kinds(opponents: Any, players: int) -> tuple[list[int], dict[int, Agent]]:
    """Who acts for each seat after the learner: (kinds per relative seat, external agents by relative seat).

    ``opponents`` is ``"random"``, an agent, or a list of P − 1 of those; ValueError otherwise.
    """
    items = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents] * (players - 1)
    if len(items) != players - 1:
        raise ValueError(f"opponents must be one agent or a list of {players - 1} (one per other seat), "
                         f"got {len(items)}")
    kinds, agents = [LEARNER], {}
    for r, opp in enumerate(items, start=1):
        if (isinstance(opp, str) and opp == "random") or getattr(opp, "native", None) == NATIVE_RANDOM:
            kinds.append(RANDOM)
        elif isinstance(opp, Agent):
            kinds.append(EXTERNAL)
            agents[r] = opp
        else:
            raise ValueError(f"opponent {opp!r} is not an agent: use 'random' or an object with a name and "
                             f"act(batch) (see krypenv.agent_api; agents.load('greedy') builds the baselines)")
    return kinds, agents


class KrypkasinoEnv(gym.Env):
    """The learner's seat of a Krypkasino game (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, seat: int | str = 0, opponents: Any = "random", players: int = 3, teams: Any = None,
                 two_player_deal: str = "6+4", set_aside: str = "court", last_capture_point: bool = False,
                 reward: str = "points", deals: int = 1, illegal: str = "raise",
                 render_mode: str | None = None) -> None:
        self.config = EnvConfig(players, teams, two_player_deal, set_aside, last_capture_point, reward, deals,
                                illegal, render_mode)
        kinds, self._agents = opponent_kinds(opponents, players)
        self._core = Core(self.config, 1, seat=seat, kinds=kinds)
        self.render_mode = render_mode
        self.observation_space = spaces.Box(self._core.low, self._core.high, dtype=np.int8)
        self._mask = np.zeros(N_ACTIONS, np.int8)  # the learner's mask, updated in place
        self.action_space = LegalDiscrete(self._mask)
        self._lose = illegal == "lose"
        self._names = [f"player_{s}" for s in range(players)]
        self._seeded = False
        self._log: list[str] = []

    @property
    def core(self) -> Core:
        """The underlying one-env :class:`~krypenv.krypkasino.core.Core` (read-only use: inspection, records)."""
        return self._core

    def _observe(self) -> tuple[np.ndarray, dict[str, Any]]:
        core = self._core
        seat = int(core.seat[0])
        obs, self._mask[:] = core.observe(0, seat)
        return obs, {"action_mask": self._mask.copy(), "seat": seat}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode and play the opponents up to the learner's first decision."""
        seed = check_seed(seed)
        super().reset(seed=seed)
        core = self._core
        if seed is not None or not self._seeded:
            core.seed([seed])
            self._seeded = True
        core.reset()
        core.play_external(self._agents)
        self._log = [f"new deal, dealer {self._names[int(core.deals.dealer[0])]}"]
        out = self._observe()
        if self.render_mode == "human":
            self.render()
        return out

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner's action, then the opponents' until its next decision or the end of the episode."""
        core = self._core
        if core.over[0]:
            raise ValueError("the episode is over: call reset() before step()")
        action = as_action(action, N_ACTIONS)
        legal = 0 <= action < N_ACTIONS and self._mask[action] != 0
        pending = int(core.choice[0, 0])
        if not legal and not self._lose:
            names = ", ".join(f"{a} ({action_name(a, pending)})" for a in np.flatnonzero(self._mask))
            raise ValueError(f"illegal action {action} ({action_name(action, pending)}); legal actions: {names}")
        d = core.deals
        deal_no, rnd = int(core.deal_no[0]), int(d.round[0])
        status = core.act(0, action, self._lose)
        if self.render_mode is not None:
            self._note(status, action, pending, deal_no, rnd)
        moves, tabbes = int(d.n_moves[0]), d.tabbes[0].astype(np.int64)
        core.advance(0)
        core.play_external(self._agents)
        if self.render_mode is not None and int(core.deal_no[0]) == deal_no and status == MOVED:
            self._log.extend(history_lines(core, 0, self._names, moves, tabbes))
        value = learner_value(core.st, core.ints, core.cfg, 0)
        reward = float(core.base[0] - value)
        core.base[0] = value
        obs, info = self._observe()
        if self.render_mode == "human":
            self.render()
        return obs, reward, bool(core.over[0]), False, info

    def _note(self, status: int, action: int, pending: int, deal_no: int, rnd: int) -> None:
        """Remember the commentary of the learner's step (opponents' moves are summarised by the table)."""
        if status == ILLEGAL:
            self._log.append(f"illegal action {action} ({action_name(action, pending)}): +{ILLEGAL_PENALTY}, "
                             "the episode ends")
        elif status != CHOOSING:
            self._log.extend(move_lines(self._core, 0, self._names, deal_no, rnd))

    def action_masks(self) -> np.ndarray:
        """(105,) bool: the learner's legal actions now (for sb3-contrib's MaskablePPO)."""
        return self._mask.astype(bool)

    def render(self) -> str | None:
        """A text table of the game; returned for "ansi", printed for "human" (None without a render mode)."""
        if self.render_mode is None:
            return None
        text = table_text(self._core, 0, self._names, self._log, self.config.deals)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text
