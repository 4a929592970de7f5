"""Probe: the exact endgame solver's time per decision, over every last-round decision of 2-player games.

    python experiments/endgame_time.py --games 256

Plays ``--games`` 2-player deals (seeds 0, 1, ...) with ``expert`` in both seats; at every batch of decisions whose
deck is empty it times ``endgame``'s solver on them (once warm, one numba thread) and prints the decisions solved,
milliseconds per decision and the cards left in the hands. Not part of the library; it measured the figure quoted in
docs/research/expert-iteration.md.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from krypenv.agents.krypkasino import endgame as E
from krypenv.agents.krypkasino.pimc import game_vector

from krypenv import agents
from krypenv.agent_api import DecisionBatch
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.config import EXTERNAL, EnvConfig
from krypenv.krypkasino.engine import kernels


class TimedSolver:
    """Plays ``expert``; at every batch, times the endgame solver (warm) on the decisions whose deck is empty."""

    name = "expert, the endgame solver timed"

    def __init__(self) -> None:
        self.expert = agents.load("expert")
        self.seconds, self.count, self.cards = 0.0, 0, []

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """``expert``'s actions; the solver timed on the solvable decisions first."""
        st, envs = batch.core.deals.state, np.asarray(batch.envs, np.int64)
        envs = envs[E.solvable_rows(st, envs, 2)]
        if envs.size:
            solve = (st, batch.core.choice, envs, game_vector(batch.rules), batch.mask.shape[1])
            E.solve_batch(*solve)  # warm (compiled on the first call)
            t = time.perf_counter()
            E.solve_batch(*solve)
            self.seconds += time.perf_counter() - t
            self.count += envs.size
            self.cards += list(st[envs, kernels.IN_HANDS])
        return self.expert.act(batch)


def main() -> None:
    """Play the games and print the solver's milliseconds per decision."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=256)
    a = p.parse_args()
    numba.set_num_threads(1)
    core = KrypkasinoBatch(EnvConfig(players=2), a.games, seat=0, kinds=[EXTERNAL] * 2)
    core.seed(list(range(a.games)))
    core.reset()
    timed = TimedSolver()
    core.play_seated(np.zeros((a.games, 2), np.int64), [timed])
    print(f"{timed.count} solved decisions, {1e3 * timed.seconds / timed.count:.3f} ms each (one thread), cards in "
          f"the hands {min(timed.cards)}-{max(timed.cards)}")


if __name__ == "__main__":
    main()
