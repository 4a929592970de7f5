"""Rewards that reach OpenSpiel's RL loop: each seat is paid at its own decisions and at the end.

OpenSpiel's RL environment (``open_spiel.python.rl_environment``, the loop of its DQN, NFSP,
PPO, policy-gradient and tabular learners) reads ``state.rewards()`` once per step, after a
player's action and the chance nodes that follow it, and hands that step only to the seat to
act next (and, at the end, to every seat).  The step after ``reset()`` carries no rewards.
A reward that a transition gives to any other seat, or that chance nodes give before the
first decision, is never seen by that seat's learner.

So both games pay each seat its rewards when it is next asked to act, as PettingZoo's
``last()`` does: a seat's reward at a state is the change of its return since it was last
paid, paid at the states where it is to act (from the game's second decision on: the first
is ``reset()``'s step, which carries none) and at terminal states, to every seat; every other
state pays it 0.  ``returns()`` are the rewards paid so far, so they add up over any reading
of ``rewards()`` (after every transition, or at decision nodes only, as OpenSpiel's random
simulation tests read them); at a terminal state they are the game's returns.  OpenSpiel's
``repeated_leduc_poker`` pays its hands the same way.
"""

from __future__ import annotations

__all__ = ["SeatPayments"]


class SeatPayments:
    """What each seat has been paid of its return, and what the last transition paid it."""

    def __init__(self, players: int) -> None:
        self.paid = [0.0] * players  # per seat: its return when it was last paid (returns())
        self.last = [0.0] * players  # per seat: the payment of the last transition (rewards())

    def copy(self) -> SeatPayments:
        """An independent copy (for a state's clone)."""
        out = SeatPayments(len(self.paid))
        out.paid, out.last = list(self.paid), list(self.last)
        return out

    def settle(self, earned: list[float], to_act: int, started: bool, terminal: bool) -> None:
        """After a transition: pay the seat ``to_act`` (once a player has acted) or, at the end, every seat.

        ``earned`` is each seat's return in the game at the new state; ``started`` whether a
        player action has been applied yet.
        """
        for seat, value in enumerate(earned):
            if terminal or (started and seat == to_act):
                self.last[seat] = value - self.paid[seat]
                self.paid[seat] = value
            else:
                self.last[seat] = 0.0
