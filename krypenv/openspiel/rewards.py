"""Rewards that reach OpenSpiel's RL loop: each seat is paid at its own decisions and at the end.

OpenSpiel's RL environment (``open_spiel.python.rl_environment``, the loop of its DQN, NFSP,
PPO, policy-gradient and tabular learners) reads ``state.rewards()`` once per step, after a
player's action and the chance nodes that follow it, and hands that step only to the seat to
act next (at the end, to every seat); the step after ``reset()`` carries no rewards.  A
learner takes the rewards of a step as the result of its own previous action, so it drops
those of the step of its first decision.  A reward that a transition gives to any other
seat, that chance nodes give before the first decision, or that reaches a seat before it
has acted, is never learnt from.

So both games pay each seat as PettingZoo's ``last()`` does: a seat's reward at a state is
the change of its return since it was last paid, paid at the states where it is to act once
it has acted in the game, and at terminal states to every seat; every other state pays it 0.
``returns()`` are the rewards paid so far, so they add up over any reading of ``rewards()``
(after every transition, or at decision nodes only, as OpenSpiel's random simulation tests
read them), and at a terminal state they are the game's returns.  (OpenSpiel's own
``repeated_leduc_poker`` likewise pays each seat a hand's result at a node of that seat.)
"""

from __future__ import annotations

__all__ = ["SeatPayments"]


class SeatPayments:
    """What each seat has been paid of its return, what the last transition paid it, and who has acted."""

    def __init__(self, players: int) -> None:
        self.paid = [0.0] * players  # per seat: its return when it was last paid (returns())
        self.last = [0.0] * players  # per seat: the payment of the last transition (rewards())
        self.acted = [False] * players  # per seat: it has taken an action in this game

    def settle(self, earned: list[float], actor: int | None, to_act: int, terminal: bool) -> None:
        """After a transition by seat ``actor`` (None: chance): pay the seat ``to_act`` if it has acted, or at the end
        every seat, the change of its return since it was last paid; ``earned`` is each seat's return in the game."""
        if actor is not None:
            self.acted[actor] = True
        for seat, value in enumerate(earned):
            if terminal or (seat == to_act and self.acted[seat]):
                self.last[seat] = value - self.paid[seat]
                self.paid[seat] = value
            else:
                self.last[seat] = 0.0
