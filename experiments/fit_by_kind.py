"""Where a student misses its teacher: the distillation gap split by kind of Krypkasino decision.

    python experiments/fit_by_kind.py runs/exit-2p-champ checkpoints/exit-2p-champ-i2.npz --iterations 2

For every label of the run's chosen iterations, the gap is ``KL(t ‖ π) = CE(t, π) − H(t)``: the student's
cross-entropy towards the teacher's target ``t = softmax(values / T)`` minus the target's own entropy. This is what
the training log's "policy loss − target entropy" averages. Here it is split by the decision's kind:

* a **card** decision: which card to play (actions 0–51);
* a **capture choice**: which table card to add to the capture being chosen, or 104 to take what is fixed
  (actions 52–104);
* a card decision in the **last round** (the deck is empty: in 2 players nothing is hidden any more) or before it.

It is also split by the number of legal actions. The printed table gives, per group, the share of the labels, the
mean gap, and the group's share of the whole gap. Two more columns say what the gap costs in play, where the
student plays its most probable action (greedy):
- the share of decisions where that is not the teacher's best-valued action;
- the teacher's value lost by it, in points per decision (the best value minus the value of the student's action).

Krypkasino only (its action layout).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from krypenv.training.distill import Args
from krypenv.training.labels import ARRAYS, Labels, LabelSet
from krypenv.training.student import from_mlp, minibatch, policy_targets, training_data

CARD_ACTIONS = 52  # actions below this play a card; 52–104 choose a capture (krypenv.krypkasino.actions)


def gaps(target: np.ndarray, logp: np.ndarray) -> np.ndarray:
    """(N,) ``KL(t ‖ π)`` per row from targets and the student's log-probabilities (−inf off the legal actions)."""
    on = target > 0
    safe_t = np.where(on, target, 1.0)
    return np.where(on, target * (np.log(safe_t) - np.where(on, logp, 0.0)), 0.0).sum(axis=1)


def lost_value(values: np.ndarray, mask: np.ndarray, logp: np.ndarray) -> np.ndarray:
    """(N,) the teacher's best legal value minus the value of the student's most probable legal action (≥ 0)."""
    v = np.where(mask, values, -np.inf)
    own = np.where(mask, logp, -np.inf).argmax(axis=1)
    return v.max(axis=1) - v[np.arange(len(v)), own]


def groups(mask: np.ndarray, last_round: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Boolean rows per group: card decisions, capture choices, card decisions in the last round (the observation's
    ``last_round``: the deck is empty) and before it, and by the number of legal actions."""
    legal = mask.sum(axis=1)
    card = mask[:, :CARD_ACTIONS].any(axis=1)
    out = {"card": card, "capture choice": ~card}
    if last_round is not None:
        out["card, last round"] = card & (last_round != 0)
        out["card, earlier rounds"] = card & (last_round == 0)
    for lo, hi in ((2, 2), (3, 4), (5, 8), (9, 105)):
        out[f"{lo}–{hi} legal" if hi > lo else f"{lo} legal"] = (legal >= lo) & (legal <= hi)
    return out


def main() -> None:
    """Print the gap by kind of decision as a Markdown table, then one JSON line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", help="an expert-iteration run folder (its labels/ and args.json)")
    p.add_argument("student", help="an mlp checkpoint with a value head (the student)")
    p.add_argument("--iterations", default="", help="comma-separated iterations of labels (default: all)")
    p.add_argument("--limit", type=int, default=0, help="only the first LIMIT labels (0: all)")
    a = p.parse_args()
    run = json.loads((Path(a.run) / "args.json").read_text())
    args = Args(**{k: v for k, v in run.items() if k in Args.__annotations__})
    if args.game != "krypkasino":
        raise SystemExit(f"{a.run}: labels of {args.game}; this split knows Krypkasino's actions only")
    its = [int(x) for x in a.iterations.split(",")] if a.iterations else None
    labels, _ = LabelSet(Path(a.run) / "labels").load(its)
    if a.limit:
        labels = Labels(**{k: getattr(labels, k)[: a.limit] for k in ARRAYS})
    student, _ = from_mlp(a.student)
    student.eval()
    from krypenv.training.common import training_part

    core = training_part(args.game).distill_core(args.players, args.preset, 1)
    data = training_data(args, labels, core, student.features is not None)
    logps = []
    with torch.no_grad():
        for lo in range(0, len(labels), 4096):
            idx = np.arange(lo, min(lo + 4096, len(labels)))
            obs, mask, pairs, feats, _, _ = minibatch(data, idx)
            logits, _ = student(obs, mask, pairs, feats)
            logps.append(torch.log_softmax(logits, dim=-1).numpy())
    target = policy_targets(labels.values, labels.mask, args.temperature)
    logp = np.concatenate(logps).astype(np.float64)
    gap = gaps(target.astype(np.float64), logp)
    loss = lost_value(labels.values, np.asarray(labels.mask, bool), logp)
    total = gap.sum()
    print("| decisions | share of labels | mean gap (nats) | share of the gap | greedy ≠ teacher's best | value lost "
          "(points) |")
    print("|---|---:|---:|---:|---:|---:|")
    rows = {}
    from krypenv.krypkasino.observation import split

    last = split(np.asarray(labels.obs), args.players)["last_round"][:, 0]
    for name, rows_of in groups(np.asarray(labels.mask, bool), last).items():
        n = int(rows_of.sum())
        if not n:
            continue
        mean, share = float(gap[rows_of].mean()), float(gap[rows_of].sum() / total)
        miss, lost = float((loss[rows_of] > 0).mean()), float(loss[rows_of].mean())
        rows[name] = {"labels": n, "mean_gap": round(mean, 4), "share_of_gap": round(share, 3),
                      "greedy_not_best": round(miss, 4), "value_lost": round(lost, 4)}
        print(f"| {name} | {n / len(gap):.1%} | {mean:.4f} | {share:.1%} | {miss:.1%} | {lost:.3f} |")
    print(json.dumps({"run": a.run, "student": a.student, "labels": len(gap), "mean_gap": round(float(gap.mean()), 4),
                      "groups": rows}))


if __name__ == "__main__":
    main()
