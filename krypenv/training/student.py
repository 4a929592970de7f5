"""The student network of :mod:`krypenv.training.distill`: policy and value heads, trained in torch, saved as ``mlp``.

The network is the one that :mod:`krypenv.agents.mlp` plays in numpy (format 2), so what is
trained here is what every agent, tool and the web app plays, with no pickle in between::

    s       = observation × in_scale                          (each entry over its bound: in [0, 1])
    h       = MLP(s)                                          (hidden sizes, ReLU)
    logit_a = pi(h)[a] + score(f_a, h)                        (score: only with action features)
    score   = out(relu(hid(relu(inp(f_a) + ctx(h)))))          (one scorer shared by every legal action)
    value   = v(MLP_v(s))                                     (a separate critic, its own hidden sizes)

With Krypkasino's move features (``moves/2``, :mod:`krypenv.agents.krypkasino.move_features`)
this is exactly MaskablePPO's move scorer (:mod:`krypenv.agents.krypkasino.move_policy`), so a
``train.py`` checkpoint converts without loss (:func:`from_ppo`): expert iteration can start from
the PPO blueprint.  Without features (Kungsholmskille) it is a plain MLP policy.

Training (:func:`train`): the policy head learns the teacher's distribution ``softmax(values /
temperature)`` over each label's legal actions (:func:`policy_targets`) by exact cross-entropy,
the value head ``value_scale ×`` the value of the teacher's action (:func:`distill_loss`); Adam,
the learning rate annealed linearly to 0.

Action features are handed over sparsely, for the legal actions only: ``pairs`` (K, 2) rows of
(decision, action) and ``feats`` (K, F), so a batch of labels never holds (B, A, F) floats.
torch is imported by this module: import it where a network is trained.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from krypenv.agents.mlp import SCORER, MLPAgent, save
from krypenv.games import DEFAULT_GAME
from krypenv.training.common import training_part
from krypenv.training.labels import Labels

__all__ = ["Student", "TrainingData", "distill_loss", "entropy", "from_mlp", "from_ppo", "minibatch", "policy_shapes",
           "policy_targets", "to_policy", "train", "training_data"]

NEG = -1e9  # the logit of an illegal action (exp underflows to 0 in float32)
FEATURE_CHUNK = 8192  # labels whose move features are computed in one call (bounds that call's memory)


def _mlp(sizes: list[int], width: int) -> nn.ModuleList:
    """Dense layers from ``width`` inputs through ``sizes`` (each followed by ReLU when applied)."""
    return nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise([width, *sizes]))


def _apply(layers: nn.ModuleList, x: torch.Tensor) -> torch.Tensor:
    """``x`` through the layers, each followed by ReLU."""
    for layer in layers:
        x = torch.relu(layer(x))
    return x


class Student(nn.Module):
    """Policy and value network (module docstring); ``n_feats`` 0: no action scorer."""

    def __init__(self, obs_size: int, n_actions: int, sizes: list[int], value_sizes: list[int],
                 features: str | None = None, n_feats: int = 0, scorer_width: int = 64,
                 in_scale: np.ndarray | None = None) -> None:
        super().__init__()
        if (features is None) != (n_feats == 0):
            raise ValueError("a student scores actions from features exactly when it names them (features, n_feats)")
        self.obs_size, self.n_actions, self.features = obs_size, n_actions, features
        self.sizes, self.value_sizes, self.scorer_width = list(sizes), list(value_sizes), scorer_width
        scale = np.ones(obs_size, np.float32) if in_scale is None else np.asarray(in_scale, np.float32)
        self.register_buffer("in_scale", torch.as_tensor(scale))
        self.body = _mlp(self.sizes, obs_size)
        width = self.sizes[-1] if self.sizes else obs_size
        self.pi = nn.Linear(width, n_actions)
        if features is not None:
            self.ctx, self.inp = nn.Linear(width, scorer_width), nn.Linear(n_feats, scorer_width)
            self.hid, self.out = nn.Linear(scorer_width, scorer_width), nn.Linear(scorer_width, 1)
        self.critic = _mlp(self.value_sizes, obs_size)
        self.v = nn.Linear(self.value_sizes[-1] if self.value_sizes else obs_size, 1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor, pairs: torch.Tensor | None = None,
                feats: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits (B, A), illegal actions at −1e9; values (B,)); ``pairs``/``feats``: the legal actions' features."""
        s = obs.float() * self.in_scale
        h = _apply(self.body, s)
        logits = self.pi(h)
        if self.features is not None:
            if pairs is None or feats is None:
                raise ValueError(f"this student scores actions from features {self.features}: none given")
            b, a = pairs[:, 0], pairs[:, 1]
            z = torch.relu(self.inp(feats) + self.ctx(h)[b])
            score = self.out(torch.relu(self.hid(z))).squeeze(-1)
            logits = logits.index_put((b, a), score, accumulate=True)
        value = self.v(_apply(self.critic, s)).squeeze(-1)
        return logits.masked_fill(~mask, NEG), value

    def export(self, path: str | Path, card: dict[str, Any]) -> Path:
        """Write the network as an ``mlp`` checkpoint (format 2: scaling, scorer, value head)."""
        arr = lambda t: t.detach().cpu().numpy()
        pair = lambda layer: (arr(layer.weight), arr(layer.bias))
        extra: dict[str, np.ndarray] = {"in_scale": arr(self.in_scale), "v_w": arr(self.v.weight),
                                        "v_b": arr(self.v.bias)}
        for k, layer in enumerate(self.critic):
            extra[f"vw{k}"], extra[f"vb{k}"] = pair(layer)
        info: dict[str, Any] = {"layers": len(self.body), "activation": "relu", "obs_size": self.obs_size,
                                "n_actions": self.n_actions, "value_layers": len(self.critic)}
        if self.features is not None:
            info |= {"action_features": self.features, "scorer_width": self.scorer_width}
            for k in SCORER:
                extra[f"{k}_w"], extra[f"{k}_b"] = pair(getattr(self, k))
        return save(path, {**card, **info}, [pair(layer) for layer in self.body], pair(self.pi), extra)


