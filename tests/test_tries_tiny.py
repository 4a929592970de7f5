"""experiments/tries_tiny.py: a run's row from its log, the last iterate's NashConv or (``--column``) the average's."""

from __future__ import annotations

import csv
import dataclasses
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))

import tries_tiny

from krypenv.training.selfplay import Args


def _run(tmp_path: Path) -> Path:
    """A run directory of three logged iterations, two measured (the last iterate and the average)."""
    run = tmp_path / "run"
    run.mkdir()
    args = Args(preset="tiny", update="critic", average="ring", eval_every=2, out=str(run))
    (run / "args.json").write_text(json.dumps(dataclasses.asdict(args)))
    with (run / "log.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["iteration", "decisions", "seconds", "nash_conv", "nash_conv_avg"])
        w.writeheader()
        w.writerows([{"iteration": 1, "decisions": 10, "seconds": 1.2, "nash_conv": "", "nash_conv_avg": ""},
                     {"iteration": 2, "decisions": 20, "seconds": 2.4, "nash_conv": 0.5, "nash_conv_avg": 0.9},
                     {"iteration": 3, "decisions": 30, "seconds": 3.6, "nash_conv": 0.7, "nash_conv_avg": 0.3}])
    return run


def test_a_row_reads_the_last_iterate_or_the_average(tmp_path: Path) -> None:
    """By default the last iterate's column (last 0.7, best 0.5 at 2 s); --column nash_conv_avg the average's (last and
    best 0.3 at 4 s), the learner naming the average; the options listed."""
    run = _run(tmp_path)
    out = tmp_path / "tries.csv"
    tries_tiny.main([f"x={run}", "--out", str(out)])
    tries_tiny.main([f"x-avg={run}", "--column", "nash_conv_avg", "--out", str(out)])
    rows = {r["run"]: r for r in csv.DictReader(out.open(newline=""))}
    x, avg = rows["x"], rows["x-avg"]
    assert (x["learner"], x["last_nash_conv"], x["best_nash_conv"], x["best_seconds"]) == \
        ("sampled (critic)", "0.7000", "0.5000", "2")
    assert (avg["learner"], avg["last_nash_conv"], avg["best_nash_conv"], avg["best_seconds"]) == \
        ("sampled (critic), average (ring)", "0.3000", "0.3000", "4")
    assert "average=ring" in x["options"] and x["iterations"] == "3" and x["decisions"] == "30"


def test_a_bad_column_is_refused_naming_it(tmp_path: Path) -> None:
    """A column other than the two: row_of's ValueError names it; on the command line a usage error (exit 2); a run
    without the column says which is missing."""
    run = _run(tmp_path)
    with pytest.raises(ValueError, match="column must be one of nash_conv, nash_conv_avg, got .nash_conv_max"):
        tries_tiny.row_of("x", run, "nash_conv_max")
    with pytest.raises(SystemExit) as exc:
        tries_tiny.main([f"x={run}", "--column", "nash_conv_max", "--out", str(tmp_path / "t.csv")])
    assert exc.value.code == 2
    log = (run / "log.csv").read_text().replace(",nash_conv_avg", ",other")
    (run / "log.csv").write_text(log)
    with pytest.raises(ValueError, match="no nash_conv_avg"):
        tries_tiny.row_of("x", run, "nash_conv_avg")


def test_the_diagnostics_are_named_in_the_learner(tmp_path: Path) -> None:
    """A run with the oracle critic (it reads the tree) is not labelled a plain sampled learner; treemmd's sampled
    weights are named too."""
    from krypenv.training.treemmd import Args as TreeArgs

    run = _run(tmp_path)
    args = json.loads((run / "args.json").read_text())
    (run / "args.json").write_text(json.dumps({**args, "oracle_critic": True}))
    assert tries_tiny.row_of("o", run)["learner"] == "sampled (critic), oracle Q (diagnostic)"
    (run / "args.json").write_text(json.dumps(dataclasses.asdict(TreeArgs(sample_decisions=64))))
    row = tries_tiny.row_of("t", run)
    assert row["learner"] == "full-width, sampled weights" and "sample_decisions=64" in row["options"]
