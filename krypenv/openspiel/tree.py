"""A small game's whole tree as numpy arrays: exact NashConv of any policy in milliseconds (measurement only).

    from krypenv.openspiel.tree import GameTree
    tree = GameTree.load("krypkasino", "tiny", 2)        # walks the OpenSpiel game once, then a cache file
    probs = tree.policy_of(lambda obs, mask: ...)          # (infostates, actions) from the seats' observations
    tree.nash_conv(probs)                                  # {"nash_conv", "best_response_values", ...}

:func:`krypenv.openspiel.exploit.exact` (``krypenv exploit``) walks the Python game for every
measurement (minutes on ``tiny``).  A learning curve needs hundreds of them, so this module walks
the game once and keeps, in flat arrays: every node (its parent, the action or chance probability
that leads to it, who acts, its information state, its depth, the returns at the end) and every
information state (its seat, its legal actions, the env observation of that seat, which is what
our networks read, and OpenSpiel's information state tensor, what OpenSpiel's learners read).
A policy is then a ``(information states, actions)`` matrix, and

* the on-policy values are one backward pass over the depths (children's values summed into their
  parents with the edge probabilities);
* each seat's best-response value is one backward pass too: at a depth, every edge out of a node of
  that seat adds ``reach of chance and the others × child value`` to its information state's action
  value; the best action of each information state (a perfect-recall game keeps an information
  state's histories at one depth: checked when the tree is built) gives the node its child's value.

That is OpenSpiel's best response (``open_spiel.python.algorithms.best_response``) and NashConv
(the sum over seats of best-response value minus on-policy value), computed for a whole policy at
once; ``tests/openspiel/test_tree.py`` holds it to :func:`krypenv.openspiel.exploit.exact` on a cut
of ``tiny`` and to ``pyspiel.nash_conv`` on tiny itself.  The cache is a ``.npz`` (no pickle) under
``$KRYPENV_CACHE`` or ``~/.cache/krypenv``, keyed by the OpenSpiel game string; it is rebuilt when
absent (about 3 minutes for Krypkasino's ``tiny`` on a shared 2-core machine).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel

__all__ = ["GameTree", "cache_dir"]

CHANCE, DECISION, TERMINAL = 0, 1, 2  # node kinds


def cache_dir() -> Path:
    """Where trees are cached: ``$KRYPENV_CACHE`` or ``~/.cache/krypenv``."""
    return Path(os.environ.get("KRYPENV_CACHE") or Path.home() / ".cache" / "krypenv")


@dataclass
class GameTree:
    """Every node and information state of a game (module docstring); build with :meth:`load`."""

    game_string: str
    parent: np.ndarray  # (nodes,) int32, −1 at the root; nodes are in walk order, a parent before its children
    action: np.ndarray  # (nodes,) int16, the action from the parent (−1 at the root)
    chance: np.ndarray  # (nodes,) float64, the chance probability of the edge from a chance parent, else 1
    kind: np.ndarray  # (nodes,) int8: CHANCE, DECISION or TERMINAL
    player: np.ndarray  # (nodes,) int8, the seat to act (−1 elsewhere)
    info: np.ndarray  # (nodes,) int32, the information state of a decision node (−1 elsewhere)
    depth: np.ndarray  # (nodes,) int16
    returns: np.ndarray  # (nodes, players) float64, at terminals (0 elsewhere)
    info_player: np.ndarray  # (infostates,) int8
    legal: np.ndarray  # (infostates, actions) bool
    obs: np.ndarray  # (infostates, obs size) int8: the env observation of the seat (what our agents read)
    info_tensor: np.ndarray  # (infostates, tensor size) int8: OpenSpiel's information_state_tensor
    keys: np.ndarray  # (infostates,) str: OpenSpiel's information_state_string

    @property
    def players(self) -> int:
        """Seats of the game."""
        return int(self.returns.shape[1])

    @property
    def num_infostates(self) -> int:
        """Information states (decision points of some seat)."""
        return int(self.legal.shape[0])

    # ------------------------------------------------------------------ building
    @classmethod
    def load(cls, game: str | pyspiel.Game, preset: str = "tiny", players: int = 2, cache: bool = True,
             **rules: Any) -> GameTree:
        """The tree of one of our games (name, preset, players, rule keys) or of an OpenSpiel game; cached."""
        if isinstance(game, str):
            from krypenv.openspiel.exploit import load_game

            game = load_game(game, preset, players, **rules)
        path = cache_dir() / f"tree-{hashlib.sha1(str(game).encode()).hexdigest()[:16]}.npz"
        if cache and path.is_file():
            with np.load(path, allow_pickle=False) as z:
                tree = cls(**{k: z[k] for k in z.files if k != "game_string"}, game_string=str(z["game_string"]))
            if tree.game_string == str(game):
                return tree
        tree = cls.build(game)
        if cache:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp.npz")
            np.savez_compressed(tmp, **{k: getattr(tree, k) for k in cls.__dataclass_fields__})
            tmp.replace(path)
        return tree

    @classmethod
    def build(cls, game: pyspiel.Game) -> GameTree:
        """Walk ``game`` depth first from its root (every node once)."""
        P, A = game.num_players(), game.num_distinct_actions()
        parent, action, chance, kind, player, info, depth, returns = [], [], [], [], [], [], [], []
        ids: dict[str, int] = {}
        i_player, i_legal, i_obs, i_tensor = [], [], [], []
        stack: list[tuple[pyspiel.State, int, int, float, int]] = [(game.new_initial_state(), -1, -1, 1.0, 0)]
        while stack:
            state, par, act, prob, d = stack.pop()
            n = len(parent)
            parent.append(par), action.append(act), chance.append(prob), depth.append(d)
            ret = np.zeros(P)
            if state.is_terminal():
                kind.append(TERMINAL), player.append(-1), info.append(-1)
                ret = np.asarray(state.returns(), np.float64)
                children: list[tuple[int, float]] = []
            elif state.is_chance_node():
                kind.append(CHANCE), player.append(-1), info.append(-1)
                children = list(state.chance_outcomes())
            else:
                p = state.current_player()
                key = state.information_state_string()
                if key not in ids:
                    ids[key] = len(ids)
                    legal = np.zeros(A, bool)
                    legal[state.legal_actions()] = True
                    tensor = np.asarray(state.information_state_tensor(), np.float64)
                    # our games: the env observation an agent reads; OpenSpiel's own games: the tensor
                    obs = np.asarray(state.decisions(1, 0).obs[0]) if hasattr(state, "decisions") else tensor
                    if not (np.array_equal(tensor, np.round(tensor)) and np.abs(tensor).max(initial=0) < 128):
                        raise ValueError(f"{game}: information state tensors are not small integers")
                    i_player.append(p), i_legal.append(legal), i_obs.append(obs.astype(np.int8))
                    i_tensor.append(tensor.astype(np.int8))
                kind.append(DECISION), player.append(p), info.append(ids[key])
                children = [(a, 1.0) for a in state.legal_actions()]
            returns.append(ret)
            for a, q in reversed(children):
                stack.append((state.child(a), n, a, q, d + 1))
        keys = np.array(sorted(ids, key=ids.__getitem__))
        return cls(str(game), np.array(parent, np.int32), np.array(action, np.int16), np.array(chance),
                   np.array(kind, np.int8), np.array(player, np.int8), np.array(info, np.int32),
                   np.array(depth, np.int16), np.array(returns), np.array(i_player, np.int8), np.array(i_legal),
                   np.array(i_obs), np.array(i_tensor), keys)

    # ------------------------------------------------------------------ policies
    def policy_of(self, probabilities: Callable[[np.ndarray, np.ndarray], np.ndarray], batch: int = 8192,
                  tensor: bool = False) -> np.ndarray:
        """(infostates, actions) from ``probabilities(inputs, legal)`` over batches; ``inputs`` the seats' observations
        (each distinct observation and mask asked once), or OpenSpiel's information state tensors (``tensor``)."""
        if tensor:
            inputs, legal, back = self.info_tensor, self.legal, np.arange(self.num_infostates)
        else:
            if not hasattr(self, "_distinct"):
                both = np.concatenate([self.obs, self.legal.astype(np.int8)], axis=1)
                _, first, back = np.unique(both, axis=0, return_index=True, return_inverse=True)
                self._distinct = (first, back.ravel())
            first, back = self._distinct
            inputs, legal = self.obs[first], self.legal[first]
        out = np.zeros(legal.shape)
        for k in range(0, len(inputs), batch):
            out[k:k + batch] = probabilities(inputs[k:k + batch], legal[k:k + batch])
        return self.check(out[back])

    def check(self, probs: np.ndarray) -> np.ndarray:
        """``probs`` as float64 after checking it is a policy: ValueError naming the first bad information state."""
        probs = np.asarray(probs, np.float64)
        if probs.shape != self.legal.shape:
            raise ValueError(f"policy of shape {probs.shape}, expected {self.legal.shape}")
        illegal = np.where(self.legal, 0.0, np.abs(probs)).sum(1) > 0
        bad = ~np.isfinite(probs).all(1) | (probs < 0).any(1) | (np.abs(probs.sum(1) - 1) > 1e-4) | illegal
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise ValueError(f"not a policy at information state {k} ({self.keys[k]!r}): {probs[k][self.legal[k]]}")
        return probs

    def uniform(self) -> np.ndarray:
        """The uniform policy over the legal actions."""
        return self.legal / self.legal.sum(1, keepdims=True)

    def table(self, lookup: Callable[[str], dict[int, float]]) -> np.ndarray:
        """A policy matrix from ``lookup(information state string) -> {action: probability}`` (e.g. a
        :class:`krypenv.openspiel.policy.TabularPolicyFile`'s ``probabilities``)."""
        probs = np.zeros(self.legal.shape)
        for k, key in enumerate(self.keys):
            for a, p in lookup(str(key)).items():
                probs[k, int(a)] = p
        return probs

    # ------------------------------------------------------------------ values
    def _edge_probs(self, probs: np.ndarray) -> np.ndarray:
        """(nodes,) the probability of the edge into each node (chance or the actor's policy; 1 at the root)."""
        e = self.chance.copy()
        child = np.flatnonzero(self.parent >= 0)
        par = self.parent[child]
        dec = self.kind[par] == DECISION
        e[child[dec]] = probs[self.info[par[dec]], self.action[child[dec]]]
        return e

    def _levels(self) -> list[np.ndarray]:
        """Node ids by depth, root first."""
        order = np.argsort(self.depth, kind="stable")
        return np.split(order, np.flatnonzero(np.diff(self.depth[order])) + 1)

    def _br_levels(self, seat: int) -> list[np.ndarray]:
        """The non-root nodes in groups whose parents can be valued in turn for ``seat``'s best response.

        A node's height is 0 at a terminal, else 1 + its children's largest; all nodes of one of ``seat``'s
        information states get their largest height (its histories may lie at several depths: a capture chosen
        card by card in different orders), and the parents' heights grow to match, until nothing changes.  Then
        every history of an information state has the same height, above all of their children's.
        """
        levels = self._levels()
        height = np.zeros(len(self.parent), np.int64)
        mine = (self.player == seat) & (self.kind == DECISION)
        while True:
            before = height.copy()
            for nodes in reversed(levels[1:]):
                np.maximum.at(height, self.parent[nodes], height[nodes] + 1)
            top = np.zeros(self.num_infostates, np.int64)
            np.maximum.at(top, self.info[mine], height[mine])
            height[mine] = top[self.info[mine]]
            if np.array_equal(height, before):
                break
        child = np.flatnonzero(self.parent >= 0)
        h = height[self.parent[child]]
        order = np.argsort(h, kind="stable")
        return np.split(child[order], np.flatnonzero(np.diff(h[order])) + 1)

    def best_response(self, probs: np.ndarray, seat: int, edge: np.ndarray | None = None,
                      reach: np.ndarray | None = None) -> tuple[float, np.ndarray]:
        """``seat``'s best-response value against ``probs`` and its action at each of its information states (−1 at
        the others'); ``edge`` and ``reach`` (chance's and the other seats' reach) are computed when not given."""
        if edge is None or reach is None:
            edge = self._edge_probs(self.check(probs))
            reach = np.ones(len(self.parent))
            for nodes in self._levels()[1:]:
                par = self.parent[nodes]
                reach[nodes] = reach[par] * np.where(self.player[par] == seat, 1.0, edge[nodes])
        if not hasattr(self, "_br_cache"):
            self._br_cache = [self._br_levels(i) for i in range(self.players)]
        br = self.returns[:, seat].copy()
        choice = np.full(self.num_infostates, -1)
        for kids in self._br_cache[seat]:  # edges whose parents are valued now (their children are final)
            par = self.parent[kids]
            mine = self.player[par] == seat
            other = kids[~mine]
            np.add.at(br, self.parent[other], edge[other] * br[other])
            if mine.any():
                kids = kids[mine]
                infos = self.info[self.parent[kids]]
                acts = self.action[kids].astype(np.int64)
                here, at = np.unique(infos, return_inverse=True)
                cfv = np.zeros((len(here), self.legal.shape[1]))
                np.add.at(cfv, (at, acts), reach[self.parent[kids]] * br[kids])
                cfv[~self.legal[here]] = -np.inf
                choice[here] = cfv.argmax(1)
                chosen = kids[acts == choice[infos]]
                br[self.parent[chosen]] = br[chosen]
        return float(br[0]), choice

    def nash_conv(self, probs: np.ndarray) -> dict[str, Any]:
        """Best-response and on-policy values per seat, their differences and NashConv (OpenSpiel's definition)."""
        start = time.perf_counter()
        probs = self.check(probs)
        P, n = self.players, len(self.parent)
        edge = self._edge_probs(probs)
        levels = self._levels()
        reach = np.ones((P, n))  # reach of chance and every seat but i: the product of their edges on the path
        for nodes in levels[1:]:
            par = self.parent[nodes]
            own = self.player[par]
            for i in range(P):
                reach[i, nodes] = reach[i, par] * np.where(own == i, 1.0, edge[nodes])
        on = self.returns.copy()
        for nodes in reversed(levels[1:]):
            np.add.at(on, self.parent[nodes], edge[nodes, None] * on[nodes])
        br_values = [self.best_response(probs, i, edge, reach[i])[0] for i in range(P)]
        on_values = [float(v) for v in on[0]]
        gains = [b - o for b, o in zip(br_values, on_values)]
        return {"best_response_values": br_values, "on_policy_values": on_values, "improvements": gains,
                "nash_conv": float(sum(gains)), "seconds": round(time.perf_counter() - start, 4)}
