"""docs/results/gpu.md cannot drift from the lease's raw outputs: its check table is experiments/device_check.py's own
table of the two calls' JSON files, and its goals table holds experiments/device_speed.py's figures."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

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


def test_the_check_table_is_device_checks_own_table_of_the_json() -> None:
    """The page's text block is the script's table (header aside) line for line."""
    text = PAGE.read_text()
    block = text.split("```text\n", 1)[1].split("```", 1)[0]
    expected = [line.rstrip() for line in device_check.table(merged_check()).splitlines()[1:]]
    assert block.splitlines() == expected


def test_the_goals_table_is_device_speeds_figures() -> None:
    """Each goal row's measured figure and verdict are the speed JSON's, as device_speed's table computes them."""
    rows = json.loads((RESULTS / "gpu-2026-11-27-speed.json").read_text())
    script = {line[:22].strip(): line for line in device_speed.table(rows).splitlines()[1:]}
    page = PAGE.read_text()
    for label, name in (("Krypkasino engine, 2 players", "krypkasino engine"),
                        ("Krypkasino env, 2 players", "krypkasino env"),
                        ("Kungsholmskille env, 4 players", "kungsholmskille env"),
                        ("a fresh process's first step", "first step")):
        row = re.search(rf"^\| {re.escape(label)} \|(.*)$", page, re.MULTILINE)
        assert row, label
        measured, verdict = [c.strip() for c in row.group(1).split("|")][1], script[name].split()
        assert measured.split()[0].rstrip("Ms") == verdict[2], (label, measured, script[name])
        assert ("met" if "MET" in verdict else "missed") in row.group(1), (label, script[name])