def from_mlp(path: str | Path) -> tuple[Student, dict[str, Any]]:
    """The student stored in an ``mlp`` checkpoint (format 2 with a value head), and its card."""
    net = MLPAgent(path).net
    if net.value is None:
        raise ValueError(f"mlp checkpoint {path} has no value head: not a student to go on training")
    feats = net.scorer["inp"][0].shape[1] if net.scorer else 0
    student = Student(net.obs_size, net.n_actions, [w.shape[0] for w, _ in net.hidden],
                      [w.shape[0] for w, _ in net.critic], net.features, feats,
                      int(net.card.get("scorer_width", 64)), net.in_scale)
    layers = [*zip(student.body, net.hidden), (student.pi, net.policy), *zip(student.critic, net.critic),
              (student.v, net.value)]
    layers += [(getattr(student, k), net.scorer[k]) for k in net.scorer]
    with torch.no_grad():
        for layer, (w, b) in layers:
            layer.weight.copy_(torch.as_tensor(w))
            layer.bias.copy_(torch.as_tensor(b))
    return student, net.card


def from_ppo(path: str | Path, game: str = DEFAULT_GAME) -> tuple[Student, dict[str, Any]]:
    """The student equal to a ``train.py`` checkpoint of ``game`` (Krypkasino's move scorer, or a plain MLP policy of
    either game) and the checkpoint's metadata; loading it unpickles (trusted files only: :mod:`krypenv.agents.ppo`)."""
    from krypenv import agents

    agent = agents.load(f"ppo:{path}", game=game)
    pol = agent.policy
    body, critic, heads = _parts(pol)
    if getattr(agent, "features", None) is not None:  # Krypkasino's move scorer
        from krypenv.agents.krypkasino.move_features import N_FEATS

        scale = pol.pi_features_extractor.inv_high[:agent.obs_dim].cpu().numpy()
        student = Student(agent.obs_dim, heads["pi"].out_features, _widths(body), _widths(critic), agent.features,
                          N_FEATS, heads["out"].in_features, scale)
    else:
        if any(not isinstance(m, (nn.Linear, nn.ReLU)) for m in [*pol.mlp_extractor.policy_net,
                                                                  *pol.mlp_extractor.value_net]):
            raise ValueError(f"{path}: a policy with other layers than Linear and ReLU; a student cannot hold it")
        (scale,) = list(pol.pi_features_extractor.buffers())  # one over each entry's bound (ScaledInput, KilleInput)
        student = Student(body[0].in_features, heads["pi"].out_features, _widths(body), _widths(critic),
                          in_scale=scale.cpu().numpy())
    _copy([(mine, theirs) for theirs, mine in _pairs(pol, student)])
    return student, dict(agent.meta)


