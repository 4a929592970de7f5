"""The text pieces of ``krypenv play`` that the games' adapters share: colours (or plain text) and the seat table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

RED, BOLD, DIM, RESET = "\x1b[31m", "\x1b[1m", "\x1b[2m", "\x1b[0m"


def never_red(name: str) -> bool:
    """The card colour of a game whose cards have no red suit: never red."""
    return False


class Style:
    """Colours on a terminal, plain text otherwise."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def wrap(self, text: str, code: str) -> str:
        """``text`` in a colour or weight, or as it is without colour."""
        return f"{code}{text}{RESET}" if self.colour else text

    def card(self, name: str, red: Callable[[str], bool] = never_red) -> str:
        """A card name, in red when the game's ``red`` says so (Krypkasino: hearts and diamonds)."""
        return self.wrap(name, RED) if red(name) else name

    def cards(self, names: list[str] | None, red: Callable[[str], bool] = never_red) -> str:
        """Card names separated by spaces, or ``-``."""
        return " ".join(self.card(n, red) for n in names or []) or "-"


def seat_rows(st: dict[str, Any], columns: list[tuple[str, list[Any]]]) -> list[str]:
    """A header and one row per seat of a state's ``columns`` (name, per-seat values); the seat to act starred."""
    names = [n + (" *" if s == st["to_act"] else "") for s, n in enumerate(st["names"])]
    width = max(len(n) for n in names) + 2
    head = f"{'seat':<{width}}" + "".join(f"{c:>8}" for c, _ in columns)
    return [head] + [f"{names[s]:<{width}}" + "".join(f"{v[s]!s:>8}" for _, v in columns)
                     for s in range(st["players"])]
