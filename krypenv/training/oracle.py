"""A diagnostic of the sampled learner: its critic's Q replaced by the exact Q of its current policy, read off the tree.

**Diagnostic only: it reads the game's whole tree** (:class:`krypenv.openspiel.tree.GameTree`), so a run with it is
not a sampled learner and its network is not one to ship.  ``python -m krypenv.training.selfplay --update critic
--oracle-critic true`` uses it: at every iteration the exact action values of the network's policy at every
distinct observation (:meth:`krypenv.training.treemmd.TreeValues.values`, the seat's expected points after each
action) are computed, multiplied by ``reward_scale``, and MMD's step at each sampled decision takes them instead of
the critic's Q.  Everything else of the sampled learner stays: the decisions it fits are the sampled ones, the fit is
its minibatches, the critic still learns (it is just not read).  So the run isolates the critic's error from the
rest of the sampled update (the page "Learners on the small variants", "Where the sampled learner's bias comes
from").  It needs a preset OpenSpiel walks whole (``tiny``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from krypenv.training.mmdnet import Policy

__all__ = ["OracleCritic"]


class OracleCritic:
    """Exact Q (× ``reward_scale``) of a network's policy at sampled decisions; DIAGNOSTIC: reads the whole tree."""

    def __init__(self, args: Any) -> None:
        try:
            from krypenv.openspiel.tree import GameTree
        except ImportError as exc:
            raise ValueError(f"oracle_critic needs OpenSpiel: pip install 'krypenv[openspiel]' ({exc})") from None
        from krypenv.training.exploit import parse_rules
        from krypenv.training.treemmd import TreeValues

        self.values = TreeValues(GameTree.load(args.game, args.preset, args.players, **parse_rules(args.rules)))
        self.legal_np = self.values.legal
        self.obs, self.legal = torch.as_tensor(self.values.obs).float(), torch.as_tensor(self.legal_np)
        self.index = {row.tobytes(): k for k, row in enumerate(self.keys(self.values.obs, self.legal_np))}
        self.scale = float(args.reward_scale)

    @staticmethod
    def keys(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One int8 row per decision: its observation and legal mask side by side (a distinct observation's key)."""
        return np.concatenate([obs.astype(np.int8), mask.astype(np.int8)], axis=1)

    def __call__(self, net: Policy, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(rows, actions) float32: the exact Q of ``net``'s policy at each decision (whole observation columns and
        masks), in the learner's units (points × ``reward_scale``), 0 off the legal actions."""
        with torch.no_grad():
            logp = net(self.obs.to(obs.device), self.legal.to(obs.device))[0]
        probs = logp.double().exp().cpu().numpy() * self.legal_np
        q, _ = self.values.values(probs / probs.sum(1, keepdims=True))
        rows = np.array([self.index.get(r.tobytes(), -1) for r in self.keys(obs.cpu().numpy(), mask.cpu().numpy())])
        if (rows < 0).any():
            raise ValueError(f"oracle_critic: {int((rows < 0).sum())} sampled decisions are not in the game's tree")
        return torch.as_tensor(q[rows] * self.scale, dtype=torch.float32, device=obs.device)