def _parts(policy: Any) -> tuple[list[nn.Linear], list[nn.Linear], dict[str, nn.Linear]]:
    """A ``train.py`` policy's layers: its body, its critic, and its heads by the student's names (``pi`` and, for
    Krypkasino's move scorer, ``ctx``, ``inp``, ``hid``, ``out``); the value head is ``policy.value_net``."""
    linear = lambda seq: [layer for layer in seq if isinstance(layer, nn.Linear)]
    m = policy.mlp_extractor
    if hasattr(m, "out"):  # Krypkasino's move scorer (MovePolicy)
        return linear(m.body), linear(m.critic), {"pi": m.bias, "ctx": m.ctx, "inp": m.inp, "hid": m.hidden,
                                                  "out": m.out}
    return linear(m.policy_net), linear(m.value_net), {"pi": policy.action_net}


def _widths(layers: list[nn.Linear]) -> list[int]:
    """The output widths of the layers."""
    return [layer.out_features for layer in layers]


def _pairs(policy: Any, student: Student) -> list[tuple[nn.Linear, nn.Linear]]:
    """(the policy's layer, the student's) for every layer: body and critic by position, the heads by name, the
    value head last."""
    body, critic, heads = _parts(policy)
    return [*zip(body, student.body), *((layer, getattr(student, k)) for k, layer in heads.items()),
            *zip(critic, student.critic), (policy.value_net, student.v)]


def policy_shapes(policy: Any) -> dict[str, Any]:
    """A ``train.py`` policy's critic sizes and move-scorer width (None without a scorer): the network hooks'
    keywords."""
    _, critic, heads = _parts(policy)
    return {"critic_sizes": _widths(critic), "score_width": heads["out"].in_features if "out" in heads else None}


def to_policy(student: Student, policy: Any, value_factor: float = 1.0) -> None:
    """Copy the student into a ``train.py`` policy of its shapes, the inverse of :func:`from_ppo`: the same logits.

    The policy scales its input by its own extractor's factors, so the student's ``in_scale`` is folded into the
    layers that read the input (weight columns times ``in_scale / factor``); the value head is multiplied by
    ``value_factor`` (a change of units).  ValueError naming the first layer whose shape differs."""
    if not student.body:
        raise ValueError("a student without hidden layers cannot start a train.py network (it has at least one)")
    body, critic, heads = _parts(policy)
    if student.features is not None and "out" not in heads:
        raise ValueError(f"the student scores actions from features {student.features}; the network does not")
    if student.features is None and "out" in heads:
        raise ValueError("the network scores actions from features; the student reads the observation only")
    if len(body) != len(student.body) or len(critic) != len(student.critic):
        raise ValueError(f"the student has hidden layers {student.sizes} and critic {student.value_sizes}; the "
                         f"network {_widths(body)} and {_widths(critic)}")
    pairs = _pairs(policy, student)
    for name, (theirs, mine) in zip(_names(policy, pairs), pairs):
        if theirs.weight.shape != mine.weight.shape:
            raise ValueError(f"the student's layer for {name} is {tuple(mine.weight.shape)}, the network's "
                             f"{tuple(theirs.weight.shape)}")
    _copy(pairs)
    factor = next(iter(policy.pi_features_extractor.buffers()))[:student.obs_size]  # what the policy multiplies by
    fold = student.in_scale / factor
    with torch.no_grad():
        for layer in (body[0], critic[0] if critic else policy.value_net):  # the layers that read the input
            layer.weight[:, :student.obs_size] *= fold
        policy.value_net.weight *= value_factor
        policy.value_net.bias *= value_factor


def _names(policy: Any, pairs: list[tuple[nn.Linear, nn.Linear]]) -> list[str]:
    """The policy's own names of the first layer of each pair (for messages)."""
    names = {id(module): name for name, module in policy.named_modules()}
    return [names[id(theirs)] for theirs, _ in pairs]


def _copy(pairs: list[tuple[nn.Linear, nn.Linear]]) -> None:
    """Copy each second layer's weights into the first."""
    with torch.no_grad():
        for mine, theirs in pairs:
            mine.weight.copy_(theirs.weight)
            mine.bias.copy_(theirs.bias)


