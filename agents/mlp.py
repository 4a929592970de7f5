"""``mlp:PATH``: a policy network stored without pickle, played from its seat's observation and mask (any game).

A checkpoint is one NumPy ``.npz`` file (read with ``allow_pickle=False``: no code runs when it is
loaded, so a file from anywhere is safe to load) holding the layers of a multilayer perceptron and
its card, a JSON text in the member ``card``::

    {"format": "krypenv-mlp/1", "game": "krypkasino", "players": 2, "preset": "standard",
     "obs_size": 344, "n_actions": 105, "layers": 2, "activation": "relu",
     "trained": {...: the command, steps, seconds, device, date, what it was measured at}}

and the arrays ``w0, b0, w1, b1, …`` (hidden layers) and ``pi_w, pi_b`` (the policy's logits).  The
network reads the observation vector of the game's envs (cast to float) and the policy is the
softmax of its logits over the legal actions.  :mod:`krypenv.training.selfplay` writes these files.

**Format 2** (``"format": "krypenv-mlp/2"``, written by :mod:`krypenv.training.distill` and
:mod:`krypenv.training.student`) adds three optional parts, each named in the card:

* ``in_scale`` (D,): the observation is multiplied by it first (e.g. one over each entry's bound);
* ``"action_features": "moves/2"`` (a registered id, :data:`ACTION_FEATURES`; Krypkasino's move
  features, :mod:`krypenv.agents.krypkasino.move_features`) with ``"scorer_width": W``: every legal
  action's logit gets a score from one shared scorer, ``out(relu(hid(relu(inp(f_a) + ctx(h)))))``
  (arrays ``ctx_w, ctx_b, inp_w, inp_b, hid_w, hid_b, out_w, out_b``; ``h`` the last hidden layer);
* ``"value_layers": K`` with ``"value_unit"`` (what a value means): a separate critic MLP on the
  scaled observation, arrays ``vw0, vb0, …`` and ``v_w, v_b`` (:meth:`MLPAgent.state_values`).

Playing: at each decision the agent draws its action from that distribution with one uniform of
the game's stream (``batch.uniforms``), so games stay reproducible from their seeds; with
``mlp:PATH,greedy=true`` it plays the most probable legal action instead.  Its exact distribution is
:meth:`MLPAgent.action_probabilities` (what exact exploitability reads, :mod:`krypenv.openspiel.exploit`).
The agent refuses (ValueError naming the file) a file of another format, game, player count or
observation layout, and a table of another player count.  ``PATH`` is a file, or ``NAME``: the shipped
``checkpoints/NAME.npz``.  numpy only: no torch at play time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from krypenv.agents.base import register
from krypenv.agents.checkpoint import SHIPPED

from krypenv.agent_api import DecisionBatch

__all__ = ["ACTION_FEATURES", "FORMAT", "FORMAT2", "MLPAgent", "Network", "blas_threads", "draw", "load", "save"]

FORMAT = "krypenv-mlp/1"
FORMAT2 = "krypenv-mlp/2"  # format 1 plus input scaling, an action scorer and a value head (module docstring)
ACTIVATIONS = ("relu", "tanh")
SCORER = ("ctx", "inp", "hid", "out")  # the action scorer's layers (format 2)
# action-feature layouts by id: (core, envs) -> (B, A, F) float32; a game's agents package registers its own
ACTION_FEATURES: dict[str, Callable[[Any, np.ndarray], np.ndarray]] = {}


def resolve(spec: str) -> Path:
    """The file of an ``mlp:`` spec: a shipped name (no separator, no suffix) or a path; ValueError if missing."""
    if not spec:
        raise ValueError("mlp agent needs a checkpoint: mlp:PATH (a .npz file) or mlp:NAME (shipped)")
    path = Path(spec)
    if "/" not in spec and "\\" not in spec and not path.suffix:
        path = SHIPPED / f"{spec}.npz"
    if not path.is_file():
        raise ValueError(f"mlp checkpoint {spec!r}: no such file")
    return path


def save(path: str | Path, card: dict[str, Any], hidden: list[tuple[np.ndarray, np.ndarray]],
         policy: tuple[np.ndarray, np.ndarray], extra: dict[str, np.ndarray] | None = None) -> Path:
    """Write a checkpoint: ``hidden`` is the (weight (out, in), bias) of each hidden layer, ``policy`` the logits';
    ``extra`` the arrays of format 2's parts (the card then says ``krypenv-mlp/2`` and names them)."""
    fmt = FORMAT2 if extra else FORMAT
    arrays = {"card": np.array(json.dumps({**card, "format": fmt}, sort_keys=True))}
    for k, (w, b) in enumerate(hidden):
        arrays[f"w{k}"], arrays[f"b{k}"] = np.asarray(w, np.float32), np.asarray(b, np.float32)
    arrays["pi_w"], arrays["pi_b"] = np.asarray(policy[0], np.float32), np.asarray(policy[1], np.float32)
    for k, v in (extra or {}).items():
        arrays[k] = np.asarray(v, np.float32)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    return path


