"""The rules configuration of Kungsholmskille: the player count (KILLE.md L2–L4).

The contract fixes every rule, so :class:`Rules` has one field, ``players`` (2–6), exactly
the ``rules`` object of a game record (L18): ``Rules.from_dict(record["rules"])`` and
``rules.to_dict()`` round-trip.  Derived sizes (talon, the longest deal) are properties.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from krypenv.kungsholmskille.cards import DECK_SIZE, HAND_SIZE

MIN_PLAYERS, MAX_PLAYERS = 2, 6


@dataclass(frozen=True)
class Rules:
    """A Kungsholmskille table: ``players`` seats 0 … players−1 (L2)."""

    players: int = 4

    def __post_init__(self) -> None:
        p = self.players
        if isinstance(p, bool) or not isinstance(p, int) or not MIN_PLAYERS <= p <= MAX_PLAYERS:
            raise ValueError(f"players must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS} (L2), got {p!r}")

    @property
    def default_dealer(self) -> int:
        """The first dealer when the caller names none: seat players−1 (L2)."""
        return self.players - 1

    @property
    def initial_pot(self) -> int:
        """The pot of the first deal: every player puts in 2 (L3)."""
        return 2 * self.players

    @property
    def talon_size(self) -> int:
        """Cards left after dealing 5 to each player (L4); always ≥ 2 × players (L8)."""
        return DECK_SIZE - HAND_SIZE * self.players

    @property
    def max_moves(self) -> int:
        """The most moves a deal can have: 9·players − 1.

        First call P (the last seat knocks), folds P−1, exchange P, second call P (the last
        knocks), four tricks 4P, show calls P (the last shows).
        """
        return 9 * self.players - 1

    def to_dict(self) -> dict[str, Any]:
        """The game record's ``rules`` object."""
        return {"players": self.players}

    @classmethod
    def from_dict(cls, d: Any) -> Rules:
        """Rules from a record's ``rules`` object; ValueError on a missing, unknown or bad key."""
        if not isinstance(d, dict):
            raise ValueError(f"rules must be an object, got {type(d).__name__}")
        unknown = sorted(set(d) - {"players"})
        if unknown:
            raise ValueError(f"unknown rules key(s) {unknown}; the only key is players")
        if "players" not in d:
            raise ValueError("rules must give players (2 to 6)")
        return cls(players=d["players"])
