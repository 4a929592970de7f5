"""The suite's own session hooks (tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tomllib

from tests.conftest import pytest_collection_modifyitems

ROOT = Path(__file__).resolve().parents[1]
#: A test that never ends, in compiled code that holds the GIL (as the planted endless loops of
#: experiments/planted_gpu.py did): only a watchdog outside Python's threads can stop it.
HANGING = """
from numba import njit


@njit
def spin(n):
    i = 0
    while n > 0:
        i += 1
    return i


def test_hangs_in_compiled_code():
    spin(1)
"""


class Item:
    """A collected test with a name and maybe the ``slow`` marker."""

    def __init__(self, name: str, *markers: str) -> None:
        self.name, self.markers = name, markers

    def get_closest_marker(self, name: str) -> str | None:
        """The marker ``name`` if the test has it."""
        return name if name in self.markers else None


def test_slow_tests_run_first_and_the_rest_keep_their_order() -> None:
    """Tests marked slow move to the front; within each group the collection order stays (a stable sort)."""
    items = [Item("a"), Item("b", "slow"), Item("c", "parametrize"), Item("d", "slow"), Item("e"), Item("f", "slow")]
    pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert [i.name for i in items] == ["b", "d", "f", "a", "c", "e"]


def test_the_suite_sets_a_per_test_limit_that_stops_the_process() -> None:
    """pyproject sets a per-test limit that stops the process (pytest's faulthandler options), at most 15 minutes."""
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert 0 < options["faulthandler_timeout"] <= 900, options.get("faulthandler_timeout")
    assert options["faulthandler_exit_on_timeout"] is True


def test_a_test_hung_in_compiled_code_is_stopped_with_its_traceback(tmp_path: Path) -> None:
    """With the suite's configuration and the limit lowered to 2 s, a test looping in compiled code ends its process,
    which prints the timeout and the hung test's frame (without the exit option this run would not end)."""
    (tmp_path / "test_hang.py").write_text(HANGING)
    command = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
               "-p", "no:xdist", "-p", "no:cacheprovider", "-o", "faulthandler_timeout=2", str(tmp_path)]
    run = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert "Timeout (0:00:02)!" in out, out
    assert "in test_hangs_in_compiled_code" in out, out