@lru_cache(maxsize=1)
def _blas_controller() -> Any:
    """threadpoolctl's controller of the process's thread pools (found once), or None without threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


@contextmanager
def blas_threads(threads: int, required: bool = False) -> Iterator[None]:
    """numpy's BLAS with ``threads`` threads inside the block, the process's setting restored after it.

    threadpoolctl (the ``rl`` extra) sets it; without threadpoolctl nothing changes, or, when ``required``,
    an ImportError says what to install.
    """
    controller = _blas_controller()
    if controller is None:
        if required:
            raise ImportError("numpy's BLAS threads are set through threadpoolctl: pip install 'krypenv[rl]' "
                              "(or threadpoolctl)")
        yield
        return
    with controller.limit(limits=threads, user_api="blas"):
        yield


def _dense(x: np.ndarray, layers: list[tuple[np.ndarray, np.ndarray]], activation: str) -> np.ndarray:
    """``x`` through dense layers, each followed by the activation."""
    for w, b in layers:
        x = x @ w.T + b
        x = np.maximum(x, 0.0) if activation == "relu" else np.tanh(x)
    return x


def legal_rows(feats: np.ndarray, b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The (L, F) features of the legal actions ``(b, a)`` (``np.nonzero`` of a mask): gathered from (B, A, F)
    features, or ``feats`` itself when it holds only those rows already (a game's legal-features function, such as
    :func:`krypenv.agents.krypkasino.move_features.legal_features`)."""
    if feats.ndim == 2:
        if feats.shape[0] != b.shape[0]:
            raise ValueError(f"{feats.shape[0]} rows of legal-action features for {b.shape[0]} legal actions")
        return feats
    return feats[b, a]


