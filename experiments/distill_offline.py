"""Train a student on an existing label set (no new labels), then measure it: what size and targets the labels allow.

    python experiments/distill_offline.py runs/exit-2p-a --out runs/offline-256 --hidden 256,256 --scorer 128
    python experiments/distill_offline.py runs/exit-2p-a runs/exit-2p-b --out runs/offline-both   # both runs' labels
    python experiments/distill_offline.py runs/exit-2p-a --out runs/offline-t05 --init mlp:runs/exit-2p-a/final.npz \\
        --temperature 0.5 --eval-decks 400

Reads every shard of ``RUN/labels`` (or ``--iterations``) of each RUN given (the first one's
``args.json`` is the run's settings; the runs must be of one game, player count and preset), builds a
new student (or ``--init``), trains it with :func:`krypenv.training.student.train` (the same targets and
loss as the run: any ``Args`` field can be given as an option), writes ``OUT/student.npz``,
``OUT/result.json`` (sizes, seconds, losses, the measurement), and measures it alone (greedy) against
the game's opponent over ``--eval-decks`` duplicate decks of ``--eval-seed``. An experiment on data
already paid for: it separates what more labels would bring from what the network can take.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from krypenv import agents
from krypenv.threads import set_torch_threads
from krypenv.training import distill as D
from krypenv.training.labels import Labels, LabelSet
from krypenv.training.student import Student, from_mlp, train, training_data


def main() -> None:
    """Train on the labels and print the measurement."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", nargs="+", help="expert-iteration run folders whose labels are joined in order")
    p.add_argument("--out", required=True)
    p.add_argument("--scorer", type=int, default=64, help="the new student's scorer width")
    p.add_argument("--iterations", default="", help="comma-separated iterations of labels (default: all)")
    for f in dataclasses.fields(D.Args):
        if f.name in ("init", "hidden", "value_hidden", "temperature", "value_scale", "value_coef", "epochs",
                      "batch_size", "learning_rate", "eval_decks", "eval_seed", "torch_threads", "seed"):
            p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
    a = p.parse_args()
    runs = [json.loads((Path(r) / "args.json").read_text()) for r in a.run]
    for r, other in zip(a.run[1:], runs[1:]):
        if [other[k] for k in ("game", "players", "preset")] != [runs[0][k] for k in ("game", "players", "preset")]:
            raise SystemExit(f"{r}: labels of another game, player count or preset than {a.run[0]}'s")
    run = runs[0]
    args = dataclasses.replace(D.Args(**run), **{k: v for k, v in vars(a).items() if k in D.Args.__annotations__})
    torch.manual_seed(args.seed)
    set_torch_threads(args.torch_threads or 2)
    torch.use_deterministic_algorithms(True)
    part = D.training_part(args.game)
    core = part.distill_core(args.players, args.preset, 1)
    its = [int(x) for x in a.iterations.split(",")] if a.iterations else None
    labels = Labels.concat([LabelSet(Path(r) / "labels").load(its)[0] for r in a.run])
    if args.init:
        student, _ = from_mlp(args.init.partition(":")[2])
    else:
        feats = part.DISTILL["features"]
        n_feats = part.label_features(core, core.state[:1]).shape[2] if feats else 0
        student = Student(core.dim, core.n_actions, D.sizes(args.hidden, "hidden"),
                          D.sizes(args.value_hidden, "value-hidden"), feats, n_feats, a.scorer,
                          1.0 / np.maximum(np.asarray(core.high, np.float32), 1.0))
    t0 = time.perf_counter()
    stats = train(student, training_data(args, labels, core, student.features is not None), args,
                    np.random.default_rng([args.seed, 99]))
    out = Path(a.out)
    path = student.export(out / "student.npz", {
        "game": args.game, "players": args.players, "preset": args.preset,
        "trained": {"method": "offline distillation (experiments/distill_offline.py)", "labels": len(labels),
                    "from": ",".join(a.run), "command": " ".join(sys.argv), "machine": D.machine(),
                    "date": time.strftime("%Y-%m-%d"), "args": dataclasses.asdict(args)}})
    result = {"student": str(path), "labels": len(labels), "parameters": sum(q.numel() for q in student.parameters()),
              "train_s": round(time.perf_counter() - t0), "temperature": args.temperature, **stats}
    print(f"{len(labels):,} labels, {result['parameters']:,} parameters, trained in {result['train_s']} s: {stats}",
          flush=True)
    if args.eval_decks:
        opp = part.DISTILL["opponent"]
        point = part.distill_eval(agents.load(f"mlp:{path},greedy=true", game=args.game), opp, args.players,
                                  args.preset, args.eval_decks, args.eval_seed)
        print(f"student - {opp}: {point.mean:+.2f} [{point.low:+.2f}, {point.high:+.2f}] over {args.eval_decks} decks "
              f"of seed {args.eval_seed}", flush=True)
        result.update(opponent=opp, eval_decks=args.eval_decks, eval_seed=args.eval_seed, vs_opponent=point.mean,
                      ci_low=point.low, ci_high=point.high)
    (out / "result.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
