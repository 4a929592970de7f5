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

``seat``, ``opponents`` (``"random"``, an agent, or a list of P − 1 of those), the checks of actions
and seeds, and the environment checkers are the shell's, :class:`krypenv.envs.gym.GameGymEnv`.  The
other keywords are those of the AEC env (:mod:`krypenv.krypkasino.aec`): ``players``, ``teams``, ``two_player_deal``,
``set_aside``, ``last_capture_point``, ``reward``, ``deals``, ``illegal``, ``render_mode``, and the
deck and deal: ``preset`` (``"standard"``, ``"tiny"``, ``"small"``; RULES.md K22) and the rule keys
``ranks``, ``suits``, ``copies``, ``hand``, ``table`` (K20, K21).

Rewards cannot be credited to the wrong agent (the trap of PettingZoo's SB3 tutorial,
PettingZoo#1147): the reward of a step is everything the learner's side value changed since
its previous decision — its own move, the opponents' moves after it (a sweep the learner set
up is +5 for it), and the end of the deal (K15) — and changes before its first decision
arrive with its first step.  So the return of an episode is exactly minus the learner's
final score (plus any penalty).

Illegal actions: ``illegal="raise"`` (default) raises a ValueError naming the action and the
legal ones, and changes nothing; ``illegal="lose"`` ends the episode with the offender's side
scored ``ILLEGAL_PENALTY`` = 50 more points.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from krypenv.envs.gym import GameGymEnv
from krypenv.krypkasino.actions import CHOOSING, ILLEGAL, MOVED, action_name
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.config import ILLEGAL_PENALTY, EnvConfig
from krypenv.krypkasino.env_kernels import learner_value
from krypenv.krypkasino.render import history_lines, move_lines, table_text

__all__ = ["ILLEGAL_PENALTY", "KrypkasinoEnv"]


class KrypkasinoEnv(GameGymEnv):
    """The learner's seat of a Krypkasino game (see the module docstring)."""

    batch_class = KrypkasinoBatch
    game = "krypkasino"
    core: KrypkasinoBatch

    def __init__(self, seat: int | str = 0, opponents: Any = "random", players: int = 3, teams: Any = None,
                 two_player_deal: str = "6+4", set_aside: str = "court", last_capture_point: bool = False,
                 reward: str = "points", deals: int = 1, illegal: str = "raise",
                 render_mode: str | None = None,
                 preset: str = "standard", ranks: Any = None, suits: Any = None, copies: int | None = None,
                 hand: int | None = None, table: int | None = None) -> None:
        """The learner at ``seat`` against ``opponents``; the other keywords as the AEC env."""
        super().__init__(EnvConfig(players, teams, two_player_deal, set_aside, last_capture_point, reward, deals,
                                   illegal, render_mode, preset, ranks, suits, copies, hand, table), seat, opponents)

    def _play(self, action: int) -> tuple[float, bool, bool]:
        """The learner's action, the opponents' after it; the reward is minus its side's value change."""
        core = self.core
        d = core.deals
        pending, deal_no, rnd = int(core.choice[0, 0]), int(core.deal_no[0]), int(d.round[0])
        status = core.act(0, action, self._lose)
        if self.render_mode is not None:
            self._note(status, action, pending, deal_no, rnd)
        moves, tabbes = int(d.n_moves[0]), d.tabbes[0].astype(np.int64)
        core.advance(0)
        core.play_external(self._agents)
        if self.render_mode is not None and int(core.deal_no[0]) == deal_no and status == MOVED:
            self._log.extend(history_lines(core, 0, self._names, moves, tabbes))
        value = learner_value(core.state, core.ints, core.packed, 0)
        reward = float(core.base[0] - value)
        core.base[0] = value
        return reward, bool(core.over[0]), False

    def _note(self, status: int, action: int, pending: int, deal_no: int, rnd: int) -> None:
        """Remember the commentary of the learner's step (opponents' moves are summarised by the table)."""
        if status == ILLEGAL:
            self._log.append(f"illegal action {action} ({action_name(action, pending)}): +{ILLEGAL_PENALTY}, "
                             "the episode ends")
        elif status != CHOOSING:
            self._log.extend(move_lines(self.core, 0, self._names, deal_no, rnd))

    def _start_log(self) -> list[str]:
        """The dealer of the new deal."""
        return [f"new deal, dealer {self._names[int(self.core.deals.dealer[0])]}"]

    def _table_text(self) -> str:
        """The text table of :mod:`krypenv.krypkasino.render`."""
        return table_text(self.core, 0, self._names, self._log, self.config.deals)
