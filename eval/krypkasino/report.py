"""Reporting a Krypkasino evaluation: the text table, the CSV and JSON files, the games index and the plot.

:func:`text` is what ``krypenv eval`` prints; :func:`write_tables` writes ``results.csv``,
``head_to_head.csv``, ``results.json`` and ``games.csv`` (one row per game, in the order of
``records.jsonl``: deck, table, the agent in each seat, seat scores and tabbes);
:func:`plot` draws ``scores.png``, the mean scores with their 95% intervals (matplotlib, Agg).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from krypenv.eval.krypkasino.duplicate import Results
from krypenv.eval.krypkasino.play import Played
from krypenv.eval.report import pair_lines, plot_intervals, results_json, write_csv


def _num(x: float | None, digits: int = 2) -> str:
    """A number for the text table (``-`` for a missing one)."""
    return "-" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def write_tables(results: Results, out: Path) -> list[str]:
    """Write results.csv, head_to_head.csv, results.json and games.csv; return their names."""
    write_csv(out / "results.csv", [r.to_dict() for r in results.rows])
    write_csv(out / "head_to_head.csv", [p.to_dict() for p in results.pairs])
    (out / "results.json").write_text(results_json(results), encoding="utf-8")
    names = ["results.csv", "head_to_head.csv", "results.json", "games.csv"]
    write_games(results, results.played, out / "games.csv")
    if results.independent is not None:
        write_games(results, results.independent, out / "games-independent.csv")
        names.append("games-independent.csv")
    return names


def write_games(results: Results, played: Played, path: Path) -> None:
    """One row per game: game, deck, table, the agent, score and tabbes of each seat."""
    s, labels = results.config.schedule, results.config.labels
    P = s.players
    seating = s.seating
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["game", "deck", "table"] + [f"{k}{i}" for k in ("agent", "score", "tabbes") for i in range(P)])
        for g, scores, tabbes in zip(played.games.tolist(), played.scores.tolist(), played.tabbes.tolist()):
            t = g % s.n_tables
            w.writerow([g, g // s.n_tables, t] + [labels[a] for a in seating[t]] + scores + tabbes)


def text(results: Results, elapsed: float | None = None) -> str:
    """The readable report: the per-agent table, head to head and the variance comparison."""
    cfg, s = results.config, results.config.schedule
    rules = cfg.rules
    teams = f", teams {'/'.join(','.join(map(str, t)) for t in rules.teams)}" if rules.teams else ""
    lines = [f"{rules.players} players{teams}: {s.decks} decks x {s.n_tables} tables = {s.n_games} deals "
             f"(duplicate, {cfg.seatings}), seed {cfg.seed}"
             + (f"; {s.n_games / elapsed:,.0f} deals/s" if elapsed else "")]
    side = "team" if rules.teams else "seat"
    width = max(8, *(len(r.agent) for r in results.rows))
    lines.append(f"{'agent':<{width}}  {'score/deal':>10}  {'95% CI':>15}  {'won':>6}  {'tabbes':>6}  {'set up':>6}"
                 f"  {'rating mu+-sigma':>16}")
    for r in sorted(results.rows, key=lambda r: r.score.mean):
        ci = f"[{_num(r.score.low)}, {_num(r.score.high)}]"
        lines.append(f"{r.agent:<{width}}  {_num(r.score.mean):>10}  {ci:>15}  {r.won:>6.1%}  "
                     f"{_num(r.tabbes_taken, 3):>6}  {_num(r.tabbes_set_up, 3):>6}  "
                     f"{_num(r.rating_mu, 1):>7} +- {_num(r.rating_sigma, 1):<5}")
    lines.append(f"(score per {side} per deal, lower is better; CI over decks; won: share of deals with the lowest "
                 f"score, ties shared; tabbes taken and set up per {side} per deal; openskill Plackett-Luce)")
    if results.pairs:
        lines.append("head to head, a - b over the deals where they met (negative: a better):")
        lines += pair_lines(results.pairs, width, _num, "decks")
    if results.independent is not None:
        lines.append("duplicate vs independent deals (same tables, same number of deals), s.e. of a - b:")
        for p in results.pairs:
            if p.independent is None:
                continue
            red = "-" if p.reduction is None else f"{p.reduction:.1f}x"
            lines.append(f"  {p.a:>{width}} - {p.b:<{width}} duplicate {_num(p.diff.se, 3)}  independent "
                         f"{_num(p.independent.se, 3)}  variance reduction {red}")
    return "\n".join(lines)


def plot(results: Results, path: Path) -> None:
    """``scores.png``: each agent's mean score per deal with its 95% interval."""
    rows = sorted(results.rows, key=lambda r: r.score.mean)
    s = results.config.schedule
    plot_intervals(path, [r.agent for r in rows], [r.score for r in rows],
                   f"mean score per {'team' if s.teams else 'seat'} and deal (lower is better), 95% CI",
                   f"{s.players} players, {s.decks} duplicate decks, {s.n_games} deals, seed {results.config.seed}")
