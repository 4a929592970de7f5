"""Regenerate the pinned OpenSpiel playthrough of Krypkasino's tiny preset: ``python tests/openspiel/make_golden.py``.

The file is OpenSpiel's own playthrough format (``open_spiel.python.algorithms.generate_playthrough``,
as OpenSpiel pins for its games): one seeded random game with every state's strings, tensors,
legal actions and returns.  ``test_tiny.py`` checks that a fresh playthrough equals it.
"""

from __future__ import annotations

from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden" / "playthrough_tiny.txt"
GAME = "python_krypkasino(players=2,preset=tiny)"
SEED = 2026


def playthrough_text() -> str:
    """The playthrough of ``GAME`` with seed ``SEED``."""
    from open_spiel.python.algorithms import generate_playthrough

    import krypenv.openspiel  # noqa: F401  (registers the games)

    return generate_playthrough.playthrough(GAME, None, seed=SEED)


if __name__ == "__main__":
    GOLDEN.write_text(playthrough_text(), encoding="utf-8")
    print(f"wrote {GOLDEN}")
