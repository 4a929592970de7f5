"""What the sampled learner's critic update reads beside its games: the tree's exact NashConv, the oracle critic (a
diagnostic), and the importance weights of its exploration.

**Exact NashConv** (:class:`ExactNashConv`, ``eval_every``): the network's exact policy
(:func:`policy_function`) measured on a preset OpenSpiel walks whole (``tiny``), off the training clock.

**The oracle critic** (:class:`OracleCritic`, ``oracle_critic``), **a diagnostic only: it reads the game's whole
tree** (:class:`krypenv.openspiel.tree.GameTree`), so a run with it is not a sampled learner and its network is not
one to ship.  At every iteration the exact action values of the network's policy at every distinct observation
(:meth:`TreeValues.values`, the seat's expected points after each action), times
``reward_scale``, replace the critic's Q in MMD's step at each sampled decision.  Everything else of the sampled
learner stays (the sampled decisions, the minibatch fit, the critic still learning, just not read), so the run
isolates the critic's error from the rest of the sampled update (the page "Learners on the small variants", "Where
the sampled learner's bias comes from").

**Off-policy weights** (:func:`opponent_ratios`, ``off_policy``).  With ``explore`` every seat plays the behaviour
policy μ = (1 − ε)·π + ε·uniform, so the critic learns μ's Q from μ's returns.  With one-step targets
(``gae_lambda`` 0: the rewards to the seat's next decision plus its value there, Σ π·Q, the policy's own expectation
over its next action) the only actions of μ inside a target are the other seats' between the decision and the seat's
next one; weighting the decision's squared error by the product of their π/μ makes its expected target π's (per-
decision importance sampling; each ratio at most 1/(1 − ε)).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from krypenv.training.mmdnet import Policy

if TYPE_CHECKING:
    from krypenv.openspiel.tree import GameTree

__all__ = ["ExactNashConv", "OracleCritic", "TreeValues", "load_tree", "opponent_ratios", "policy_function"]


def policy_function(net: Policy, device: torch.device) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The network's exact policy as a function of observations and legal masks (numpy, float64)."""

    def probabilities(obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logp = net(torch.as_tensor(obs, device=device), torch.as_tensor(legal, device=device))[0]
        p = logp.double().exp().cpu().numpy() * legal
        return p / p.sum(1, keepdims=True)

    return probabilities


def load_tree(args: Any, option: str) -> GameTree:
    """The whole tree of ``args``'s game, preset, players and rules (a ValueError naming ``option`` if no OpenSpiel)."""
    try:
        from krypenv.openspiel.tree import GameTree
    except ImportError as exc:
        raise ValueError(f"{option} needs OpenSpiel: pip install 'krypenv[openspiel]' ({exc})") from None
    from krypenv.training.exploit import parse_rules

    return GameTree.load(args.game, args.preset, args.players, **parse_rules(args.rules))


class TreeValues:
    """A game tree seen by distinct observation: the network's inputs, and Q and reach of a policy."""

    def __init__(self, tree: GameTree) -> None:
        from krypenv.openspiel.tree import DECISION

        self.tree = tree
        tree.policy_of(lambda o, m: m / m.sum(1, keepdims=True))  # computes tree._distinct
        first, back = tree._distinct
        self.obs, self.legal, self.back = tree.obs[first], tree.legal[first], back  # back: infostate → observation
        self.levels = tree._levels()
        kids = np.flatnonzero(tree.parent >= 0)
        self.dec_kids = kids[tree.kind[tree.parent[kids]] == DECISION]  # edges out of decision nodes
        par = tree.parent[self.dec_kids]
        self.dec_obs = back[tree.info[par]]  # the observation each decision edge leaves
        self.dec_seat = tree.player[par].astype(np.int64)

    def values(self, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Q of every observation's actions, the probability that play under ``probs`` reaches it) for a policy
        ``probs`` (observations, actions); Q is 0 where chance and the other seats never lead."""
        t, P = self.tree, self.tree.players
        edge = t._edge_probs(probs[self.back])
        reach = np.ones((P + 1, len(t.parent)))  # row i: all but seat i; row P: everyone
        for nodes in self.levels[1:]:
            par = t.parent[nodes]
            for i in range(P):
                reach[i, nodes] = reach[i, par] * np.where(t.player[par] == i, 1.0, edge[nodes])
            reach[P, nodes] = reach[P, par] * edge[nodes]
        on = t.returns.copy()
        for nodes in reversed(self.levels[1:]):
            np.add.at(on, t.parent[nodes], edge[nodes, None] * on[nodes])
        kids, o, seat = self.dec_kids, self.dec_obs, self.dec_seat
        par = t.parent[kids]
        cf = reach[seat, par]
        num, den = np.zeros(self.legal.shape), np.zeros(self.legal.shape)
        np.add.at(num, (o, t.action[kids].astype(np.int64)), cf * on[kids, seat])
        np.add.at(den, (o, t.action[kids].astype(np.int64)), cf)
        q = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
        seen = np.zeros(len(self.obs))
        np.add.at(seen, o, reach[P, kids])  # Σ over the edges = the probability of reaching the observation
        return q, seen


class ExactNashConv:
    """Exact NashConv of the network's policy on a preset OpenSpiel traverses (:mod:`krypenv.openspiel.tree`)."""

    def __init__(self, args: Any) -> None:
        self.tree = load_tree(args, "eval_every")

    def __call__(self, net: Policy, device: torch.device) -> float:
        """NashConv (OpenSpiel's definition, the game's returns: Krypkasino points per deal)."""
        return self.tree.nash_conv(self.tree.policy_of(policy_function(net, device)))["nash_conv"]


class OracleCritic:
    """Exact Q (× ``reward_scale``) of a network's policy at sampled decisions; DIAGNOSTIC: reads the whole tree."""

    def __init__(self, args: Any) -> None:
        self.values = TreeValues(load_tree(args, "oracle_critic"))
        self.index = {row.tobytes(): k for k, row in enumerate(self.keys(self.values.obs, self.values.legal))}
        self.scale = float(args.reward_scale)

    @staticmethod
    def keys(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One int8 row per decision: its observation and legal mask side by side (a distinct observation's key)."""
        return np.concatenate([obs.astype(np.int8), mask.astype(np.int8)], axis=1)

    def __call__(self, net: Policy, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(rows, actions) float32: the exact Q of ``net``'s policy at each decision (whole observation columns and
        masks), in the learner's units (points × ``reward_scale``), 0 off the legal actions."""
        q, _ = self.values.values(policy_function(net, obs.device)(self.values.obs, self.values.legal))
        rows = np.array([self.index.get(r.tobytes(), -1) for r in self.keys(obs.cpu().numpy(), mask.cpu().numpy())])
        if (rows < 0).any():
            raise ValueError(f"oracle_critic: {int((rows < 0).sum())} sampled decisions are not in the game's tree")
        return torch.as_tensor(q[rows] * self.scale, dtype=torch.float32, device=obs.device)


def opponent_ratios(log_ratio: torch.Tensor, done: torch.Tensor, seat: torch.Tensor, players: int) -> torch.Tensor:
    """(T, N): for each decision, the product of exp(``log_ratio``) (log π/μ of the action taken) over the other seats'
    decisions after it, up to its seat's next decision or the episode's end (``done`` (T, N): it ended at that step;
    ``seat`` (T, N) who acted); 1 where there are none."""
    T, N = log_ratio.shape
    acc = torch.zeros((N, players), device=log_ratio.device)  # log of the product since each seat's decision
    out = torch.zeros((T, N), device=log_ratio.device)
    col = torch.arange(N, device=log_ratio.device)
    for t in reversed(range(T)):
        acc[done[t]] = 0.0  # the episode ended here: later steps belong to the next one
        a = seat[t]
        out[t] = acc[col, a]
        acc[col, a] = 0.0
        other = torch.ones((N, players), dtype=torch.bool, device=log_ratio.device)
        other[col, a] = False
        acc += torch.where(other, log_ratio[t][:, None], 0.0)
    return out.exp()
