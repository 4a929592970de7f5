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

from krypenv.eval.kungsholmskille.duplicate import Results
from krypenv.eval.report import pair_lines, plot_intervals, results_json, write_csv


def _num(x: float | None, digits: int = 2) -> str:
    """A signed number for the text table (``-`` for a missing one)."""
    return "-" if x is None or not math.isfinite(x) else f"{x:+.{digits}f}"


def text(results: Results, elapsed: float | None = None) -> str:
    """The readable report."""
    c = results.config
    T = len(c.tables)
    deals = int(results.played.deals.sum())
    preset = "" if c.preset == "standard" else f", {c.preset} preset (KILLE.md L22)"
    lines = [f"Kungsholmskille{preset}, {c.players} players: {c.deals} deck sets x {T} tables = {c.n_episodes} "
             f"episodes ({deals} deals, {results.finished:.1%} pots out, max {c.env_config.episode_deals} deals; "
             f"duplicate, {c.seatings}), "
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
        lines += pair_lines(results.pairs, width, _num, "deck sets")
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
    rows = sorted(results.rows, key=lambda r: -r.money.mean)
    c = results.config
    plot_intervals(path, [r.agent for r in rows], [r.money for r in rows],
                   "money per seat and episode (kronor, higher is better), 95% CI",
                   f"Kungsholmskille, {c.players} players, {c.deals} deck sets, {c.n_episodes} episodes, seed {c.seed}",
                   zero_line=True)
