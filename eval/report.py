"""What every game's evaluation report shares: the results folder, its CSV and JSON files, ``run.json``.

A game's ``Results`` is an :class:`EvalResults` (its configuration, agent rows, head-to-head pairs
and games played; :meth:`EvalResults.to_dict` is ``results.json``); its report prints the pairs with
:func:`pair_lines` and draws the agents' intervals with :func:`plot_intervals`.

A game's ``run_eval`` (``krypenv.eval.<game>.command``) clears its output files from the
folder (:func:`prepare_out`), plays with a progress bar while each chunk's game records are
written as they come (:func:`play_into`), writes its tables (:func:`write_csv`,
:func:`results_json`) and plot, then ``run.json`` (:func:`run_info`) and the printed report
(:func:`finish`).  Non-finite numbers are ``null`` in JSON.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TextIO, TypeVar

import numpy as np
from krypenv.eval.stats import Interval

ResultsT = TypeVar("ResultsT")
ConfigT = TypeVar("ConfigT")
RowT = TypeVar("RowT")
PairT = TypeVar("PairT")
PlayedT = TypeVar("PlayedT")


@dataclass
class EvalResults(ABC, Generic[ConfigT, RowT, PairT, PlayedT]):
    """Everything a game's evaluation found: its configuration, the agents' rows, the head-to-head pairs, the games."""

    config: ConfigT
    rows: list[RowT]
    pairs: list[PairT]
    played: PlayedT

    @abstractmethod
    def schedule_dict(self) -> dict[str, Any]:
        """The ``schedule`` entry of ``results.json``: what was played."""

    def to_dict(self) -> dict[str, Any]:
        """The results as one JSON-able object (independent of workers and batching)."""
        return {"config": self.config.games_dict(), "schedule": self.schedule_dict(),
                "agents": [r.to_dict() for r in self.rows], "head_to_head": [p.to_dict() for p in self.pairs]}


def pair_lines(pairs: list[Any], width: int, num: Callable[[float], str], units: str) -> list[str]:
    """One report line per head-to-head pair: ``a - b``, the mean difference, its 95% interval, over how many
    ``units``, and a star (``*``) where the interval leaves out zero."""
    lines = []
    for p in pairs:
        sig = " *" if p.diff.low > 0 or p.diff.high < 0 else ""
        lines.append(f"  {p.a:>{width}} - {p.b:<{width}} {num(p.diff.mean):>7}  "
                     f"[{num(p.diff.low)}, {num(p.diff.high)}]  {p.diff.n} {units}{sig}")
    return lines


def plot_intervals(path: Path, agents: list[str], intervals: list[Interval], xlabel: str, title: str,
                   zero_line: bool = False) -> None:
    """A PNG of each agent's mean (top to bottom in the order given) with its 95% interval (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y = np.arange(len(agents))
    halves = [i.half if math.isfinite(i.half) else 0.0 for i in intervals]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.45 * len(agents)), dpi=100)
    ax.errorbar([i.mean for i in intervals], y, xerr=halves, fmt="o", capsize=4)
    if zero_line:
        ax.axvline(0.0, color="grey", lw=0.8)
    ax.set_yticks(y, agents)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def clean_json(x: Any) -> Any:
    """JSON-safe values: non-finite floats become null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: clean_json(v) for k, v in x.items()}
    if isinstance(x, list):
        return [clean_json(v) for v in x]
    return x


def results_json(results: Any) -> str:
    """``results.json``: ``results.to_dict()``, sorted keys off, non-finite numbers as null."""
    return json.dumps(clean_json(results.to_dict()), indent=1) + "\n"


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """Rows of plain values as a CSV file with a header (an empty file for no rows)."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        if rows:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


def prepare_out(out: Path, outputs: tuple[str, ...]) -> None:
    """Create the output folder and clear ``outputs`` from an earlier run (OSError if not writable)."""
    out.mkdir(parents=True, exist_ok=True)
    if not out.is_dir():
        raise OSError(f"output folder {out} is not a directory")
    for name in outputs:
        (out / name).unlink(missing_ok=True)
    probe = out / "run.json"
    probe.write_text("{}\n", encoding="utf-8")  # fails now, not after the games, when the folder is read-only


def play_into(out: Path, record_files: dict[bool, str], total: int, unit: str, progress: bool,
              evaluate: Callable[[Callable[[int], object], Callable[[Any, bool], None]], ResultsT]
              ) -> tuple[ResultsT, float]:
    """(results, seconds) of ``evaluate(progress, on_chunk)`` with a progress bar over ``total`` ``unit``\\ s.

    ``record_files`` names the file in ``out`` that receives the records of the duplicate games
    (key False) and of the independent ones (key True); each chunk's records are written as it arrives.
    """
    with contextlib.ExitStack() as open_files:  # the records files, closed after the progress bar
        files = {independent: open_files.enter_context(open(out / name, "w", encoding="utf-8"))
                 for independent, name in record_files.items()}
        from tqdm import tqdm

        bar = tqdm(total=total, unit=unit, disable=not progress, delay=1.0, file=sys.stderr, dynamic_ncols=True)

        def on_chunk(part: Any, independent: bool) -> None:
            if part.records is not None:
                files[independent].write("".join(line + "\n" for line in part.records))

        start = time.perf_counter()
        try:
            results = evaluate(bar.update, on_chunk)
        finally:
            bar.close()
    return results, time.perf_counter() - start


def ray_words(ray: str | None) -> list[str]:
    """The ``--ray [ADDRESS]`` words of a command line repeating an evaluation (none without Ray)."""
    return [] if ray is None else ["--ray", ray] if ray else ["--ray"]


def run_info(command: str, config: Any, counts: dict[str, int], rate: tuple[str, int], elapsed: float,
             files: list[str]) -> dict[str, Any]:
    """``run.json``: the command line, the full configuration, what was played, the time taken, the files written.

    ``rate`` is (key, count): ``count / elapsed`` is written under ``key`` (e.g. ``deals_per_s``).
    """
    import numba

    from krypenv.bench import machine

    name, count = rate
    return {"command": command,
            "config": config.games_dict() | {"workers": config.workers, "batch": config.batch,
                                             "records": config.records, "ray": config.ray},
            **counts, "elapsed_s": elapsed, name: count / elapsed if elapsed > 0 else None,
            "numba_threads": numba.get_num_threads(), "machine": machine(), "files": files}


def finish(out: Path, info: dict[str, Any], report: str, stdout: TextIO | None) -> None:
    """Write ``run.json`` and print the report and the files written."""
    stdout = sys.stdout if stdout is None else stdout
    (out / "run.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    print(report, file=stdout)
    print(f"wrote {out}/: {', '.join(info['files'])}", file=stdout)
