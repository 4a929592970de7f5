"""CFR on a game OpenSpiel can traverse (Krypkasino's ``tiny``): the NashConv curve, the game value, the policy file.

``python -m krypenv.openspiel.solve --preset tiny --iterations 200 --out results/solve-tiny`` runs
OpenSpiel's C++ CFR+ (``pyspiel.CFRPlusSolver``; ``--algorithm cfr`` for vanilla CFR) on
``cached_tree(game=python_krypkasino(...))``: OpenSpiel's ``cached_tree`` wrapper walks our
Python game once and keeps every node, so each CFR iteration runs in C++ over the stored
tree instead of calling the engine again.  Every ``--eval-every`` iterations the average
policy's NashConv is computed by OpenSpiel's C++ best response (``pyspiel.nash_conv``) and a
row ``iteration,seconds,nash_conv`` goes to ``nashconv.csv`` (seconds: wall clock since the
start, tree caching included).  At the end it writes ``nashconv.png``, the average policy as
a :mod:`krypenv.openspiel.policy` file (``policy.json.gz``, keys hashed: the form shipped as
``checkpoints/cfr-tiny.json.gz``) and ``summary.json``: the game value
per seat under the policy, and what the equilibrium shows (:func:`play_statistics`): how
often a played card creeps (K12), the tabbes (K14) each seat makes and suffers, compared
with the uniform random policy.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

import krypenv.openspiel  # noqa: F401  (registers the games)
from krypenv.openspiel.policy import TabularPolicyFile

__all__ = ["main", "play_statistics", "solve"]

ALGORITHMS = {"cfr+": "CFRPlusSolver", "cfr": "CFRSolver"}


def cpp_policy_table(policy: Any) -> dict[str, dict[int, float]]:
    """A C++ TabularPolicy as {information state: {action: probability}}."""
    return {key: {int(a): float(p) for a, p in pairs} for key, pairs in policy.policy_table().items()}


def play_statistics(game: pyspiel.Game, policy: os_policy.Policy) -> dict[str, Any]:
    """Expected per deal when every seat follows ``policy``: values, creeps per card played, tabbes per seat.

    Exact: a traversal of the whole tree weighted by chance and policy probabilities.  A card
    creeps when it captures nothing (K12); ``tabbes`` counts a dubbeltabbe as two (K14).
    """
    P = game.num_players()
    acc = {"value": np.zeros(P), "tabbes": np.zeros(P), "creeps": 0.0, "cards": 0.0, "first_creeps": 0.0}

    def walk(state: pyspiel.State, p: float) -> None:
        if state.is_terminal():
            acc["value"] += p * np.asarray(state.returns())
            deals = state.env().deals
            n = int(deals.n_moves[0])
            taken = deals.hist_taken[0, :n]
            acc["tabbes"] += p * deals.tabbes[0].astype(np.float64)
            acc["creeps"] += p * float((taken == 0).sum())
            acc["cards"] += p * n
            acc["first_creeps"] += p * float(taken[0] == 0)
            return
        pairs = state.chance_outcomes() if state.is_chance_node() else policy.action_probabilities(state).items()
        for action, q in pairs:
            if q > 0:
                walk(state.child(action), p * q)

    walk(game.new_initial_state(), 1.0)
    return {"values": [float(v) for v in acc["value"]], "tabbes_per_seat": [float(t) for t in acc["tabbes"]],
            "creep_rate": acc["creeps"] / acc["cards"], "first_card_creeps": acc["first_creeps"],
            "cards_per_deal": acc["cards"]}


class _TablePolicy(os_policy.Policy):
    """A {information state: {action: probability}} table as an OpenSpiel policy of the Python game."""

    def __init__(self, game: pyspiel.Game, table: dict[str, dict[int, float]]) -> None:
        super().__init__(game, list(range(game.num_players())))
        self.table = table

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict[int, float]:
        dist = self.table[state.information_state_string()]
        return {a: dist.get(a, 0.0) for a in state.legal_actions()}


def solve(game_string: str, iterations: int, eval_every: int, out: Path, algorithm: str = "cfr+") -> dict[str, Any]:
    """Run CFR on the cached tree of ``game_string``; write the curve, plot, policy and summary under ``out``."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {sorted(ALGORITHMS)}, got {algorithm!r}")
    if iterations < 1 or eval_every < 1:
        raise ValueError("iterations and eval_every must be positive")
    out.mkdir(parents=True, exist_ok=True)
    game = pyspiel.load_game(game_string)
    start = time.perf_counter()
    cached = pyspiel.load_game(f"cached_tree(game={game})")
    solver = getattr(pyspiel, ALGORITHMS[algorithm])(cached)
    rows: list[tuple[int, float, float]] = []
    with open(out / "nashconv.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["iteration", "seconds", "nash_conv"])
        for it in range(1, iterations + 1):
            solver.evaluate_and_update_policy()
            if it % eval_every == 0 or it == iterations or it == 1:
                nc = float(pyspiel.nash_conv(cached, solver.average_policy()))
                rows.append((it, round(time.perf_counter() - start, 3), nc))
                writer.writerow(rows[-1])
                f.flush()
    table = cpp_policy_table(solver.tabular_average_policy())
    policy = _TablePolicy(game, table)
    stats = play_statistics(game, policy)
    uniform = play_statistics(game, os_policy.UniformRandomPolicy(game))
    meta = {"solver": f"OpenSpiel {ALGORITHMS[algorithm]} on cached_tree", "iterations": iterations,
            "nash_conv": rows[-1][2], "seconds": rows[-1][1], "infostates": len(table)}
    TabularPolicyFile(str(game), table, meta).save(out / "policy.json.gz", hashed=True)  # the shipped form
    summary = {"game": str(game), "algorithm": algorithm, **meta, "equilibrium": stats, "uniform_random": uniform}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    _plot(rows, out / "nashconv.png", str(game), algorithm)
    return summary


def _plot(rows: list[tuple[int, float, float]], path: Path, title: str, algorithm: str) -> None:
    """NashConv against iterations (log scale), the seconds on a second axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    its, secs, ncs = zip(*rows)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog(its, ncs, marker=".")
    ax.set_xlabel("iterations")
    ax.set_ylabel("NashConv (points per deal)")
    ax.set_title(f"{algorithm.upper()} on {title.split('(')[0]} tiny", fontsize=10)
    top = ax.secondary_xaxis("top", functions=(lambda x: np.interp(x, its, secs),
                                               lambda s: np.interp(s, secs, its)))
    top.set_xlabel("seconds")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m krypenv.openspiel.solve --preset tiny --iterations N --out DIR``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--eval-every", type=int, default=10)
    parser.add_argument("--algorithm", default="cfr+", choices=sorted(ALGORITHMS))
    parser.add_argument("--out", type=Path, default=Path("results/solve-tiny"))
    args = parser.parse_args(argv)
    game = f"python_krypkasino(players={args.players},preset={args.preset})"
    summary = solve(game, args.iterations, args.eval_every, args.out, args.algorithm)
    print(json.dumps({k: v for k, v in summary.items() if k != "uniform_random"}, indent=2))


if __name__ == "__main__":
    main()
