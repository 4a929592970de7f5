"""Expert iteration's results: the curves of the runs and the head-to-head matches of their students, as CSVs.

    python experiments/distill_results.py curve runs/exit-2p-a runs/exit-2p-b          # per iteration
    python experiments/distill_results.py match "mlp:runs/exit-2p-a/final.npz,greedy=true" pimc --decks 1000
    python experiments/distill_results.py plot
    python experiments/distill_results.py tables                 # the page's two Markdown tables

``curve`` reads each run's ``log.csv`` and ``args.json`` (:mod:`krypenv.training.distill`) and
writes one row per iteration to ``docs/research/exit-curve.csv``: the run, its seed, players, the
labels trained on so far, the hours so far (labelling, training and measuring, wall time), and
the student against the game's opponent (its per-iteration measurement: ``--eval-decks`` decks of
``--eval-seed``).  ``match A B`` plays a duplicate evaluation of two agent specs (Krypkasino,
``--players``, ``--decks`` decks of ``--seed``: by default 4711, a seed the docs use nowhere else)
and adds or replaces its row in ``docs/research/exit-matches.csv`` (A − B per deal, 95% interval,
seconds, date, machine).  ``plot`` draws ``docs/research/exit-curve.png`` from the curve CSV: the
student against its opponent by labels and by hours, one line per run.  The page
``docs/research/expert-iteration.md`` shows both tables (``tables`` prints them);
``tests/test_docs.py`` holds them to the CSVs.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CURVE = ROOT / "docs/research/exit-curve.csv"
MATCHES = ROOT / "docs/research/exit-matches.csv"


def machine() -> str:
    """This machine in a few words (:func:`krypenv.bench.machine`)."""
    from krypenv.bench import machine as info

    m = info()
    return f"{m['cpu']}, {len(os.sched_getaffinity(0))} cores"


def curve(runs: list[str]) -> None:
    """One row per iteration of each run (module docstring)."""
    rows = []
    for run in runs:
        path = Path(run)
        args = json.loads((path / "args.json").read_text())
        hours = 0.0
        shard_s: dict[int, float] = {}  # labelling seconds per iteration, from the shards' cards (resumes included)
        for shard in sorted((path / "labels").glob("it*.npz")):
            with np.load(shard) as z:
                card = json.loads(str(z["card"]))
            shard_s[card["iteration"]] = shard_s.get(card["iteration"], 0.0) + card["seconds"]
        for r in csv.DictReader((path / "log.csv").open()):
            it = int(r["iteration"])
            hours += (shard_s.get(it, 0.0) + sum(float(r.get(k) or 0) for k in ("train_s", "eval_s"))) / 3600
            teacher = r["teacher"].split(",")[0].replace(str(path), "RUN")
            rows.append({"run": path.name, "seed": args["seed"], "players": args["players"],
                         "iteration": it, "teacher": teacher, "labels": int(r["labels_trained"]),
                         "hours": round(hours, 2), "opponent": r.get("opponent", ""),
                         "vs_opponent": r.get("vs_opponent", ""), "ci_low": r.get("ci_low", ""),
                         "ci_high": r.get("ci_high", ""), "eval_decks": args["eval_decks"],
                         "eval_seed": args["eval_seed"]})
    with CURVE.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} rows: {CURVE}")


def match(a: str, b: str, players: int, decks: int, seed: int) -> None:
    """A duplicate evaluation of ``a`` against ``b``; its row in the matches CSV."""
    from krypenv.eval.krypkasino import EvalConfig, evaluate

    t0 = time.time()
    res = evaluate(EvalConfig(agents=(a, b), players=players, deals=decks, seed=seed, records=False))
    pair = next(p for p in res.pairs if {p.a, p.b} == {a, b})
    sign = 1.0 if pair.a == a else -1.0
    lo, hi = sorted((sign * pair.diff.low, sign * pair.diff.high))
    row = {"a": a, "b": b, "players": players, "decks": decks, "seed": seed,
           "a_minus_b": round(sign * pair.diff.mean, 4), "ci_low": round(lo, 4), "ci_high": round(hi, 4),
           "seconds": round(time.time() - t0),
           "date": time.strftime("%Y-%m-%d"), "machine": machine()}
    old = list(csv.DictReader(MATCHES.open())) if MATCHES.exists() else []
    key = (a, b, str(players), str(decks), str(seed))
    rows = [r for r in old if (r["a"], r["b"], r["players"], r["decks"], r["seed"]) != key] + [row]
    with MATCHES.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(row))
        w.writeheader()
        w.writerows(rows)
    print(f"{a} - {b}: {row['a_minus_b']:+.2f} [{row['ci_low']:+.2f}, {row['ci_high']:+.2f}] over {decks} decks "
          f"({row['seconds']} s)")


def plot() -> None:
    """exit-curve.png: the student against its opponent by labels and by hours, a line per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(CURVE.open()))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), dpi=100, sharey=True)
    for run in dict.fromkeys(r["run"] for r in rows):
        mine = [r for r in rows if r["run"] == run and r["vs_opponent"]]
        y = [float(r["vs_opponent"]) for r in mine]
        lo = [float(r["ci_low"]) for r in mine]
        hi = [float(r["ci_high"]) for r in mine]
        for ax, key in ((axes[0], "labels"), (axes[1], "hours")):
            x = [float(r[key]) for r in mine]
            ax.errorbar(x, y, yerr=[[a - b for a, b in zip(y, lo)], [b - a for a, b in zip(y, hi)]], marker="o",
                        capsize=3, label=f"{run} (seed {mine[0]['seed']})")
    for ax, label in ((axes[0], "labelled decisions trained on"), (axes[1], "hours (2 cores, shared)")):
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"student − {rows[0]['opponent']} per deal\n(negative: the student better)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Expert iteration, Krypkasino: the student alone (greedy) against its opponent, 95% CI", fontsize=10)
    fig.tight_layout()
    fig.savefig(CURVE.with_suffix(".png"))
    print(CURVE.with_suffix(".png"))


