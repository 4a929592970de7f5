"""How wrong a self-play run's learned critic is, against the exact Q of its own policy on ``tiny``'s tree.

    python experiments/critic_error.py /tmp/w41/h1/state.pt [more state.pt ...]

Reads a :mod:`krypenv.training.selfplay` run's ``state.pt`` (``--update critic``: the network with its Q head) and
its ``args.json`` beside it, and computes on the whole tree (:class:`krypenv.training.critic.TreeValues`), under the
network's own policy π: every observation's exact Q (points), its reach, and the critic's Q (divided by
``reward_scale``: points).  A constant per observation does not move MMD's step, so both are compared as
advantages, Q − Σ π·Q.  Printed, one line a run: the policy's exact NashConv; the critic's advantage error
(root mean square, points) weighted by reach·π(a) (the actions played) and by reach over the legal actions
(all of them); the reach-weighted local regret Σ reach·max(0, max_a A(o, a)) of the exact advantages (what a
one-step deviation gains) and the part of it at observations where the critic ranks the exactly best action
below the played mean (the critic's blind spots); and the slope of the critic's advantages on the exact ones
(1: the same scale).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from krypenv.training.mmdnet import Policy


def report(state: Path) -> dict[str, float]:
    """The numbers of one run's ``state.pt`` (module docstring)."""
    from krypenv.training.critic import TreeValues, load_tree, policy_function

    args = json.loads((state.parent / "args.json").read_text())
    tree = load_tree(SimpleNamespace(**args), "critic_error.py")
    tv = TreeValues(tree)
    obs, legal = torch.as_tensor(tv.obs).float(), torch.as_tensor(tv.legal)
    net = Policy(obs.shape[1], legal.shape[1], args["hidden"], args["layers"], critic=True)
    net.load_state_dict(torch.load(state, map_location="cpu", weights_only=True)["net"])
    with torch.no_grad():
        qc = net.evaluate(obs, legal)[2]
    probs = policy_function(net, torch.device("cpu"))(tv.obs, tv.legal)
    q, seen = tv.values(probs)
    qc = qc.double().numpy() / args["reward_scale"]
    adv_e = np.where(tv.legal, q - (probs * q).sum(1, keepdims=True), 0.0)
    adv_c = np.where(tv.legal, qc - (probs * qc).sum(1, keepdims=True), 0.0)
    err = adv_c - adv_e
    w_on = seen[:, None] * probs
    w_all = seen[:, None] * tv.legal / tv.legal.sum(1, keepdims=True)
    regret = np.where(tv.legal, adv_e, -np.inf).max(1).clip(0)
    best = np.where(tv.legal, q, -np.inf).argmax(1)
    blind = adv_c[np.arange(len(best)), best] < 0
    slope = float((w_all * adv_c * adv_e).sum() / (w_all * adv_e ** 2).sum())
    return {"nash_conv": float(tree.nash_conv(probs[tv.back])["nash_conv"]),
            "rms_played": float(np.sqrt((w_on * err ** 2).sum() / w_on.sum())),
            "rms_all": float(np.sqrt((w_all * err ** 2).sum() / w_all.sum())),
            "regret": float((seen * regret).sum()), "regret_blind": float((seen * regret * blind).sum()),
            "slope": slope}


def main(argv: list[str] | None = None) -> None:
    """One line per ``state.pt``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("states", nargs="+", type=Path)
    for path in parser.parse_args(argv).states:
        r = report(path)
        print(f"{path}: NashConv {r['nash_conv']:.4f}, critic's advantage error (points, rms) {r['rms_played']:.4f} "
              f"on the played actions, {r['rms_all']:.4f} on all legal ones; local regret {r['regret']:.4f}, "
              f"{r['regret_blind']:.4f} of it where the critic ranks the best action below the mean; slope "
              f"{r['slope']:.3f}", flush=True)


if __name__ == "__main__":
    main()
