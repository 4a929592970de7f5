"""Capacity apart from learning: a self-play-shaped network fitted (supervised) to an equilibrium of ``tiny``.

    nice python experiments/fit_cfr.py --target cfr --hidden 128 --layers 2 --epochs 300 --out FIT.csv

The targets, at every one of tiny's 40,540 information states (:class:`krypenv.openspiel.tree.GameTree`:
the seat's env observation, the network's input, and the legal actions):

* ``cfr``: ``tabular:cfr-tiny`` (``checkpoints/cfr-tiny.json.gz``, NashConv 0.0006) as it is;
* ``cfr-reach``: the same table averaged over the information states that share an observation
  (the network cannot tell them apart), each weighted by how often CFR+'s own play reaches it;
* ``minimax``: tiny deals all 8 cards, so once dealt it is a game of perfect information and the
  observation is its state (the same optimal action values at every information state of an
  observation); backward induction on the tree gives its subgame-perfect equilibrium, each state's
  optimal actions alike (NashConv 0 exactly).

  The network is :class:`krypenv.training.mmdnet.Policy`
(the self-play learner's, the value head unused) trained by Adam on the cross-entropy between the
target distribution and its masked softmax, every information state weighted alike, full passes in
minibatches; every ``--eval-every`` epochs its exact NashConv (all information states at once, the
tree's best responses) is appended to ``--out`` with the epoch, the loss and the seconds.  If a
network of the learner's shape cannot get under 0.01 here, the learner cannot either: the network
is the limit.  ``--save PATH`` writes the fitted network as an ``mlp`` checkpoint (``krypenv exploit
--preset tiny --agent mlp:PATH`` measures it with OpenSpiel's own best responses).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np
import torch

from krypenv.openspiel.policy import TabularPolicyFile
from krypenv.openspiel.tree import GameTree
from krypenv.threads import set_torch_threads
from krypenv.training.mmdnet import Policy

CFR = Path(__file__).resolve().parents[1] / "checkpoints" / "cfr-tiny.json.gz"


def probabilities(net: Policy, obs: torch.Tensor, legal: torch.Tensor) -> np.ndarray:
    """The network's exact policy at every information state (float64, 0 off the legal actions)."""
    with torch.no_grad():
        logp = torch.cat([net(o, m)[0] for o, m in zip(obs.split(8192), legal.split(8192))])
    p = logp.double().exp() * legal
    return (p / p.sum(1, keepdim=True)).numpy()


def minimax_values(tree: GameTree) -> tuple[np.ndarray, np.ndarray]:
    """Backward induction on a 2-seat game of perfect information: (Q* of every information state's actions,
    V* of every node), as seat 0's lead over seat 1 (seat 1 minimizes it)."""
    value = tree.returns[:, 0] - tree.returns[:, 1]
    q = np.full(tree.legal.shape, np.nan)
    for nodes in reversed(tree._levels()[1:]):
        par = tree.parent[nodes]
        chance = tree.kind[par] == 0
        np.add.at(value, par[chance], tree.chance[nodes[chance]] * value[nodes[chance]])
        dec = nodes[~chance]
        p = tree.parent[dec]
        sign = np.where(tree.player[p] == 0, 1.0, -1.0)
        best = np.full(len(value), -np.inf)
        np.maximum.at(best, p, sign * value[dec])
        value[np.unique(p)] = (best * np.where(tree.player == 0, 1.0, -1.0))[np.unique(p)]
        q[tree.info[p], tree.action[dec]] = value[dec]
    return q, value


def minimax(tree: GameTree) -> np.ndarray:
    """The subgame-perfect equilibrium of a 2-seat zero-sum game of perfect information, ties alike (NashConv 0)."""
    q, _ = minimax_values(tree)
    mine = np.where(tree.legal, q * np.where(tree.info_player == 0, 1.0, -1.0)[:, None], -np.inf)
    best = tree.legal & (mine >= mine.max(1, keepdims=True) - 1e-9)
    return best / best.sum(1, keepdims=True)


