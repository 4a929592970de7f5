"""Reporting a Kungsholmskille evaluation: the text table, the tables of the results folder, the plot.

:func:`text` is what ``krypenv eval --game kungsholmskille`` prints; :func:`write_tables` writes
``results.csv``, ``head_to_head.csv``, ``results.json`` and ``games.csv`` (one row per episode:
deck set, table, deals, how it ended, pot left, agent and money per seat); :func:`plot` draws
``money.png``.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
from krypenv.eval.kungsholmskille.duplicate import Results
from krypenv.eval.report import results_json, write_csv


def _num(x: float | None, digits: int = 2) -> str:
    """A signed number for the text table (``-`` for a missing one)."""
    return "-" if x is None or not math.isfinite(x) else f"{x:+.{digits}f}"


def text(results: Results, elapsed: float | None = None) -> str:
    """The readable report."""
    c = results.config
    T = len(c.tables)
    deals = int(results.played.deals.sum())
    lines = [f"Kungsholmskille, {c.players} players: {c.deals} deck sets x {T} tables = {c.n_episodes} episodes "
             f"({deals} deals, {results.finished:.1%} pots out, max {c.max_deals} deals; duplicate, {c.seatings}), "
             f"seed {c.seed}" + (f"; {c.n_episodes / elapsed:,.1f} episodes/s" if elapsed else "")]
    width = max(8, *(len(r.agent) for r in results.rows))
    lines.append(f"{'agent':<{width}}  {'money/ep':>8}  {'95% CI':>16}  {'per deal':>8}  {'deals/ep':>8}  "
                 f"{'pots won':>8}  {'rating mu+-sigma':>16}")
    for r in sorted(results.rows, key=lambda r: -r.money.mean):
        ci = f"[{_num(r.money.low)}, {_num(r.money.high)}]"
        lines.append(f"{r.agent:<{width}}  {_num(r.money.mean):>8}  {ci:>16}  {_num(r.per_deal, 3):>8}  "
                     f"{r.deals:>8.2f}  {r.pots_won:>8.1%}  {r.rating_mu:>7.1f} +- {r.rating_sigma:<5.1f}")
    lines.append("(kronor per seat per episode, higher is better; CI over deck sets; pots won: share of episodes "
                 "a seat took the pot; openskill Plackett-Luce by money)")
    if results.pairs:
        lines.append("head to head, a - b over the episodes where they met, paired by deck set (positive: a better):")
        for p in results.pairs:
            sig = " *" if p.diff.low > 0 or p.diff.high < 0 else ""
            lines.append(f"  {p.a:>{width}} - {p.b:<{width}} {_num(p.diff.mean):>7}  "
                         f"[{_num(p.diff.low)}, {_num(p.diff.high)}]  {p.diff.n} deck sets{sig}")
    return "\n".join(lines)


def write_tables(results: Results, out: Path) -> list[str]:
    """results.csv, head_to_head.csv, results.json, games.csv."""
    c, p = results.config, results.played
    write_csv(out / "results.csv", [r.to_dict() for r in results.rows])
    write_csv(out / "head_to_head.csv", [q.to_dict() for q in results.pairs])
    (out / "results.json").write_text(results_json(results), encoding="utf-8")
    tables, T, P = c.tables, len(c.tables), c.players
    with open(out / "games.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["episode", "deck_set", "table", "deals", "ended", "pot_left", "winner"]
                   + [f"agent{s}" for s in range(P)] + [f"money{s}" for s in range(P)])
        for k, e in enumerate(p.episodes.tolist()):
            w.writerow([e, e // T, e % T, int(p.deals[k]), "pot out" if p.over[k] == 1 else "truncated",
                        int(p.pot_left[k]), int(p.winner[k])] + [c.labels[a] for a in tables[e % T]]
                       + p.money[k].tolist())
    return ["results.csv", "head_to_head.csv", "results.json", "games.csv"]


def plot(results: Results, path: Path) -> None:
    """``money.png``: each agent's money per episode with its 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(results.rows, key=lambda r: -r.money.mean)
    y = np.arange(len(rows))
    halves = [r.money.half if math.isfinite(r.money.half) else 0.0 for r in rows]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.45 * len(rows)), dpi=100)
    ax.errorbar([r.money.mean for r in rows], y, xerr=halves, fmt="o", capsize=4)
    ax.axvline(0.0, color="grey", lw=0.8)
    ax.set_yticks(y, [r.agent for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("money per seat and episode (kronor, higher is better), 95% CI")
    c = results.config
    ax.set_title(f"Kungsholmskille, {c.players} players, {c.deals} deck sets, {c.n_episodes} episodes, seed {c.seed}",
                 fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
