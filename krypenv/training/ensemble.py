"""An ensemble of ``mlp`` students written as one network: the weighted mean of their logits, exactly.

    python -m krypenv.training.ensemble runs/ens.npz checkpoints/exit-2p-endgame.npz checkpoints/exit-2p-wide.npz
    python -m krypenv.training.ensemble runs/ens.npz A.npz B.npz --weights 2,1      # weights, summing to any total
    krypenv eval --agents "mlp:runs/ens.npz,greedy=true,pimc" --deals 1000

The members must be format-2 files (``krypenv-mlp/2``, :mod:`krypenv.agents.mlp`) of one game, player count, preset,
observation layout, action features, activation and depth.  The merged file is an ordinary format-2 network that the
``mlp`` agent plays with numpy alone, so an ensemble needs no new agent, and its logits are
``sum_i w_i * logits_i`` (``w`` normalised to sum to 1) up to float32 rounding:

* **hidden layers**: the first layers stacked (each member reads the same input), the later ones block-diagonal, so
  the merged hidden layer is the members' hidden layers side by side and no member reads another's units;
* **the policy's logits and the action scorer's output**: each member's rows scaled by its weight and concatenated,
  the biases summed with the weights;
* **the action scorer**: its feature layer stacked (every member reads the same move features), its context and
  hidden layers block-diagonal;
* **the value head**, when every member has one of one depth and its card names the same unit: merged the same way
  (the weighted mean of values); otherwise the ensemble has none and the card says why;
* **input scaling**: kept when the members share it; otherwise folded into each member's first layer (``W * s``),
  the merged network then scales by ones.

The card records every member (file, SHA-256, weight and its own ``trained`` card), the command, machine and date.
A block-diagonal layer stores zeros, and numpy multiplies them too: an ensemble of K members costs K times a member's
first layers (in memory and in arithmetic) and K^2 times its later ones, where K separate members would cost K times.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from krypenv.agents.mlp import FORMAT2, MLPAgent, save

__all__ = ["MATCHED", "main", "merge", "parse_weights"]

MATCHED = ("game", "players", "preset", "obs_size", "n_actions", "action_features", "activation", "layers")
MAX_MEMBERS = 16  # a bound on what one command can ask for: the merged layers grow with the members' count squared


def parse_weights(text: str, count: int) -> np.ndarray:
    """``"2,1,1"`` as weights normalised to sum to 1 (``""``: equal); ValueError naming what is wrong."""
    if not text:
        return np.full(count, 1.0 / count)
    try:
        w = np.array([float(x) for x in text.split(",")])
    except ValueError as e:
        raise ValueError(f"--weights {text!r}: not a comma-separated list of numbers") from e
    if w.size != count:
        raise ValueError(f"--weights {text!r}: {w.size} weights for {count} members")
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"--weights {text!r}: every weight must be a finite number above 0")
    return w / w.sum()


def _block(mats: list[np.ndarray]) -> np.ndarray:
    """The block-diagonal matrix of ``mats`` (each (out, in)): member i's outputs read only member i's inputs."""
    out = np.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), np.float64)
    r = c = 0
    for m in mats:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def _head(ws: list[np.ndarray], bs: list[np.ndarray], weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An output layer merged: each member's weights scaled by its weight side by side, the biases' weighted sum."""
    return (np.concatenate([w * k for w, k in zip(ws, weights)], axis=1),
            sum(b * k for b, k in zip(bs, weights)))


def _sha256(path: Path) -> str:
    """The file's SHA-256, hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _chain(members: list[MLPAgent], layers: str,
           scaled: list[np.ndarray] | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The members' hidden (``"hidden"``) or critic (``"critic"``) layers merged, ``scaled`` their first weights: the
    first layer's weights stacked (one shared input), each later layer block-diagonal."""
    chains = [getattr(m.net, layers) for m in members]
    first = scaled if scaled is not None else [c[0][0] for c in chains]
    ws = [np.concatenate(first)] + [_block([c[k][0] for c in chains]) for k in range(1, len(chains[0]))]
    bs = [np.concatenate([c[k][1] for c in chains]) for k in range(len(chains[0]))]
    return list(zip(ws, bs))


