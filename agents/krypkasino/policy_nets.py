"""The networks the policy-guided search asks: legal-action logits and values of rows, from a ``ppo`` or ``mlp`` file.

:class:`PolicyNet` wraps a ``train.py`` checkpoint (``ppo:PATH``, torch; loading unpickles: trusted
files only), :class:`MLPNet` an ``mlp`` checkpoint (numpy, no pickle, :mod:`krypenv.agents.mlp`).
Both answer ``logits(obs, feats, mask)`` (float32, −inf at illegal actions; ``feats`` the move
features when the network reads them, ``moves``: every action's or only the legal ones', see
:func:`krypenv.agents.mlp.legal_rows`) and ``values(obs)``, and count their logit calls.  Each call runs with
the search's ``threads``: torch's threads, or numpy's BLAS threads (set through threadpoolctl, of the ``rl``
extra; without it numpy's own setting), the process's setting restored after the call.  An idle OpenBLAS
thread spins for a while after a call, which took a core from the move features' numba threads (measured:
docs/research/expert-iteration.md, "Labelling speed").
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import numpy as np
from krypenv.agents.checkpoint import resolve_checkpoint
from krypenv.agents.krypkasino.move_features import VERSION
from krypenv.agents.krypkasino.ppo import GAME, PPOAgent
from krypenv.agents.mlp import blas_threads, legal_rows

from krypenv.threads import set_torch_threads

__all__ = ["MLPNet", "PolicyNet", "load_ppo"]


@lru_cache(maxsize=8)
def _load_ppo(path: str, stamp: tuple[int, int]) -> PPOAgent:
    """:meth:`PPOAgent.load`, cached by path and file version ``stamp``."""
    return PPOAgent.load(path)


def load_ppo(path: str) -> PPOAgent:
    """The ``ppo:PATH`` (or ``ppo:NAME``) agent of a checkpoint, loaded once per process and file version (the search
    only reads it)."""
    path = str(resolve_checkpoint(path))
    try:
        st = os.stat(path)
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = (0, 0)
    return _load_ppo(path, stamp)


class PolicyNet:
    """The network of a ``ppo:PATH`` agent as the search asks it: legal-action logits and critic values of rows."""

    def __init__(self, agent: PPOAgent, threads: int = 1) -> None:
        self.agent = agent
        self.policy = agent.policy
        self.moves = agent.features is not None
        self.calls = 0  # network calls for logits, for tests and statistics
        self.threads = threads
        if self.moves:
            self.inv_high = self.policy.pi_features_extractor.inv_high[:agent.obs_dim]

    @contextmanager
    def _threads(self) -> Iterator[None]:
        """torch with ``self.threads`` threads for one call, the process's setting restored after it."""
        import torch as th

        before = th.get_num_threads()
        set_torch_threads(self.threads)
        try:
            with th.no_grad():
                yield
        finally:
            set_torch_threads(before)

    def logits(self, obs: np.ndarray, feats: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
        """(R, 105) float32 logits, −inf at illegal actions; one forward pass (the scorer on legal actions only)."""
        self.calls += 1
        if not self.moves:
            with self._threads():
                return self.agent.logits(obs, mask)
        import torch as th

        m = self.policy.mlp_extractor
        b, a = np.nonzero(mask)
        with self._threads():
            s = th.as_tensor(obs, dtype=th.float32) * self.inv_high
            body = m.body(s)
            out = m.bias(body)
            h = th.relu(m.inp(th.as_tensor(legal_rows(feats, b, a))) + m.ctx(body)[th.as_tensor(b)])
            out[th.as_tensor(b), th.as_tensor(a)] += m.out(th.relu(m.hidden(h))).squeeze(-1)
            res = out.numpy()
        return np.where(mask != 0, res, -np.inf).astype(np.float32)

    def values(self, obs: np.ndarray) -> np.ndarray:
        """(R,) the critic's values of the observations (training's reward units)."""
        import torch as th

        with self._threads():
            s = th.as_tensor(obs, dtype=th.float32)
            if self.moves:
                v = self.policy.value_net(self.policy.mlp_extractor.forward_critic(s * self.inv_high))
            else:
                v = self.policy.predict_values(s)
        return v.numpy().reshape(-1).astype(np.float64)


class MLPNet:
    """The network of an ``mlp:PATH`` checkpoint (:mod:`krypenv.agents.mlp`, numpy) as the search asks it."""

    def __init__(self, path: str, threads: int = 1) -> None:
        from krypenv.agents.mlp import MLPAgent, resolve

        self.threads = threads
        self.agent = MLPAgent(resolve(path))
        self.net = self.agent.net
        if self.agent.trained_game != GAME:
            raise ValueError(f"mlp checkpoint {path} was trained on {self.agent.trained_game}, not {GAME}")
        if self.net.features not in (None, VERSION):
            raise ValueError(f"mlp checkpoint {path} reads action features {self.net.features}; the search computes "
                             f"{VERSION}")
        self.moves = self.net.features is not None
        self.obs_dim = self.net.obs_size
        self.calls = 0

    def meta(self) -> dict[str, Any]:
        """The table and deck the checkpoint was trained for, as ``ppo`` metadata says them (for the checks)."""
        from krypenv.agents.krypkasino.ppo import deck_keys

        from krypenv.krypkasino.rules import Rules

        players = self.agent.players
        return {"players": players, **deck_keys(Rules.from_preset(self.agent.card.get("preset", "standard"),
                                                                    players=players))}

    def logits(self, obs: np.ndarray, feats: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
        """(R, 105) float32 logits, −inf at illegal actions."""
        self.calls += 1
        with blas_threads(self.threads):
            return self.net.logits(obs, mask, feats).astype(np.float32)

    def values(self, obs: np.ndarray) -> np.ndarray:
        """(R,) the value head's estimates (the card's ``value_unit``)."""
        with blas_threads(self.threads):
            return self.net.values(obs)
