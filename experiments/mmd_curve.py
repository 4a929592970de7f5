"""Exact exploitability of a self-play run's checkpoints on ``tiny``: the NashConv curve against samples and wall time.

    nice python experiments/mmd_curve.py RUN_DIR [--every 1] [--out docs/research/mmd-tiny.csv] [--plot FIG.png]

For every ``ckpt-*.npz`` (and ``final.npz``) of a run of :mod:`krypenv.training.selfplay` on Krypkasino's
``tiny`` preset, NashConv of the network's policy (``mlp:PATH``, its exact action probabilities:
:func:`krypenv.openspiel.exploit.exact`, the function of ``krypenv exploit``) with the decisions and
training seconds its card records.  Rows are appended as each finishes (a checkpoint takes minutes:
OpenSpiel's best responses over tiny's 40,540 information states).  ``--plot`` draws the curves (one per run
folder) against decisions and against training seconds, with PPO's and CFR+'s NashConv of the research results page.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

FIELDS = ["checkpoint", "iteration", "decisions", "train_seconds", "nash_conv", "improvement_seat0",
          "improvement_seat1", "seconds"]
PPO_TINY, CFR_TINY = 3.6071, 0.0006  # docs/research/results.md


def card(path: Path) -> dict:
    """The checkpoint's card (JSON member of the npz)."""
    with np.load(path, allow_pickle=False) as data:
        return json.loads(str(data["card"]))


def measure(run: Path, out: Path, every: int = 1) -> None:
    """Append a row per checkpoint not yet in ``out``."""
    from krypenv.openspiel.exploit import exact

    files = sorted(run.glob("ckpt-*.npz"))[::every] + sorted(run.glob("final.npz"))
    done = set()
    if out.exists():
        with out.open() as f:
            done = {row["checkpoint"] for row in csv.DictReader(f)}
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists()
    with out.open("a", newline="") as f:
        writer = csv.writer(f)
        if new:
            writer.writerow(FIELDS)
        for path in files:
            if str(path) in done:
                continue
            trained = card(path)["trained"]
            r = exact("krypkasino", "tiny", 2, f"mlp:{path}")
            writer.writerow([str(path), trained.get("iteration"), trained.get("decisions"), trained.get("seconds"),
                             r["nash_conv"], r["improvements"][0], r["improvements"][1], r["seconds"]])
            f.flush()
            print(f"{path.name}: NashConv {r['nash_conv']:.4f} after {trained.get('decisions')} decisions", flush=True)


def plot(csv_path: Path, figure: Path) -> None:
    """NashConv against decisions and against training seconds, PPO and CFR+ as lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs: dict[str, list[dict]] = {}  # one line per run (the checkpoints' folder)
    with csv_path.open() as f:
        for row in csv.DictReader(f):
            runs.setdefault(Path(row["checkpoint"]).parent.name, []).append(row)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, key, label in ((axes[0], "decisions", "decisions (all seats)"),
                           (axes[1], "train_seconds", "training seconds")):
        for run, rows in sorted(runs.items()):
            rows = sorted(rows, key=lambda r: int(r["decisions"]))
            ax.plot([float(r[key]) for r in rows], [float(r["nash_conv"]) for r in rows], marker="o",
                    label=f"MMD self-play, {run}")
        ax.axhline(PPO_TINY, color="tab:red", linestyle="--", label=f"PPO on tiny ({PPO_TINY})")
        ax.axhline(CFR_TINY, color="tab:green", linestyle=":", label=f"CFR+ tabular ({CFR_TINY})")
        ax.axhline(0.1, color="gray", linestyle="-.", label="goal 0.1")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(label)
        ax.set_ylabel("NashConv (points per deal)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Krypkasino tiny, 2 players: exact NashConv of the self-play network")
    fig.tight_layout()
    fig.savefig(figure, dpi=120)


def main() -> None:
    """Measure a run's checkpoints, then plot if asked."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--every", type=int, default=1, help="measure every k-th checkpoint")
    parser.add_argument("--out", type=Path, default=Path("results/mmd-tiny.csv"))
    parser.add_argument("--plot", type=Path, default=None)
    args = parser.parse_args()
    measure(args.run, args.out, args.every)
    if args.plot:
        plot(args.out, args.plot)


if __name__ == "__main__":
    main()