def _num(x: str) -> str:
    """A figure with 2 decimals and a typographic minus."""
    return f"{float(x):.2f}".replace("-", "\u2212")


def tables() -> None:
    """The page's two tables in Markdown, from the CSVs (the rows ``tests/test_docs.py`` holds the page to)."""
    print("| run | seed | iteration | labels | hours | student − opponent | 95% CI |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in csv.DictReader(CURVE.open()):
        print(f"| `{r['run']}` | {r['seed']} | {r['iteration']} | {int(r['labels']):,} | {float(r['hours']):.2f} | "
              f"{_num(r['vs_opponent'])} | [{_num(r['ci_low'])}, {_num(r['ci_high'])}] |")
    print()
    print("| a | b | decks | seed | a − b | 95% CI |")
    print("|---|---|---:|---:|---:|---:|")
    for r in csv.DictReader(MATCHES.open()):
        print(f"| `{r['a']}` | `{r['b']}` | {int(r['decks']):,} | {r['seed']} | {_num(r['a_minus_b'])} | "
              f"[{_num(r['ci_low'])}, {_num(r['ci_high'])}] |")


def main() -> None:
    """The four commands of the module docstring."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("curve")
    c.add_argument("runs", nargs="+")
    m = sub.add_parser("match")
    m.add_argument("a")
    m.add_argument("b")
    m.add_argument("--players", type=int, default=2)
    m.add_argument("--decks", type=int, default=1000)
    m.add_argument("--seed", type=int, default=4711)
    sub.add_parser("plot")
    sub.add_parser("tables")
    a = p.parse_args()
    if a.command == "curve":
        curve(a.runs)
    elif a.command == "match":
        match(a.a, a.b, a.players, a.decks, a.seed)
    elif a.command == "plot":
        plot()
    else:
        tables()


if __name__ == "__main__":
    sys.exit(main())
