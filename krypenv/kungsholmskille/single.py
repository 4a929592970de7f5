"""# Kungsholmskille as a Gymnasium single-agent environment

``KungsholmskilleEnv(seat=0, opponents="random", players=4, ...)`` (also
``gymnasium.make("krypenv/Kungsholmskille-v0", ...)``): the learner plays one seat; the other seats are played
inside ``step`` by opponents.

| Observation | ``Box(int16, (75 + 23P,))``: the learner's information state                                          |
|-------------|-------------------------------------------------------------------------------------------------------|
| Action      | ``Discrete(279)``; ``action_space.sample()`` draws a legal action                                     |
| Mask        | ``info["action_mask"]`` (279,) int8 and ``env.action_masks()`` (279,) bool (sb3-contrib)              |
| Reward      | the change of the learner's money since its previous decision (the −2 ante of L3 with the first step) |
| Episode     | one pot: ``terminated`` when it goes out (L14, L15), ``truncated`` after ``max_deals`` deals (L16)    |

The observation's layout is :mod:`~krypenv.kungsholmskille.observation`, the actions
:mod:`~krypenv.kungsholmskille.actions`.

``seat``, the checks of actions and seeds, and the environment checkers are the shell's
(:class:`krypenv.envs.gym.GameGymEnv`).  ``opponents`` is ``"random"`` (the built-in
uniform random policy, run compiled inside the step), an *agent* (:mod:`krypenv.agent_api`:
``name`` and ``act(batch: DecisionBatch) -> (B,) int actions``; ``agents.load(spec,
game="kungsholmskille")`` builds the baselines, and the ``random`` agent runs compiled as
well), or a list of P − 1 of those for the seats after the learner in turn order.  A batch
holds the acting seats' observations and masks (the same vectors the learner gets) for all the
games where that agent is to act, and on demand their seat views
(:class:`~krypenv.kungsholmskille.view.SeatView`) and uniforms from the games' streams.
The other keywords are those of the AEC env (:mod:`krypenv.kungsholmskille.aec`).

The reward of a step is everything the learner's money changed since its previous decision —
its own move, the opponents' moves after it, the end of a deal (budrunda antes, L12; the pot
going out, L14, L15) — so an episode's return is exactly the learner's net money.  Illegal
actions: ``illegal="raise"`` (default) raises a ValueError naming the move (L17 string) and the
legal ones and changes nothing; ``illegal="lose"`` ends the episode, the learner paying
``ILLEGAL_FINE`` to every other seat.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from krypenv.envs.gym import GameGymEnv
from krypenv.kungsholmskille.batch import KungsholmskilleBatch
from krypenv.kungsholmskille.config import E_BASE, FORFEIT, ILLEGAL_FINE, POT_OUT, TRUNCATED, EnvConfig
from krypenv.kungsholmskille.env_kernels import k_step_ser
from krypenv.kungsholmskille.render import moves_since, table_text

__all__ = ["ILLEGAL_FINE", "KungsholmskilleEnv"]


class KungsholmskilleEnv(GameGymEnv):
    """The learner's seat at a Kungsholmskille table (see the module docstring)."""

    batch_class = KungsholmskilleBatch
    game = "kungsholmskille"
    core: KungsholmskilleBatch

    def __init__(self, seat: int | str = 0, opponents: Any = "random", players: int = 4,
                 first_dealer: int | None = None, max_deals: int = 50, skip_forced: bool = False,
                 illegal: str = "raise", render_mode: str | None = None, preset: str = "standard",
                 ranks: int | None = None, pot_deals: int | None = None) -> None:
        """The learner at ``seat`` against ``opponents``; the other keywords as the AEC env."""
        super().__init__(EnvConfig(players, first_dealer, max_deals, skip_forced, illegal, render_mode, preset, ranks,
                                   pot_deals), seat, opponents)
        self._action = np.zeros(1, np.int64)
        self._status = np.zeros(1, np.int64)

    def _info(self) -> dict[str, Any]:
        """Every seat's money in the episode so far and the deal number."""
        core = self.core
        return {"money": core.money[0].tolist(), "deal": int(core.deal_no[0])}

    def _play(self, action: int) -> tuple[float, bool, bool]:
        """The learner's action, the opponents' after it; the reward is the change of the learner's money."""
        core = self.core
        deal_before, moves_before = int(core.deal_no[0]), int(core.deals.n_moves[0])
        self._action[0] = action
        k_step_ser(core.state, core.cash, core.episode, core.rng, core.packed, core.prev_state, core.prev_cash,
                   self._action, self._lose, self._status, 1)
        core.play_external(self._agents)
        money = int(core.money[0, int(core.seat[0])])
        reward = float(money - core.episode[0, E_BASE])
        core.episode[0, E_BASE] = money
        if self.render_mode is not None:
            self._log.extend(moves_since(core, 0, self._names, deal_before, moves_before))
        over = int(core.over[0])
        return reward, over in (POT_OUT, FORFEIT), over == TRUNCATED

    def _start_log(self) -> list[str]:
        """The new pot and, with a render mode, the first deal's moves up to the learner's decision."""
        core = self.core
        log = [f"new pot (L3); you are {self._names[int(core.seat[0])]}"]
        if self.render_mode is not None:
            log.append(f"deal 0: dealer {self._names[int(core.deals.dealer[0])]}, pot {2 * core.players}")
            log.extend(moves_since(core, 0, self._names, 0, 0))
        return log

    def _table_text(self) -> str:
        """The spectator's table of :mod:`krypenv.kungsholmskille.render`."""
        return table_text(self.core, 0, self._names, self._log)