# --------------------------------------------------------------------------- learning from labels
def policy_targets(values: np.ndarray, mask: np.ndarray, temperature: float) -> np.ndarray:
    """(N, A) the teacher's distribution ``softmax(values / temperature)`` over each label's legal actions."""
    z = np.where(mask, values / temperature, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return (p / p.sum(axis=1, keepdims=True)).astype(np.float32)


def entropy(p: np.ndarray) -> np.ndarray:
    """(N,) the entropy in nats of each row of distributions ``p`` (0 · log 0 = 0)."""
    return -(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=1)


def distill_loss(logits: Any, value: Any, target: Any, target_value: Any, value_coef: float) -> tuple[Any, Any, Any]:
    """(total, policy, value) losses: cross-entropy of the student's policy towards ``target`` and squared error of
    its value, means over the batch; illegal actions (logit −1e9, target 0) add nothing."""
    logp = torch.log_softmax(logits, dim=-1)
    policy = -(target * logp).sum(-1).mean()
    value_loss = 0.5 * (value - target_value).pow(2).mean()
    return policy + value_coef * value_loss, policy, value_loss


@dataclass
class TrainingData:
    """Labels ready for the student: observations, masks, targets and the legal actions' features (CSR rows)."""

    obs: np.ndarray
    mask: np.ndarray
    target: np.ndarray
    target_value: np.ndarray
    starts: np.ndarray | None = None  # label n's feature rows are feats[starts[n]:starts[n + 1]]
    pairs: np.ndarray | None = None  # (K,) the action of each feature row
    feats: np.ndarray | None = None  # (K, F)


def training_data(args: Any, labels: Labels, core: Any, features: bool) -> TrainingData:
    """The targets of ``labels`` and, for a feature-reading student, their legal actions' features (``args``: the
    run's ``temperature``, ``value_scale`` and ``game``)."""
    part = training_part(args.game)
    target = policy_targets(labels.values, labels.mask, args.temperature)
    taught = labels.values[np.arange(len(labels)), labels.teacher.astype(np.int64)]
    data = TrainingData(labels.obs, labels.mask, target, (args.value_scale * taught).astype(np.float32))
    if features:
        pairs, feats = [], []
        for lo in range(0, len(labels), FEATURE_CHUNK):
            f = part.label_features(core, labels.state[lo:lo + FEATURE_CHUNK])
            b, a = np.nonzero(labels.mask[lo:lo + FEATURE_CHUNK])
            pairs.append(a.astype(np.int16))
            feats.append(f[b, a])
        counts = labels.mask.sum(axis=1)
        data.starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        data.pairs, data.feats = np.concatenate(pairs), np.concatenate(feats)
    return data


def minibatch(data: TrainingData, idx: np.ndarray) -> tuple[Any, ...]:
    """Tensors of labels ``idx``: obs, mask, pairs (K, 2) of (row in the batch, action), feats, targets."""
    t = torch.as_tensor
    pairs = feats = None
    if data.starts is not None:
        lo, hi = data.starts[idx], data.starts[idx + 1]
        rows = np.repeat(np.arange(idx.size), hi - lo)
        k = np.arange(rows.size) - np.repeat(np.cumsum(hi - lo) - (hi - lo), hi - lo) + np.repeat(lo, hi - lo)
        pairs = t(np.stack([rows, data.pairs[k].astype(np.int64)], axis=1))
        feats = t(data.feats[k])
    return (t(data.obs[idx]), t(data.mask[idx]), pairs, feats, t(data.target[idx]), t(data.target_value[idx]))


def train(student: Student, data: TrainingData, args: Any, rng: np.random.Generator) -> dict[str, float]:
    """``args.epochs`` passes of Adam over the data, the learning rate annealed to 0; the last epoch's mean losses."""
    opt = torch.optim.Adam(student.parameters(), lr=args.learning_rate)
    n = data.obs.shape[0]
    steps = args.epochs * -(-n // args.batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 - s / steps)
    stats: dict[str, float] = {}
    for _ in range(args.epochs):
        order = rng.permutation(n)
        sums, count = np.zeros(3), 0
        for lo in range(0, n, args.batch_size):
            idx = order[lo:lo + args.batch_size]
            obs, mask, pairs, feats, target, target_value = minibatch(data, idx)
            logits, value = student(obs, mask, pairs, feats)
            loss, pol, val = distill_loss(logits, value, target, target_value, args.value_coef)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
            opt.step()
            sched.step()
            sums += [float(loss.detach()) * idx.size, float(pol.detach()) * idx.size, float(val.detach()) * idx.size]
            count += idx.size
        # the teacher's own cross-entropy is the floor of the policy loss: its entropy
        stats = dict(zip(("loss", "policy_loss", "value_loss"), (sums / count).tolist()))
    p = data.target
    stats["target_entropy"] = float(entropy(p).mean())
    return stats
