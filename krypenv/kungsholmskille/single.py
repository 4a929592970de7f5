"""# Kungsholmskille as a Gymnasium single-agent environment

``KungsholmskilleEnv(seat=0, opponents="random", players=4, ...)`` (to be registered as
``krypenv/Kungsholmskille-v0``): the learner plays one seat; the other seats are played
inside ``step`` by opponents.

| Observation | ``Box(int16, (75 + 23P,))``: the learner's information state                                          |
|-------------|-------------------------------------------------------------------------------------------------------|
| Action      | ``Discrete(279)``; ``action_space.sample()`` draws a legal action                                     |
| Mask        | ``info["action_mask"]`` (279,) int8 and ``env.action_masks()`` (279,) bool (sb3-contrib)              |
| Reward      | the change of the learner's money since its previous decision (the −2 ante of L3 with the first step) |
| Episode     | one pot: ``terminated`` when it goes out (L14, L15), ``truncated`` after ``max_deals`` deals (L16)    |

The observation's layout is :mod:`~krypenv.kungsholmskille.observation`, the actions
:mod:`~krypenv.kungsholmskille.actions`.

``seat`` is the learner's seat, or ``"random"`` for a fresh one each episode (drawn from the
env's seeded stream; ``info["seat"]`` says which).  ``opponents`` is ``"random"`` (the built-in
uniform random policy, run compiled inside the step), an *agent* (:mod:`krypenv.agent_api`:
``name`` and ``act(batch: DecisionBatch) -> (B,) int actions``; ``agents.load(spec,
game="kungsholmskille")`` builds the baselines, and the ``random`` agent runs compiled as
well), or a list of P − 1 of those for the seats after the learner in turn order.  A batch
holds the acting seats' observations and masks (the same vectors the learner gets) for all the
games where that agent is to act, and on demand their seat views
(:class:`~krypenv.kungsholmskille.view.KilleView`) and uniforms from the games' streams.
The other keywords are those of the AEC env (:mod:`krypenv.kungsholmskille.aec`).

The reward of a step is everything the learner's money changed since its previous decision —
its own move, the opponents' moves after it, the end of a deal (budrunda antes, L12; the pot
going out, L14, L15) — so an episode's return is exactly the learner's net money.  Illegal
actions: ``illegal="raise"`` (default) raises a ValueError naming the move (L17 string) and the
legal ones and changes nothing; ``illegal="lose"`` ends the episode, the learner paying
``ILLEGAL_FINE`` to every other seat.

An action is one integer: an ``int``, a numpy integer, or an integer array of shape ``(1,)`` or
``()``; a float (even ``3.0``), a bool, a string or another shape is a ValueError naming the
action (:func:`krypenv.spaces.as_action`).  ``reset(seed=...)`` takes None or a non-negative
integer (Python or numpy, not a bool), else a ValueError naming ``seed``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from krypenv.agent_api import NATIVE_RANDOM, Agent
from krypenv.kungsholmskille.actions import N_ACTIONS
from krypenv.kungsholmskille.aec import illegal_message
from krypenv.kungsholmskille.config import (
    E_BASE,
    EXTERNAL,
    FORFEIT,
    ILLEGAL_FINE,
    LEARNER,
    POT_OUT,
    RANDOM,
    RUNNING,
    TRUNCATED,
    EnvConfig,
)  # fmt: skip
from krypenv.kungsholmskille.core import Core
from krypenv.kungsholmskille.env_kernels import k_step_ser
from krypenv.kungsholmskille.render import moves_since, table_text
from krypenv.rng import check_seed
from krypenv.spaces import LegalDiscrete, as_action

__all__ = ["ILLEGAL_FINE", "KungsholmskilleEnv", "opponent_kinds"]


def opponent_kinds(opponents: Any, players: int) -> tuple[list[int], dict[int, Agent]]:
    """Who acts for each seat after the learner: (kinds per relative seat, external agents by relative seat).

    ``opponents`` is ``"random"``, an agent, or a list of P − 1 of those; an agent with
    ``native = NATIVE_RANDOM`` (``agents.load("random", game="kungsholmskille")``) runs compiled.
    ValueError otherwise, naming the bad opponent.
    """
    items = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents] * (players - 1)
    if len(items) != players - 1:
        raise ValueError(f"opponents must be 'random', one agent, or a list of {players - 1} (one per other seat), "
                         f"got a list of {len(items)}")
    kinds, agents = [LEARNER], {}
    for r, opp in enumerate(items, start=1):
        if (isinstance(opp, str) and opp == "random") or getattr(opp, "native", None) == NATIVE_RANDOM:
            kinds.append(RANDOM)
        elif isinstance(opp, str):
            raise ValueError(f"opponents: {opp!r} is a spec string; only 'random' is built in, load others with "
                             f"agents.load({opp!r}, game='kungsholmskille')")
        elif getattr(opp, "game", "kungsholmskille") != "kungsholmskille":
            raise ValueError(f"opponents: agent {getattr(opp, 'name', opp)!r} was built for {opp.game}, not "
                             f"kungsholmskille; load it with agents.load(spec, game='kungsholmskille')")
        elif callable(getattr(opp, "act", None)):
            kinds.append(EXTERNAL)
            agents[r] = opp
        else:
            raise ValueError(f"opponents: {opp!r} is not an agent; use 'random' or an object with a name and "
                             f"act(batch) (krypenv.agent_api; agents.load(spec, game='kungsholmskille') builds them)")
    return kinds, agents


class KungsholmskilleEnv(gym.Env):
    """The learner's seat at a Kungsholmskille table (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, seat: int | str = 0, opponents: Any = "random", players: int = 4,
                 first_dealer: int | None = None, max_deals: int = 50, skip_forced: bool = False,
                 illegal: str = "raise", render_mode: str | None = None) -> None:
        """The learner at ``seat`` against ``opponents``; the other keywords as the AEC env."""
        self.config = EnvConfig(players, first_dealer, max_deals, skip_forced, illegal, render_mode)
        kinds, self._agents = opponent_kinds(opponents, players)
        self._core = Core(self.config, 1, seat=seat, kinds=kinds)
        self.render_mode = render_mode
        self.observation_space = spaces.Box(self._core.low, self._core.high, dtype=np.int16)
        self._mask = np.zeros(N_ACTIONS, np.int8)  # the learner's mask, updated in place
        self.action_space = LegalDiscrete(self._mask)
        self._lose = illegal == "lose"
        self._names = [f"player_{s}" for s in range(players)]
        self._seeded = False
        self._log: list[str] = []
        self._act = np.zeros(1, np.int64)
        self._status = np.zeros(1, np.int64)

    @property
    def core(self) -> Core:
        """The underlying one-env :class:`~krypenv.kungsholmskille.core.Core` (for inspection)."""
        return self._core

    def _observe(self) -> tuple[np.ndarray, dict[str, Any]]:
        core = self._core
        seat = int(core.seat[0])
        obs, self._mask[:] = core.observe(0, seat)
        info = {"action_mask": self._mask.copy(), "seat": seat, "money": core.money[0].tolist(),
                "deal": int(core.deal_no[0])}
        return obs, info

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode (L3) and play the opponents up to the learner's first decision."""
        seed = check_seed(seed)
        super().reset(seed=seed)
        core = self._core
        if seed is not None or not self._seeded:
            core.seed([seed])
            self._seeded = True
        core.reset()
        core.play_external(self._agents)
        d = core.deals
        self._log = [f"new pot (L3); you are {self._names[int(core.seat[0])]}"]
        if self.render_mode is not None:
            self._log.append(f"deal 0: dealer {self._names[int(d.dealer[0])]}, pot {2 * core.players}")
            self._log.extend(moves_since(core, 0, self._names, 0, 0))
        out = self._observe()
        if self.render_mode == "human":
            self.render()
        return out

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner's action, then the opponents' until its next decision or the end of the episode."""
        core = self._core
        if core.over[0] != RUNNING:
            raise ValueError("the episode is over: call reset() before step()")
        action = as_action(action, N_ACTIONS)
        legal = 0 <= action < N_ACTIONS and self._mask[action] != 0
        if not legal and not self._lose:
            raise ValueError(illegal_message(self._names[int(core.seat[0])], action, core.deals.legal_moves(0)))
        deal_before, moves_before = int(core.deal_no[0]), int(core.deals.n_moves[0])
        self._act[0] = action
        k_step_ser(core.st, core.cash, core.ep, core.rng, core.cfg, core.prev_state, core.prev_cash, self._act,
                   self._lose, self._status, 1)
        core.play_external(self._agents)
        money = int(core.money[0, int(core.seat[0])])
        reward = float(money - core.ep[0, E_BASE])
        core.ep[0, E_BASE] = money
        if self.render_mode is not None:
            self._log.extend(moves_since(core, 0, self._names, deal_before, moves_before))
        over = int(core.over[0])
        obs, info = self._observe()
        if self.render_mode == "human":
            self.render()
        return obs, reward, over in (POT_OUT, FORFEIT), over == TRUNCATED, info

    def action_masks(self) -> np.ndarray:
        """(279,) bool: the learner's legal actions now (for sb3-contrib's MaskablePPO)."""
        return self._mask.astype(bool)

    def render(self) -> str | None:
        """A spectator's text table; returned for "ansi", printed for "human" (None without a render mode)."""
        if self.render_mode is None:
            return None
        text = table_text(self._core, 0, self._names, self._log)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text
