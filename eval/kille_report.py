"""Reporting a Kungsholmskille evaluation (:mod:`krypenv.eval.kille`): the text table, the results folder, the plot.

:func:`run_eval` evaluates, writes ``results.csv``/``.json``, ``head_to_head.csv``,
``games.csv`` (one row per episode), ``records.jsonl``, ``money.png`` and ``run.json`` and
prints :func:`text`.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import shlex
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from krypenv.eval.kille import GAME, OUTPUTS, KilleConfig, KPlayed, KResults, evaluate, load_agents
from krypenv.eval.schedule import out_folder


# --------------------------------------------------------------------------- reporting
def _num(x: float | None, digits: int = 2) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:+.{digits}f}"


def text(results: KResults, elapsed: float | None = None) -> str:
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


def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        if rows:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


def write_tables(results: KResults, out: Path) -> list[str]:
    """results.csv, head_to_head.csv, results.json, games.csv."""
    c, p = results.config, results.played
    _write_csv(out / "results.csv", [r.to_dict() for r in results.rows])
    _write_csv(out / "head_to_head.csv", [q.to_dict() for q in results.pairs])
    (out / "results.json").write_text(json.dumps(_clean(results.to_dict()), indent=1) + "\n", encoding="utf-8")
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


def plot(results: KResults, path: Path) -> None:
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


def default_out(config: KilleConfig) -> Path:
    """``evals/kille-<agents>-<P>p-<deals>d-s<seed>[-m<max deals>][-<seatings>]``: one folder per configuration."""
    tags = [f"{config.players}p", f"{config.deals}d", f"s{config.seed}"]
    if config.max_deals != KilleConfig.max_deals:
        tags.append(f"m{config.max_deals}")
    if config.seatings != KilleConfig.seatings:
        tags.append(config.seatings)
    return out_folder(config.labels, tags, prefix="kille-")


def command_line(config: KilleConfig, out: Path) -> str:
    words = ["krypenv", "eval", "--game", GAME, "--agents", ",".join(config.agents), "--players", str(config.players),
             "--deals", str(config.deals), "--seed", str(config.seed), "--max-deals", str(config.max_deals),
             "--seatings", config.seatings, "--workers", str(config.workers), "--batch", str(config.batch),
             "--out", str(out)]
    ray = [] if config.ray is None else ["--ray", config.ray] if config.ray else ["--ray"]
    return shlex.join(words + ([] if config.records else ["--no-records"]) + ray)


def run_eval(config: KilleConfig, out: Path, progress: bool = True, stdout: TextIO | None = None) -> KResults:
    """Evaluate, write the results folder and print the report."""
    stdout = sys.stdout if stdout is None else stdout
    agents = load_agents(list(config.agents))
    out.mkdir(parents=True, exist_ok=True)
    for name in OUTPUTS:
        (out / name).unlink(missing_ok=True)
    (out / "run.json").write_text("{}\n", encoding="utf-8")
    with contextlib.ExitStack() as open_files:  # the records file, closed after the progress bar
        fh = open_files.enter_context(open(out / "records.jsonl", "w", encoding="utf-8")) if config.records else None
        from tqdm import tqdm

        bar = tqdm(total=config.n_episodes, unit="episode", disable=not progress, delay=1.0, file=sys.stderr,
                   dynamic_ncols=True)

        def on_chunk(part: KPlayed) -> None:
            if fh is not None and part.records is not None:
                fh.write("".join(line + "\n" for line in part.records))

        start = time.perf_counter()
        try:
            results = evaluate(config, agents, progress=bar.update, on_chunk=on_chunk)
        finally:
            bar.close()
    elapsed = time.perf_counter() - start
    names = write_tables(results, out)
    plot(results, out / "money.png")
    names += (["records.jsonl"] if config.records else []) + ["money.png", "run.json"]
    import numba

    from krypenv.bench import machine

    info = {"command": command_line(config, out),
            "config": config.games_dict() | {"workers": config.workers, "batch": config.batch,
                                             "records": config.records, "ray": config.ray},
            "episodes": config.n_episodes, "deals": int(results.played.deals.sum()), "elapsed_s": elapsed,
            "episodes_per_s": config.n_episodes / elapsed if elapsed > 0 else None,
            "numba_threads": numba.get_num_threads(), "machine": machine(), "files": names}
    (out / "run.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    print(text(results, elapsed), file=stdout)
    print(f"wrote {out}/: {', '.join(names)}", file=stdout)
    return results
