"""What ``experiments/learners.py`` measures on Kungsholmskille, where no game can be walked whole: ``expert``'s margin.

Kungsholmskille's smallest game has some 10¹¹ nodes (docs/research/learners.md), so no NashConv of it can be
computed.  The benchmark plays it on the ``small`` preset (22 cards, KILLE.md L22), 2 players, with the pot settled
after one deal (``pot_deals=1``, L21: one deal an episode, zero-sum), and measures a learner's policy by duplicate
evaluation against the game's strongest rule-based agent, ``expert``: :data:`DECKS` deck sets of seed :data:`SEED`
(the same decks for every learner and measurement), each played with the learner in both seats.

The figure is **expert's margin**: ``expert``'s money per episode minus the learner's, over the two seatings
(:mod:`krypenv.eval.kungsholmskille`'s head to head, negated), with its 95% interval.  In a two-player zero-sum game
it is ``u₀(expert, π₁) + u₁(π₀, expert)``, the gain of one fixed deviation in each seat, so in expectation it is a
**lower bound on the policy's NashConv** (which maximises over every deviation): a policy at an equilibrium has a
margin ≤ 0, and a margin > 0 proves it is not one.  It is 0 for ``expert`` against itself; the uniform policy's
is 4.12 (``python experiments/learners_duel.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from krypenv.agent_api import DecisionBatch

GAME = "kungsholmskille"
PRESET, RULES = "small", "pot_deals=1"  # the benchmark's game (module docstring)
DECKS, SEED = 1000, 7  # every measurement plays these deck sets

# a seat's policy: (observations as the env gives them, legal mask as bool) -> (B, A) probabilities
SeatPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


class SeatPolicies:
    """An agent playing ``seats[s]`` at absolute seat ``s`` (one function: every seat), drawn from the game's streams.

    Seat 0 is forehand of the deal in the evaluation and player 0 in OpenSpiel's ``python_kungsholmskille``, so a
    learner with a network per OpenSpiel player plays each network in its own seat."""

    name = "learner"

    def __init__(self, seats: list[SeatPolicy]) -> None:
        if not seats:
            raise ValueError("SeatPolicies needs at least one seat's policy")
        self.seats = seats

    def action_probabilities(self, batch: DecisionBatch) -> np.ndarray:
        """(B, A) each decision's probabilities from its seat's policy (0 at illegal actions)."""
        legal = np.asarray(batch.mask) != 0
        seats = np.asarray(batch.seats)
        p = np.zeros(legal.shape)
        for s in np.unique(seats):
            rows = np.flatnonzero(seats == s)
            p[rows] = self.seats[int(s) if len(self.seats) > 1 else 0](np.asarray(batch.obs)[rows], legal[rows])
        p = np.where(legal, p, 0.0)
        total = p.sum(1, keepdims=True)
        if not (total > 0).all():
            raise ValueError("a seat's policy gave its legal actions no probability")
        return p / total

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """An action per decision, drawn from :meth:`action_probabilities`."""
        from krypenv.agents.mlp import draw

        return draw(self.action_probabilities(batch), batch)


def margin(seats: list[SeatPolicy], decks: int = DECKS, seed: int = SEED) -> tuple[float, float]:
    """(expert's margin, its 95% half-width) against the policy ``seats`` (module docstring)."""
    from krypenv.eval.kungsholmskille import EvalConfig, evaluate

    from krypenv import agents

    config = EvalConfig(agents=("learner", "expert"), players=2, deals=decks, seed=seed, preset=PRESET,
                        pot_deals=int(RULES.split("=")[1]), workers=1)
    results = evaluate(config, agents=[SeatPolicies(seats), agents.load("expert", game=GAME)])
    (pair,) = results.pairs  # learner − expert over the deck sets, both seatings
    return -float(pair.diff.mean), float(pair.diff.half)


def uniform(obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """The uniform policy over the legal actions."""
    return legal / legal.sum(1, keepdims=True)


if __name__ == "__main__":
    decks = int(sys.argv[1]) if len(sys.argv) > 1 else DECKS
    m, h = margin([uniform], decks)
    print(f"expert's margin against the uniform policy, {decks} deck sets of seed {SEED}: {m:+.3f} ± {h:.3f}")
