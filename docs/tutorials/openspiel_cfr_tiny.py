"""OpenSpiel: load Krypkasino's ``tiny`` preset, run CFR+, measure NashConv, play the policy in our env and eval.

``import krypenv.openspiel`` registers ``python_krypkasino`` with OpenSpiel (the extra ``openspiel``).
OpenSpiel's ``cached_tree`` walks our Python game once and keeps every node, so its C++ CFR+ and
best responses (``pyspiel.nash_conv``) run over the stored tree. The average policy is written as a
:mod:`krypenv.openspiel.policy` file and plays as the agent ``tabular:PATH``: here as the opponent
inside the Gymnasium env, and the shipped solution ``tabular:cfr-tiny`` in ``krypenv eval``.

Run: ``python docs/tutorials/openspiel_cfr_tiny.py`` (minutes for the whole ``tiny``: the solve of
``checkpoints/cfr-tiny-nashconv.csv`` had walked the tree and run 100 iterations after 339 s on the shared
2-core machine, six NashConv computations on the way included). ``KRYPENV_TUTORIAL_STEPS`` sets the CFR+ iterations
(default 100), ``KRYPENV_TUTORIAL_GAME`` the OpenSpiel game (the tests use a 6-card cut of tiny,
``python_krypkasino(players=2,preset=tiny,ranks=A-2-3,hand=2,table=2)``), ``KRYPENV_TUTORIAL_DECKS``
the decks of the evaluation (default 100).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pyspiel

import krypenv.openspiel  # noqa: F401  (registers python_krypkasino; importing krypenv registers the Gymnasium ids)
from krypenv import agents
from krypenv.cli import main as krypenv_main
from krypenv.openspiel.policy import TabularPolicyFile

ITERATIONS = int(os.environ.get("KRYPENV_TUTORIAL_STEPS", "100"))
GAME = os.environ.get("KRYPENV_TUTORIAL_GAME", "python_krypkasino(players=2,preset=tiny)")
DECKS = int(os.environ.get("KRYPENV_TUTORIAL_DECKS", "100"))


def solve(game: pyspiel.Game) -> dict[str, dict[int, float]]:
    """CFR+ on OpenSpiel's cached tree of ``game``; prints NashConv before and after; returns the average policy."""
    cached = pyspiel.load_game(f"cached_tree(game={game})")
    uniform = pyspiel.nash_conv(cached, pyspiel.UniformRandomPolicy(cached))
    print(f"NashConv of the uniform random policy: {uniform:.4f}")
    solver = pyspiel.CFRPlusSolver(cached)
    for _ in range(ITERATIONS):
        solver.evaluate_and_update_policy()
    print(f"after {ITERATIONS} CFR+ iterations: NashConv {pyspiel.nash_conv(cached, solver.average_policy()):.6f} "
          "points per deal")
    table = solver.tabular_average_policy().policy_table()
    return {key: {int(a): float(p) for a, p in pairs} for key, pairs in table.items()}


def play_against(path: Path, rules: object, deals: int = 20) -> float:
    """Random legal moves against the policy file inside the Gymnasium env; the random player's mean deal score."""
    keys = {k: getattr(rules, k) for k in ("ranks", "suits", "copies", "hand", "table")}
    env = gym.make("krypenv/Krypkasino-v0", players=2, opponents=agents.load(f"tabular:{path}"), **keys)
    rng, scores = np.random.default_rng(0), []
    for deal in range(deals):
        env.reset(seed=deal)
        done, ret = False, 0.0
        while not done:
            action = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
            _, reward, terminated, truncated, _ = env.step(action)
            ret, done = ret + float(reward), terminated or truncated
        scores.append(-ret)  # the return is minus the learner's deal score
    return float(np.mean(scores))


def main() -> None:
    """Solve, save the policy, play it in the env, then evaluate the shipped tiny solution with ``krypenv eval``."""
    game = pyspiel.load_game(GAME)
    print("game:", game)
    table = solve(game)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cfr.json"
        TabularPolicyFile(str(game), table, {"solver": "CFRPlusSolver", "iterations": ITERATIONS}).save(path)
        print(f"policy file: {len(table)} information states")
        score = play_against(path, game.config.rules)
        print(f"random against the CFR+ policy in the Gymnasium env: random's mean score per deal {score:.2f} "
              "(lower is better)")
        krypenv_main(["eval", "--preset", "tiny", "--agents", "tabular:cfr-tiny,random", "--players", "2",
                      "--deals", str(DECKS), "--seed", "1", "--workers", "1", "--no-progress", "--no-records",
                      "--out", str(Path(tmp) / "eval")])


if __name__ == "__main__":
    main()