class Network:
    """The arrays of a checkpoint as a network: checked shapes, logits and values in numpy."""

    def __init__(self, path: Path, card: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        self.path, self.card = path, card
        fmt = card.get("format")
        if fmt not in (FORMAT, FORMAT2):
            raise ValueError(f"mlp checkpoint {path}: format {fmt!r}, expected {FORMAT!r} or {FORMAT2!r}")
        self.activation = card.get("activation", "relu")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"mlp checkpoint {path}: activation {self.activation!r} is not one of {ACTIVATIONS}")
        self.obs_size, self.n_actions = int(card.get("obs_size", -1)), int(card.get("n_actions", -1))
        self.features = card.get("action_features") if fmt == FORMAT2 else None
        self.value_layers = int(card.get("value_layers", 0)) if fmt == FORMAT2 else 0
        if self.features is not None and self.features not in ACTION_FEATURES:
            raise ValueError(f"mlp checkpoint {path}: action features {self.features!r} are not known here "
                             f"(known: {', '.join(sorted(ACTION_FEATURES)) or 'none'})")
        try:
            self.hidden = [(arrays[f"w{k}"], arrays[f"b{k}"]) for k in range(int(card.get("layers", -1)))]
            self.policy = (arrays["pi_w"], arrays["pi_b"])
            self.in_scale = arrays.get("in_scale") if fmt == FORMAT2 else None
            self.scorer = {k: (arrays[f"{k}_w"], arrays[f"{k}_b"]) for k in SCORER} if self.features else {}
            self.critic = [(arrays[f"vw{k}"], arrays[f"vb{k}"]) for k in range(self.value_layers)]
            self.value = (arrays["v_w"], arrays["v_b"]) if self.value_layers else None
        except KeyError as e:
            raise ValueError(f"mlp checkpoint {path}: missing array {e}") from e
        width = self._chain(self.hidden + [self.policy], self.obs_size)
        if width != self.n_actions:
            raise ValueError(f"mlp checkpoint {path}: {width} logits for {self.n_actions} actions")
        if self.in_scale is not None and self.in_scale.shape != (self.obs_size,):
            raise ValueError(f"mlp checkpoint {path}: in_scale has shape {self.in_scale.shape}, not ({self.obs_size},)")
        if self.scorer:
            body = self.hidden[-1][0].shape[0] if self.hidden else self.obs_size
            w = int(card.get("scorer_width", -1))
            self._chain([self.scorer["ctx"]], body, w)
            self._chain([self.scorer["hid"], self.scorer["out"]], w, 1)
            if self.scorer["inp"][0].shape[0] != w or self.scorer["inp"][1].shape != (w,):
                raise ValueError(f"mlp checkpoint {path}: the scorer's input layer is not {w} wide")
        if self.value is not None and self._chain(self.critic + [self.value], self.obs_size) != 1:
            raise ValueError(f"mlp checkpoint {path}: the value head has more than one output")

    def _chain(self, layers: list[tuple[np.ndarray, np.ndarray]], width: int, end: int | None = None) -> int:
        """The output width of dense layers read from ``width`` inputs; ValueError when they do not chain."""
        for w, b in layers:
            if w.ndim != 2 or b.shape != (w.shape[0],) or w.shape[1] != width:
                raise ValueError(f"mlp checkpoint {self.path}: layer shapes do not chain ({w.shape}, {b.shape})")
            width = w.shape[0]
        if end is not None and width != end:
            raise ValueError(f"mlp checkpoint {self.path}: layers end {width} wide, not {end}")
        return width

    def scaled(self, obs: np.ndarray) -> np.ndarray:
        """The network's input: the observation as float32, times ``in_scale`` when the file has one."""
        x = np.asarray(obs, np.float32)
        return x * self.in_scale if self.in_scale is not None else x

    def logits(self, obs: np.ndarray, mask: np.ndarray, feats: np.ndarray | None = None) -> np.ndarray:
        """(B, A) float64 logits, −inf at illegal actions; ``feats`` when the network scores actions: (B, A, F), or
        (L, F) the L legal actions' in the order of ``np.nonzero(mask)`` (what the scorer reads of the first)."""
        h = _dense(self.scaled(obs), self.hidden, self.activation)
        logits = (h @ self.policy[0].T + self.policy[1]).astype(np.float64)
        legal = np.asarray(mask) != 0
        if self.scorer:
            if feats is None:
                raise ValueError(f"mlp checkpoint {self.path} scores actions from features {self.features}: none given")
            b, a = np.nonzero(legal)
            (cw, cb), (iw, ib), (hw, hb), (ow, ob) = (self.scorer[k] for k in SCORER)
            z = np.maximum(np.asarray(legal_rows(feats, b, a), np.float32) @ iw.T + ib + (h @ cw.T + cb)[b], 0.0)
            z = np.maximum(z @ hw.T + hb, 0.0)
            logits[b, a] += (z @ ow.T + ob)[:, 0]
        return np.where(legal, logits, -np.inf)

    def values(self, obs: np.ndarray) -> np.ndarray:
        """(B,) the value head's estimates (the card's ``value_unit``); ValueError when the file has none."""
        if self.value is None:
            raise ValueError(f"mlp checkpoint {self.path} has no value head")
        h = _dense(self.scaled(obs), self.critic, self.activation)
        return (h @ self.value[0].T + self.value[1]).astype(np.float64)[:, 0]


