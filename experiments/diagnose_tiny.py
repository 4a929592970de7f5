"""Where a network's exploitability on ``tiny`` comes from: its minimax regrets, where self-play and best responses go.

    python experiments/diagnose_tiny.py mlp:RUN/ckpt-000100.npz [--top 10]

``tiny`` deals every card, so after the deal it is a game of perfect information whose observation is
its state (``experiments/fit_cfr.py``): backward induction gives each state's optimal action values
Q*.  A policy's **regret** at one of its states is V* − Σ π(a) Q*(a) from the actor's side (what it gives
away there against optimal play afterwards).  Printed: NashConv and its gains per seat; the regret
summed along self-play's own paths (how often the learner *sees* its mistakes: the part sampled
updates can fix) and along each best response's paths against it (the part NashConv charges); and the
states the best responses exploit most, with their self-play reach.  A mistake that best responses
reach but self-play almost never does is a failure to explore; one self-play visits often is one the
updates have not fixed (noise, step size, bias).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fit_cfr import minimax_values
from krypenv.agents.base import load

from krypenv.openspiel.tree import GameTree


def reach_of(tree: GameTree, probs: np.ndarray) -> np.ndarray:
    """(nodes,) the probability of reaching each node when every seat plays ``probs``."""
    edge = tree._edge_probs(probs)
    reach = np.ones(len(edge))
    for nodes in tree._levels()[1:]:
        reach[nodes] = reach[tree.parent[nodes]] * edge[nodes]
    return reach


def per_state(tree: GameTree, reach: np.ndarray) -> np.ndarray:
    """(infostates,) the summed reach of each information state's nodes."""
    dec = tree.kind == 1
    out = np.zeros(tree.num_infostates)
    np.add.at(out, tree.info[dec], reach[dec])
    return out


def main() -> None:
    """Print the diagnosis of one agent spec (a policy with exact probabilities: mlp:PATH)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agent")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--rules", default="", help="rule keys on top of tiny (ranks=A-2-3,hand=2,table=2)")
    args = parser.parse_args()
    from krypenv.training.exploit import parse_rules

    tree = GameTree.load("krypkasino", "tiny", 2, **parse_rules(args.rules))
    agent = load(args.agent, game="krypkasino")

    class Batch:  # what action_probabilities reads of a decision batch
        def __init__(self, obs: np.ndarray, mask: np.ndarray) -> None:
            self.obs, self.mask = obs, mask
            self.rules = type("R", (), {"players": 2})()

    probs = tree.policy_of(lambda o, m: agent.action_probabilities(Batch(o, m)))
    result = tree.nash_conv(probs)
    q, _ = minimax_values(tree)  # seat 0's lead after each action
    sign = np.where(tree.info_player == 0, 1.0, -1.0)[:, None]
    mine = np.where(tree.legal, sign * q, -np.inf)
    regret = mine.max(1) - np.where(tree.legal, probs * np.nan_to_num(sign * q), 0.0).sum(1)  # in lead points
    self_play = per_state(tree, reach_of(tree, probs))
    print(f"{args.agent}: NashConv {result['nash_conv']:.4f}, gains {np.round(result['improvements'], 4)}")
    print(f"entropy per state (self-play weighted): "
          f"{-(self_play[:, None] * np.where(probs > 0, probs * np.log(probs), 0)).sum() / self_play.sum():.4f}")
    print(f"regret along self-play paths: {(self_play * regret).sum() / 2:.4f} points per deal "
          f"(states seen per deal {self_play.sum():.2f})")
    for seat in (0, 1):
        _, choice = tree.best_response(probs, seat)
        br = probs.copy()
        rows = np.flatnonzero(tree.info_player == seat)
        br[rows] = 0.0
        br[rows, choice[rows]] = 1.0
        path = per_state(tree, reach_of(tree, br))
        victim = tree.info_player == 1 - seat
        charged = path * regret * victim
        print(f"best response in seat {seat}: charges {charged.sum() / 2:.4f} of the policy's regret (lead / 2)")
        for k in np.argsort(-charged)[:args.top]:
            print(f"  {charged[k] / 2:.4f}  reach {path[k]:.4f} (self-play {self_play[k]:.2e})  regret "
                  f"{regret[k] / 2:.3f}  p {np.round(probs[k][tree.legal[k]], 3)}  q* "
                  f"{np.round((sign[k] * q[k])[tree.legal[k]] / 2, 2)}  {str(tree.keys[k])[:110]}")


if __name__ == "__main__":
    main()