def targets(tree: GameTree, name: str) -> np.ndarray:
    """The target policy ``name`` (module docstring) at every information state."""
    if name == "minimax":
        return minimax(tree)
    table = tree.table(TabularPolicyFile.load(CFR).probabilities)
    if name == "cfr":
        return table
    edge = tree._edge_probs(table)  # reach of every node under CFR+ and chance, summed per information state
    reach = np.ones(len(edge))
    for nodes in tree._levels()[1:]:
        reach[nodes] = reach[tree.parent[nodes]] * edge[nodes]
    dec = tree.kind == 1
    weight = np.zeros(tree.num_infostates)
    np.add.at(weight, tree.info[dec], reach[dec])
    weight += 1e-12  # unreached states: the plain mean
    _, group = np.unique(tree.obs, axis=0, return_inverse=True)
    group = group.ravel()
    mean = np.zeros((group.max() + 1, table.shape[1]))
    np.add.at(mean, group, weight[:, None] * table)
    mean = mean[group] * tree.legal
    return mean / mean.sum(1, keepdims=True)


def main() -> None:
    """Fit, measuring NashConv as it goes."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=["cfr", "cfr-reach", "minimax"], default="cfr")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=400)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--eval-every", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("results/fit-cfr-tiny.csv"))
    parser.add_argument("--save", type=Path, default=None)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    set_torch_threads(args.threads)
    tree = GameTree.load("krypkasino", "tiny", 2)
    target_np = targets(tree, args.target)
    print(f"target {args.target}: NashConv {tree.nash_conv(target_np)['nash_conv']:.6f}", flush=True)
    obs, legal = torch.tensor(tree.obs), torch.tensor(tree.legal)
    target = torch.tensor(target_np, dtype=torch.float32)
    net = Policy(obs.shape[1], legal.shape[1], args.hidden, args.layers)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.epochs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    new = not args.out.exists()
    start = time.perf_counter()
    with args.out.open("a", newline="") as f:
        writer = csv.writer(f)
        if new:
            writer.writerow(["target", "hidden", "layers", "lr", "seed", "epoch", "loss", "kl", "nash_conv", "seconds"])
        for epoch in range(1, args.epochs + 1):
            losses = []
            for idx in torch.randperm(len(obs)).split(args.batch):
                logp = net(obs[idx], legal[idx])[0].clamp_min(-30.0)
                t = target[idx]
                loss = -(t * logp).sum(1).mean()  # cross-entropy; KL to the target up to its entropy
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            sched.step()
            if epoch % args.eval_every == 0 or epoch == args.epochs:
                p = probabilities(net, obs, legal)
                kl = float(np.sum(np.where(target_np > 0, target_np * (np.log(np.maximum(target_np, 1e-300))
                                                                       - np.log(np.maximum(p, 1e-300))), 0.0))
                           / len(p))
                nc = tree.nash_conv(p)["nash_conv"]
                row = [args.target, args.hidden, args.layers, args.lr, args.seed, epoch,
                       round(float(np.mean(losses)), 6), round(kl, 6), round(nc, 6),
                       round(time.perf_counter() - start, 1)]
                writer.writerow(row)
                f.flush()
                print(f"epoch {epoch}: loss {row[6]:.5f}, KL {kl:.5f}, NashConv {nc:.5f} ({row[-1]} s)", flush=True)
    if args.save:
        net.export(args.save, {"game": "krypkasino", "players": 2, "preset": "tiny", "obs_size": obs.shape[1],
                               "n_actions": legal.shape[1],
                               "trained": {"method": "supervised fit to tabular:cfr-tiny (experiments/fit_cfr.py)",
                                           "command": " ".join(sys.argv), "epochs": args.epochs}})


if __name__ == "__main__":
    main()
