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

from krypenv import agents
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.config import EXTERNAL, EnvConfig
from krypenv.krypkasino.engine import kernels
from krypenv.krypkasino.env_kernels import k_act_external


def main() -> None:
    """Play the games and print the solver's milliseconds per decision."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=256)
    a = p.parse_args()
    numba.set_num_threads(1)
    solver, expert = E.EndgameAgent(agents.load("expert")), agents.load("expert")
    core = KrypkasinoBatch(EnvConfig(players=2), a.games, seat=0, kinds=[EXTERNAL] * 2)
    core.seed(list(range(a.games)))
    core.reset()
    seconds, count, cards = 0.0, 0, []
    status = np.empty(a.games, np.int64)
    while True:
        waiting = core.waiting()
        envs = np.flatnonzero(waiting >= 0)
        if envs.size == 0:
            break
        batch = core.decisions(envs, waiting[envs])
        rows = E.solvable_rows(core.deals.state, np.asarray(batch.envs, np.int64), 2)
        if rows.any():
            sub = E._sub(batch, np.flatnonzero(rows))
            solver.act(sub)  # warm (compiled on the first call)
            t = time.perf_counter()
            solver.act(sub)
            seconds += time.perf_counter() - t
            count += len(sub)
            cards += list(core.deals.state[sub.envs, kernels.IN_HANDS])
        k_act_external(core.state, core.rng, core.ints, core.packed, envs, expert.act(batch), status[:envs.size],
                       core.scratch)
    print(f"{count} solved decisions, {1e3 * seconds / count:.3f} ms each (one thread), cards in the hands "
          f"{min(cards)}-{max(cards)}")


if __name__ == "__main__":
    main()