def merge(paths: list[Path], weights: np.ndarray) -> tuple[dict[str, Any], list[tuple[np.ndarray, np.ndarray]],
                                                          tuple[np.ndarray, np.ndarray], dict[str, np.ndarray]]:
    """The members' merged card (``trained`` lists the members), hidden layers, policy layer and format-2 arrays."""
    if not 2 <= len(paths) <= MAX_MEMBERS:
        raise ValueError(f"an ensemble needs 2 to {MAX_MEMBERS} members, not {len(paths)}")
    members = [MLPAgent(p) for p in paths]
    for m in members:
        if m.card.get("format") != FORMAT2 or not m.net.features:
            raise ValueError(f"ensemble member {m.path}: not a format-2 network with action features "
                             f"({m.card.get('format')!r}, features {m.net.features!r})")
    first = members[0]
    for m in members[1:]:
        for key in MATCHED:
            if m.card.get(key) != first.card.get(key):
                raise ValueError(f"ensemble members {first.path} and {m.path} differ in {key!r}: "
                                 f"{first.card.get(key)!r} against {m.card.get(key)!r}")
    scales = [m.net.in_scale if m.net.in_scale is not None else np.ones(m.net.obs_size, np.float32) for m in members]
    shared = all(np.array_equal(s, scales[0]) for s in scales)
    # one input scaling for all: kept; otherwise each member's first layer reads x * s as (W * s) x
    folded = None if shared else [m.net.hidden[0][0] * s[None, :] for m, s in zip(members, scales)]
    hidden = _chain(members, "hidden", folded)
    policy = _head([m.net.policy[0] for m in members], [m.net.policy[1] for m in members], weights)
    sc = [m.net.scorer for m in members]
    extra = {"in_scale": scales[0] if shared else np.ones_like(scales[0]),
             "ctx_w": _block([s["ctx"][0] for s in sc]), "ctx_b": np.concatenate([s["ctx"][1] for s in sc]),
             "inp_w": np.concatenate([s["inp"][0] for s in sc]), "inp_b": np.concatenate([s["inp"][1] for s in sc]),
             "hid_w": _block([s["hid"][0] for s in sc]), "hid_b": np.concatenate([s["hid"][1] for s in sc])}
    extra["out_w"], extra["out_b"] = _head([s["out"][0] for s in sc], [s["out"][1] for s in sc], weights)
    card = {k: first.card[k] for k in MATCHED if k in first.card}
    card["scorer_width"] = int(extra["ctx_w"].shape[0])
    units = {m.card.get("value_unit") for m in members}  # None: a card that does not say its values' unit
    if all(m.net.value is not None for m in members) and len(units) == 1 and None not in units and len(
            {m.net.value_layers for m in members}) == 1:
        folded_v = None if shared else [m.net.critic[0][0] * s[None, :] for m, s in zip(members, scales)]
        for k, (w, b) in enumerate(_chain(members, "critic", folded_v)):
            extra[f"vw{k}"], extra[f"vb{k}"] = w, b
        extra["v_w"], extra["v_b"] = _head([m.net.value[0] for m in members], [m.net.value[1] for m in members],
                                           weights)
        card["value_layers"], card["value_unit"] = first.net.value_layers, first.card["value_unit"]
    else:
        card["no_value_head"] = "the members' value heads are missing, of other depths or in other or unnamed units"
    card["trained"] = {"method": "ensemble (krypenv.training.ensemble): the weighted mean of the members' logits",
                       "members": [{"file": str(m.path), "sha256": _sha256(m.path), "weight": float(w),
                                    "trained": m.card.get("trained", {})} for m, w in zip(members, weights)]}
    return card, hidden, policy, extra


def main(argv: list[str] | None = None) -> int:
    """Merge the members named on the command line into one ``mlp`` file; 2 (a message) on bad input."""
    ap = argparse.ArgumentParser(prog="python -m krypenv.training.ensemble", description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the merged .npz to write")
    ap.add_argument("members", type=Path, nargs="+", help="the members' .npz files (format 2)")
    ap.add_argument("--weights", default="", help="comma-separated weights, one a member (default: equal)")
    args = ap.parse_args(argv)
    try:
        if args.out.suffix != ".npz":
            raise ValueError(f"{args.out}: the merged file must end in .npz")
        weights = parse_weights(args.weights, len(args.members))
        card, hidden, policy, extra = merge(args.members, weights)
    except ValueError as e:
        print(f"ensemble: {e}", file=sys.stderr)
        return 2
    from krypenv.training.common import machine

    words = sys.argv[1:] if argv is None else argv
    card["trained"].update(command=" ".join(["python -m krypenv.training.ensemble", *words]), machine=machine(),
                           date=datetime.date.today().isoformat())
    path = save(args.out, card, hidden, policy, extra)
    print(json.dumps({"out": str(path), "members": len(args.members), "weights": [float(w) for w in weights],
                      "value_head": "no_value_head" not in card}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
