"""The self-play learner's network and losses (:mod:`krypenv.training.selfplay`), with its compact arithmetic.

:class:`Policy` is an MLP with a policy head over every action and a value head (the seat's return, or
with ``critic`` the return after each action).  :func:`mmd_targets` is MMD's closed-form step,
:func:`centered_mse` the fit to it, :func:`clipped_surrogate` PPO's proximal loss and :func:`sample` draws
one action per row.

**Compact arithmetic.**  A batch of a small preset touches few of the network's inputs and outputs: on
Krypkasino's ``tiny`` (2 players) 63 of the 344 observation columns are ever nonzero and 14 of the 105
actions ever legal.  An input column that is 0 in every row adds nothing to the first layer, and an
action illegal in every row has probability 0 (its logit is masked to −1e9 and ``exp`` of it underflows
to exactly 0), so :func:`compact` keeps the columns and actions a batch uses and
:meth:`Policy.evaluate` computes on those only (the weights' rows and columns picked inside the graph, so
the gradients of the others are exactly 0, as on the whole network).  The values are those of the whole
network up to the order of the sums' rounding; on ``tiny`` a forward pass costs a third of the
floating-point operations.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from krypenv.agents.mlp import save

__all__ = ["LANES", "Policy", "behaviour", "centered_mse", "clipped_surrogate", "compact", "mmd_targets",
           "padded", "probabilities", "sample", "used_columns"]


LANES = 16  # PyTorch's CPU softmax kernels vectorize rows of at least this many (experiments/selfplay_kernels.py)


def used_columns(x: torch.Tensor) -> torch.Tensor:
    """(D,) bool: the columns of ``x`` (N, D) that are nonzero in some row (on the CPU: any nonzero bit)."""
    if x.device.type == "cpu" and x.is_contiguous():
        bits = x.numpy().view(f"u{x.element_size()}")  # one OR over the rows, not ne(0).any(0)'s slow reduction
        return torch.from_numpy(np.bitwise_or.reduce(bits, axis=0) != 0)
    return x.ne(0).any(0)


def padded(legal: torch.Tensor) -> torch.Tensor:
    """The indices of the True entries of ``legal`` (A,), with the first False ones added up to LANES (or A)."""
    short = min(LANES, len(legal)) - int(legal.sum())
    if short > 0:
        legal = legal.clone()
        legal[(~legal).nonzero()[:short, 0]] = True
    return legal.nonzero()[:, 0]


def compact(obs: torch.Tensor, mask: torch.Tensor, cols: torch.Tensor | None = None,
            acts: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(observations on ``cols`` as floats, mask on ``acts``, cols, acts): what :meth:`Policy.evaluate` needs for the
    whole network's values at less cost.  By default ``cols`` are the columns nonzero in some row and ``acts`` the
    actions legal in some row (padded to LANES with illegal ones); given, they must hold those."""
    cols = used_columns(obs).nonzero()[:, 0] if cols is None else cols
    acts = padded(mask.any(0)) if acts is None else acts
    return obs.index_select(1, cols).float(), mask.index_select(1, acts), cols, acts