class MLPAgent:
    """A policy network from an ``mlp`` checkpoint (see the module docstring)."""

    name = "mlp"

    def __init__(self, path: str | Path, greedy: bool = False) -> None:
        self.path, self.greedy = Path(path), bool(greedy)
        try:
            with np.load(self.path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError, EOFError) as e:
            raise ValueError(f"mlp checkpoint {self.path}: not a readable .npz file ({e})") from e
        try:
            self.card = json.loads(str(arrays.pop("card")))
        except (KeyError, json.JSONDecodeError) as e:
            raise ValueError(f"mlp checkpoint {self.path}: no card (JSON member 'card')") from e
        if not isinstance(self.card, dict):
            raise ValueError(f"mlp checkpoint {self.path}: the card is not a JSON object")
        self.trained_game, self.players = str(self.card.get("game")), int(self.card.get("players", 0))
        self.net = Network(self.path, self.card, arrays)
        self.activation, self.hidden, self.policy = self.net.activation, self.net.hidden, self.net.policy

    def _check(self, batch: DecisionBatch) -> None:
        """ValueError unless the batch is of the checkpoint's game, player count and observation layout."""
        game = getattr(self, "game", self.trained_game)  # agents.load sets the game it was loaded for
        if game != self.trained_game:
            raise ValueError(f"mlp checkpoint {self.path} was trained on {self.trained_game}, not {game}")
        players = int(batch.rules.players)
        if players != self.players:
            raise ValueError(f"mlp checkpoint {self.path} was trained for {self.players} players, not {players}")
        if batch.obs.shape[1] != int(self.card["obs_size"]) or batch.mask.shape[1] != int(self.card["n_actions"]):
            raise ValueError(f"mlp checkpoint {self.path}: observations of {batch.obs.shape[1]} and masks of "
                             f"{batch.mask.shape[1]} entries, the network reads {self.card['obs_size']} and "
                             f"{self.card['n_actions']} (another game?)")

    def action_probabilities(self, batch: DecisionBatch) -> np.ndarray:
        """(B, A) the policy's probability of every action at each decision (0 for illegal ones)."""
        self._check(batch)
        legal = np.asarray(batch.mask) != 0
        if not legal.any(axis=1).all():
            raise ValueError(f"mlp agent {self.path}: decision {int(np.flatnonzero(~legal.any(axis=1))[0])} of the "
                             "batch has no legal action")
        feats = ACTION_FEATURES[self.net.features](batch.core, np.asarray(batch.envs, np.int64)) \
            if self.net.features else None
        logits = self.net.logits(batch.obs, legal, feats)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def state_values(self, batch: DecisionBatch) -> np.ndarray:
        """(B,) the value head's estimate for each decision's seat (the card's ``value_unit``)."""
        self._check(batch)
        return self.net.values(batch.obs)

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """An action per decision: drawn from the policy with one uniform of the game's stream, or its mode."""
        p = self.action_probabilities(batch)
        if self.greedy:
            return p.argmax(axis=1).astype(np.int64)
        return draw(p, batch)


def policy_draw(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Each row's action drawn from its probabilities by the uniform ``u[row]`` in [0, 1] (the inverse of the row's
    CDF, scaled to the row's sum): never past the last action, as ``u · sum < sum`` is false for the last entry."""
    cdf = np.cumsum(probs, axis=1)
    return (cdf < u[:, None] * cdf[:, -1:]).sum(axis=1)


def draw(p: np.ndarray, batch: DecisionBatch) -> np.ndarray:
    """An action per decision drawn from ``p`` (B, A) with one uniform of each decision's game stream (always legal)."""
    out = policy_draw(p, batch.uniforms(1)[:, 0])
    legal = np.asarray(batch.mask) != 0
    return np.array([a if legal[i, a] else int(np.flatnonzero(legal[i])[-1]) for i, a in enumerate(out)], np.int64)


def load(spec: str = "", greedy: bool = False) -> MLPAgent:
    """The agent of an ``mlp:PATH`` (or ``mlp:NAME``) spec."""
    path, _, opts = spec.partition(",")
    if opts:
        key, _, value = opts.partition("=")
        if key != "greedy" or value not in ("true", "false", "1", "0"):
            raise ValueError(f"mlp: unknown option {opts!r}; the only option is greedy=true|false")
        greedy = value in ("true", "1")
    return MLPAgent(resolve(path), greedy=greedy)


register("mlp", load, "a policy network without pickle (krypenv.training.selfplay), from a checkpoint: mlp:PATH or "
         "mlp:NAME of a shipped one; samples its policy (greedy=true: the most probable action)", takes_path=True,
         games=None)
