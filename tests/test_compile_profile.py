"""experiments/compile_events (numba's compiles recorded per process) and compile_profile.py (their sums)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))

import compile_profile as P

#: ``g`` compiled twice, for a literal 0 (from ``with_constant``) and for int64 (from ``with_variable``), each inside
#: its caller's compile.
PROGRAM = """
from numba import njit

@njit
def g(a, b):
    return a + b

@njit
def with_constant(x):
    return g(x, 0)

@njit
def with_variable(x, y):
    return g(x, y)

with_constant(1)
with_variable(1, 2)
"""


def test_the_recorder_and_the_sums(tmp_path: Path) -> None:
    """A process's compiles are written at exit, each with its own time apart from the compiles it triggered; the
    literal specialization is found and counted as compiled again once per process, and, across processes (a shared
    cache), every compile of the second process too."""
    log = tmp_path / "log"
    log.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "experiments" / "compile_events"), "KRYPENV_COMPILE_LOG": str(log)}
    for _ in range(2):  # two processes, each compiling everything (no disk cache)
        subprocess.run([sys.executable, "-c", PROGRAM], env=env, check=True, timeout=300)
    recorded = P.rows(log)
    processes = sorted({process for process, *_ in recorded})
    assert len(processes) == 2 and all(p.split(" ", 1)[1] == "-c" for p in processes)
    first = {(name.rsplit(".", 1)[-1], "Literal" in args): (own, args)
             for process, name, own, args in recorded if process == processes[0]}
    assert sorted(first) == [("g", False), ("g", True), ("with_constant", False), ("with_variable", False)]
    totals = {line.split("\t")[0].rsplit(".", 1)[-1]: float(line.split("\t")[2])
              for line in (log / f"{processes[0].split()[0]}.tsv").read_text().splitlines()[1:]}
    assert first[("with_constant", False)][0] < totals["with_constant"]  # g's compile inside it is not its own
    assert first[("g", True)][1] == "(int64, Literal[int](0))"
    assert P.unliteral(first[("g", True)][1]) == first[("g", False)][1]
    again = [own for process, name, own, args in recorded if name.endswith(".g") and "Literal" not in args]
    # each process's second g, after its literal one (approx: the sums add the same floats in another order)
    assert P.literal_excess(recorded, shared=False) == pytest.approx(sum(again))
    second = [own for process, *_, own, _ in recorded if process == processes[1]]
    assert P.literal_excess(recorded, shared=True) == pytest.approx(again[0] + sum(second))


def test_nothing_is_recorded_without_a_folder(tmp_path: Path) -> None:
    """Without ``KRYPENV_COMPILE_LOG`` the recorder does nothing (and imports no numba)."""
    env = {k: v for k, v in os.environ.items() if k != "KRYPENV_COMPILE_LOG"}
    env["PYTHONPATH"] = str(ROOT / "experiments" / "compile_events")
    out = subprocess.run([sys.executable, "-c", "import sys; print('numba' in sys.modules)"], env=env, check=True,
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False"


def test_unliteral_replaces_every_literal_by_its_type() -> None:
    """Negative and positive integers and both booleans; other types stay."""
    assert (P.unliteral("(Array(int8, 2, 'C', False, aligned=True), Literal[int](-1), Literal[bool](False), "
                        "Literal[int](21), Literal[bool](True), float64)")
            == "(Array(int8, 2, 'C', False, aligned=True), int64, bool, int64, bool, float64)")
