"""experiments/profile_jit.py and experiments/instructions.py: the workloads they share run, numba's symbols are
named, and the options are checked at both edges (the profile itself needs perf and two minutes of compiling: it is
the script's output, not a test's)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))

import instructions
import profile_jit


@pytest.mark.parametrize("name", instructions.WORKLOADS)
def test_every_workload_runs(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared set-up defines ``run()``, which makes decisions or steps."""
    monkeypatch.setattr(sys, "argv", ["-c", name])
    scope: dict = {}
    exec(instructions.WORKLOAD, scope)  # noqa: S102 -- the scripts' own workload text
    assert scope["run"]() > 0
    compile(instructions.CHILD, "child", "exec")
    compile(profile_jit.PRELUDE + instructions.WORKLOAD + profile_jit.MAPPER + profile_jit.TAIL, "child", "exec")


def test_numba_symbols_are_named() -> None:
    """A numba symbol gives ``module.function``; any other name is kept."""
    sym = ("_ZN7krypenv10krypkasino6engine7kernels10apply_moveB3v98B38c8tJTIeFIjxB2IKSgI4CrvQClQZ6FczSBAA_3dE5Arr"
           "ayIaLi2E1C7mutable7alignedExxx")
    assert profile_jit.short(sym) == "kernels.apply_move"
    assert profile_jit.short("NRT_incref") == "NRT_incref"


@pytest.mark.parametrize(("option", "bad", "good"), [("--seconds", ["0.99", "600.5"], ["1", "600"]),
                                                      ("--top", ["0", "501"], ["1", "500"]),
                                                      ("--lines", ["-1", "501"], ["0", "500"])])
def test_each_option_is_checked_at_both_edges(option: str, bad: list[str], good: list[str]) -> None:
    """Values just outside an option's range are refused with a message naming it; its edges are taken."""
    for value in bad:
        with pytest.raises(SystemExit, match=f"{option} must"):
            profile_jit.parse(["engine", f"{option}={value}"])
    for value in good:
        assert float(getattr(profile_jit.parse(["engine", f"{option}={value}"]), option[2:])) == float(value)


def test_source_lines_are_read_from_their_file(tmp_path: Path) -> None:
    """``file:line`` gives that line's text, stripped; an unknown file or line (``?``, 0, past the end) gives ``?``."""
    src = tmp_path / "m.py"
    src.write_text("a = 1\n    b = 2\n")
    assert profile_jit.source_line(f"{src}:2") == "b = 2"
    assert profile_jit.source_line(f"{src}:1") == "a = 1"
    assert profile_jit.source_line(f"{src}:?") == "?"
    assert profile_jit.source_line(f"{src}:0") == "?"  # addr2line's "no line"; not the last line
    assert profile_jit.source_line(f"{src}:3") == "?"
    assert profile_jit.source_line(f"{tmp_path / 'none.py'}:1") == "?"
