"""What a trainer shows and keeps while it runs: a progress bar, ``log.csv`` and TensorBoard scalars.

    monitor = Monitor(out, total=1_000_000, unit="decisions", progress=True, tensorboard=True)
    monitor.log(step, {"decisions": ..., "seconds": ..., "nash_conv": ...})   # one row per iteration
    monitor.note("iteration 10: ...")                                          # a line that keeps the bar
    monitor.close()

Used by :mod:`krypenv.training.selfplay` and the benchmark's learners (:mod:`krypenv.training.learners`).
The bar (tqdm, the ``eval`` extra; on stderr, the step count against ``total``) stands in for
``train.py``'s periodic lines; TensorBoard event files go to ``OUT/tb`` (``tensorboard --logdir OUT``;
the ``rl`` extra), one scalar per numeric column of the row, under the column's name.  Every row goes
to ``OUT/log.csv``; the columns are the first row's (a later row may leave some empty); ``append`` continues an
existing ``log.csv`` (a resumed run).  A missing
extra is a ValueError naming it, never a silent skip: ``progress=False`` or ``tensorboard=False``
runs without it.
"""

from __future__ import annotations

import csv
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["Monitor", "Stopwatch"]


class Stopwatch:
    """A run's training seconds, CPU (this process's, every thread) and wall, with measurements left out."""

    def __init__(self) -> None:
        self.cpu0, self.wall0 = time.process_time(), time.perf_counter()
        self.skipped_cpu = self.skipped_wall = 0.0

    def cpu(self) -> float:
        """Training CPU seconds so far (on a shared machine the fair measure of work)."""
        return time.process_time() - self.cpu0 - self.skipped_cpu

    def wall(self) -> float:
        """Training wall seconds so far."""
        return time.perf_counter() - self.wall0 - self.skipped_wall

    def skip(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` off the clock (a measurement)."""
        c, w = time.process_time(), time.perf_counter()
        try:
            return fn()
        finally:
            self.skipped_cpu += time.process_time() - c
            self.skipped_wall += time.perf_counter() - w


class Monitor:
    """A run's progress bar, ``log.csv`` and TensorBoard writer (see the module docstring)."""

    def __init__(self, out: str | Path, total: int, unit: str = "decisions", progress: bool = True,
                 tensorboard: bool = True, columns: list[str] | None = None, append: bool = False) -> None:
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.bar: Any = None
        self.tb: Any = None
        if progress:
            try:
                from tqdm import tqdm
            except ImportError as exc:
                raise ValueError(f"the progress bar needs tqdm: pip install 'krypenv[eval]' ({exc}), or "
                                 "--progress False") from None
            self.bar = tqdm(total=total, unit=unit[:3], unit_scale=True, file=sys.stderr, dynamic_ncols=True)
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError as exc:
                raise ValueError(f"TensorBoard logging needs tensorboard: pip install 'krypenv[rl]' ({exc}), or "
                                 "--tensorboard False") from None
            self.tb = SummaryWriter(str(self.out / "tb"))
        log = self.out / "log.csv"
        self.columns = list(columns) if columns else None
        self.writer: Any = None
        if append and log.is_file():  # a resumed run: its columns, no second header
            with log.open(newline="") as f:
                self.columns = next(csv.reader(f), None) or self.columns
            self.file = log.open("a", newline="")
            self.writer = csv.DictWriter(self.file, fieldnames=self.columns, extrasaction="ignore")
        else:
            self.file = log.open("w", newline="")
        self.done = 0

    def log(self, step: int, row: dict[str, Any]) -> None:
        """One row: to ``log.csv``, to TensorBoard at ``step`` and the bar moved to ``step``."""
        if self.writer is None:
            self.columns = self.columns or list(row)
            self.writer = csv.DictWriter(self.file, fieldnames=self.columns, extrasaction="ignore")
            self.writer.writeheader()
        self.writer.writerow(row)
        self.file.flush()
        if self.tb is not None:
            for key, value in row.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    self.tb.add_scalar(key, value, step)
        if self.bar is not None:
            self.bar.update(max(0, step - self.done))
            shown = {k: row[k] for k in ("nash_conv", "entropy") if isinstance(row.get(k), float)}
            if shown:
                self.bar.set_postfix({k: f"{v:.4g}" for k, v in shown.items()}, refresh=False)
        self.done = max(self.done, step)

    def note(self, line: str) -> None:
        """A line for people (above the bar when there is one)."""
        if self.bar is not None:
            self.bar.write(line, file=sys.stdout)
        else:
            print(line, flush=True)

    def close(self) -> None:
        """Flush and close everything."""
        if self.bar is not None:
            self.bar.close()
        if self.tb is not None:
            self.tb.close()
        self.file.close()
