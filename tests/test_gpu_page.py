"""docs/results/gpu.md cannot drift from the lease's raw outputs: its check table is experiments/device_check.py's own
table of the two calls' JSON files, and its goals table holds experiments/device_speed.py's figures."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
PAGE = RESULTS / "gpu.md"
sys.path.insert(0, str(ROOT / "experiments"))

import device_check
import device_speed


def merged_check() -> dict[str, Any]:
    """The 2026-11-27 check: call a's sections, then call b's (which re-ran a's failed ones), failures dropped."""
    a = json.loads((RESULTS / "gpu-2026-11-27-check-a.json").read_text())
    b = json.loads((RESULTS / "gpu-2026-11-27-check-b.json").read_text())
    both = {**a, **{k: v for k, v in b.items() if k not in ("date", "versions")}}
    return {k: v for k, v in both.items() if not k.endswith("_error")}


def test_every_section_of_the_check_passed_in_one_of_the_two_calls() -> None:
    """Equality, benchmark, its CPU twins and PPO each came back, and every error of call a was re-run by b."""
    a = json.loads((RESULTS / "gpu-2026-11-27-check-a.json").read_text())
    b = json.loads((RESULTS / "gpu-2026-11-27-check-b.json").read_text())
    assert not any(k.endswith("_error") for k in b)
    assert {k[: -len("_error")] for k in a if k.endswith("_error")} <= set(b)
    assert {"equality", "benchmark", "benchmark_cpu", "ppo"} <= set(merged_check())


LEASES = {  # the page's section of each lease with its check and speed outputs
    "2026-11-28": ("## After the register work, on an H200 (2026-11-28)", "gpu-2026-11-28-speed.json"),
    "2026-11-27": ("## The device check, complete (2026-11-27)", "gpu-2026-11-27-speed.json"),
}


def section(heading: str) -> str:
    """The page's text from ``heading`` to the next section of the same level."""
    return "## " + PAGE.read_text().split(heading, 1)[1].split("\n## ", 1)[0]


def check_of(lease: str) -> dict[str, Any]:
    """A lease's check results: 2026-11-28's one call, 2026-11-27's two calls merged."""
    if lease == "2026-11-27":
        return merged_check()
    return json.loads((RESULTS / f"gpu-{lease}-check.json").read_text())


def test_the_2026_11_28_check_passed_every_section_in_one_call() -> None:
    """The H200 lease's one call brought back every section and no error."""
    check = check_of("2026-11-28")
    assert not any(k.endswith("_error") for k in check)
    assert {"equality", "benchmark", "benchmark_cpu", "ppo"} <= set(check)


@pytest.mark.parametrize("lease", sorted(LEASES))
def test_the_check_table_is_device_checks_own_table_of_the_json(lease: str) -> None:
    """Each lease's text block is the script's table (header aside) line for line."""
    block = section(LEASES[lease][0]).split("```text\n", 1)[1].split("```", 1)[0]
    expected = [line.rstrip() for line in device_check.table(check_of(lease)).splitlines()[1:]]
    assert block.splitlines() == expected


@pytest.mark.parametrize("lease", sorted(LEASES))
def test_the_goals_table_is_device_speeds_figures(lease: str) -> None:
    """Each goal row's measured figure and verdict are the speed JSON's, as device_speed's table computes them."""
    heading, speed = LEASES[lease]
    rows = json.loads((RESULTS / speed).read_text())
    script = {line[:22].strip(): line for line in device_speed.table(rows).splitlines()[1:]}
    page = section(heading)
    for label, name in (("Krypkasino engine, 2 players", "krypkasino engine"),
                        ("Krypkasino env, 2 players", "krypkasino env"),
                        ("Kungsholmskille env, 4 players", "kungsholmskille env"),
                        ("a fresh process's first step", "first step")):
        row = re.search(rf"^\| {re.escape(label)} \|(.*)$", page, re.MULTILINE)
        assert row, label
        measured, verdict = [c.strip() for c in row.group(1).split("|")][1], script[name].split()
        assert measured.split()[0].rstrip("Ms") == verdict[2], (label, measured, script[name])
        assert ("met" if "MET" in verdict else "missed") in row.group(1), (label, script[name])
