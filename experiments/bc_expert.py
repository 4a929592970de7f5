"""Probe: how close does plain imitation of ``expert`` get, compared with PPO from scratch?

    python experiments/bc_expert.py --decks 3000 --epochs 8

Plays ``--decks`` duplicate 2-player decks of expert against itself (seed 5), records every
decision's observation, mask and expert action, fits a 256x256 MLP on the observation scaled
by its column maxima with masked cross-entropy (90% train, 10% held out), then plays the
cloned policy (masked argmax) against expert on 200 duplicate decks of seed 1 and prints the
harness's table.  Not part of the library; it measured the behaviour-cloning figure quoted in
the training results (docs/results/krypkasino-training.md).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch as th
from krypenv.eval.krypkasino import EvalConfig, evaluate
from krypenv.eval.krypkasino.report import text

from krypenv import agents
from krypenv.agent_api import DecisionBatch
from krypenv.threads import set_torch_threads


def main() -> None:
    """Collect expert decisions, clone them, evaluate the clone against expert."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decks", type=int, default=3000, help="duplicate decks of expert self-play to imitate")
    parser.add_argument("--epochs", type=int, default=8, help="passes over the training decisions")
    args = parser.parse_args()
    set_torch_threads(2)
    th.manual_seed(0)
    expert = agents.load("expert")
    obs_l, mask_l, act_l = [], [], []

    class Recorder:
        """Expert, recording what it sees and does."""

        name = "expert-recorder"

        def act(self, batch: DecisionBatch) -> np.ndarray:
            a = expert.act(batch)
            obs_l.append(batch.obs.copy())
            mask_l.append(batch.mask.copy())
            act_l.append(a.copy())
            return a

    start = time.time()
    evaluate(EvalConfig(agents=("expert", "expert"), players=2, deals=args.decks, seed=5, records=False),
             agents=[Recorder(), Recorder()])
    obs = np.concatenate(obs_l).astype(np.float32)
    hi = np.maximum(obs.max(axis=0), 1.0)  # scale every column to [0, 1]
    x, m = th.tensor(obs / hi), th.tensor(np.concatenate(mask_l).astype(bool))
    y = th.tensor(np.concatenate(act_l))
    print(f"{len(y):,} expert decisions from {args.decks} decks in {time.time() - start:.0f} s", flush=True)
    n = len(y)
    order = np.random.default_rng(0).permutation(n)
    train, test = order[: int(0.9 * n)], order[int(0.9 * n):]
    net = th.nn.Sequential(th.nn.Linear(x.shape[1], 256), th.nn.ReLU(), th.nn.Linear(256, 256), th.nn.ReLU(),
                           th.nn.Linear(256, 105))
    opt = th.optim.Adam(net.parameters(), 1e-3)

    def logits(xb: th.Tensor, mb: th.Tensor) -> th.Tensor:
        return net(xb).masked_fill(~mb, -1e9)

    for epoch in range(args.epochs):
        perm = train[np.random.default_rng(epoch).permutation(len(train))]
        for k in range(0, len(perm), 1024):
            b = perm[k:k + 1024]
            loss = th.nn.functional.cross_entropy(logits(x[b], m[b]), y[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with th.no_grad():
            hit = (logits(x[test], m[test]).argmax(1) == y[test]).float()
            real = m[test].sum(1) > 1  # decisions with more than one legal action
        print(f"epoch {epoch}: held-out agreement {hit.mean():.3f}, on real choices {hit[real].mean():.3f}", flush=True)

    scale = th.tensor(hi)

    class Clone:
        """The cloned policy: masked argmax."""

        name = "bc"

        def act(self, batch: DecisionBatch) -> np.ndarray:
            with th.no_grad():
                xb = th.tensor(batch.obs.astype(np.float32)) / scale
                return logits(xb, th.tensor(batch.mask.astype(bool))).argmax(1).numpy().astype(np.int64)

    print(text(evaluate(EvalConfig(agents=("bc", "expert"), players=2, deals=200, seed=1, records=False),
                        agents=[Clone(), expert])))


if __name__ == "__main__":
    main()
