"""Write your own agent and evaluate it with ``krypenv eval``.

A rule-based agent subclasses :class:`krypenv.agents.MoveAgent` and picks one move, a (card, capture)
pair, from ``view.legal_moves`` of a :class:`krypenv.krypkasino.view.SeatView`; the base class turns it
into actions (the card, then table-card choices). Any agent object with ``name`` and ``act(batch)``
works too. ``krypenv eval`` loads it by ``module:attr`` (the module must be importable):

    PYTHONPATH=docs/tutorials krypenv eval --agents own_agent:PointShy,greedy --players 2 --deals 200

Run: ``python docs/tutorials/own_agent.py`` (``KRYPENV_TUTORIAL_DECKS`` sets the number of decks).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from krypenv.agents import MoveAgent

from krypenv.cli import main as krypenv_main
from krypenv.krypkasino.cards import POINTS, TABLE_VALUE
from krypenv.krypkasino.view import Move, SeatView

DECKS = int(os.environ.get("KRYPENV_TUTORIAL_DECKS", "200"))


class PointShy(MoveAgent):
    """Take as few card points as possible now; among equal moves creep with the highest card (K4, K12)."""

    name = "point-shy"

    def choose(self, view: SeatView, u: float) -> Move:
        """The legal move that takes the fewest points (the played card's own points count when it captures)."""
        def cost(move: Move) -> tuple[int, int]:
            card, capture = move
            taken = int(capture @ POINTS) + (int(POINTS[card]) if capture.any() else 0)
            return taken, -int(TABLE_VALUE[card])
        return min(view.legal_moves, key=cost)


def main() -> None:
    """Evaluate PointShy against greedy and random in duplicate deals, as the command line does."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # makes ``own_agent:PointShy`` importable
    with tempfile.TemporaryDirectory() as out:
        krypenv_main(["eval", "--agents", "own_agent:PointShy,greedy,random", "--players", "2", "--deals",
                      str(DECKS), "--seed", "1", "--workers", "1", "--no-progress", "--out", out])
        print("results folder:", sorted(p.name for p in Path(out).iterdir()))


if __name__ == "__main__":
    main()
