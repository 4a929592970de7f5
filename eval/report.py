"""What every game's evaluation report shares: the results folder, its CSV and JSON files, ``run.json``.

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
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO, TypeVar

ResultsT = TypeVar("ResultsT")


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
