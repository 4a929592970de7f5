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
from pathlib import Path
from typing import Any

import numpy as np
from krypenv.agents.base import register
from krypenv.agents.checkpoint import SHIPPED

from krypenv.agent_api import DecisionBatch

__all__ = ["FORMAT", "MLPAgent", "load", "save"]

FORMAT = "krypenv-mlp/1"
ACTIVATIONS = ("relu", "tanh")


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
         policy: tuple[np.ndarray, np.ndarray]) -> Path:
    """Write a checkpoint: ``hidden`` is the (weight (out, in), bias) of each hidden layer, ``policy`` the logits'."""
    arrays = {"card": np.array(json.dumps({"format": FORMAT, **card}, sort_keys=True))}
    for k, (w, b) in enumerate(hidden):
        arrays[f"w{k}"], arrays[f"b{k}"] = np.asarray(w, np.float32), np.asarray(b, np.float32)
    arrays["pi_w"], arrays["pi_b"] = np.asarray(policy[0], np.float32), np.asarray(policy[1], np.float32)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    return path


class MLPAgent:
    """A policy network from an ``mlp`` checkpoint (see the module docstring)."""

    name = "mlp"

    def __init__(self, path: str | Path, greedy: bool = False) -> None:
        self.path, self.greedy = Path(path), bool(greedy)
        try:
            with np.load(self.path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError) as e:
            raise ValueError(f"mlp checkpoint {self.path}: not a readable .npz file ({e})") from e
        try:
            self.card = json.loads(str(arrays.pop("card")))
        except (KeyError, json.JSONDecodeError) as e:
            raise ValueError(f"mlp checkpoint {self.path}: no card (JSON member 'card')") from e
        found = self.card.get("format") if isinstance(self.card, dict) else None
        if found != FORMAT:
            raise ValueError(f"mlp checkpoint {self.path}: format {found!r}, expected {FORMAT!r}")
        self.trained_game, self.players = str(self.card.get("game")), int(self.card.get("players", 0))
        self.activation = self.card.get("activation", "relu")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"mlp checkpoint {self.path}: activation {self.activation!r} is not one of {ACTIVATIONS}")
        layers = int(self.card.get("layers", -1))
        try:
            self.hidden = [(arrays[f"w{k}"], arrays[f"b{k}"]) for k in range(layers)]
            self.policy = (arrays["pi_w"], arrays["pi_b"])
        except KeyError as e:
            raise ValueError(f"mlp checkpoint {self.path}: missing array {e}") from e
        width = int(self.card.get("obs_size", -1))
        for w, b in [*self.hidden, self.policy]:
            if w.ndim != 2 or b.shape != (w.shape[0],) or w.shape[1] != width:
                raise ValueError(f"mlp checkpoint {self.path}: layer shapes do not chain ({w.shape}, {b.shape})")
            width = w.shape[0]
        if width != int(self.card.get("n_actions", -1)):
            raise ValueError(f"mlp checkpoint {self.path}: {width} logits for {self.card.get('n_actions')} actions")

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
        h = np.asarray(batch.obs, np.float32)
        for w, b in self.hidden:
            h = h @ w.T + b
            h = np.maximum(h, 0.0) if self.activation == "relu" else np.tanh(h)
        logits = (h @ self.policy[0].T + self.policy[1]).astype(np.float64)
        legal = np.asarray(batch.mask) != 0
        if not legal.any(axis=1).all():
            raise ValueError(f"mlp agent {self.path}: decision {int(np.flatnonzero(~legal.any(axis=1))[0])} of the "
                             "batch has no legal action")
        logits = np.where(legal, logits, -np.inf)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """An action per decision: drawn from the policy with one uniform of the game's stream, or its mode."""
        p = self.action_probabilities(batch)
        if self.greedy:
            return p.argmax(axis=1).astype(np.int64)
        u = batch.uniforms(1)[:, 0]
        cdf = np.cumsum(p, axis=1)
        out = (cdf < u[:, None] * cdf[:, -1:]).sum(axis=1)
        legal = np.asarray(batch.mask) != 0
        return np.array([a if legal[i, a] else int(np.flatnonzero(legal[i])[-1]) for i, a in enumerate(out)],
                        np.int64)


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
