"""Probe: seconds per decision of an agent, timed around its ``act`` calls in games against an opponent.

    python experiments/decision_time.py --agent champion --opponent expert --games 64 --players 2

Plays ``--games`` deals (seeds 0, 1, ...) on one core batch as ``krypenv eval`` plays a chunk
(every seat external; the agent in even seats, the opponent in odd ones), times every call of
the agent's ``act`` and prints decisions, seconds in ``act`` and seconds per decision.  The
batches are as large as in the harness with ``--batch`` equal to ``--games``.  Threads: numba's
``--threads`` (default 1, as each worker of a 2-worker evaluation on 2 cores).  Not part of the
library; it measured the per-decision times quoted in docs/results/krypkasino-search.md.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from krypenv import agents
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.config import EXTERNAL, EnvConfig


def main() -> None:
    """Play the games and print the agent's seconds per decision."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="champion")
    parser.add_argument("--opponent", default="expert")
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    numba.set_num_threads(args.threads)
    P = args.players
    agent, opponent = agents.load(args.agent), agents.load(args.opponent)
    core = KrypkasinoBatch(EnvConfig(players=P), args.games, seat=0, kinds=[EXTERNAL] * P)
    core.seed(list(range(args.games)))
    core.reset()
    seating = np.tile(np.arange(P) % 2, (args.games, 1))
    spent, decisions = 0.0, 0

    class Timed:
        name = agent.name

        def act(self, batch):  # type: ignore[no-untyped-def]
            nonlocal spent, decisions
            t = time.perf_counter()
            out = agent.act(batch)
            spent += time.perf_counter() - t
            decisions += len(batch)
            return out

    start = time.perf_counter()
    core.play_seated(seating, [Timed(), opponent])
    wall = time.perf_counter() - start
    print(f"{args.agent} against {args.opponent}, {P} players, {args.games} games, {args.threads} numba thread(s): "
          f"{decisions} decisions, {spent:.1f} s in act ({wall:.1f} s in all), "
          f"{spent / max(decisions, 1):.4f} s per decision")


if __name__ == "__main__":
    main()
