"""The tries at an equilibrium of ``tiny``: each run's last and best exact NashConv, one CSV row per run.

    python experiments/tries_tiny.py p1=/tmp/w41/p1 h1=/tmp/w41/h1 t2=/tmp/w41/t2 \\
        --out docs/research/tries-tiny.csv

Reads what a run of :mod:`krypenv.training.selfplay` (``--eval-every``) or :mod:`krypenv.training.treemmd`
wrote: ``RUN/log.csv`` (the exact NashConv of the network at the measured iterations, from
:mod:`krypenv.openspiel.tree`) and ``RUN/args.json``.  A row: the run's name, the learner (``sampled``: the
self-play learner, its update; ``full-width``: treemmd), its options that differ from the defaults, the
iterations, decisions (sampled only), training seconds, the last iterate's NashConv and the best one with
its seconds.  ``--column nash_conv_avg`` reads a run's average policy instead (``--average``; the learner then says
which average).  The diagnostics say so in the learner: ``oracle Q (diagnostic)`` (selfplay ``--oracle-critic``,
which reads the tree), ``sampled weights`` (treemmd ``--sample-decisions``).  Rows of the same name are replaced;
the page "Learners on the small variants" holds its table to this file (tests/test_docs.py).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
from pathlib import Path

FIELDS = ["run", "learner", "options", "iterations", "decisions", "seconds", "last_nash_conv", "best_nash_conv",
          "best_seconds"]
COLUMNS = ("nash_conv", "nash_conv_avg")
SKIP = {"out", "progress", "tensorboard", "device", "checkpoint_every", "eval_every", "total_timesteps", "resume"}


def row_of(name: str, run: Path, column: str = "nash_conv") -> dict[str, str]:
    """The CSV row of one run directory, its NashConv read from ``column`` (the last iterate's, or the average's)."""
    if column not in COLUMNS:
        raise ValueError(f"column must be one of {', '.join(COLUMNS)}, got {column!r}")
    args = json.loads((run / "args.json").read_text())
    if "num_envs" in args:
        from krypenv.training.selfplay import Args as A
        learner = f"sampled ({args['update']})" + (f", average ({args['average']})" if column != "nash_conv" else "") \
            + (", oracle Q (diagnostic)" if args.get("oracle_critic") else "")
    else:
        from krypenv.training.treemmd import Args as A  # type: ignore[assignment]
        learner = "full-width" + (", sampled weights" if args.get("sample_decisions") else "")
    default = dataclasses.asdict(A())
    options = " ".join(f"{k}={v}" for k, v in args.items() if k not in SKIP and default.get(k) != v)
    with (run / "log.csv").open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get(column)]
    if not rows:
        raise ValueError(f"{run}: no {column} in log.csv (run with --eval-every, and --average for nash_conv_avg)")
    best = min(rows, key=lambda r: float(r[column]))
    last = rows[-1]
    return {"run": name, "learner": learner, "options": options, "iterations": last["iteration"],
            "decisions": last.get("decisions", ""), "seconds": f"{float(last['seconds']):.0f}",
            "last_nash_conv": f"{float(last[column]):.4f}", "best_nash_conv": f"{float(best[column]):.4f}",
            "best_seconds": f"{float(best['seconds']):.0f}"}


def main(argv: list[str] | None = None) -> None:
    """Append (or replace) the named runs' rows in ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="NAME=RUN_DIR")
    parser.add_argument("--out", required=True)
    parser.add_argument("--column", choices=COLUMNS, default="nash_conv",
                        help="the last iterate's NashConv or the average policy's (selfplay --average)")
    a = parser.parse_args(argv)
    new = []
    for spec in a.runs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            parser.error(f"expected NAME=RUN_DIR, got {spec!r}")
        new.append(row_of(name, Path(path), a.column))
    out = Path(a.out)
    old = list(csv.DictReader(out.open(newline=""))) if out.is_file() else []
    names = {r["run"] for r in new}
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows([r for r in old if r["run"] not in names] + new)


if __name__ == "__main__":
    main()
