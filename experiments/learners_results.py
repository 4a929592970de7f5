"""The benchmark's CSV (experiments/learners.py's rows) as the page's tables and one plot per game.

    python experiments/learners_results.py docs/research/learners-tiny.csv [--plot docs/research/learners-tiny.png]
    python experiments/learners_results.py docs/research/learners-kille.csv [--plot ...] [--title ...]

prints the markdown table of docs/research/learners.md (one row per learner, configuration and phase: the seeds,
the mean CPU seconds and decisions of the runs' last iterates, their NashConv's mean, standard deviation and range;
for a Kungsholmskille CSV, expert's margin in its place), which ``tests/test_learners_bench.py`` holds the page to,
and draws that figure against CPU seconds (NashConv on log scales), one line per run, a colour per learner, the
final phase only; beside it against decisions.
"""

from __future__ import annotations

import argparse
import csv
import statistics
from pathlib import Path

HEADER = ("| learner | config | phase | seeds | CPU s | decisions | last NashConv mean | sd | min | max |\n"
          "|---|---|---|---|---:|---:|---:|---:|---:|---:|")
HEADER_KILLE = HEADER.replace("last NashConv mean", "last expert's margin mean")
ORDER = ["ppo", "mmd", "nfsp", "deepcfr", "escher", "cfr+"]
LABEL = {"nash_conv": "exact NashConv (points)", "expert_margin": "expert's margin (money per episode)"}


def value_column(path: str | Path) -> str:
    """What the CSV's runs are measured by: ``nash_conv`` (Krypkasino) or ``expert_margin`` (Kungsholmskille)."""
    with open(path, newline="") as f:
        header = next(csv.reader(f), [])
    for column in LABEL:
        if column in header:
            return column
    raise ValueError(f"{path}: no column nash_conv or expert_margin in its header {','.join(header)}")


def runs(path: str | Path) -> dict[tuple[str, str, str, int], list[dict[str, str]]]:
    """The CSV's rows per run (learner, config, phase, seed), each run's rows in the order measured."""
    out: dict[tuple[str, str, str, int], list[dict[str, str]]] = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            out.setdefault((r["learner"], r["config"], r["phase"], int(r["seed"])), []).append(r)
    return out


def number(x: float) -> str:
    """A NashConv for the table: 4 decimals, or 2 significant digits under 0.001 (CFR+'s)."""
    return f"{x:.4f}" if x == 0 or abs(x) >= 0.001 else f"{x:.1e}"


def table_rows(path: str | Path) -> list[str]:
    """The page's table rows (markdown), tune before final, learners in ORDER, configurations alphabetically."""
    column = value_column(path)
    groups: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for (learner, config, phase, _seed), rows in runs(path).items():
        groups.setdefault((phase, learner, config), []).append(rows[-1])  # the run's last iterate
    lines = []
    key = {"tune": 0, "final": 1}
    for phase, learner, config in sorted(groups, key=lambda g: (key[g[0]], ORDER.index(g[1]), g[2])):
        last = sorted(groups[phase, learner, config], key=lambda r: int(r["seed"]))
        nash = [float(r[column]) for r in last]
        sd = statistics.stdev(nash) if len(nash) > 1 else 0.0
        cpu = statistics.mean(float(r["cpu_seconds"]) for r in last)
        decisions = statistics.mean(int(r["decisions"]) for r in last)
        seeds = ", ".join(r["seed"] for r in last)
        lines.append(f"| {learner} | {config} | {phase} | {seeds} | {cpu:.0f} | {decisions:,.0f} | "
                     f"{number(statistics.mean(nash))} | {number(sd)} | {number(min(nash))} | {number(max(nash))} |")
    return lines


def table(path: str | Path) -> str:
    """The whole markdown table."""
    return "\n".join([HEADER if value_column(path) == "nash_conv" else HEADER_KILLE, *table_rows(path)])


def plot(path: str | Path, png: str | Path, title: str) -> None:
    """The CSV's figure against training CPU seconds and against decisions (NashConv log-log), one line per
    final-phase run, a colour per learner."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measure = value_column(path)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    colours = dict(zip(ORDER, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    labelled: set[str] = set()
    for (learner, config, phase, _seed), rows in runs(path).items():
        if phase != "final":
            continue
        y = [max(float(r[measure]), 1e-6) if measure == "nash_conv" else float(r[measure]) for r in rows]
        label = None if learner in labelled else f"{learner} ({config})"
        labelled.add(learner)
        for ax, column in zip(axes, ["cpu_seconds", "decisions"]):
            x = [max(float(r[column]), 1.0) for r in rows]
            ax.plot(x, y, marker="o", markersize=3, color=colours[learner], label=label, alpha=0.8)
    axes[0].set(xscale="log", yscale="log" if measure == "nash_conv" else "linear",
                xlabel="training CPU seconds (one core)", ylabel=LABEL[measure])
    axes[1].set(xscale="log", xlabel="decisions (player actions applied"
                + ("; CFR+: player nodes walked)" if measure == "nash_conv" else ")"))
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """Print the table; draw the plot with ``--plot``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", type=Path)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--title", default="Krypkasino tiny, 2 players: seeds 11-13 of each learner's best config")
    args = parser.parse_args(argv)
    if not args.csv.is_file():
        parser.error(f"no CSV at {args.csv}")
    print(table(args.csv))
    if args.plot:
        plot(args.csv, args.plot, args.title)


if __name__ == "__main__":
    main()
