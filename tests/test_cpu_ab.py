"""experiments/cpu_ab.py: a round of both trees gives every figure and its paired ratio; every option is checked at
both edges (the figures are the script's output, not a test's)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))

import cpu_ab


def test_a_round_pairs_both_trees() -> None:
    """One round of one tree against itself: a value per tree and one ratio per figure, each positive."""
    got = cpu_ab.compare(ROOT, ROOT, 1, min(cpu_ab.os.sched_getaffinity(0)), 1, 2)
    assert list(got) == list(cpu_ab.FIGURES)
    for r in got.values():
        assert len(r["before"]) == len(r["after"]) == len(r["ratios"]) == 1 and min(r["ratios"]) > 0


@pytest.mark.parametrize(("option", "bad", "good"), [("--rounds", ["0", "101"], ["1", "100"]),
                                                      ("--batches", ["0", "1001"], ["1", "1000"]),
                                                      ("--steps", ["0", "100001"], ["1", "100000"])])
def test_each_option_is_checked_at_both_edges(option: str, bad: list[str], good: list[str]) -> None:
    """Values just outside an option's range are refused with a message naming it; its edges are taken."""
    base = ["--before", str(ROOT), "--after", str(ROOT), "--core", str(min(cpu_ab.os.sched_getaffinity(0)))]
    for value in bad:
        with pytest.raises(SystemExit, match=f"{option} must"):
            cpu_ab.parse([*base, f"{option}={value}"])
    for value in good:
        assert getattr(cpu_ab.parse([*base, f"{option}={value}"]), option[2:]) == int(value)


def test_a_tree_or_core_that_is_not_one_is_refused(tmp_path: Path) -> None:
    """A folder without krypenv, or a processor this process may not use, is a one-line error naming it."""
    with pytest.raises(SystemExit, match="--before .* is not a krypenv source tree"):
        cpu_ab.parse(["--before", str(tmp_path), "--core", str(min(cpu_ab.os.sched_getaffinity(0)))])
    with pytest.raises(SystemExit, match="--core 4096 is not"):
        cpu_ab.parse(["--before", str(ROOT), "--core", "4096"])


def test_the_ratios_are_after_over_before_pair_by_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each round measures both trees, the order alternating, and a ratio is that round's after ÷ before."""
    calls: list[str] = []
    speeds = iter([100.0, 150.0, 300.0, 200.0, 110.0, 220.0])  # round 0: before, after; round 1: after, before; ...

    def fake(tree: Path, core: int, batches: int, steps: int) -> dict[str, float]:
        calls.append(tree.name)
        v = next(speeds)
        return {"engine": v, "vec_2p": 2 * v}

    monkeypatch.setattr(cpu_ab, "measure", fake)
    got = cpu_ab.compare(Path("b"), Path("a"), 3, 0, 1, 1)
    assert calls == ["b", "a", "a", "b", "b", "a"]
    assert got["engine"]["ratios"] == pytest.approx([1.5, 1.5, 2.0]) == got["vec_2p"]["ratios"]
    assert got["engine"]["before"] == [100.0, 200.0, 110.0]