def probabilities(logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logp.exp()`` with the illegal entries exactly 0, without ``exp`` of their −1e9 (a slow path on the CPU)."""
    return torch.where(mask, logp, 0.0).exp().masked_fill(~mask, 0.0)


def _head(layer: nn.Linear, h: torch.Tensor, acts: torch.Tensor | None) -> torch.Tensor:
    """An output layer per action on ``h``: every action's, or those of ``acts`` only (their weight rows picked)."""
    if acts is None:
        return layer(h)
    return F.linear(h, layer.weight.index_select(0, acts), layer.bias.index_select(0, acts))


class Policy(nn.Module):
    """An MLP with a policy head (logits over every action) and a value head: the seat's return, or with ``critic``
    the return after each action (Q of every action; the value is then Σ π·Q)."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int, layers: int, critic: bool = False) -> None:
        super().__init__()
        sizes = [obs_size] + [hidden] * layers
        self.critic = critic
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(sizes))
        self.pi, self.v = nn.Linear(sizes[-1], n_actions), nn.Linear(sizes[-1], n_actions if critic else 1)

    def evaluate(self, obs: torch.Tensor, mask: torch.Tensor, cols: torch.Tensor | None = None,
                 acts: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, Any]:
        """(log-probabilities with the illegal actions at −∞ in effect, value, Q of every action or None); with
        ``cols`` and ``acts`` (:func:`compact`), ``obs`` holds those columns only, ``mask`` and the outputs those
        actions only."""
        h = obs.float()
        for k, layer in enumerate(self.hidden):
            w = layer.weight if k or cols is None else layer.weight.index_select(1, cols)
            h = torch.relu(F.linear(h, w, layer.bias))
        logp = torch.log_softmax(_head(self.pi, h, acts).masked_fill(~mask, -1e9), dim=-1)
        if self.critic:
            q = _head(self.v, h, acts).masked_fill(~mask, 0.0)
            return logp, (probabilities(logp, mask) * q).sum(-1), q
        return logp, self.v(h).squeeze(-1), None

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(log-probabilities with the illegal actions at −∞ in effect, value) of each observation."""
        logp, value, _ = self.evaluate(obs, mask)
        return logp, value

    def export(self, path: Path, card: dict[str, Any]) -> Path:
        """Write the policy as an ``mlp`` checkpoint (numpy arrays and a JSON card)."""
        hidden = [(layer.weight.detach().cpu().numpy(), layer.bias.detach().cpu().numpy()) for layer in self.hidden]
        policy = (self.pi.weight.detach().cpu().numpy(), self.pi.bias.detach().cpu().numpy())
        return save(path, {**card, "layers": len(self.hidden), "activation": "relu"}, hidden, policy)


def mmd_targets(net: Policy, magnet: Policy | None, obs: torch.Tensor, mask: torch.Tensor, eta: float, alpha: float,
                logit_range: float, chunk: int = 65536, cols: torch.Tensor | None = None,
                acts: torch.Tensor | None = None, q: torch.Tensor | None = None) -> torch.Tensor:
    """MMD's step at each state from the network's policy π and critic Q, or ``q`` given (rows, the mask's actions),
    a magnet ρ or uniform: log π' = (log π + η·Q + α·η·log ρ) / (1 + α·η) up to a constant, floored ``logit_range``
    below its best action (on ``cols`` and ``acts`` as :meth:`Policy.evaluate`)."""
    out = []
    given = q.split(chunk) if q is not None else [None] * len(obs.split(chunk))
    with torch.no_grad():
        for o, m, g in zip(obs.split(chunk), mask.split(chunk), given):
            logp, _, q_net = net.evaluate(o, m, cols, acts)
            q_step = q_net if g is None else g
            rho = magnet.evaluate(o, m, cols, acts)[0] if magnet is not None else torch.zeros_like(logp)
            y = (logp + eta * q_step + alpha * eta * rho) / (1.0 + alpha * eta)
            y = y.masked_fill(~m, -torch.inf)
            top = y.max(1, keepdim=True).values
            out.append(torch.maximum(y, top - logit_range).masked_fill(~m, 0.0))
    return torch.cat(out)


def behaviour(logp: torch.Tensor, mask: torch.Tensor, explore: float) -> torch.Tensor:
    """Log-probabilities of ``(1 − explore)·π + explore·uniform`` over each row's legal actions (−∞ off them)."""
    return torch.log((1.0 - explore) * probabilities(logp, mask) + explore * mask / mask.sum(1, keepdim=True))


def centered_mse(logp: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean squared difference of two log-policies over the legal actions, each centered (a constant apart)."""
    n = mask.sum(1, keepdim=True)
    a, b = torch.where(mask, logp, 0.0), torch.where(mask, target, 0.0)
    a, b = a - a.sum(1, keepdim=True) / n, b - b.sum(1, keepdim=True) / n
    return (torch.where(mask, a - b, 0.0).pow(2).sum(1) / n[:, 0]).mean()


def clipped_surrogate(log_ratio: torch.Tensor, adv: torch.Tensor, clip: float, normalize: bool) -> torch.Tensor:
    """PPO's clipped surrogate loss (the proximal step) of the sampled actions, advantages standardized or not."""
    if normalize:
        adv = (adv - adv.mean()) / (adv.std(correction=0) + 1e-8)
    ratio = log_ratio.exp()
    return torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)).mean()


def sample(logp: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """One action per row of log-probabilities (the legal ones ``mask``, if given): the first whose cumulative
    probability passes a uniform.

    The uniform is kept above 0 (``torch.rand`` can return 0, which would pick a leading action of
    probability 0, an illegal one; 1 in 2^24 draws, so within an hour of ``tiny``)."""
    cdf = (logp.exp() if mask is None else probabilities(logp, mask)).cumsum(1)
    u = (torch.rand(len(logp), 1, device=logp.device) * cdf[:, -1:]).clamp_min(torch.finfo(cdf.dtype).tiny)
    return (cdf < u).sum(1).clamp_max(logp.shape[1] - 1)
