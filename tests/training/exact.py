"""The exact NashConv of a self-play checkpoint on tiny's A-2-3 deal, as the trainers' logs measure it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from krypenv import agents


class _Batch:
    """What the mlp agent reads of a decision batch."""

    def __init__(self, obs: np.ndarray, mask: np.ndarray) -> None:
        self.obs, self.mask, self.rules = obs, mask, type("R", (), {"players": 2})()


def nash_conv_of(checkpoint: Path) -> tuple[float, dict]:
    """(NashConv of the mlp checkpoint on tiny with ranks A-2-3, hand 2, table 2; its card), by OpenSpiel's tree."""
    from krypenv.openspiel.tree import GameTree

    tree = GameTree.load("krypkasino", "tiny", 2, ranks="A-2-3", hand=2, table=2)
    agent = agents.load(f"mlp:{checkpoint}")
    probs = tree.policy_of(lambda o, m: agent.action_probabilities(_Batch(o, m)))
    return float(tree.nash_conv(probs)["nash_conv"]), agent.card
