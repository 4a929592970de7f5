"""The planted-bug catalogues stay runnable: every bug's text is in its file exactly once, and its tests exist.

experiments/planted_bugs.py and experiments/planted_gpu.py refuse a bug whose text is not found exactly once, so a
change to the code a bug was planted in would leave that bug, and the figures docs/results/test-strength.md gives for
it, unrepeatable without anyone noticing until the next full run.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))

import planted_bugs
import planted_gpu

CATALOGUE = [(b.key, b.path, b.old, b.tests) for b in planted_bugs.BUGS] + [
    (name, path, old, tuple(shlex.split(tests))) for name, path, old, _new, tests in planted_gpu.BUGS]  # a shell line


def test_bug_names_are_unique() -> None:
    """Each catalogue names each bug once (``--only`` picks bugs by name)."""
    for names in ([b.key for b in planted_bugs.BUGS], [b[0] for b in planted_gpu.BUGS]):
        assert len(names) == len(set(names))


@pytest.mark.parametrize(("name", "path", "old", "tests"), CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_each_bug_can_be_planted_and_its_tests_run(name: str, path: str, old: str, tests: tuple[str, ...]) -> None:
    """The text a bug replaces occurs once in its file; every test file or folder it names exists."""
    assert (ROOT / path).read_text(encoding="utf-8").count(old) == 1, f"{name}: its text is not once in {path}"
    targets = [t.split("::")[0] for k, t in enumerate(tests) if t != "-k" and tests[k - 1 : k] != ("-k",)]
    assert targets and all((ROOT / t).exists() for t in targets), f"{name}: {tests}"
