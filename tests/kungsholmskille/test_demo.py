"""The Kungsholmskille text demo: one deal printed, its rules named (KILLE.md L2–L18)."""

from __future__ import annotations

import io
import re

import pytest

from krypenv.kungsholmskille.demo import run_demo


def demo_text(players: int, seed: int | None) -> str:
    """The demo's output as a string."""
    out = io.StringIO()
    run_demo(players, seed, out)
    return out.getvalue()


@pytest.mark.parametrize("players", range(2, 7))
def test_demo_prints_a_whole_deal(players: int) -> None:
    """The demo prints the deal (L2–L4), the calls, the ending with per-seat money summing as L18 says."""
    text = demo_text(players, 3)
    assert text == demo_text(players, 3)  # the same seed prints the same deal
    assert f"Kungsholmskille, {players} players, seed 3: seat {players - 1} deals, seat 0 is forehand (L2)" in text
    assert "First call (L5):" in text and "The deal ends:" in text
    rows = re.findall(r"^\s*(\d+)\s+(-?\d+)\s+(\d+)$", text, re.MULTILINE)
    assert [int(s) for s, _, _ in rows] == list(range(players))
    money = sum(int(m) for _, m, _ in rows)
    pot = int(re.search(r"; pot (\d+)\.", text).group(1))
    assert money == (0 if "budrunda" in text.split("The deal ends:")[1] else pot)  # L18 bookkeeping
    assert "next deal: seat 0 deals (L2)" in text


def test_demo_names_rules_on_notable_events() -> None:
    """Over a few seeds the demo shows folds (L6), forehand moving (L7), forced lowest cards (L10) and showdowns."""
    texts = "".join(demo_text(4, s) for s in range(12))
    for phrase in ("folds (L6)", "forehand moves to seat", "(L7)", "must play its lowest card", "wins the trick",
                   "Trick 4 (L10)", "showdown: seat", "Show calls (L11):", "Exchange (L8):"):
        assert phrase in texts, phrase


def test_demo_without_a_seed() -> None:
    """seed=None plays a fresh random deal."""
    assert "seed None" in demo_text(3, None)
