"""The self-play learner's average policy (:mod:`krypenv.training.selfplay`, ``--average``): a second network.

The last iterate of a sampled no-regret or MMD learner wanders around the equilibrium with the noise of its
estimates; in CFR and in NFSP (Heinrich and Silver, *Deep Reinforcement Learning from Self-Play in
Imperfect-Information Games*, 2016) it is the *average* of the iterates that converges.  Two ways of keeping one:

* ``reservoir`` and ``ring``: NFSP's average network.  Every decision self-play visits goes, with the playing
  policy's full probability vector there, into a buffer (:class:`Buffer`: a reservoir keeps a uniform sample of
  all the decisions so far, a ring the last ``size``), and after every iteration a network of the policy's shape
  takes ``average_steps`` Adam steps of cross-entropy to the stored probabilities (:func:`cross_entropy`) on
  minibatches drawn from it.  The buffer's rows weight each iterate by how often it reached each state, as
  NFSP's does; fitting probability vectors, not the sampled actions, leaves out the sampling's variance.
* ``polyak``: the policy network's parameters averaged, ``avg ← avg + average_rate · (net − avg)`` after every
  iteration (an exponential moving average; one line, no buffer).

The average network is measured (``nash_conv_avg`` in the log) and exported (``final-avg.npz``) beside the last
iterate.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import torch

from krypenv.training import mmdnet
from krypenv.training.mmdnet import Policy

__all__ = ["AVERAGES", "Averager", "Buffer", "cross_entropy", "fit", "polyak"]

AVERAGES = ("none", "reservoir", "ring", "polyak")


def cross_entropy(logp: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over rows of −Σ target · log π over the legal actions (``logp`` the network's, ``target`` probabilities)."""
    return -torch.where(mask, target * logp, 0.0).sum(1).mean()


class Buffer:
    """(observation, mask, probabilities) rows: a reservoir (a uniform sample of all rows offered) or a ring (the
    last ``size``); its random choices from a seeded numpy generator."""

    def __init__(self, kind: str, size: int, obs_size: int, n_actions: int, obs_dtype: torch.dtype, seed: int,
                 device: torch.device | str = "cpu") -> None:
        if kind not in ("reservoir", "ring"):
            raise ValueError(f"kind must be reservoir or ring, got {kind!r}")
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size!r}")
        self.kind, self.size, self.seen, self.filled, self.device = kind, size, 0, 0, torch.device(device)
        self.obs = torch.zeros((size, obs_size), dtype=obs_dtype, device=self.device)
        self.mask = torch.zeros((size, n_actions), dtype=torch.bool, device=self.device)
        self.probs = torch.zeros((size, n_actions), dtype=torch.float32, device=self.device)
        self.rng = np.random.default_rng(seed)

    def slots(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(which of ``n`` offered rows to keep, the slot of each kept row): every row of the whole stream has been
        kept with probability size / rows offered so far (reservoir), or the last ``size`` (ring)."""
        k = np.arange(self.seen, self.seen + n)  # each row's number in the stream
        if self.kind == "ring":
            keep, slot = np.arange(n), k % self.size
        else:
            j = np.where(k < self.size, k, (self.rng.random(n) * (k + 1)).astype(np.int64))
            keep = np.nonzero(j < self.size)[0]
            slot = j[keep]
        # a slot written twice in one batch holds the later row (as offering the rows one at a time would)
        last = len(slot) - 1 - np.unique(slot[::-1], return_index=True)[1]
        return keep[last], slot[last]

    def add(self, obs: torch.Tensor, mask: torch.Tensor,
            probs: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
        """Offer rows (in order); ``probs(obs, mask)`` is computed on the kept rows only."""
        keep, slot = self.slots(len(obs))
        self.seen += len(obs)
        self.filled = min(self.size, self.seen)
        if len(keep) == 0:
            return
        k, s = (torch.as_tensor(x, device=self.device) for x in (keep, slot))
        o, m = obs.index_select(0, k), mask.index_select(0, k)
        self.obs[s], self.mask[s], self.probs[s] = o, m, probs(o, m).float()

    def batch(self, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``n`` rows drawn uniformly (with replacement) from the filled part."""
        if self.filled == 0:
            raise ValueError("the average's buffer is empty: offer rows (visited) before fitting to it")
        idx = torch.as_tensor(self.rng.integers(0, self.filled, n), device=self.device)
        return self.obs[idx], self.mask[idx], self.probs[idx]


def policy_probabilities(net: Policy, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The network's probabilities over all actions (0 where illegal) at full-width rows, computed compactly."""
    with torch.no_grad():
        o, m, cols, acts = mmdnet.compact(obs, mask)
        p = mmdnet.probabilities(net.evaluate(o, m, cols, acts)[0], m)
    return torch.zeros(mask.shape, dtype=p.dtype, device=p.device).index_copy_(1, acts, p)


def fit(avg: Policy, optimizer: torch.optim.Optimizer, buffer: Buffer, steps: int, batch: int) -> float:
    """``steps`` Adam steps of :func:`cross_entropy` on minibatches of the buffer; the mean loss."""
    losses = []
    for _ in range(steps):
        obs, mask, probs = buffer.batch(batch)
        o, m, cols, acts = mmdnet.compact(obs, mask)
        loss = cross_entropy(avg.evaluate(o, m, cols, acts)[0], probs.index_select(1, acts), m)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return float(torch.stack(losses).mean())


def polyak(avg: Policy, net: Policy, rate: float) -> None:
    """``avg``'s parameters moved ``rate`` of the way to ``net``'s."""
    with torch.no_grad():
        for a, p in zip(avg.parameters(), net.parameters()):
            a.lerp_(p, rate)


class Averager:
    """The run's average network and how it is kept (``kind``: reservoir, ring or polyak; module docstring)."""

    def __init__(self, net: Policy, kind: str, size: int, lr: float, steps: int, batch: int, rate: float,
                 obs_dtype: torch.dtype, seed: int) -> None:
        device = next(net.parameters()).device
        self.kind, self.steps, self.batch, self.rate, self.loss = kind, steps, batch, rate, float("nan")
        self.net = copy.deepcopy(net)  # no draws from torch's generator: the policy's run is the same with or without
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr, eps=1e-5)
        self.buffer = None if kind == "polyak" else Buffer(kind, size, net.hidden[0].in_features,
                                                           net.pi.out_features, obs_dtype, seed, device)

    def visited(self, net: Policy, obs: torch.Tensor, mask: torch.Tensor) -> None:
        """The rollout's decisions (full-width rows) offered to the buffer with ``net``'s probabilities there."""
        if self.buffer is not None:
            self.buffer.add(obs, mask, lambda o, m: policy_probabilities(net, o, m))

    def updated(self, net: Policy) -> None:
        """After the policy's update: the average network fitted to the buffer, or moved towards ``net``."""
        if self.buffer is None:
            polyak(self.net, net, self.rate)
        else:
            self.loss = fit(self.net, self.optimizer, self.buffer, self.steps, self.batch)

    def state_dict(self) -> dict[str, object]:
        """The network and its optimizer (the buffer is not kept: a resumed run refills it)."""
        return {"average": self.net.state_dict(), "average_optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, state: dict[str, object]) -> None:
        """Back from :meth:`state_dict`."""
        self.net.load_state_dict(state["average"])  # type: ignore[arg-type]
        self.optimizer.load_state_dict(state["average_optimizer"])  # type: ignore[arg-type]
